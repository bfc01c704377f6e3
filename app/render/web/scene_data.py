"""The drawn graph of a recording as plain data for the player page: boxes once, looks per step.

# NOTE [looks as changes]
The page draws every box, saved value, edge and frame once, at the places the
window's Graphviz layout gave them (``layout.py``'s NOTE [layout once]), and a
step restyles only what changed, as the window's scene does (scene.py's NOTE
[restyle, never rebuild]). Which items change and how they look come from the
window's own :class:`~app.render.states.DrawnStates` (``changes``,
``node_state``, ``slot_state``...), asked once per step here, never computed
again in the page: each drawn item gets a look at step 0 and, per later step,
the items whose look differs from the step before, as ``[item, look, ...]``
pairs of small integers (a look is an index into :attr:`SceneData.looks`). The
page keeps the looks in flat arrays, so a jump of any length applies the
changes between the two steps and restyles each touched item once.

Items are numbered nodes first, then saved values, edges and frames (a saved
value's dotted line and a node's stand-ins follow their own item's look).

>>> from app.core import load_builtin, record
>>> from app.render.layout import layout_graph
>>> rec = record(load_builtin("forgot-retain"))
>>> data = scene_data(rec, layout_graph(rec.graph))
>>> looks = list(data.initial)
>>> for changes in data.changes:  # every step's changes applied: the last step
...     for item, look in zip(changes[::2], changes[1::2]):
...         looks[item] = look
>>> failed = [row[0] for row in data.items["nodes"]].index(rec.calls[1].failed_node)
>>> data.looks[looks[failed]], len(data.changes) == len(rec.timeline)
('n:failed', True)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.model.graph import Edge, Graph
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, StepState
from app.render.dot_source import iterations
from app.render.labels import drawn_slots, node_kinds, node_lines, proxy_lines, tensor_detail, value_lines
from app.render.layout import Box, EdgePath, Layout
from app.render.modules import fold, module_groups
from app.render.states import DrawnStates, ShownStates

__all__ = ["SceneData", "scene_data"]


@dataclass(frozen=True)
class SceneData:
    """Geometry and text of every drawn item, and their looks step by step (NOTE [looks as changes])."""

    width: float
    height: float
    items: dict[str, list[Any]]  # nodes, slots, edges, slot_edges, proxies, clusters: rows of columns
    looks: list[str]  # "n:running", "s:freed|gone|saved at v0, now v1", "e:flow", "c:hidden"
    initial: list[int]  # each item's look at step 0
    changes: list[list[int]]  # per step: [item, look, item, look, ...] against the step before
    focus: list[int]  # per step: the node it is about (the one running, else the newest made), or -1

    def json(self) -> dict[str, Any]:
        return {
            "focus": self.focus,
            "width": _r(self.width),
            "height": _r(self.height),
            "items": self.items,
            "looks": self.looks,
            "initial": self.initial,
            "changes": self.changes,
        }


def _r(value: float) -> float:
    """A coordinate to a tenth of a point: a tenth of a pixel at 1:1, a third of the page's bytes."""
    return round(value, 1)


def _box(box: Box) -> list[float]:
    return [_r(box.x), _r(box.y), _r(box.width), _r(box.height)]


def _path(path: EdgePath) -> list[Any]:
    flat = [_r(v) for point in path.points for v in point]
    return [flat, None if path.arrow is None else [_r(path.arrow[0]), _r(path.arrow[1])]]


