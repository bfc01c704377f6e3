"""The graph view: the torchviz drawing of a recording, restyled as the learner steps.

The view owns no autograd logic: it shows a :class:`~app.render.qt.scene.GraphScene`
(items built once from a Graphviz layout) and forwards each step to it. Wheel
zooms, dragging pans, a click selects a node and emits ``node_clicked``.
Ctrl+wheel is left to the window (font scale). Resting the pointer on a node
names the line that made it and its state; on a saved value, its state and
version (``app.render.hover``): one tooltip handler for the view, not a
tooltip set on each of thousands of items.

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
from collections.abc import Collection, Iterator
from functools import partial
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QContextMenuEvent,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QMenu, QToolTip, QWidget

from app.core.model.graph import Edge
from app.core.model.recording import Recording
from app.core.model.timeline import StepState
from app.render.hover import module_tip, node_tip, slot_tip
from app.render.labels import NODE_FONT_PX, SLOT_FONT_PX
from app.render.layout import Layout
from app.render.modules import ModuleGroup
from app.render.preview import MAX_FIT_ZOOM
from app.render.qt.boxes import MIN_SLOT_LOD, BoxItem, NodeItem, ProxyItem, SlotItem
from app.render.qt.edges import EdgeItem
from app.render.qt.picture import write_png, write_svg
from app.render.qt.scene import OVERVIEW_DOT_PX, GraphScene
from app.render.states import ShownStates
from app.render.style import DEFAULT_PALETTE, PALETTES, text_readable
from app.ui.module_layouts import ModuleLayouts
from app.ui.plain_text import plain_tip
from app.ui.worker import GcPause

__all__ = ["GraphView"]

ZOOM_STEP = 1.25
MIN_ZOOM = 0.02
MAX_ZOOM = 12.0
READ_ZOOM = 1.0  # find_node zooms in at least this far so the found node can be read
# a node's name drawn smaller than this on screen cannot be read from the back of a classroom
READABLE_NODE_PX = 8.0
FOCUS_MARGIN = 16  # pixels kept between a node shown readable and the view's edge
HOVER_SLOP = 2  # pixels beyond an overview dot that still name its node
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
        self._unshown: GraphScene | None = None  # built by set_model, not yet on screen
        self._announced = False  # graph_shown was emitted for the model set last
        self._fit_when_shown = False  # no zoom asked for since set_model: fit it when it is shown
        self._key = id(self)
        self._fitted: tuple[QRectF, float] | None = None  # scene rect and zoom of the last fit()
        self._reading: str | None = None  # the node show_readable() zoomed in on, until a zoom
        self._read_when_shown: str | None = None  # show_readable() asked before the scene was shown
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
        self._layouts = ModuleLayouts(self)
        self._layouts.ready.connect(self._on_layout_ready)
        self._layouts.failed.connect(self._on_layout_failed)
        self._wanted: frozenset[str] | None = None  # the collapsed set asked for, until drawn
        self.collapse_all_action = QAction("Collapse all modules", self)
        self.collapse_all_action.triggered.connect(self.collapse_all)
        self.expand_all_action = QAction("Expand all modules", self)
        self.expand_all_action.triggered.connect(self.expand_all)
        self._update_module_actions()

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
        self._layouts.reset(recording, layout)
        self._wanted = None
        if layout.simplified:  # layout.py's NOTE [layout ladder]
            self.layout_said.emit(f"Graphviz could not lay out the full drawing: {layout.simplified}")
        self._reading = self._read_when_shown = None
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
        if slices:
            # NOTE [swap in a turn of its own]: the new scene goes on screen at the first tick.
            # Swapped in here, its first paint (Qt repaints the whole window for a new scene)
            # fell into the event-loop pass of the apply, after every panel's update and paint:
            # one 40-70 ms stall of a 5,000-node load. Until then the view shows the old drawing.
            # The delay lets the panels' own relayout after a new recording (new leaf views, a
            # summary of another height: one or two more passes) finish before the swap's paint.
            self._unshown = graph
            self._fit_when_shown = True
            self._builder = graph.populate(chunk=8)  # a tick overshoots its slice by at most one chunk
            self._build_timer.start(SWAP_AFTER_MS)
        else:
            self._swap_scene(graph)
            self.fit()
            self.model_ready.emit()
            self._announce_if_shown()
        self._update_module_actions()

    @property
    def shows_graph(self) -> bool:
        """Whether the model set last is on screen and a paint draws the whole of it (a big
        graph's scene goes on screen before its overview is made)."""
        return self._unshown is None and self._graph is not None and self._graph.shows_graph

    def _announce_if_shown(self) -> None:
        if not self._announced and self.shows_graph:
            self._announced = True
            self.graph_shown.emit()

    @property
    def building(self) -> bool:
        """True while a progressive build is still adding items."""
        return self._builder is not None

    def _on_build_tick(self) -> None:
        if self._unshown is not None:
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
        self._refit_if_untouched()
        self._announce_if_shown()

    def _show_unshown(self) -> None:
        """Put the scene of the last ``set_model`` on screen: fitted, unless the learner zoomed since."""
        graph, self._unshown = self._unshown, None
        if graph is None:
            return
        self._swap_scene(graph)
        read, self._read_when_shown = self._read_when_shown, None
        if self._fit_when_shown and read is not None:
            self.show_readable(read)
        elif self._fit_when_shown:
            self.fit()
        else:
            self._fitted = None
            self._update_details()

    def _stop_building(self, *, built: bool = False) -> None:
        """Stop the slices; ``built``: all of a big graph is there for good, freeze it."""
        self._build_timer.stop()
        self._builder = None
        self._unshown = None
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
        self._read_when_shown = None
        if self._unshown is not None:
            self._fit_when_shown = True
            return
        self.fitInView(self._graph.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > MAX_FIT_ZOOM:
            self._set_zoom(MAX_FIT_ZOOM)
        self.centerOn(self._graph.sceneRect().center())
        self._update_details()
        self._fitted = (self._graph.sceneRect(), self.zoom)
        self._reading = None

    def show_readable(self, node_id: str) -> bool:
        """Fit the graph; if that draws node names too small to read, zoom in to
        :data:`READ_ZOOM` around ``node_id`` and its saved values instead (the failing node of an
        error step on a projector, the node a backward step runs). Returns whether it zoomed in.
        A zoom by the learner ends it; a resize or a wider scene while the graph builds shows the
        node again."""
        if self._graph is None:
            return False
        if self._unshown is not None:
            self.fit()
            self._read_when_shown = node_id
            return False
        rects = self._graph.focus_rects(node_id)
        if rects is None or self._fit_zoom() * self._node_px() >= READABLE_NODE_PX:
            self.fit()
            return False
        # Not fitted first: from one followed node to the next the zoom stays and the view pans,
        # where a fit in between hid and showed every item of a big graph's overview twice a step.
        alone, together = rects
        room = self.viewport().rect()
        fits = min(room.width() / max(together.width(), 1.0), room.height() / max(together.height(), 1.0))
        readable = READABLE_NODE_PX / self._node_px()
        self._set_zoom(max(readable, min(READ_ZOOM, fits)))  # with its saved values where they fit
        self.centerOn(together.center())
        self.ensureVisible(alone, FOCUS_MARGIN, FOCUS_MARGIN)  # the node itself, when all is too wide
        self._fitted = (self._graph.sceneRect(), self.zoom)
        self._reading = node_id
        return True

    def _fit_zoom(self) -> float:
        """The zoom :meth:`fit` would set, without setting it (``fitInView`` keeps 2 px a side)."""
        assert self._graph is not None
        rect, room = self._graph.sceneRect(), self.viewport().rect().adjusted(2, 2, -2, -2)
        scale = min(room.width() / max(rect.width(), 1e-9), room.height() / max(rect.height(), 1e-9))
        return min(MAX_FIT_ZOOM, scale)

    @property
    def reading(self) -> str | None:
        """The node :meth:`show_readable` zoomed in on, while the view still shows it so."""
        return self._reading

    def _node_px(self) -> float:
        return NODE_FONT_PX * self._font_scale * PALETTES[self._palette].text_scale

    def _refit_if_untouched(self) -> None:
        """The first slice of a build may widen the scene (text spread): keep it fitted unless zoomed."""
        if self._graph is None or self._fitted is None:
            return
        rect, zoom = self._fitted
        if self._graph.sceneRect() != rect and self.zoom == zoom:
            if self._reading is not None:
                self.show_readable(self._reading)
            else:
                self.fit()

    def _zoom_about_centre(self, factor: float) -> None:
        anchor = self.transformationAnchor()
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self._set_zoom(self.zoom * factor)
        self.setTransformationAnchor(anchor)

    def _set_zoom(self, zoom: float) -> None:
        zoom = min(MAX_ZOOM, max(MIN_ZOOM, zoom))
        self._fit_when_shown = False  # the learner's zoom wins over a pending fit
        self._reading = self._read_when_shown = None
        current = self.zoom
        if current > 0 and zoom != current:
            self.scale(zoom / current, zoom / current)
        self._update_details()

    def _update_details(self) -> None:
        if self._graph is not None:
            self._graph.set_details(self.zoom >= MIN_SLOT_LOD)
            self._graph.set_overview(self.zoom < self._graph.overview_zoom)  # NOTE [overview]

    @property
    def overview(self) -> bool:
        """Whether the graph is drawn as an overview (zoomed out so far that boxes are dots)."""
        return self._graph is not None and self._graph.overview

    @property
    def boxes_visible(self) -> bool:
        """Whether saved-value boxes are shown at all (hidden when zoomed far out)."""
        return self._graph is not None and self._graph.details

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
        if not self._graph.folded.is_box(node_id):  # a module's box is no node of the recording
            self.node_clicked.emit(node_id)

    # -- hovering --------------------------------------------------------------
    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), plain_tip(text), self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)

    def tip_at(self, pos: QPoint) -> str:
        """What the pointer at ``pos`` (viewport pixels) names: a node's line and state, a saved
        value's state and version, or ``""`` over anything else."""
        graph = self._graph
        state = None if graph is None else graph.state
        if graph is None or state is None:
            return ""
        if graph.overview:  # NOTE [overview]: the items are hidden, the dots are drawn by the scene
            reach = (OVERVIEW_DOT_PX + HOVER_SLOP) / max(self.zoom, 1e-9)
            node_id = graph.node_at_dot(self.mapToScene(pos), reach)
            return "" if node_id is None else self._node_tip(graph, state, node_id)
        box = self._box_at(pos)
        if isinstance(box, SlotItem) and not graph.folded.is_box(box.node_id):
            return slot_tip(graph.shown, state, box.key)
        node_id = graph.node_of(box)
        return "" if node_id is None else self._node_tip(graph, state, node_id)

    @staticmethod
    def _node_tip(graph: GraphScene, state: StepState, node_id: str) -> str:
        if graph.folded.is_box(node_id):
            return module_tip(graph.drawn, state, node_id)
        return node_tip(graph.shown, state, node_id)

    def _box_at(self, pos: QPoint) -> BoxItem | None:
        """The topmost node, saved-value or proxy box drawn under ``pos`` (edges and frames are
        passed over: an edge's bounds span empty space)."""
        for item in self.items(pos):
            if isinstance(item, BoxItem) and item.rect().contains(item.mapFromScene(self.mapToScene(pos))):
                return item
        return None

    # -- module groups (NOTE [module groups] in app/render/modules.py) -----------------------
    @property
    def module_groups(self) -> tuple[ModuleGroup, ...]:
        """Every module group of the recording shown (none for programs without modules)."""
        return () if self._graph is None else self._graph.module_groups

    @property
    def collapsed(self) -> frozenset[str]:
        """The module groups drawn as one box each."""
        return frozenset() if self._graph is None else self._graph.collapsed

    def module_box(self, group: str) -> NodeItem | None:
        """The box of the collapsed module group ``group`` (None while it is drawn expanded)."""
        return None if self._graph is None else self._graph.module_box(group)

    def set_collapsed(self, groups: Collection[str]) -> None:
        """Draw exactly ``groups`` collapsed. A set drawn before comes back at once; a new one is laid
        out off the GUI thread first. ``modules_changed`` says when the new drawing is there."""
        if self._graph is None:
            return
        wanted = self._layouts.key(groups)
        if wanted == self.collapsed and self._wanted is None:
            return
        self._wanted = wanted
        self._layouts.request(wanted)

    def collapse(self, group: str) -> None:
        self.set_collapsed(self._collapsed_next() | {group})

    def expand(self, group: str) -> None:
        self.set_collapsed(self._collapsed_next() - {group})

    def toggle_module(self, group: str) -> None:
        (self.expand if group in self._collapsed_next() else self.collapse)(group)

    def collapse_all(self) -> None:
        self.set_collapsed({g.name for g in self.module_groups})

    def expand_all(self) -> None:
        self.set_collapsed(())

    def _collapsed_next(self) -> frozenset[str]:
        """The collapsed set as asked for last (a toggle made while a layout is made adds to it)."""
        return self.collapsed if self._wanted is None else self._wanted

    def _on_layout_ready(self, layout: Layout) -> None:
        graph = self._graph
        if graph is None or layout.collapsed != self._wanted:
            return  # asked for another set since
        state, selected = graph.state, graph.selected
        self.set_model(graph.recording, layout, shown=graph.shown)
        if state is not None:
            self.show_state(state)
        if selected is not None:
            self._require_graph().select(selected)
        self.modules_changed.emit()

    def _on_layout_failed(self, why: str) -> None:
        self._wanted = None  # the drawing shown stays
        self._update_module_actions()
        self.layout_said.emit(f"The modules could not be redrawn: {why}")

    def _update_module_actions(self) -> None:
        groups = self.module_groups
        collapsed = self.collapsed
        self.collapse_all_action.setEnabled(bool(groups) and len(collapsed) < len(groups))
        self.expand_all_action.setEnabled(bool(collapsed))

    def group_at(self, pos: QPoint) -> str | None:
        """The module group under ``pos`` (viewport pixels): a collapsed module's box, or the
        innermost expanded module frame around the point (a plain node inside it answers None)."""
        graph = self._graph
        if graph is None:
            return None
        point = self.mapToScene(pos)
        if graph.overview:
            reach = (OVERVIEW_DOT_PX + HOVER_SLOP) / max(self.zoom, 1e-9)
            node_id = graph.node_at_dot(point, reach)
            if node_id is not None:
                return graph.group_of(graph.nodes.get(node_id))
        else:
            box = self._box_at(pos)
            if box is not None:
                return graph.group_of(box) if isinstance(box, NodeItem) else None
        frames = [f for f in graph.clusters.values() if f.module and f.frame_rect.contains(point)]
        inner = min(frames, key=lambda f: f.frame_rect.width() * f.frame_rect.height(), default=None)
        return None if inner is None else inner.module

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        group = self.group_at(event.position().toPoint())
        if group is None or event.button() != Qt.MouseButton.LeftButton:
            super().mouseDoubleClickEvent(event)
            return
        self.toggle_module(group)
        event.accept()

    def module_menu(self, pos: QPoint) -> QMenu:
        """The context menu at ``pos``: collapse or expand the module there, and all of them."""
        menu = QMenu(self)
        group = self.group_at(pos)
        if group is not None:
            module = next((g.module for g in self.module_groups if g.name == group), group)
            verb = "Expand" if group in self._collapsed_next() else "Collapse"
            menu.addAction(f"{verb} {module}", partial(self.toggle_module, group))
            menu.addSeparator()
        menu.addAction(self.collapse_all_action)
        menu.addAction(self.expand_all_action)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if not self.module_groups:
            super().contextMenuEvent(event)
            return
        self.module_menu(event.pos()).exec(event.globalPos())

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
