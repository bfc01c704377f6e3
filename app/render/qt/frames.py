"""The frame around one loop iteration's nodes, or around a module drawn expanded."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from app.render.dot_source import TITLE_ROOM
from app.render.layout import Box
from app.render.qt.box_paint import paint_box
from app.render.qt.fonts import PAD_X, Fonts, qfont
from app.render.qt.repaint import fade, repaint
from app.render.step_style import StepLooks
from app.render.style import text_readable

__all__ = ["CLUSTER_LABEL_PX", "CLUSTER_LABEL_ROOM", "ClusterItem"]

CLUSTER_LABEL_PX = 16.0  # on screen: an iteration's label is never drawn smaller while it fits
CLUSTER_LABEL_ROOM = float(TITLE_ROOM)  # above a frame, for its label when zoomed out; no box is there


class ClusterItem(QGraphicsItem):
    """The frame around one loop iteration's nodes (dot_source's NOTE [iteration clusters]), under
    every box and arrow, its label at the top left; a step only shows, fades or dims it.

    ``module``: the module group's name, when the frame is a module's (modules.py's NOTE [module
    groups]). Frames are few and restyled at every step that changes one of their nodes, so
    ``state`` and ``style`` are the look painted.
    """

    def __init__(self, name: str, label: str, box: Box, looks: StepLooks, module: str | None = None) -> None:
        super().__init__()
        self.name = name
        self.label = label
        self.module = module
        self.looks = looks
        self._box = box
        self._rect = QRectF()
        self._fonts: Fonts | None = None
        self.state, self.style = looks.cluster(name)
        self.setZValue(-1)
        self.place(1.0)

    def restyle(self) -> bool:
        """Paint the look of the step shown; False (nothing repainted) when unchanged."""
        state, style = self.looks.cluster(self.name)
        if state == self.state and style == self.style:
            return False
        self.state, self.style = state, style
        repaint(self)  # NOTE [a restyle repaints without a walk]
        return True

    def set_fonts(self, fonts: Fonts) -> None:
        self._fonts = fonts
        self.update()

    def place(self, spread: float) -> None:
        """The frame around the layout's box, scaled by ``spread`` as the boxes inside it are."""
        b = self._box
        rect = QRectF(
            (b.x - b.width / 2) * spread, (b.y - b.height / 2) * spread, b.width * spread, b.height * spread
        )
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect

    def rect(self) -> QRectF:
        return QRectF(self._rect)

    @property
    def frame_rect(self) -> QRectF:
        """The frame's rectangle in scene units, shared (never change it in place)."""
        return self._rect

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-4, -CLUSTER_LABEL_ROOM, 4, 4)

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        fade(painter, self.style.opacity)
        paint_box(painter, self._rect, self.style)
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        if self._fonts is not None and lod > 0:
            self._paint_label(painter, self._fonts, lod)

    def _paint_label(self, painter: QPainter, fonts: Fonts, lod: float) -> None:
        """The label in the room Graphviz left at the frame's top; zoomed out (a whole loop on a
        projector), above the frame at a size the room can read, since the boxes are unreadable then."""
        inside = fonts.slot_px * lod >= CLUSTER_LABEL_PX
        px = fonts.slot_px if inside else min(CLUSTER_LABEL_PX / lod, CLUSTER_LABEL_ROOM * 0.75)
        if not text_readable(lod, px):
            return
        font = _label_font(round(px))
        height = QFontMetricsF(font).height()
        width = self._rect.width() - (2 * PAD_X if inside else 0)
        top = self._rect.top() + 2 if inside else self._rect.top() - height - 2
        text = QFontMetricsF(font).elidedText(self.label, Qt.TextElideMode.ElideRight, width)
        painter.setPen(QColor(self.style.text))
        painter.setFont(font)
        left = self._rect.left() + (PAD_X if inside else 0)
        painter.drawText(QRectF(left, top, width, height), Qt.AlignmentFlag.AlignLeft, text)


@lru_cache(maxsize=64)
def _label_font(px: int) -> QFont:
    return qfont(px, bold=True)
