"""The graph view: the torchviz drawing of a recording, restyled as the learner steps.

The view owns no autograd logic: it shows a :class:`~app.render.scene.GraphScene`
(items built once from a Graphviz layout) and forwards each step to it. Wheel
zooms, dragging pans, a click selects a node and emits ``node_clicked``.
Ctrl+wheel is left to the window (font scale).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QMouseEvent, QPainter, QWheelEvent
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QWidget

from app.core.graph import Edge
from app.core.recorder import Recording
from app.core.timeline import StepState
from app.render.items import EdgeItem, NodeItem, ProxyItem, SlotItem
from app.render.labels import SLOT_FONT_PX
from app.render.layout import Layout
from app.render.picture import write_png, write_svg
from app.render.scene import GraphScene
from app.render.style import DEFAULT_PALETTE, PALETTES, text_readable

__all__ = ["GraphView"]

ZOOM_STEP = 1.25
MIN_ZOOM = 0.02
MAX_ZOOM = 12.0
MAX_FIT_ZOOM = 3.0  # a 4-node graph fitted to a big window should not get absurdly large
READ_ZOOM = 1.0  # find_node zooms in at least this far so the found node can be read
CLICK_SLOP = 5  # pixels a press may move and still count as a click, not a pan


class GraphView(QGraphicsView):
    """Shows one recording's graph; ``show_state`` restyles only what changed."""

    node_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._graph: GraphScene | None = None
        self._palette = DEFAULT_PALETTE
        self._font_scale = 1.0
        self._press: QPoint | None = None
        self.setScene(QGraphicsScene(self))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setAccessibleName("Autograd graph")
        self._update_background()

    # -- model ---------------------------------------------------------------
    def set_model(self, recording: Recording, layout: Layout) -> None:
        """Build every item once for ``recording`` placed by ``layout``, showing step 0."""
        old = self.scene()
        self._graph = GraphScene(recording, layout, palette=self._palette, font_scale=self._font_scale)
        self._graph.setParent(self)
        self.setScene(self._graph)
        if old is not None:
            old.deleteLater()
        self.fit()

    def clear(self) -> None:
        old = self.scene()
        self._graph = None
        self.setScene(QGraphicsScene(self))
        if old is not None:
            old.deleteLater()
        self._update_background()

    @property
    def graph_scene(self) -> GraphScene | None:
        return self._graph

    def show_state(self, state: StepState) -> int:
        """Show the states of one step; returns how many items were restyled."""
        return 0 if self._graph is None else self._graph.show_state(state)

    # -- zoom and pan ----------------------------------------------------------
    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_in(self) -> None:
        self._zoom_about_centre(ZOOM_STEP)

    def zoom_out(self) -> None:
        self._zoom_about_centre(1 / ZOOM_STEP)

    def fit(self) -> None:
        """Show the whole graph (Ctrl+0)."""
        if self._graph is None:
            return
        self.fitInView(self._graph.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > MAX_FIT_ZOOM:
            self._set_zoom(MAX_FIT_ZOOM)
        self.centerOn(self._graph.sceneRect().center())

    def _zoom_about_centre(self, factor: float) -> None:
        anchor = self.transformationAnchor()
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self._set_zoom(self.zoom * factor)
        self.setTransformationAnchor(anchor)

    def _set_zoom(self, zoom: float) -> None:
        zoom = min(MAX_ZOOM, max(MIN_ZOOM, zoom))
        current = self.zoom
        if current > 0 and zoom != current:
            self.scale(zoom / current, zoom / current)

    @property
    def details_visible(self) -> bool:
        """Whether saved-value text is large enough on screen to be drawn (level of detail)."""
        px = SLOT_FONT_PX * self._font_scale * PALETTES[self._palette].text_scale
        return text_readable(self.zoom, px)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            event.ignore()  # Ctrl+wheel is the window's font scale
            return
        steps = event.angleDelta().y() / 120
        if steps == 0:
            super().wheelEvent(event)
            return
        self._set_zoom(self.zoom * ZOOM_STEP**steps)
        event.accept()

    # -- clicks ----------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        press, self._press = self._press, None
        if press is None or event.button() != Qt.MouseButton.LeftButton or self._graph is None:
            return
        pos = event.position().toPoint()
        if (pos - press).manhattanLength() > CLICK_SLOP:
            return  # it was a pan
        item = self.itemAt(pos)
        node_id = self._graph.node_of(item)
        if node_id is None:
            return
        if isinstance(item, ProxyItem):
            self.select_node(node_id)  # a stand-in: go to the real node
        else:
            self._graph.select(node_id)
        self.node_clicked.emit(node_id)

    # -- finding -----------------------------------------------------------------
    def find_node(self, text: str) -> str | None:
        """Select and centre the next node whose id, name or label matches ``text``."""
        if self._graph is None:
            return None
        node_id = self._graph.find(text, after=self._graph.selected)
        if node_id is not None:
            self.select_node(node_id)
        return node_id

    def select_node(self, node_id: str | None) -> None:
        """Select ``node_id`` (None clears) and bring it to the middle, readable."""
        if self._graph is None:
            return
        self._graph.select(node_id)
        if node_id is None or node_id not in self._graph.nodes:
            return
        if self.zoom < READ_ZOOM:
            self._set_zoom(READ_ZOOM)
        self.centerOn(self._graph.nodes[node_id])

    @property
    def selected_node(self) -> str | None:
        return None if self._graph is None else self._graph.selected

    # -- looks -------------------------------------------------------------------
    def set_font_scale(self, scale: float) -> None:
        """Scale the graph's label fonts (classroom mode); boxes grow to fit."""
        self._font_scale = max(0.25, float(scale))
        if self._graph is not None:
            self._graph.set_font_scale(self._font_scale)

    @property
    def font_scale(self) -> float:
        return self._font_scale

    def set_palette(self, name: str) -> None:
        """``light``, ``dark`` or ``projector`` (see ``app.render.style.PALETTES``)."""
        if name not in PALETTES:
            raise ValueError(f"unknown palette {name!r}; choose one of {', '.join(PALETTES)}")
        self._palette = name
        if self._graph is not None:
            self._graph.set_palette(name)
        self._update_background()

    @property
    def palette_name(self) -> str:
        return self._palette

    def _update_background(self) -> None:
        self.setBackgroundBrush(QBrush(QColor(PALETTES[self._palette].background)))

    # -- export ------------------------------------------------------------------
    def export_svg(self, path: str | Path, *, title: str | None = None) -> Path:
        """The whole graph in its current states, as SVG."""
        return write_svg(self._require_graph(), path, title=title)

    def export_png(self, path: str | Path, *, title: str | None = None) -> Path:
        """The whole graph in its current states, as PNG."""
        return write_png(self._require_graph(), path, title=title)

    def _require_graph(self) -> GraphScene:
        if self._graph is None:
            raise RuntimeError("the graph view has no recording to export yet")
        return self._graph

    # -- read-only introspection (tests, details panel) --------------------------------
    def node_item(self, node_id: str) -> NodeItem:
        return self._require_graph().nodes[node_id]

    def slot_item(self, node_id: str, slot: str) -> SlotItem:
        return self._require_graph().slots[(node_id, slot)]

    def edge_item(self, src: str, dst: str) -> EdgeItem:
        return self._require_graph().edges[Edge(src, dst)]