class _Items:
    """The drawn items in page order, and how to read each one's look at a step."""

    def __init__(self, recording: Recording, layout: Layout) -> None:
        self.folded = fold(recording.graph, layout.collapsed)
        self.drawn = DrawnStates(ShownStates(recording), self.folded)
        graph: Graph = self.folded.graph
        self.layout, self.graph = layout, graph
        self.node_ids = [n.id for n in graph.nodes]
        self.node_index = {node_id: i for i, node_id in enumerate(self.node_ids)}
        self.slot_keys: list[SlotKey] = [
            (n.id, s.name) for n in graph.nodes for s in drawn_slots(n) if (n.id, s.name) in layout.slots
        ]
        self.edges: list[Edge] = [e for e in layout.edges if e.src in self.node_index]
        self.clusters = [
            (name, label, box)
            for name, label in [(g.name, g.label) for g in iterations(graph)]
            + [(g.name, g.module) for g in module_groups(graph)]
            if (box := layout.clusters.get(name)) is not None
        ]
        first_slot = len(self.node_ids)
        self.slot_index = {key: first_slot + i for i, key in enumerate(self.slot_keys)}
        first_edge = first_slot + len(self.slot_keys)
        self.edge_index = {edge: first_edge + i for i, edge in enumerate(self.edges)}
        self.first_cluster = first_edge + len(self.edges)

    def rows(self) -> dict[str, list[Any]]:
        graph, layout, kinds = self.graph, self.layout, node_kinds(self.graph)
        nodes = [
            [n.id, kinds[n.id], *_box(layout.nodes[n.id]), list(node_lines(n)), self.folded.is_box(n.id)]
            for n in graph.nodes
        ]
        slots = []
        for node_id, name in self.slot_keys:
            slot = next(s for s in drawn_slots(graph.node(node_id)) if s.name == name)
            body = list(value_lines(slot)) if slot.kind == "value" else [tensor_detail(slot)]
            dotted = layout.slot_edges.get((node_id, name))
            row = [self.node_index[node_id], name, slot.kind, *_box(layout.slots[(node_id, name)]), body]
            slots.append([*row, None if dotted is None else _path(dotted)])
        edges = [
            [self.node_index[e.src], self.node_index[e.dst], *_path(layout.edges[e])] for e in self.edges
        ]
        proxies = [
            [self.node_index[e.dst], *_box(box), list(proxy_lines(graph.node(e.dst)))]
            for e, box in layout.proxies.items()
            if e.dst in self.node_index
        ]
        clusters = [[name, label, *_box(box)] for name, label, box in self.clusters]
        return {"nodes": nodes, "slots": slots, "edges": edges, "proxies": proxies, "clusters": clusters}

    def looks(
        self, state: StepState, nodes: Sequence[str], slots: Sequence[SlotKey], edges: Sequence[Edge]
    ) -> Iterator[tuple[int, str]]:
        drawn, index = self.drawn, self.node_index
        for node_id in nodes:
            if node_id in index:
                yield index[node_id], "n:" + drawn.node_state(state, node_id)
        for key in slots:
            if key in self.slot_index:
                gone = "gone" if drawn.is_gone(state, key[0]) else ""
                note = drawn.version_note(state, key)
                yield self.slot_index[key], f"s:{drawn.slot_state(state, key)}|{gone}|{note}"
        for edge in edges:
            if edge in self.edge_index:
                yield self.edge_index[edge], "e:" + drawn.edge_state(state, edge)

    def focus(self, recording: Recording) -> list[int]:
        """Per step, the drawn node the step is about, as the window's "follow the running node"
        picks it: the node a backward step runs (or failed at), else the newest node its line made."""
        out = []
        for step in recording.timeline.steps:
            node = step.node if step.node is not None else (step.added_nodes or (None,))[-1]
            drawn = None if node is None else self.folded.shown_as(node)
            out.append(self.node_index.get(drawn, -1) if drawn is not None else -1)
        return out

    def cluster_looks(self, state: StepState) -> Iterator[tuple[int, str]]:
        for i, (name, _, _) in enumerate(self.clusters):
            yield self.first_cluster + i, "c:" + self.drawn.cluster_state(state, name)


def _cluster_turns(items: _Items, recording: Recording) -> dict[int, list[int]]:
    """The steps at which some frame's look may change: where its first node is built and where its
    last is gone (``ShownStates.clusters``); every other step leaves every frame as it was."""
    turns: dict[int, list[int]] = {}
    spans = items.drawn.shown.clusters
    for i, (name, _, _) in enumerate(items.clusters):
        built, gone = spans.get(name, (0, None))
        for at in (built, gone):
            if at is not None and 0 < at < len(recording.timeline):
                turns.setdefault(at, []).append(i)
    return turns


def scene_data(recording: Recording, layout: Layout) -> SceneData:
    """Every drawn item of ``recording`` placed by ``layout``, and its look at every step."""
    items = _Items(recording, layout)
    looks: list[str] = []
    code: dict[str, int] = {}

    def look_code(look: str) -> int:
        if look not in code:
            code[look] = len(looks)
            looks.append(look)
        return code[look]

    timeline = recording.timeline
    if not len(timeline):
        return SceneData(layout.width, layout.height, items.rows(), [], [], [], [])
    first = timeline.state(0)
    every = items.looks(first, items.node_ids, items.slot_keys, items.edges)
    current = dict(every)
    current.update(items.cluster_looks(first))
    initial = [look_code(current[i]) for i in range(len(current))]
    changes: list[list[int]] = [[]]
    turns = _cluster_turns(items, recording)
    before = first
    for index in range(1, len(timeline)):
        after = timeline.state(index)
        changed = items.drawn.changes(before, after)
        pairs = list(items.looks(after, list(changed.nodes), list(changed.slots), list(changed.edges)))
        frames = items.clusters
        pairs += [
            (items.first_cluster + i, "c:" + items.drawn.cluster_state(after, frames[i][0]))
            for i in turns.get(index, ())
        ]
        flat: list[int] = []
        for item, look in sorted(pairs):
            if current.get(item) != look:
                current[item] = look
                flat += (item, look_code(look))
        changes.append(flat)
        before = after
    return SceneData(
        layout.width, layout.height, items.rows(), looks, initial, changes, items.focus(recording)
    )
