"""Repainting a restyled item where the views show it, and its opacity, painted by the item.

# NOTE [a restyle repaints without a walk]
``QGraphicsItem.update()`` and ``setOpacity()`` mark the item dirty; Qt then walks every
top-level item of the scene to find the dirty ones before it repaints (a queued
``_q_processDirtyItems``). A 5,000-node chain has ~40,000 items: that walk cost 15-25 ms at
every step, whatever the step restyled, more than the rest of the step's drawing.
``QGraphicsScene.update(rect)`` asks the views to repaint a rectangle without the walk (while
nothing is connected to the scene's ``changed`` signal), so a restyle repaints the item's
rectangle so, and an item's opacity is its style's, set on the painter as it paints (what
``setOpacity`` did before Qt called ``paint``). Geometry changes (fonts, spread) and showing
or hiding keep Qt's own calls: they are not per step.
"""

from __future__ import annotations

from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsItem

__all__ = ["fade", "repaint"]


def repaint(item: QGraphicsItem) -> None:
    """Repaint ``item``'s rectangle in every view that shows it (nothing while it is hidden)."""
    scene = item.scene()
    if scene is not None and item.isVisible():
        scene.update(item.sceneBoundingRect())


def fade(painter: QPainter, opacity: float) -> None:
    """Paint what follows at ``opacity`` (of the painter's own, as Qt combines an item's)."""
    if opacity != 1.0:
        painter.setOpacity(painter.opacity() * opacity)
