"""The drawn graph of one recording: items built once from a layout, restyled per step.

# NOTE [restyle, never rebuild]
``GraphScene`` creates one item per node, saved value, proxy and edge, at
the places Graphviz chose (see ``layout.py``'s NOTE [layout once]), each
already in its look at step 0. ``show_state`` then restyles only the items
whose state may have changed since the step shown before
(``ShownStates.changes``), so a step costs what changed in it, not the size
of the graph. The view and the headless export share this scene, so both
draw a step the same way. Building can run in slices (``populate``) so a
5,000-node graph fills in without freezing the window.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QWidget

from app.core.model.graph import Edge
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, StepState
from app.render.dot_source import iterations
from app.render.labels import drawn_slots
from app.render.layout import Box, Layout
from app.render.modules import ModuleGroup, fold, module_groups
from app.render.preview import MARGIN, OVERVIEW_DOT_PX, OVERVIEW_PX
from app.render.qt.items import (
    BoxItem,
    ClusterItem,
    EdgeItem,
    Fonts,
    NodeItem,
    ProxyItem,
    SlotItem,
    Texts,
    growth,
    measure,
    node_texts,
    proxy_texts,
    slot_texts,
)
from app.render.states import DrawnStates, ShownStates
from app.render.style import (
    DEFAULT_PALETTE,
    PALETTES,
    BoxStyle,
    ClusterState,
    EdgeState,
    NodeState,
    Palette,
    SlotShow,
    cluster_style,
    dot_colour,
    edge_style,
    faded,
    node_style,
    slot_style,
)

__all__ = ["CHUNK", "MARGIN", "OVERVIEW_DOT_PX", "GraphScene"]

DOTS_UPDATED_ONE_BY_ONE = 64  # more changed dots than this: the scene is repainted whole
CHUNK = 400  # items built per slice when populating progressively (a few ms each)
_Item = TypeVar("_Item", bound=QGraphicsItem)


class GraphScene(QGraphicsScene):
    """Every box and edge of ``recording``'s graph, placed by ``layout``.

    With ``populate=False`` nothing is built until the ``populate()`` iterator
    is driven to its end (one slice of items per step). ``shown``: the
    recording's :class:`ShownStates`, when already made (else built here).
    """

    def __init__(
        self,
        recording: Recording,
        layout: Layout,
        *,
        palette: str = DEFAULT_PALETTE,
        font_scale: float = 1.0,
        populate: bool = True,
        shown: ShownStates | None = None,
    ) -> None:
        super().__init__()
        self.recording = recording
        self.layout = layout
        # O(graph) tables: the window's worker builds them off the GUI thread and passes them in
        self.shown = shown if shown is not None and shown.recording is recording else ShownStates(recording)
        # NOTE [module groups]: the graph as drawn, collapsed modules each one box
        self.folded = fold(recording.graph, layout.collapsed)
        self.graph = self.folded.graph
        self.drawn = DrawnStates(self.shown, self.folded)
        self._palette = PALETTES[palette]
        self._font_scale = font_scale
        self._fonts = self._make_fonts()
        self._state: StepState | None = recording.timeline.state(0) if len(recording.timeline) else None
        self._selected: str | None = None
        self._spread = 1.0
        self.complete = False
        self.nodes: dict[str, NodeItem] = {}
        self.slots: dict[SlotKey, SlotItem] = {}
        self.edges: dict[Edge, EdgeItem] = {}
        self.slot_edges: dict[SlotKey, EdgeItem] = {}
        self.proxies: dict[str, list[ProxyItem]] = {}  # node id -> its stand-ins at long edges
        self.clusters: dict[str, ClusterItem] = {}  # a frame per loop iteration and per expanded module
        self._cluster_of: dict[str, list[str]] = {}  # drawn node -> the frames around it
        self._details = True
        self._overview = False  # NOTE [overview]
        self._overview_placed = False  # every dot and line of the overview is made
        self._overview_looks: dict[str, str] = {}  # node -> its dot's colour
        self._dot_colours: dict[tuple[Any, str], str] = {}  # (kind, state) -> a dot's colour
        self._overview_centres: dict[str, QPointF] = {}
        self._overview_lines: list[QLineF] = []
        self._overview_groups: dict[str, dict[str, QPointF]] | None = None  # colour -> its dots
        self._overview_points: dict[str, list[QPointF]] = {}  # colour -> its dots, as drawn
        self._frame_groups: dict[BoxStyle, list[QRectF]] | None = None  # frames by look, as drawn
        self._lines_cache: tuple[tuple[Any, ...], QPixmap] | None = None  # see _lines_pixmap
        # NOTE [restyle what is seen]: what changed while hidden, restyled when shown or read
        self._stale_nodes: set[str] = set()
        self._stale_slots: set[SlotKey] = set()
        self._stale_edges: set[Edge] = set()
        # a hidden kind ("boxes": nodes, proxies, edges; "slots": saved values and their lines)
        # -> the state its items were last restyled for (None: never); what changed since is
        # looked up only when they are shown or read
        self._hidden_since: dict[str, StepState | None] = {}
        self.restyled = 0  # items restyled so far (tests count a step's work)
        self.setBackgroundBrush(QBrush(QColor(self._palette.background)))
        self.setBspTreeDepth(_index_depth(layout))
        self._set_rect()
        if populate:
            for _ in self.populate():
                pass

    # -- building (once) ---------------------------------------------------
    def populate(self, chunk: int = CHUNK) -> Iterator[int]:
        """Build every item, yielding the count built so far after each slice of ``chunk``.

        The overview comes first: it is all a big graph's fitted view draws, and it needs only
        the layout. Then every box is measured (text widths are cached, so this is quick) to know
        how far to spread the layout, the overview is placed anew if that moved it, and items are
        made in place, so nothing moves once shown.
        """
        for _ in self._prepare_overview(chunk):
            yield 0
        grown = [1.0]
        for done, (box, texts) in enumerate(self._box_texts(), 1):
            grown.append(
                growth((box.width, box.height), measure(self._fonts, (box.width, box.height), texts))
            )
            if done % (chunk * 4) == 0:
                yield 0
        if max(grown) != self._spread:  # fitted, the same picture: the view fits the new rect
            self._spread = max(grown)
            self._set_rect()
            for _ in self._prepare_overview(chunk):
                yield 0
        yield 0
        built = 0
        for _ in self._build_items():
            built += 1
            if built % chunk == 0:
                yield built
        self.complete = True
        yield built

    def _measure_spread(self) -> float:
        """The largest factor any box must grow by to fit its text in the current fonts."""
        fonts = self._fonts
        sizes = ((b.width, b.height, texts) for b, texts in self._box_texts())
        return max([1.0, *(growth((w, h), measure(fonts, (w, h), texts)) for w, h, texts in sizes)])

    def _box_texts(self) -> Iterator[tuple[Box, Texts]]:
        graph, layout = self.graph, self.layout
        for node in graph.nodes:
            yield layout.nodes[node.id], node_texts(node)
            for slot in drawn_slots(node):
                yield layout.slots[(node.id, slot.name)], slot_texts(slot)
        for edge, box in layout.proxies.items():
            yield box, proxy_texts(graph.node(edge.dst))

    def _build_clusters(self) -> None:
        """One frame per loop iteration the layout placed (dot_source's NOTE [iteration clusters])
        and one per module drawn expanded (NOTE [module groups])."""
        groups: list[tuple[str, str, tuple[str, ...], str | None]]
        groups = [(g.name, g.label, g.nodes, None) for g in iterations(self.graph)]
        groups += [(g.name, g.module, g.nodes, g.name) for g in module_groups(self.graph)]
        for name, label, nodes, module in groups:
            box = self.layout.clusters.get(name)
            if box is None:
                continue
            state = self._cluster_state(name)
            frame = ClusterItem(name, label, box, state, cluster_style(state, self._palette))
            frame.module = module
            frame.set_fonts(self._fonts)
            frame.place(self._spread)
            frame.setVisible(not self._overview)  # NOTE [overview]: the scene draws the frames
            self.addItem(frame)
            self.clusters[name] = frame
            for node_id in nodes:
                self._cluster_of.setdefault(node_id, []).append(name)
        self._frame_groups = None

    def _build_items(self) -> Iterator[None]:
        self._build_clusters()
        for edge, path in self.layout.edges.items():
            look = self._edge_state(edge)
            line = EdgeItem(path, look, edge_style(look, self._palette))
            line.key = edge
            line.setScale(self._spread)
            self.edges[edge] = self._add(line)
            yield None
        for node in self.graph.nodes:
            self.nodes[node.id] = self._add_box(
                NodeItem(node, self.layout.nodes[node.id], *self._node_look(node.id))
            )
            yield None
            for slot in drawn_slots(node):
                key = (node.id, slot.name)
                slot_state, style, note = self._slot_look(key)
                item = SlotItem(node.id, slot, self.layout.slots[key], slot_state, style)
                item.set_look(slot_state, style, note)
                self.slots[key] = self._add_box(item)
                dotted = self.layout.slot_edges.get(key)
                if dotted is not None:
                    shown = self._slot_line(key, slot_state)
                    line_style = edge_style(shown, self._palette, slot_edge=True)
                    line = EdgeItem(dotted, shown, line_style, to_slot=True)
                    line.key = key
                    line.setScale(self._spread)
                    self.slot_edges[key] = self._add(line)
                yield None
        for edge, box in self.layout.proxies.items():
            state, style = self._node_look(edge.dst)
            proxy = ProxyItem(self.graph.node(edge.dst), edge.src, box, state, _proxy_style(style))
            self.proxies.setdefault(edge.dst, []).append(self._add_box(proxy))
            yield None

    def _add(self, item: _Item) -> _Item:
        if isinstance(item, EdgeItem) and ((item.min_lod and not self._details) or self._overview):
            item.setVisible(False)
        self.addItem(item)
        return item

    def _add_box(self, item: _Item) -> _Item:
        assert isinstance(item, BoxItem)
        px = self._fonts.node_px if isinstance(item, NodeItem) else self._fonts.slot_px
        item.set_fonts(self._fonts, px)
        if self._spread != 1.0:
            item.place(self._spread)
        if self._overview or (not isinstance(item, NodeItem) and not self._details):
            item.setVisible(False)
        self.addItem(item)
        return item

    # -- level of detail -----------------------------------------------------
    @property
    def details(self) -> bool:
        """Whether saved-value boxes, their dotted lines and proxies are shown."""
        return self._details

    def set_details(self, visible: bool) -> None:
        """Show or hide the small boxes; the view hides them when zoomed far out.

        Hidden items cost nothing to paint, which keeps a 5,000-node graph at
        fit-to-window cheap (Qt would otherwise call ``paint`` for each).
        """
        if visible == self._details:
            return
        if visible:
            self._refresh_stale()
        self._details = visible
        for item in self._detail_items():
            item.setVisible(visible)

    # NOTE [overview]
    # Fitted to the window, a graph of thousands of nodes draws each box smaller than a
    # pixel, yet Qt still calls every visible item's Python paint(): 11,659 calls, 140 ms a
    # frame at 5,000 nodes, on every pan, zoom and fill-in repaint. Below OVERVIEW_PX the
    # items are hidden and drawForeground draws the whole graph in a few C++ calls instead:
    # one 1 px line per edge and one OVERVIEW_DOT_PX dot per node in its state's colour
    # (cosmetic pens: the same size at any zoom). The geometry is made in slices while the
    # scene fills in; node colours follow show_state; zooming in shows the items again.
    @functools.cached_property
    def overview_zoom(self) -> float:
        """The zoom below which the graph is drawn as an overview (the view asks at every zoom
        step; the layout never changes, so the median is taken once)."""
        heights = [box.height for box in self.layout.nodes.values()]
        return OVERVIEW_PX / max(statistics.median(heights) if heights else 1.0, 1e-9)

    @property
    def overview(self) -> bool:
        return self._overview

    def set_overview(self, on: bool) -> None:
        """Draw the overview instead of the items (the view asks when it zooms)."""
        if on == self._overview:
            return
        if not on:
            self._refresh_stale()
        self._overview = on
        for item in (*self.nodes.values(), *self.edges.values(), *self.clusters.values()):
            item.setVisible(not on)
        self.update()

    @property
    def shows_graph(self) -> bool:
        """Whether a paint now draws the whole graph: every item is built, or the overview is
        on and all its dots and lines are made (a big graph's scene is on screen before either)."""
        return self.complete or (self._overview and self._overview_placed)

    @contextmanager
    def drawn_in_full(self) -> Iterator[None]:
        """Every item shown, whatever the view's zoom hid (for pictures of the whole graph)."""
        overview, details = self._overview, self._details
        self.set_overview(False)
        self.set_details(True)
        try:
            yield
        finally:
            self.set_details(details)
            self.set_overview(overview)

    def drawForeground(self, painter: QPainter, rect: QRectF | Any) -> None:
        # the foreground, not the background: a view with a background brush of its own (ours)
        # never asks the scene to draw the background
        super().drawForeground(painter, rect)
        if self._overview:
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # 1 px lines: 5x faster
            self._paint_overview(painter)
            painter.restore()

    def _paint_overview(self, painter: QPainter) -> None:
        self._paint_overview_frames(painter)
        colour = QColor(edge_style("normal", self._palette).colour)
        lines = self._lines_pixmap(painter, colour) if isinstance(painter.device(), QWidget) else None
        if lines is None:
            painter.setPen(QPen(colour, 0))
            painter.drawLines(self._overview_lines)
        else:
            painter.save()
            painter.resetTransform()
            painter.drawPixmap(0, 0, lines)  # clipped to what is repainted: a step's few dots
            painter.restore()
        for colour_name, points in self._overview_dots().items():
            pen = QPen(QColor(colour_name), OVERVIEW_DOT_PX)
            pen.setCosmetic(True)
            pen.setCapStyle(Qt.PenCapStyle.SquareCap)
            painter.setPen(pen)
            painter.drawPoints(points)

    def _paint_overview_frames(self, painter: QPainter) -> None:
        """The iteration frames, a few calls for all of them: as items, each was a Python paint
        at every step (a fitted 200-iteration loop repainted ~190 of them per step)."""
        if self._frame_groups is None:
            self._frame_groups = {}
            for frame in self.clusters.values():
                if frame.style.opacity > 0:
                    self._frame_groups.setdefault(frame.style, []).append(frame.frame_rect)
        for style, rects in self._frame_groups.items():
            pen = QPen(QColor(style.border), 0)  # cosmetic: a hairline at any zoom
            painter.setOpacity(style.opacity)
            painter.setPen(pen)
            painter.setBrush(QBrush(QColor(style.fill)))
            painter.drawRects(rects)
        painter.setOpacity(1.0)
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def _lines_pixmap(self, painter: QPainter, colour: QColor) -> QPixmap:
        """Every overview line, drawn once per zoom, pan and viewport size into a picture of the
        viewport: a step repaints a few dots, and drawing all lines (clipped) cost ~1 ms a paint."""
        device = painter.device()
        t = painter.worldTransform()
        ratio = device.devicePixelRatioF()
        key: tuple[Any, ...] = (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(), ratio)
        key += (device.width(), device.height(), colour.rgba(), len(self._overview_lines), self._spread)
        if self._lines_cache is not None and self._lines_cache[0] == key:
            return self._lines_cache[1]
        pixmap = QPixmap(round(device.width() * ratio), round(device.height() * ratio))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        drawn = QPainter(pixmap)
        drawn.setTransform(t)
        drawn.setPen(QPen(colour, 0))
        drawn.drawLines(self._overview_lines)
        drawn.end()
        self._lines_cache = (key, pixmap)
        return pixmap

    def _prepare_overview(self, chunk: int) -> Iterator[None]:
        """Centres, edge lines and colours of the overview, a slice at a time; what is drawn
        changes only once all are made (a paint meanwhile draws the last ones whole)."""
        s, boxes, state = self._spread, self.layout.nodes, self._state
        centres: dict[str, QPointF] = {}
        lines: list[QLineF] = []
        looks: dict[str, str] = {}
        for done, (node_id, box) in enumerate(boxes.items(), 1):
            centres[node_id] = QPointF(box.x * s, box.y * s)
            looks[node_id] = self._overview_look(node_id)
            if done % chunk == 0:
                yield None
        for done, edge in enumerate(self.graph.edges, 1):
            if edge.src in centres and edge.dst in centres:
                lines.append(QLineF(centres[edge.src], centres[edge.dst]))
            if done % chunk == 0:
                yield None
        if self._state is not state:  # a step was shown meanwhile: some colours are of the one before
            looks = {node_id: self._overview_look(node_id) for node_id in looks}
        self._overview_centres, self._overview_lines, self._overview_looks = centres, lines, looks
        self._overview_groups = None
        self._overview_placed = True
        if self._overview:  # nothing else repaints it: the items built next are hidden in the overview
            self.update()

    def _overview_dots(self) -> dict[str, list[QPointF]]:
        """Node centres grouped by colour; a colour's list is made again only when a dot joins or
        leaves it (``_recolour_dots``), not at every paint."""
        if self._overview_groups is None:
            groups: dict[str, dict[str, QPointF]] = {}
            for node_id, colour in self._overview_looks.items():
                centre = self._overview_centres.get(node_id)
                if centre is not None:
                    groups.setdefault(colour, {})[node_id] = centre
            self._overview_groups, self._overview_points = groups, {}
        points = self._overview_points
        for colour, dots in self._overview_groups.items():
            if colour not in points:
                points[colour] = list(dots.values())
        return points

    def _recolour_dots(self, nodes: Collection[str]) -> list[str]:
        """Give ``nodes`` their dot colours at the current step; the nodes whose colour changed."""
        looks, groups, points = self._overview_looks, self._overview_groups, self._overview_points
        moved: list[str] = []
        if self._state is None:
            return moved
        kinds, colours = self.drawn.kinds, self._dot_colours
        for node_id, state in self.drawn.node_states(self._state, (n for n in nodes if n in looks)):
            old = looks[node_id]
            new = colours.get((kinds[node_id], state)) or self._overview_look(node_id)
            if new == old:
                continue
            looks[node_id] = new
            moved.append(node_id)
            if groups is not None:
                centre = groups.get(old, {}).pop(node_id, None)
                if centre is not None:
                    groups.setdefault(new, {})[node_id] = centre
                points.pop(old, None)
                points.pop(new, None)
        return moved

    def _update_dots(self, nodes: Collection[str]) -> None:
        """Repaint only around the dots that changed colour (a step changes two or three; where a
        call starts or ends, nearly all: then one repaint of everything, not a region of thousands)."""
        scale = min((view.transform().m11() for view in self.views()), default=0.0)
        if scale <= 0 or len(nodes) > DOTS_UPDATED_ONE_BY_ONE:
            self.update()
            return
        half = (OVERVIEW_DOT_PX + 2) / scale
        for node_id in nodes:
            centre = self._overview_centres.get(node_id)
            if centre is not None:
                self.update(QRectF(centre.x() - half, centre.y() - half, 2 * half, 2 * half))

    def _overview_look(self, node_id: str) -> str:
        state = self._node_state(node_id)
        key = (self.drawn.kinds[node_id], state)
        colour = self._dot_colours.get(key)  # a call's start or end recolours every node: cached
        if colour is None:
            colour = self._dot_colours[key] = dot_colour(key[0], state, self._palette)
        return colour

    def _detail_items(self) -> Iterator[QGraphicsItem]:
        yield from self.slots.values()
        yield from self.slot_edges.values()
        for items in self.proxies.values():
            yield from items

    def _placed_items(self) -> Iterator[BoxItem]:
        yield from self.nodes.values()
        yield from self.slots.values()
        for items in self.proxies.values():
            yield from items

    def _set_rect(self) -> None:
        m, s = MARGIN, self._spread
        self.setSceneRect(QRectF(-m, -m, self.layout.width * s + 2 * m, self.layout.height * s + 2 * m))

    # -- looks of one item at the current state ------------------------------
    def _node_state(self, node_id: str) -> NodeState:
        return "hidden" if self._state is None else self.drawn.node_state(self._state, node_id)

    def _node_look(self, node_id: str) -> tuple[NodeState, BoxStyle]:
        state = self._node_state(node_id)
        style = node_style(self.drawn.kinds[node_id], state, self._palette)
        return state, replace(style, rounded=True) if self.folded.is_box(node_id) else style  # a module

    def _slot_look(self, key: SlotKey) -> tuple[SlotShow, BoxStyle, str]:
        """A saved value's state, its style (faded with a gone node) and its version note."""
        if self._state is None:
            return "hidden", slot_style("hidden", self._palette), ""
        state = self.drawn.slot_state(self._state, key)
        style = slot_style(state, self._palette)
        if self.drawn.is_gone(self._state, key[0]):
            style = faded(style, self._palette)
        return state, style, self.drawn.version_note(self._state, key)

    def _slot_line(self, key: SlotKey, state: SlotShow) -> EdgeState:
        if state == "hidden":
            return "hidden"
        return "gone" if self._state is not None and self.drawn.is_gone(self._state, key[0]) else "normal"

    def _cluster_state(self, name: str) -> ClusterState:
        return "hidden" if self._state is None else self.drawn.cluster_state(self._state, name)

    def _edge_state(self, edge: Edge) -> EdgeState:
        return "hidden" if self._state is None else self.drawn.edge_state(self._state, edge)

    # -- per step ----------------------------------------------------------
    @property
    def state(self) -> StepState | None:
        return self._state

    def show_state(self, state: StepState) -> int:
        """Restyle what changed since the last step shown; returns how many items changed."""
        before, self._state = self._state, state
        # NOTE [restyle what is seen]: hidden kinds are restyled when shown or read
        for kind, hidden in (("boxes", self._overview), ("slots", not self._details)):
            if hidden and (before is None or kind not in self._hidden_since):
                self._hidden_since[kind] = before  # None (a new palette): every item of the kind
        if len(self._hidden_since) == 2:  # the overview's dots alone: neither slots nor edges
            nodes: Collection[str] = self.drawn.changed_nodes(before, state)
            changes = None
        else:
            changes = self.drawn.changes(before, state)
            nodes = changes.nodes
        # the overview holds every node, built or not; only dots that change colour are repainted
        recoloured = self._recolour_dots(nodes) if self._overview_looks else []
        if recoloured and self._overview:
            self._update_dots(recoloured)
        # A frame changes look only where one of its nodes is built or gone: a changed node.
        frames = {name for n in nodes for name in self._cluster_of.get(n, ())}
        changed = sum(self._restyle_cluster(name) for name in frames if name in self.clusters)
        if changes is not None and "boxes" not in self._hidden_since:
            changed += sum(self._restyle_node(n) for n in changes.nodes if n in self.nodes)
            changed += sum(self._restyle_edge(e) for e in changes.edges if e in self.edges)
        if changes is not None and "slots" not in self._hidden_since:
            changed += sum(self._restyle_slot(k) for k in changes.slots if k in self.slots)
        return changed

    # NOTE [restyle what is seen]
    # Where a call begins or ends nearly every item changes: restyling them all took 335 ms
    # at 5,000 nodes, though fitted to the window they are all hidden (the overview draws
    # dots; saved-value boxes show only when zoomed in). So a hidden kind of item is not
    # restyled: the scene keeps the step it was last restyled for, and what changed since is
    # looked up and restyled when the items are shown (set_overview, set_details) or read (an
    # item's state, style and text ask ``refresh_item`` first), so what tests and panels read
    # is always the current step's. Keeping the changed keys of every step instead still cost
    # ~100 ms at the end of a backward through a 20,000-node model (every node, saved value and
    # edge of the call, mapped to the 2,367 module boxes drawn): while the overview shows, a
    # step asks only which drawn nodes changed, and a collapsed module's box sums its nodes up
    # with set operations over its members (``ShownStates.summary_state``), not a call per node.
    def is_stale(self, item: QGraphicsItem) -> bool:
        """Whether ``item``'s restyle was put off while it was hidden."""
        self._catch_up()
        if isinstance(item, (NodeItem, ProxyItem)):
            return item.node_id in self._stale_nodes
        if isinstance(item, SlotItem):
            return item.key in self._stale_slots
        if isinstance(item, EdgeItem):
            return item.key in self._stale_edges or item.key in self._stale_slots
        return False

    def _catch_up(self) -> None:
        """Turn the steps shown while a kind was hidden into the keys of its stale items."""
        state = self._state
        pending = {kind: since for kind, since in self._hidden_since.items() if since is not state}
        if not pending:
            return
        if state is None:
            self._hidden_since.clear()
            return
        made: dict[int, Any] = {}  # both kinds hidden since the same step: one lookup
        for kind, since in pending.items():
            changes = made.get(id(since))
            if changes is None:
                changes = made[id(since)] = self.drawn.changes(since, state)
            if kind == "boxes":
                self._stale_nodes.update(changes.nodes)
                self._stale_edges.update(changes.edges)
            else:
                self._stale_slots.update(changes.slots)
            self._hidden_since[kind] = state

    def refresh_item(self, item: QGraphicsItem) -> None:
        """Restyle one item whose restyle was put off."""
        if isinstance(item, (NodeItem, ProxyItem)):
            self._stale_nodes.discard(item.node_id)
            self._restyle_node(item.node_id)
        elif isinstance(item, SlotItem):
            self._stale_slots.discard(item.key)
            self._restyle_slot(item.key)
        elif isinstance(item, EdgeItem) and isinstance(item.key, Edge):
            self._stale_edges.discard(item.key)
            self._restyle_edge(item.key)
        elif isinstance(item, EdgeItem) and item.key in self.slots:
            self._stale_slots.discard(item.key)  # type: ignore[arg-type]
            self._restyle_slot(item.key)  # type: ignore[arg-type]

    def _refresh_stale(self) -> None:
        """Restyle every item whose restyle was put off (before hidden items are shown)."""
        self._catch_up()
        self._hidden_since.clear()  # all restyled now; a kind still hidden starts again at the next step
        nodes, self._stale_nodes = self._stale_nodes, set()
        slots, self._stale_slots = self._stale_slots, set()
        edges, self._stale_edges = self._stale_edges, set()
        for node_id in nodes & self.nodes.keys():
            self._restyle_node(node_id)
        for key in slots & self.slots.keys():
            self._restyle_slot(key)
        for edge in edges & self.edges.keys():
            self._restyle_edge(edge)

    def _restyle_node(self, node_id: str) -> bool:
        self.restyled += 1
        state, style = self._node_look(node_id)
        for proxy in self.proxies.get(node_id, ()):
            proxy.set_look(state, _proxy_style(style))
        return self.nodes[node_id].set_look(state, style)

    def _restyle_slot(self, key: SlotKey) -> bool:
        self.restyled += 1
        state, style, note = self._slot_look(key)
        changed = self.slots[key].set_look(state, style, note)
        line = self.slot_edges.get(key)
        if line is not None:
            look = self._slot_line(key, state)
            line.set_look(look, edge_style(look, self._palette, slot_edge=True))
        return changed

    def _restyle_cluster(self, name: str) -> bool:
        state = self._cluster_state(name)
        frame = self.clusters[name]
        if not frame.set_look(state, cluster_style(state, self._palette)):
            return False
        self._frame_groups = None
        if self._overview:  # NOTE [overview]: the scene draws the frames; repaint this one's place
            self.update(frame.frame_rect.adjusted(-2, -2, 2, 2))
        return True

    def _restyle_edge(self, edge: Edge) -> bool:
        self.restyled += 1
        look = self._edge_state(edge)
        return self.edges[edge].set_look(look, edge_style(look, self._palette))

    def restyle_all(self) -> None:
        """Restyle every item for the current state (after a palette change)."""
        state, self._state = self._state, None
        if state is not None:
            self.show_state(state)

    # -- looks -------------------------------------------------------------
    @property
    def graph_palette(self) -> Palette:
        """The drawing's colours (not ``QGraphicsScene.palette()``, Qt's widget palette)."""
        return self._palette

    def set_palette(self, name: str) -> None:
        self._palette = PALETTES[name]
        self._dot_colours.clear()
        self.setBackgroundBrush(QBrush(QColor(self._palette.background)))
        self._apply_fonts()
        self.restyle_all()
        if self._selected is not None:
            self.select(self._selected)

    @property
    def font_scale(self) -> float:
        return self._font_scale

    def set_font_scale(self, scale: float) -> None:
        self._font_scale = scale
        self._apply_fonts()
        self.update()

    def _make_fonts(self) -> Fonts:
        return Fonts(self._font_scale * self._palette.text_scale, bold_body=self._palette.bold_text)

    def _apply_fonts(self) -> None:
        """Set label fonts, then spread the layout so grown boxes never overlap.

        Graphviz sized the boxes for the base font. Bigger text (font scale,
        projector palette) grows a box by some factor; moving every centre and
        edge away from the origin by the largest such factor keeps the gaps
        Graphviz left, so nothing overlaps and no new layout is needed.
        """
        self._fonts = fonts = self._make_fonts()
        self._spread = self._measure_spread()
        for _ in self._prepare_overview(chunk=len(self.layout.nodes) + 1):  # placed anew, at once
            pass
        for item in self._placed_items():
            item.set_fonts(fonts, fonts.node_px if isinstance(item, NodeItem) else fonts.slot_px)
            item.place(self._spread)
        for line in (*self.edges.values(), *self.slot_edges.values()):
            line.setScale(self._spread)
        for frame in self.clusters.values():
            frame.set_fonts(fonts)
            frame.place(self._spread)
        self._frame_groups = None
        self._set_rect()

    @property
    def spread(self) -> float:
        """How far the layout is spread out to fit the current text (1.0 = as Graphviz placed it)."""
        return self._spread

    # -- selection and lookup ------------------------------------------------
    @property
    def selected(self) -> str | None:
        return self._selected

    def select(self, node_id: str | None) -> None:
        """Outline ``node_id`` (a node of a collapsed module: its module's box)."""
        if self._selected in self.nodes:
            self.nodes[self._selected].set_selected(False, self._palette.selection)
        node_id = None if node_id is None else self.folded.shown_as(node_id)
        self._selected = node_id if node_id in self.nodes else None
        if self._selected is not None:
            self.nodes[self._selected].set_selected(True, self._palette.selection)

    def node_of(self, item: QGraphicsItem | None) -> str | None:
        """The node id an item belongs to (a node box, one of its saved-value boxes, or a proxy)."""
        if isinstance(item, (NodeItem, SlotItem, ProxyItem)):
            return item.node_id
        return None

    # -- module groups (NOTE [module groups]) -----------------------------------------
    @functools.cached_property
    def module_groups(self) -> tuple[ModuleGroup, ...]:
        """Every module group of the recording, collapsed or not."""
        return module_groups(self.recording.graph)

    @property
    def collapsed(self) -> frozenset[str]:
        """The module groups drawn as one box each."""
        return self.folded.collapsed

    def module_box(self, group: str) -> NodeItem | None:
        """The box of the collapsed module group named ``group`` (None while it is expanded)."""
        for box, found in self.folded.groups.items():
            if found.name == group:
                return self.nodes.get(box)
        return None

    def focus_rects(self, node_id: str) -> tuple[QRectF, QRectF] | None:
        """Where ``node_id`` is drawn (its module's box when that is collapsed), alone and with the
        boxes of its saved values, in scene units; None when the layout does not place it. Boxes
        not built yet (a big graph builds in slices) are placed from the layout."""
        shown = self.folded.shown_as(node_id)
        box = self.layout.nodes.get(shown)
        if box is None:
            return None
        s = self._spread

        def rect(item: QGraphicsItem | None, b: Box) -> QRectF:
            if item is not None:
                return item.sceneBoundingRect()
            return QRectF(b.x * s - b.width / 2, b.y * s - b.height / 2, b.width, b.height)

        alone = rect(self.nodes.get(shown), box)
        together = QRectF(alone)
        for key, slot in self.layout.slots.items():
            if key[0] == shown:
                together |= rect(self.slots.get(key), slot)
        return alone, together

    def group_of(self, item: QGraphicsItem | None) -> str | None:
        """The module group an item draws: a collapsed module's box, or an expanded one's frame."""
        if isinstance(item, NodeItem) and item.node_id in self.folded.groups:
            return self.folded.groups[item.node_id].name
        if isinstance(item, ClusterItem):
            return item.module
        return None

    def node_at_dot(self, point: QPointF, radius: float) -> str | None:
        """The node whose overview dot lies nearest ``point``, within ``radius`` scene units.

        Asked once per hover, not per step: a walk over every centre is fine here.
        """
        best, best_d2 = None, radius * radius
        x, y = point.x(), point.y()
        for node_id, centre in self._overview_centres.items():
            d2 = (centre.x() - x) ** 2 + (centre.y() - y) ** 2
            if d2 <= best_d2:
                best, best_d2 = node_id, d2
        return best

    def find(self, text: str, *, after: str | None = None) -> str | None:
        """The next node whose id, PyTorch name or label contains ``text`` (exact id first)."""
        needle = text.strip().lower()
        if not needle:
            return None
        if needle in self.recording.graph:
            return needle
        hits = [
            n.id
            for n in self.recording.graph.nodes
            if needle in n.name.lower() or (n.label is not None and needle in n.label.lower())
        ]
        if not hits:
            return None
        if after in hits:
            return hits[(hits.index(after) + 1) % len(hits)]
        return hits[0]


def _index_depth(layout: Layout) -> int:
    """The depth Qt's item index would pick for the finished scene, fixed from the start.

    Left automatic, Qt rebuilds the whole index each time the item count
    passes a power of two (every item re-measured: Python ``boundingRect``
    calls), a dozen times while a 5,000-node graph fills in.
    """
    items = len(layout.nodes) + 2 * len(layout.slots) + len(layout.edges) + len(layout.proxies)
    return max(5, math.ceil(math.log2(max(items, 1))))


def _proxy_style(style: BoxStyle) -> BoxStyle:
    """A proxy looks like its node (fill, dimming) with a dashed border and no tag."""
    return replace(style, dash="dash", tag="", border_width=min(style.border_width, 2.0))
