"""The drawn graph of one recording: items built once from a layout, restyled per step.

The scene puts three parts together and keeps them on the same step: :class:`SceneItems`
(``scene_items.py``'s NOTE [restyle, never rebuild]: the items, built once), the
:class:`OverviewRenderer` (``overview.py``'s NOTE [overview]: the whole graph as dots when
fitted) and :class:`PutOff` (``restyle_later.py``'s NOTE [restyle what is seen]: hidden kinds wait).
All of them read the look of the step shown from one :class:`StepLooks`. The view and the
headless export share this scene, so both draw a step the same way.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QTimer
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from app.core.model.recording import Recording
from app.core.model.timeline import StepState
from app.render.layout import Layout
from app.render.modules import ModuleGroup, fold, module_groups
from app.render.preview import MARGIN, OVERVIEW_DOT_PX
from app.render.qt.boxes import NodeItem, ProxyItem, SlotItem
from app.render.qt.edges import EdgeItem
from app.render.qt.fonts import Fonts, growth, measure
from app.render.qt.frames import ClusterItem
from app.render.qt.off_screen import OffScreen
from app.render.qt.overview import OverviewRenderer
from app.render.qt.scene_items import SceneItems
from app.render.restyle_later import PutOff
from app.render.states import DrawnStates, ShownStates
from app.render.step_style import StepLooks
from app.render.style import DEFAULT_PALETTE, PALETTES, Palette

__all__ = ["CHUNK", "MARGIN", "OVERVIEW_DOT_PX", "GraphScene"]

CHUNK = 400  # items built per slice when populating progressively (a few ms each)
LATER_SLICE_S = 0.004  # time a timer tick spends on restyles left for later (NOTE [restyle off screen later])
LATER_AFTER_MS = 150  # restyles left for later begin once the steps pause this long


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
        first = recording.timeline.state(0) if len(recording.timeline) else None
        self.looks = StepLooks(self.drawn, PALETTES[palette], first)
        self._font_scale = font_scale
        self.scene_items = SceneItems(self, layout, self.graph, self.looks, self._make_fonts())
        self.nodes, self.slots, self.proxies = (
            self.scene_items.nodes,
            self.scene_items.slots,
            self.scene_items.proxies,
        )
        self.edges, self.slot_edges, self.clusters = (
            self.scene_items.edges,
            self.scene_items.slot_edges,
            self.scene_items.clusters,
        )
        self.overview_drawing = OverviewRenderer(self, layout, self.graph, self.looks, self.clusters)
        self.put_off = PutOff(self.drawn)
        self.off_screen = OffScreen(self.scene_items)  # NOTE [restyle off screen later]
        self._later = QTimer(self)
        self._later.timeout.connect(self._on_later)
        # NOTE [restyle off screen later]: the pause is timed from the end of the step's own work
        # (its other panels, its paint), not from its restyle: a step whose events took longer
        # than LATER_AFTER_MS started the later restyles mid-stepping, a slice at every event-loop
        # pass until the next step
        self._step_done = QTimer(self)
        self._step_done.setSingleShot(True)
        self._step_done.setInterval(0)  # fires once the step's posted events (its paint) are done
        self._step_done.timeout.connect(self._start_later)
        self._selected: str | None = None
        self.complete = False
        self.restyled = 0  # items restyled so far (tests count a step's work)
        self.setBackgroundBrush(QBrush(QColor(self.looks.palette.background)))
        self.setBspTreeDepth(_index_depth(layout))
        self._set_rect()
        if populate:
            for _ in self.populate():
                pass

    def populate(self, chunk: int = CHUNK) -> Iterator[int]:
        """Build every item, yielding the count built so far after each slice of ``chunk``.

        The overview comes first: it is all a big graph's fitted view draws, and it needs only
        the layout. Then every box is measured (text widths are cached, so this is quick) to know
        how far to spread the layout, the overview is placed anew if that moved it, and items are
        made in place, so nothing moves once shown.
        """
        items, overview = self.scene_items, self.overview_drawing
        yield from (0 for _ in overview.place(items.spread, chunk))
        grown = [1.0]
        for done, (box, texts) in enumerate(items.box_texts(), 1):
            size = (box.width, box.height)
            grown.append(growth(size, measure(items.fonts, size, texts)))
            if done % (chunk * 4) == 0:
                yield 0
        if max(grown) != items.spread:  # fitted, the same picture: the view fits the new rect
            items.refit(items.fonts, max(grown))  # the few made first, for a view (build_within)
            self._set_rect()
            yield from (0 for _ in overview.place(items.spread, chunk))
        yield 0
        built = 0
        for _ in items.build():
            built += 1
            if built % chunk == 0:
                yield built
        self.complete = True
        yield built

    def build_within(self, seen: QRectF) -> int:
        """Make now the items not made yet that are drawn within ``seen`` (scene units), so a view
        zoomed in on a graph being built draws what it shows (scene_items.py's NOTE [build what is
        seen first]); how many were made."""
        if self.complete or self.overview_drawing.on:
            return 0
        made = self.scene_items.build_within(seen)
        if self.scene_items.built:
            self.complete = True
        return made

    # -- level of detail -----------------------------------------------------
    @property
    def details(self) -> bool:
        """Whether saved-value boxes, their dotted lines and proxies are shown."""
        return self.scene_items.details

    def set_details(self, visible: bool) -> None:
        """Show or hide the small boxes; the view hides them when zoomed far out.

        Hidden items cost nothing to paint, which keeps a 5,000-node graph at
        fit-to-window cheap (Qt would otherwise call ``paint`` for each).
        """
        if visible == self.scene_items.details:
            return
        if visible:
            self._restyle_put_off()
        self.scene_items.show_details(visible)

    @property
    def overview_zoom(self) -> float:
        """The zoom below which the graph is drawn as an overview (NOTE [overview])."""
        return self.overview_drawing.zoom

    @property
    def overview(self) -> bool:
        return self.overview_drawing.on

    def set_overview(self, on: bool) -> None:
        """Draw the overview instead of the items (the view asks when it zooms)."""
        if on == self.overview_drawing.on:
            return
        if not on:
            self._restyle_put_off()
        self.overview_drawing.on = on
        self.scene_items.show_overview(on)
        self.update()

    @property
    def shows_graph(self) -> bool:
        """Whether a paint now draws the whole graph: every item is built, or the overview is
        on and all its dots and lines are made (a big graph's scene is on screen before either)."""
        return self.complete or (self.overview_drawing.on and self.overview_drawing.placed)

    @contextmanager
    def drawn_in_full(self) -> Iterator[None]:
        """Every item shown, whatever the view's zoom hid (for pictures of the whole graph)."""
        overview, details = self.overview, self.details
        self.restyled += self.off_screen.restyle_all()
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
        if self.overview_drawing.on:
            self.overview_drawing.paint(painter)

    # -- per step ----------------------------------------------------------
    @property
    def state(self) -> StepState | None:
        return self.looks.state

    def show_state(self, state: StepState) -> int:
        """Restyle what changed since the last step shown; returns how many items changed."""
        before, self.looks.state = self.looks.state, state
        put_off = self.put_off  # NOTE [restyle what is seen]: hidden kinds wait to be shown
        put_off.step(before, boxes_hidden=self.overview, slots_hidden=not self.details)
        boxes_wait, slots_wait = put_off.hidden("boxes"), put_off.hidden("slots")
        changes = None if boxes_wait and slots_wait else self.drawn.changes(before, state)
        # the overview's dots alone: which drawn nodes changed, neither slots nor edges
        nodes = self.drawn.changed_nodes(before, state) if changes is None else changes.nodes
        self.overview_drawing.recolour(nodes)  # every node, built or not
        frames = self.scene_items.restyle_frames(nodes)
        self.overview_drawing.frames_changed(*frames)
        if changes is None:
            return len(frames)
        now = self.off_screen.split(
            () if boxes_wait else changes.nodes,
            () if slots_wait else changes.slots,
            () if boxes_wait else changes.edges,
            self._seen(),
        )
        self.off_screen.forget(*now)
        done, changed = self.scene_items.restyle(*now)
        self.restyled += done
        if self.off_screen.waiting:
            self._later.stop()  # stepping on, the rest waits: timed again once this step is done
            self._step_done.start()
        return len(frames) + changed

    def _seen(self) -> QRectF | None:
        """What the views on screen show, in scene units; None when none does (a picture)."""
        seen: QRectF | None = None
        for view in self.views():
            if view.isVisible():
                shown = view.mapToScene(view.viewport().rect()).boundingRect()
                seen = shown if seen is None else seen | shown
        return seen

    def restyle_within(self, seen: QRectF) -> None:
        """Restyle the items left for later that are drawn within ``seen`` (a view about to paint)."""
        if self.off_screen.waiting:
            self.restyled += self.off_screen.restyle_within(seen)

    def _start_later(self) -> None:
        if self.off_screen.waiting:
            self._later.start(LATER_AFTER_MS)

    def _on_later(self) -> None:
        self._later.setInterval(0)  # the steps paused: the rest a slice a tick
        self.restyled += self.off_screen.restyle_some(LATER_SLICE_S)
        if not self.off_screen.waiting:
            self._later.stop()

    def is_stale(self, item: QGraphicsItem) -> bool:
        """Whether ``item``'s restyle was put off while it was hidden (NOTE [restyle what is seen])."""
        put_off, later = self.put_off, self.off_screen
        put_off.catch_up(self.looks.state)
        if isinstance(item, NodeItem):
            return item.node_id in put_off.nodes or item.node_id in later.nodes
        if isinstance(item, ProxyItem):  # restyled with its long edge (NOTE [a proxy goes with its edge])
            return item.edge in put_off.edges or item.edge in later.edges
        if isinstance(item, SlotItem):
            return item.key in put_off.slots or item.key in later.slots
        if isinstance(item, EdgeItem):
            key = item.key
            return key in put_off.edges or key in put_off.slots or key in later.edges or key in later.slots
        return False

    def _restyle_put_off(self) -> None:
        """Restyle every item whose restyle was put off (before hidden items are shown)."""
        done, _ = self.scene_items.restyle(*self.put_off.take(self.looks.state))
        self.restyled += done

    def restyle_all(self) -> None:
        """Restyle every item for the current state (after a palette change)."""
        state, self.looks.state = self.looks.state, None
        if state is not None:
            self.show_state(state)

    # -- looks -------------------------------------------------------------
    @property
    def graph_palette(self) -> Palette:
        """The drawing's colours (not ``QGraphicsScene.palette()``, Qt's widget palette)."""
        return self.looks.palette

    def set_palette(self, name: str) -> None:
        self.looks.palette = PALETTES[name]
        self.setBackgroundBrush(QBrush(QColor(self.looks.palette.background)))
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
        palette = self.looks.palette
        return Fonts(self._font_scale * palette.text_scale, bold_body=palette.bold_text)

    def _apply_fonts(self) -> None:
        """Set label fonts, then spread the layout so grown boxes never overlap.

        Graphviz sized the boxes for the base font. Bigger text (font scale,
        projector palette) grows a box by some factor; moving every centre and
        edge away from the origin by the largest such factor keeps the gaps
        Graphviz left, so nothing overlaps and no new layout is needed.
        """
        fonts = self._make_fonts()
        spread = self.scene_items.spread_for(fonts)
        for _ in self.overview_drawing.place(spread, chunk=len(self.layout.nodes) + 1):  # at once
            pass
        self.scene_items.refit(fonts, spread)
        self.overview_drawing.frames_changed(*self.clusters.values())
        self._set_rect()

    @property
    def spread(self) -> float:
        """How far the layout is spread out to fit the current text (1.0 = as Graphviz placed it)."""
        return self.scene_items.spread

    def _set_rect(self) -> None:
        m, s = MARGIN, self.scene_items.spread
        self.setSceneRect(QRectF(-m, -m, self.layout.width * s + 2 * m, self.layout.height * s + 2 * m))

    # -- selection and lookup ------------------------------------------------
    @property
    def selected(self) -> str | None:
        return self._selected

    def select(self, node_id: str | None) -> None:
        """Outline ``node_id`` (a node of a collapsed module: its module's box)."""
        colour = self.looks.palette.selection
        if self._selected in self.nodes:
            self.nodes[self._selected].set_selected(False, colour)
        node_id = None if node_id is None else self.folded.shown_as(node_id)
        self._selected = node_id if node_id in self.nodes else None
        if self._selected is not None:
            self.nodes[self._selected].set_selected(True, colour)

    def node_of(self, item: QGraphicsItem | None) -> str | None:
        """The node id an item belongs to (a node box, one of its saved-value boxes, or a proxy)."""
        if isinstance(item, (NodeItem, SlotItem, ProxyItem)):
            return item.node_id
        return None

    def focus_rects(self, node_id: str) -> tuple[QRectF, QRectF] | None:
        """Where ``node_id`` is drawn (its module's box when that is collapsed), alone and with the
        boxes of its saved values, in scene units; None when the layout does not place it. Boxes
        not built yet (a big graph builds in slices) are placed from the layout."""
        return self.scene_items.focus_rects(self.folded.shown_as(node_id))

    def node_at_dot(self, point: QPointF, radius: float) -> str | None:
        """The node whose overview dot lies nearest ``point``, within ``radius`` scene units."""
        return self.overview_drawing.node_at(point, radius)

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
        box = self.folded.box_named(group)
        return None if box is None else self.nodes.get(box)

    def group_of(self, item: QGraphicsItem | None) -> str | None:
        """The module group an item draws: a collapsed module's box, or an expanded one's frame."""
        if isinstance(item, NodeItem) and item.node_id in self.folded.groups:
            return self.folded.groups[item.node_id].name
        if isinstance(item, ClusterItem):
            return item.module
        return None


def _index_depth(layout: Layout) -> int:
    """The depth Qt's item index would pick for the finished scene, fixed from the start.

    Left automatic, Qt rebuilds the whole index each time the item count
    passes a power of two (every item re-measured: Python ``boundingRect``
    calls), a dozen times while a 5,000-node graph fills in.
    """
    items = len(layout.nodes) + 2 * len(layout.slots) + len(layout.edges) + len(layout.proxies)
    return max(5, math.ceil(math.log2(max(items, 1))))
