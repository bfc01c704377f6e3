"""The graph view: the torchviz drawing of a recording, restyled as the learner steps.

The view owns no autograd logic: it shows a :class:`~app.render.qt.scene.GraphScene`
(items built once from a Graphviz layout) and forwards each step to it. Wheel
zooms, dragging pans, a click selects a node and emits ``node_clicked``.
Ctrl+wheel is left to the window (font scale). Its parts have modules of their
own: zoom and pan (``camera.py``), module groups
(``modules``, in ``module_layouts.py``), and what the pointer is over
(``pointer.py``: tooltips, boxes under a click).

A large graph is built in slices on timer ticks (``PROGRESSIVE_ITEMS``), a
few milliseconds each, so the window keeps painting and answering while the
view fills in; ``model_ready`` says when every item is there. Zoomed far
out, saved-value boxes are hidden (level of detail), so fit-to-window of a
5,000-node graph paints only the nodes and arrows.

While slices run, full garbage collections are paused (``GcPause``, see
NOTE [no full GC while loading] in ``worker.py``): tens of thousands of new
long-lived items would otherwise trigger passes of hundreds of ms over them.
A finished progressive build freezes what it made.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QContextMenuEvent,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QToolTip, QWidget

from app.core.model.graph import Edge
from app.core.model.recording import Recording
from app.core.model.timeline import StepState
from app.render.layout import Layout
from app.render.qt.boxes import NodeItem, ProxyItem, SlotItem
from app.render.qt.edges import EdgeItem
from app.render.qt.picture import write_png, write_svg
from app.render.qt.scene import GraphScene
from app.render.states import ShownStates
from app.render.style import DEFAULT_PALETTE, PALETTES
from app.ui.graph.camera import ZOOM_STEP, Camera
from app.ui.graph.minimap import Minimap
from app.ui.graph.module_layouts import ModuleGroups
from app.ui.graph.pointer import tip_at
from app.ui.runtime.worker import GcPause
from app.ui.style.plain_text import plain_tip

__all__ = ["GraphView"]

CLICK_SLOP = 5  # pixels a press may move and still count as a click, not a pan
PROGRESSIVE_ITEMS = 3000  # graphs with more items than this are built in slices
SLICE_S = 0.005  # time spent building per timer tick; the rest of the tick is the window's
SWAP_AFTER_MS = 20  # a big graph's scene goes on screen this long after set_model (NOTE [swap ...])


class GraphView(QGraphicsView):
    """Shows one recording's graph; ``show_state`` restyles only what changed."""

    node_clicked = Signal(str)
    model_ready = Signal()  # every item of the model set last is built
    graph_shown = Signal()  # the model set last is on screen and a paint draws all of it
    learner_zoomed = Signal()  # a zoom not made through GraphNavigation (a proxy box clicked)
    modules_changed = Signal()  # the graph is drawn anew with other modules collapsed
    layout_said = Signal(str)  # one quiet line: what Graphviz left out of the drawing, or why it drew none

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._graph: GraphScene | None = None
        self._palette = DEFAULT_PALETTE
        self._font_scale = 1.0
        self._press: QPoint | None = None
        self._builder: Iterator[int] | None = None
        self.unshown: GraphScene | None = None  # built by set_model, not yet on screen
        self._announced = False  # graph_shown was emitted for the model set last
        self._key = id(self)
        self.camera = Camera(self)  # zoom and pan
        self.destroyed.connect(partial(GcPause.release, self._key))
        self._build_timer = QTimer(self)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._on_build_tick)
        self.setScene(QGraphicsScene(self))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setAccessibleName("Autograd graph")
        self._update_background()
        # NOTE [module groups]: a layout per set of collapsed modules, made once and kept
        self.modules = ModuleGroups(self, self)
        self.modules.redrawn.connect(self.modules_changed)
        self.modules.said.connect(self.layout_said)
        self.minimap = Minimap(self)  # the whole graph in a corner while zoomed in
        # the background brush fills what a paint uncovers: a scroll moves the pixels drawn and
        # paints only the strip it uncovers (minimap.py's NOTE [a pan paints what it uncovers])
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.minimap.panned.connect(self.learner_zoomed)

    def sizeHint(self) -> QSize:
        # QGraphicsView's own hint follows the scene's size: each new graph would ask the window to
        # lay itself out again (every panel resized and repainted in the turn the scene goes on screen)
        return QSize(640, 480)

    # -- model ---------------------------------------------------------------
    def set_model(
        self,
        recording: Recording,
        layout: Layout,
        *,
        progressive: bool | None = None,
        shown: ShownStates | None = None,
    ) -> None:
        """Build every item once for ``recording`` placed by ``layout``, showing step 0.

        ``progressive`` builds in slices on timer ticks (default: only for large
        graphs); ``show_state`` may be called meanwhile. ``model_ready`` is
        emitted once everything is built (at once when not progressive).
        ``shown``: the recording's ``ShownStates`` if the worker built it already.
        """
        self._stop_building()
        self.modules.reset(recording, layout)
        if layout.simplified:  # layout.py's NOTE [layout ladder]
            self.layout_said.emit(f"Graphviz could not lay out the full drawing: {layout.simplified}")
        self._announced = False
        items = len(layout.nodes) + 2 * len(layout.slots) + len(layout.edges) + len(layout.proxies)
        slices = items > PROGRESSIVE_ITEMS if progressive is None else progressive
        if slices:
            GcPause.hold(self._key)  # NOTE [no full GC while loading]
        graph = GraphScene(
            recording,
            layout,
            palette=self._palette,
            font_scale=self._font_scale,
            populate=not slices,
            shown=shown,
        )
        self._graph = graph
        self.camera.new_model(shown_later=slices)
        if slices:
            # NOTE [swap in a turn of its own]: the new scene goes on screen at the first tick.
            # Swapped in here, its first paint (Qt repaints the whole window for a new scene)
            # fell into the event-loop pass of the apply, after every panel's update and paint:
            # one 40-70 ms stall of a 5,000-node load. Until then the view shows the old drawing.
            # The delay lets the panels' own relayout after a new recording (new leaf views, a
            # summary of another height: one or two more passes) finish before the swap's paint.
            self.unshown = graph
            self._builder = graph.populate(chunk=8)  # a tick overshoots its slice by at most one chunk
            self._build_timer.start(SWAP_AFTER_MS)
        else:
            self._swap_scene(graph)
            self.camera.fit()
            self.model_ready.emit()
            self._announce_if_shown()
        self.modules.update_actions()

    @property
    def shows_graph(self) -> bool:
        """Whether the model set last is on screen and a paint draws the whole of it (a big
        graph's scene goes on screen before its overview is made)."""
        graph = self._graph
        if self.unshown is not None or graph is None:
            return False
        return graph.shows_graph or (not graph.overview and graph.scene_items.built_over(self.seen_rect()))

    def seen_rect(self) -> QRectF:
        """What the viewport shows, in scene units."""
        return self.mapToScene(self.viewport().rect()).boundingRect()

    def _announce_if_shown(self) -> None:
        if not self._announced and self.shows_graph:
            self._announced = True
            self.graph_shown.emit()

    @property
    def building(self) -> bool:
        """True while a progressive build is still adding items."""
        return self._builder is not None

    def _on_build_tick(self) -> None:
        if self.unshown is not None:
            self._show_unshown()
            self._build_timer.setInterval(0)
            return  # the tick's time went to the swap; building starts at the next tick
        deadline = time.perf_counter() + SLICE_S
        try:
            while time.perf_counter() < deadline and self._builder is not None:
                next(self._builder)
            if self._graph is not None:
                # Qt indexes new items lazily, when a paint or a lookup asks; in the overview
                # nothing paints them, and indexing all 50,000 of a 5,000-node graph at the end
                # took one 230 ms stall. A lookup per tick indexes each slice as it comes.
                self._graph.itemAt(QPointF(-1e9, -1e9), QTransform())
        except StopIteration:
            self._stop_building(built=True)
            self.model_ready.emit()
        self.camera.refit_if_untouched()
        self._announce_if_shown()

    def _show_unshown(self) -> None:
        """Put the scene of the last ``set_model`` on screen: fitted, unless the learner zoomed since."""
        graph, self.unshown = self.unshown, None
        if graph is None:
            return
        self._swap_scene(graph)
        self.camera.scene_shown()
        graph.build_within(self.seen_rect())  # before the first paint: it draws what it shows

    def _stop_building(self, *, built: bool = False) -> None:
        """Stop the slices; ``built``: all of a big graph is there for good, freeze it."""
        self._build_timer.stop()
        self._builder = None
        self.unshown = None
        GcPause.release(self._key, freeze=built)

    def _swap_scene(self, scene: QGraphicsScene) -> None:
        old = self.scene()
        scene.setParent(self)
        self.setScene(scene)
        if old is not None:
            old.deleteLater()

    def clear(self) -> None:
        self._stop_building()
        self._graph = None
        self._swap_scene(QGraphicsScene(self))
        self._update_background()

    @property
    def graph_scene(self) -> GraphScene | None:
        return self._graph

    def show_state(self, state: StepState) -> int:
        """Show the states of one step; returns how many items were restyled."""
        return 0 if self._graph is None else self._graph.show_state(state)

    def resizeEvent(self, event: QResizeEvent) -> None:
        # NOTE [steady camera]: the view loses or gains height at its top (a taller caption or
        # counter above it, the error panel): the graph stays where it is on screen, its bottom
        # edge held, where the centre held moved the drawing by half the change
        old, new = event.oldSize(), event.size()
        if old.width() != new.width() or old.height() <= 0 or self._graph is None:
            super().resizeEvent(event)
            self._build_seen()
            return
        anchor = self.resizeAnchor()
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        super().resizeEvent(event)
        self.setResizeAnchor(anchor)
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + old.height() - new.height())
        self._build_seen()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._build_seen()
        graph = self._graph
        if graph is not None and graph.off_screen.waiting:  # NOTE [restyle off screen later]
            # before the paint: restyled in the paint, what the pan brought into view asked for its
            # repaint after it, a second pass over the view at each step that moved it
            graph.restyle_within(self.seen_rect())

    def _build_seen(self) -> None:
        """Make what the viewport shows now of a graph being built (scene_items.py's NOTE [build what
        is seen first]). Asked at a resize or a scroll too, not only at the paint: a paint's event
        reaches the window's event filters before the view builds, so a panel appearing beside a
        5,000-node graph being built left the paint that followed with a strip never made, and
        the graph was shown whole only once all of it was built, seconds later."""
        graph = self._graph
        if graph is None or self.unshown is not None or graph.complete:
            return
        if self.camera.zoom < graph.overview_zoom:  # drawn as the overview (or a fit in the middle
            return  # of its scaling, before the camera turned it on): every item of it, at once
        graph.build_within(self.seen_rect())

    def paintEvent(self, event: QPaintEvent) -> None:
        graph = self._graph
        if graph is not None and not graph.complete:  # scene_items.py's NOTE [build what is seen first]
            graph.build_within(self.seen_rect())
        if graph is not None and graph.off_screen.waiting:  # NOTE [restyle off screen later]
            graph.restyle_within(self.seen_rect())
        super().paintEvent(event)

    # -- the pointer ---------------------------------------------------------------
    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            event.ignore()  # Ctrl+wheel is the window's font scale
            return
        steps = event.angleDelta().y() / 120
        if steps == 0:
            super().wheelEvent(event)
            return
        self.camera.set_zoom(self.camera.zoom * ZOOM_STEP**steps)
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
        if not self._graph.folded.is_box(node_id):  # a module's box is no node of the recording
            self.node_clicked.emit(node_id)

    # -- hovering --------------------------------------------------------------
    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = tip_at(self, event.pos())
            if text:
                QToolTip.showText(event.globalPos(), plain_tip(text), self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        group = self.modules.group_at(event.position().toPoint())
        if group is None or event.button() != Qt.MouseButton.LeftButton:
            super().mouseDoubleClickEvent(event)
            return
        self.modules.toggle(group)
        event.accept()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if not self.modules.groups:
            super().contextMenuEvent(event)
            return
        self.modules.menu(event.pos()).exec(event.globalPos())

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
        self.camera.show_node(node_id)
        self.learner_zoomed.emit()

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
