"""Every item of one scene, filed by what it draws: built once, shown or hidden, restyled, refitted.

# NOTE [restyle, never rebuild]
A scene creates one item per node, saved value, proxy and edge, at the places Graphviz chose
(see ``layout.py``'s NOTE [layout once]), each already in its look at the step shown. A step
then restyles only the items whose state may have changed since the step shown before
(``DrawnStates.changes``), so a step costs what changed in it, not the size of the graph.
Building runs in slices (:meth:`SceneItems.build`) so a 5,000-node graph fills in without
freezing the window.

# NOTE [build what is seen first]
A big graph opened following the run is zoomed in on one node: a screenful of its items is all
the view draws. Those are made at once (:meth:`SceneItems.build_within`, asked by the view as its
scene goes on screen and before each paint while the build runs); the slices make the rest later,
skipping what is made. Waiting for every item before the first readable paint took a 5,000-node
``.lens`` from ready in 1.1 s to 4 s. An item is found by its place in the layout; one made before
the boxes are measured is placed anew with the others if the text spreads the layout.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from typing import TypeVar, cast

from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from app.core.model.graph import Edge, Graph
from app.core.model.timeline import SlotKey
from app.render.dot_source import iterations
from app.render.labels import drawn_slots
from app.render.layout import Box, Layout
from app.render.modules import module_groups
from app.render.qt.boxes import BoxItem, NodeItem, ProxyItem, SlotItem
from app.render.qt.edges import EdgeItem
from app.render.qt.fonts import Fonts, Texts, growth, measure, node_texts, proxy_texts, slot_texts
from app.render.qt.frames import ClusterItem
from app.render.step_style import StepLooks
from app.render.style import SlotShow

__all__ = ["SceneItems"]

_Item = TypeVar("_Item", bound=QGraphicsItem)


class SceneItems:
    """The items of ``graph`` (the graph as drawn) placed by ``layout`` on ``scene``, each asking
    ``looks`` for its look, in ``fonts``, the layout spread by ``spread`` to fit their text.

    ``details``: whether saved values, their dotted lines and proxies are shown; ``overview``:
    whether every item is hidden for the overview (NOTE [overview]). Both apply to the items
    built later too.
    """

    def __init__(
        self, scene: QGraphicsScene, layout: Layout, graph: Graph, looks: StepLooks, fonts: Fonts
    ) -> None:
        # weak: the scene owns this; a cycle would keep a replaced recording alive until a full
        # collection, which the window holds off while a big one loads (NOTE [no full GC while loading])
        self._scene = weakref.ref(scene)
        self.layout = layout
        self.graph = graph
        self.looks = looks
        self.fonts = fonts
        self.spread = 1.0
        self.details = True
        self.overview = False
        self.nodes: dict[str, NodeItem] = {}
        self.slots: dict[SlotKey, SlotItem] = {}
        self.edges: dict[Edge, EdgeItem] = {}
        self.slot_edges: dict[SlotKey, EdgeItem] = {}
        self.proxies: dict[str, list[ProxyItem]] = {}  # node id -> its stand-ins at long edges
        self.proxy_of: dict[Edge, ProxyItem] = {}  # a long edge -> the stand-in at its far end
        self.clusters: dict[str, ClusterItem] = {}  # a frame per loop iteration and per expanded module
        self.cluster_of: dict[str, list[str]] = {}  # drawn node -> the frames around it
        self._slot_keys: dict[str, list[SlotKey]] | None = None  # node -> its laid-out saved values
        self._framed = False  # the frames are made
        self._seen_built: list[QRectF] = []  # every item drawn within each is made (at this spread)

    @property
    def scene(self) -> QGraphicsScene:
        scene = self._scene()
        assert scene is not None, "the scene outlives its parts"
        return scene

    # -- sizes ---------------------------------------------------------------
    def box_texts(self) -> Iterator[tuple[Box, Texts]]:
        """Every box of the layout with every text it may show."""
        graph, layout = self.graph, self.layout
        for node in graph.nodes:
            yield layout.nodes[node.id], node_texts(node)
            for slot in drawn_slots(node):
                yield layout.slots[(node.id, slot.name)], slot_texts(slot)
        for edge, box in layout.proxies.items():
            yield box, proxy_texts(graph.node(edge.dst))

    def spread_for(self, fonts: Fonts) -> float:
        """The largest factor any box must grow by to fit its text in ``fonts``."""
        sizes = ((b.width, b.height, texts) for b, texts in self.box_texts())
        return max([1.0, *(growth((w, h), measure(fonts, (w, h), texts)) for w, h, texts in sizes)])

    def refit(self, fonts: Fonts, spread: float) -> None:
        """Every item built so far in ``fonts``, placed for the layout spread by ``spread``."""
        self.fonts, self.spread = fonts, spread
        self._seen_built = []
        for item in self._boxes():
            item.set_fonts(fonts, fonts.node_px if isinstance(item, NodeItem) else fonts.slot_px)
            item.place(spread)
        for line in (*self.edges.values(), *self.slot_edges.values()):
            line.setScale(spread)
        for frame in self.clusters.values():
            frame.set_fonts(fonts)
            frame.place(spread)

    def focus_rects(self, shown: str) -> tuple[QRectF, QRectF] | None:
        """Where the drawn node ``shown`` is, alone and with the boxes of its saved values, in scene
        units; None when the layout does not place it. Boxes not built yet are placed from the layout."""
        box = self.layout.nodes.get(shown)
        if box is None:
            return None
        s = self.spread

        def rect(item: QGraphicsItem | None, b: Box) -> QRectF:
            if item is not None:
                return item.sceneBoundingRect()
            return QRectF(b.x * s - b.width / 2, b.y * s - b.height / 2, b.width, b.height)

        alone = rect(self.nodes.get(shown), box)
        together = QRectF(alone)
        for key in self._slots_of(shown):
            together |= rect(self.slots.get(key), self.layout.slots[key])
        return alone, together

    def _slots_of(self, node_id: str) -> list[SlotKey]:
        """The laid-out saved values of ``node_id``, filed once: following a run asks for a node
        and its neighbours every step, and a walk over every slot of a big layout took 0.4 ms each."""
        if self._slot_keys is None:
            self._slot_keys = {}
            for key in self.layout.slots:
                self._slot_keys.setdefault(key[0], []).append(key)
        return self._slot_keys.get(node_id, [])

    # -- building (once) -----------------------------------------------------
    def build(self) -> Iterator[None]:
        """Make every item not made yet, frames first; yields after each edge, node (with its saved
        values) and proxy."""
        self._build_frames()
        for edge in self.layout.edges:
            if edge not in self.edges:
                self._build_edge(edge)
                yield None
        for node in self.graph.nodes:
            if node.id not in self.nodes:
                self._build_node(node.id)
                yield None
        for edge in self.layout.proxies:
            if edge not in self.proxy_of:
                self._build_proxy(edge)
                yield None

    @property
    def built(self) -> bool:
        """Whether every item is made."""
        return (
            len(self.edges) == len(self.layout.edges)
            and len(self.nodes) == len(self.graph.nodes)
            and (len(self.proxy_of) == len(self.layout.proxies))
        )

    def build_within(self, seen: QRectF) -> int:
        """Make now the items drawn within ``seen`` (scene units) not made yet: NOTE [build what is
        seen first]. Returns how many were made."""
        if self.built_over(seen):
            return 0
        self._build_frames()
        s = self.spread
        made = 0
        for kind, key in self.layout.places.within(
            seen.left() / s, seen.top() / s, seen.right() / s, seen.bottom() / s
        ):
            if kind == "edge" and key not in self.edges:
                self._build_edge(cast("Edge", key))
            elif kind == "node" and key not in self.nodes and key in self.graph:
                self._build_node(cast("str", key))
            elif kind == "proxy" and key not in self.proxy_of:
                self._build_proxy(cast("Edge", key))
            else:
                continue
            made += 1
        self._seen_built = [*self._seen_built[-7:], QRectF(seen)]  # the last few views: pans come back
        return made

    def built_over(self, seen: QRectF) -> bool:
        """Whether every item drawn within ``seen`` is made."""
        return self.built or any(rect.contains(seen) for rect in self._seen_built)

    def _build_edge(self, edge: Edge) -> None:
        state, style = self.looks.edge(edge)
        line = EdgeItem(self.layout.edges[edge], state, style, key=edge, looks=self.looks)
        line.setScale(self.spread)
        self.edges[edge] = self._add(line)

    def _build_node(self, node_id: str) -> None:
        """The node's box, with the boxes of its saved values and their dotted lines."""
        looks, node = self.looks, self.graph.node(node_id)
        self.nodes[node_id] = self._add_box(NodeItem(node, self.layout.nodes[node_id], looks))
        for slot in drawn_slots(node):
            key = (node_id, slot.name)
            item = self.slots[key] = self._add_box(SlotItem(node_id, slot, self.layout.slots[key], looks))
            dotted = self.layout.slot_edges.get(key)
            if dotted is not None:
                state, style = looks.slot_line(key, cast("SlotShow", item.painted_state))
                line = EdgeItem(dotted, state, style, to_slot=True, key=key, looks=looks)
                line.setScale(self.spread)
                self.slot_edges[key] = self._add(line)

    def _build_proxy(self, edge: Edge) -> None:
        proxy = ProxyItem(self.graph.node(edge.dst), edge.src, self.layout.proxies[edge], self.looks)
        self.proxies.setdefault(edge.dst, []).append(self._add_box(proxy))
        self.proxy_of[edge] = proxy

    def _build_frames(self) -> None:
        """One frame per loop iteration the layout placed (dot_source's NOTE [iteration clusters])
        and one per module drawn expanded (NOTE [module groups]); once."""
        if self._framed:
            return
        self._framed = True
        groups: list[tuple[str, str, tuple[str, ...], str | None]]
        groups = [(g.name, g.label, g.nodes, None) for g in iterations(self.graph)]
        groups += [(g.name, g.module, g.nodes, g.name) for g in module_groups(self.graph)]
        for name, label, nodes, module in groups:
            box = self.layout.clusters.get(name)
            if box is None:
                continue
            frame = ClusterItem(name, label, box, self.looks, module)
            frame.set_fonts(self.fonts)
            frame.place(self.spread)
            frame.setVisible(not self.overview)  # NOTE [overview]: the overview draws the frames
            self.scene.addItem(frame)
            self.clusters[name] = frame
            for node_id in nodes:
                self.cluster_of.setdefault(node_id, []).append(name)

    def _add(self, item: EdgeItem) -> EdgeItem:
        if (item.min_lod and not self.details) or self.overview:
            item.setVisible(False)
        self.scene.addItem(item)
        return item

    def _add_box(self, item: _Item) -> _Item:
        assert isinstance(item, BoxItem)
        fonts = self.fonts
        item.set_fonts(fonts, fonts.node_px if isinstance(item, NodeItem) else fonts.slot_px)
        if self.spread != 1.0:
            item.place(self.spread)
        if self.overview or (not isinstance(item, NodeItem) and not self.details):
            item.setVisible(False)
        self.scene.addItem(item)
        return item

    # -- showing -------------------------------------------------------------
    def show_details(self, visible: bool) -> None:
        """Show or hide saved values, their dotted lines and proxies."""
        self.details = visible
        for item in self._details():
            item.setVisible(visible)

    def show_overview(self, on: bool) -> None:
        """Hide the nodes, edges and frames for the overview, or show them again."""
        self.overview = on
        for item in (*self.nodes.values(), *self.edges.values(), *self.clusters.values()):
            item.setVisible(not on)

    def _details(self) -> Iterator[QGraphicsItem]:
        yield from self.slots.values()
        yield from self.slot_edges.values()
        for items in self.proxies.values():
            yield from items

    def _boxes(self) -> Iterator[BoxItem]:
        yield from self.nodes.values()
        yield from self.slots.values()
        for items in self.proxies.values():
            yield from items

    # -- restyling -----------------------------------------------------------
    def restyle(
        self, nodes: Iterable[str], slots: Iterable[SlotKey], edges: Iterable[Edge]
    ) -> tuple[int, int]:
        """Restyle the built items of ``nodes``, ``slots`` (with their dotted lines) and ``edges``
        (with the proxy at a long edge's end): how many were restyled, and how many of them changed
        look. NOTE [a proxy goes with its edge]"""
        done = changed = 0
        for node_id in nodes:
            node = self.nodes.get(node_id)
            if node is not None:
                done += 1
                changed += self._restyle_node(node)
        for key in slots:
            slot = self.slots.get(key)
            if slot is not None:
                done += 1
                changed += self._restyle_slot(slot)
        for edge in edges:
            line = self.edges.get(edge)
            if line is not None:
                done += 1
                changed += line.restyle()
            proxy = self.proxy_of.get(edge)
            if proxy is not None:
                done += 1
                changed += proxy.restyle()
        return done, changed

    def restyle_frames(self, nodes: Iterable[str]) -> list[ClusterItem]:
        """Restyle the frames around ``nodes`` (a frame changes look only where one of its nodes
        is built or gone: a changed node); the frames that changed."""
        names = {name for n in nodes for name in self.cluster_of.get(n, ())}
        return [frame for name in names if (frame := self.clusters.get(name)) is not None and frame.restyle()]

    def _restyle_node(self, node: NodeItem) -> bool:
        # NOTE [a proxy goes with its edge]: a weight every iteration of a loop reads has a proxy
        # at each of its long edges, ~200 of them, drawn across the whole graph; restyled with
        # their node they were restyled at every step of it, though a view shows one or two.
        # A node's change restyles every edge at it (DrawnStates.changes), so a proxy is
        # restyled with its long edge, and like an edge it waits while off screen
        # (NOTE [restyle off screen later]).
        return node.set_look(*self.looks.node(node.node_id))

    def _restyle_slot(self, slot: SlotItem) -> bool:
        state, style, note = self.looks.slot(slot.key)
        changed = slot.set_look(state, style, note)
        line = self.slot_edges.get(slot.key)
        if line is not None:
            line.set_look(*self.looks.slot_line(slot.key, state))
        return changed
