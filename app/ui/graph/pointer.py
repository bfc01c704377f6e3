"""What the pointer is over in a graph view: a node, a saved value, a module's box; its tooltip.

Resting the pointer on a node names the line that made it and its state; on a saved value, its
state and version (``app.render.hover``): one tooltip handler for the view, not a tooltip set on
each of thousands of items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QPoint, QPointF
from PySide6.QtWidgets import QGraphicsItem

from app.render.hover import module_tip, node_tip, slot_tip
from app.render.qt.boxes import BoxItem, SlotItem
from app.render.qt.scene import OVERVIEW_DOT_PX, GraphScene

if TYPE_CHECKING:
    from app.core.model.timeline import StepState

__all__ = ["PointedView", "box_at", "dot_at", "tip_at"]


class _Zoomed(Protocol):
    @property
    def zoom(self) -> float: ...


class PointedView(Protocol):
    """What these functions read of a graph view (``GraphView`` is one): its scene, its zoom,
    and Qt's items and scene point under a viewport pixel."""

    @property
    def graph_scene(self) -> GraphScene | None: ...

    @property
    def camera(self) -> _Zoomed: ...

    def items(self, pos: QPoint, /) -> list[QGraphicsItem]: ...

    def mapToScene(self, point: QPoint, /) -> QPointF: ...


HOVER_SLOP = 2  # pixels beyond an overview dot that still name its node


def box_at(view: PointedView, pos: QPoint) -> BoxItem | None:
    """The topmost node, saved-value or proxy box drawn under ``pos`` (viewport pixels; edges and
    frames are passed over: an edge's bounds span empty space)."""
    for item in view.items(pos):
        if isinstance(item, BoxItem) and item.rect().contains(item.mapFromScene(view.mapToScene(pos))):
            return item
    return None


def dot_at(view: PointedView, graph: GraphScene, pos: QPoint) -> str | None:
    """In the overview (NOTE [overview]: the items are hidden, the scene draws dots), the node
    whose dot is under ``pos``."""
    reach = (OVERVIEW_DOT_PX + HOVER_SLOP) / max(view.camera.zoom, 1e-9)
    return graph.node_at_dot(view.mapToScene(pos), reach)


def tip_at(view: PointedView, pos: QPoint) -> str:
    """What the pointer at ``pos`` (viewport pixels) names: a node's line and state, a saved
    value's state and version, or ``""`` over anything else."""
    graph = view.graph_scene
    state = None if graph is None else graph.state
    if graph is None or state is None:
        return ""
    if graph.overview:
        node_id = dot_at(view, graph, pos)
        return "" if node_id is None else _node_tip(graph, state, node_id)
    box = box_at(view, pos)
    if isinstance(box, SlotItem) and not graph.folded.is_box(box.node_id):
        return slot_tip(graph.shown, state, box.key)
    node_id = graph.node_of(box)
    return "" if node_id is None else _node_tip(graph, state, node_id)


def _node_tip(graph: GraphScene, state: StepState, node_id: str) -> str:
    if graph.folded.is_box(node_id):
        return module_tip(graph.drawn, state, node_id)
    return node_tip(graph.shown, state, node_id)
