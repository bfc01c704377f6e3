"""What each box shows at one step, read from a recording (Qt-free).

The recording is the only source of facts: slot states come from
``StepState.slots``, versions from ``StepState.versions``, visibility from
``StepState.visible_nodes``, gone nodes from ``StepState.gone``, and which
node runs, ran or failed from the steps of the current call. Nothing here
computes autograd facts of its own.

>>> from app.core import load_builtin, record
>>> rec = record(load_builtin("forgot-retain"))
>>> shown = ShownStates(rec)
>>> last = rec.timeline.state(len(rec.timeline) - 1)
>>> failed = rec.calls[1].failed_node
>>> shown.node_state(last, failed), shown.slot_state(last, (failed, "self"))
('failed', 'freed')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import cast

from app.core.model.graph import Edge, GraphNode
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, StepState
from app.render.dot_source import iterations
from app.render.labels import drawn_slot_table, node_kinds, version_text
from app.render.modules import Folded, fold, module_groups
from app.render.style import ClusterState, EdgeState, NodeKind, NodeState, SlotShow

__all__ = ["Changes", "DrawnStates", "ShownStates"]

# a collapsed module's box shows the first of these its nodes are in (the most telling)
NODE_SUMMARY: tuple[NodeState, ...] = ("failed", "running", "done", "idle", "gone", "hidden")
# and its saved-value box the worst state of its saved tensors: freed beats retained beats alive
SLOT_SUMMARY: tuple[SlotShow, ...] = ("modified", "freed", "retained", "alive", "unknown", "value", "hidden")
EDGE_SUMMARY: tuple[EdgeState, ...] = ("flow", "normal", "gone", "hidden")


@dataclass(frozen=True)
class Changes:
    """Boxes and edges whose look may differ between two steps."""

    nodes: frozenset[str]
    slots: frozenset[SlotKey]
    edges: frozenset[Edge]


@dataclass
class _Ran:
    """Nodes that ran in one call up to one step (cached: stepping forward extends it)."""

    call: int | None = None
    index: int = -1
    nodes: dict[str, None] = field(default_factory=dict)


class ShownStates:
    """Maps steps of one recording to node, slot and edge states for drawing."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        graph = recording.graph
        self.kinds: dict[str, NodeKind] = node_kinds(graph)
        self.all_nodes = frozenset(n.id for n in graph.nodes)
        drawn = drawn_slot_table(graph).items()  # shared with the layout's reader: NOTE [drawn slot table]
        self.value_slots = frozenset(
            (node, s.name) for node, slots in drawn for s in slots if s.kind == "value"
        )
        self.slots_of = {node: tuple((node, s.name) for s in slots) for node, slots in drawn}
        self.saved_versions = {
            (n.id, s.name): s.saved_version
            for n in graph.nodes
            for s in n.tensor_slots
            if s.saved_version is not None
        }
        self.edges_of: dict[str, list[Edge]] = {n.id: [] for n in graph.nodes}
        for edge in graph.edges:
            self.edges_of[edge.src].append(edge)
            self.edges_of[edge.dst].append(edge)
        self.clusters: dict[str, tuple[int, int | None]] = {
            name: _span(graph.node(n) for n in nodes)
            for name, nodes in [(g.name, g.nodes) for g in iterations(graph)]
            + [(g.name, g.nodes) for g in module_groups(graph)]
        }  # cluster (an iteration's, a module's) -> (step its first node is built, step its last is gone)
        self._ran = _Ran()
        self._memo: dict[int, dict[str, NodeState]] = {}  # the last two steps asked for
        self._last = -1
        self._all_visible: tuple[frozenset[str], bool] | None = None  # a step's visible set: all?

    # -- per item -------------------------------------------------------
    def node_state(self, state: StepState, node_id: str) -> NodeState:
        if node_id not in state.visible_nodes:
            return "hidden"
        step = state.step  # as active() says, without copying what ran (a 20,000-node call)
        if step.node == node_id and step.kind in ("node", "error"):
            return "running" if step.kind == "node" else "failed"
        if node_id in state.gone:
            return "gone"
        return "done" if node_id in self._ran_before(state) else "idle"

    def is_gone(self, state: StepState, node_id: str) -> bool:
        """Whether nothing the program holds reaches ``node_id`` at this step (its boxes fade)."""
        return node_id in state.gone and node_id in state.visible_nodes

    def version_note(self, state: StepState, key: SlotKey) -> str:
        """``saved at v0, now v1`` when the saved tensor changed in place since it was saved, else ``""``."""
        saved = self.saved_versions.get(key)
        now = state.versions.get(key)
        if saved is None or now is None or now == saved or key[0] not in state.visible_nodes:
            return ""
        return version_text(saved, now)

    def slot_state(self, state: StepState, key: SlotKey) -> SlotShow:
        if key[0] not in state.visible_nodes:
            return "hidden"
        if key in self.value_slots:
            return "value"
        return state.slots.get(key, "unknown")

    def edge_state(self, state: StepState, edge: Edge) -> EdgeState:
        if edge.src not in state.visible_nodes or edge.dst not in state.visible_nodes:
            return "hidden"
        step = state.step
        if step.kind == "node" and step.node == edge.src:
            return "flow"
        return "gone" if edge.src in state.gone else "normal"

    def cluster_state(self, state: StepState, name: str) -> ClusterState:
        """A loop iteration's frame: ``hidden`` before its first node, ``gone`` once all its nodes are."""
        built, gone = self.clusters[name]
        index = state.step.index
        if index < built:
            return "hidden"
        return "gone" if gone is not None and index >= gone else "normal"

    # -- per step -------------------------------------------------------
    def active(self, state: StepState) -> dict[str, NodeState]:
        """Nodes that are running, ran earlier in this call, or failed; others are idle."""
        step = state.step
        if step.index in self._memo:
            return self._memo[step.index]
        out: dict[str, NodeState] = dict.fromkeys(self._ran_before(state), "done")
        if step.node is not None and step.kind == "node":
            out[step.node] = "running"
        elif step.node is not None and step.kind == "error":
            out[step.node] = "failed"
        self._memo = {k: v for k, v in self._memo.items() if k == self._last} | {step.index: out}
        self._last = step.index
        return out

    def _ran_before(self, state: StepState) -> dict[str, None]:
        step = state.step
        if step.call is None:
            return {}
        cache = self._ran
        if cache.call != step.call or cache.index > step.index:
            first, _ = self.recording.timeline.call_bounds(step.call)
            cache = _Ran(step.call, first - 1, {})
        for earlier in self.recording.timeline.steps[cache.index + 1 : step.index + 1]:
            if earlier.kind == "node" and earlier.node is not None:
                cache.nodes[earlier.node] = None
        cache.index = step.index
        self._ran = cache
        return cache.nodes  # with the running node: its own state (running) is read first

    def summary_state(self, state: StepState, members: frozenset[str]) -> NodeState:
        """The first of ``NODE_SUMMARY`` among the states of ``members`` (a collapsed module's
        box): what ``node_state`` of each would give, by set operations over the members alone
        (restyle_later.py's NOTE [restyle what is seen]).

        >>> from app.core import load_builtin, record
        >>> rec = record(load_builtin("two-losses"))
        >>> shown, nodes = ShownStates(rec), frozenset(n.id for n in rec.graph.nodes)
        >>> states = [rec.timeline.state(i) for i in range(len(rec.timeline))]
        >>> [shown.summary_state(s, nodes) for s in states[:3]]
        ['idle', 'running', 'running']
        """
        return next(self.summary_states(state, [members]))

    def summary_states(self, state: StepState, groups: Iterable[frozenset[str]]) -> Iterator[NodeState]:
        """:meth:`summary_state` of each of ``groups``, what is common to them looked up once."""
        visible, gone, ran = state.visible_nodes, state.gone, self._ran_before(state)
        every = self._every_visible(visible)  # once the forward pass has made them all: no look-ups
        ran_keys = ran.keys()
        step = state.step
        own = step.node if step.kind in ("node", "error") else None
        own_state: NodeState = "running" if step.kind == "node" else "failed"
        for members in groups:
            seen = members if every else members & visible
            if not seen:
                yield "hidden"
            elif own in seen:
                yield own_state
            else:
                live = seen - gone if gone else seen
                if not live:
                    yield "gone"
                elif not ran:
                    yield "idle"
                else:  # looks up the box's few members in the call's many, stopping at the first
                    yield "idle" if ran_keys.isdisjoint(live) else "done"

    def _every_visible(self, visible: frozenset[str]) -> bool:
        """Whether ``visible`` holds every node, compared once per set: a restyle asks for each of
        a call end's boxes, and comparing 20,000 nodes each time was a 2.4 s step."""
        known = self._all_visible
        if known is None or known[0] is not visible:
            known = self._all_visible = (visible, self.all_nodes <= visible)
        return known[1]

    def changed_nodes(self, before: StepState | None, after: StepState) -> set[str]:
        """The nodes of :meth:`changes` alone: what a step restyles while only nodes are seen
        (the overview's dots)."""
        if before is None:
            return set(self.slots_of)
        _, nodes = self.recording.timeline.changed_between(before.step.index, after.step.index)
        nodes |= self._ran_between(before, after)
        nodes.update(n for n in (before.step.node, after.step.node) if n is not None)
        return nodes

    def changes(self, before: StepState | None, after: StepState) -> Changes:
        """What to restyle going from ``before`` to ``after`` (everything when ``before`` is None)."""
        nodes, slots = self.changed_boxes(before, after)
        return Changes(frozenset(nodes), frozenset(slots), frozenset(self.edges_of_nodes(nodes)))

    def changed_boxes(self, before: StepState | None, after: StepState) -> tuple[set[str], set[SlotKey]]:
        """The nodes and saved values of :meth:`changes`, without their edges."""
        nodes, slots = self.changed_parts(before, after)
        if before is not None:  # (from no step, every saved value is among them already)
            slots.update(chain.from_iterable(map(self.slots_of.get, nodes, repeat(()))))
        return nodes, slots

    def changed_parts(self, before: StepState | None, after: StepState) -> tuple[set[str], set[SlotKey]]:
        """The nodes that changed, and the saved values whose own state changed (a changed node's
        other saved values are not among them: :meth:`changed_boxes` adds them)."""
        if before is None:
            return set(self.slots_of), set(chain.from_iterable(self.slots_of.values()))
        slots, _ = self.recording.timeline.changed_between(before.step.index, after.step.index)
        return self.changed_nodes(before, after), slots

    def _ran_between(self, before: StepState, after: StepState) -> set[str]:
        """Nodes whose running, ran or failed look may differ between the two steps. Within one
        call only those that ran between them (a step costs what it changed, not the call's size);
        across calls every node either step's call ran (set operations: a call's end is every
        node of a 20,000-node graph)."""
        b, a = before.step, after.step
        if b.call is not None and b.call == a.call:
            low, high = sorted((b.index, a.index))
            return {s.node for s in self.recording.timeline.steps[low + 1 : high + 1] if s.node is not None}
        # "done" in both but for the running or failed node (a step's own, added by the caller)
        changed = self.active(before).keys() ^ self.active(after).keys()
        changed.update(n for n in (b.node, a.node) if n is not None)
        return changed

    def edges_of_nodes(self, nodes: Iterable[str]) -> set[Edge]:
        """Every edge into or out of ``nodes``."""
        return set(chain.from_iterable(map(self.edges_of.get, nodes, repeat(()))))


def _span(nodes: Iterable[GraphNode]) -> tuple[int, int | None]:
    """First step any of ``nodes`` is built, and the step the last of them is gone (None: never)."""
    built, gone = [], []
    for node in nodes:
        built.append(node.created_at_step or 0)
        gone.append(node.gone_at_step)
    last_gone = None if not gone or None in gone else max(g for g in gone if g is not None)
    return min(built, default=0), last_gone


class DrawnStates:
    """States of what is drawn when some module groups are collapsed (modules.py's NOTE [module
    groups]): a node as :class:`ShownStates` says; a box sums up the nodes it stands for."""

    def __init__(self, shown: ShownStates, folded: Folded | None = None) -> None:
        self.shown = shown
        self.folded = folded if folded is not None else fold(shown.recording.graph, ())
        graph = self.folded.graph
        self.kinds: dict[str, NodeKind] = node_kinds(graph) if self.folded.members else shown.kinds
        self.edges_of: dict[str, list[Edge]] = {box: [] for box in self.folded.members}
        self.tensor_keys: dict[str, tuple[SlotKey, ...]] = {}
        self.summary_slot: dict[str, str] = {}
        self.member_sets = {box: frozenset(nodes) for box, nodes in self.folded.members.items()}
        self.box_of = dict(self.folded.box_of)  # a dict's own get: a mapping proxy's is 10x slower
        self.unboxed = shown.all_nodes.difference(self.box_of)  # the nodes drawn as themselves
        if not self.folded.members:
            return  # nothing collapsed: every node is drawn as itself (the GUI thread makes this)
        for edge in graph.edges:
            for end in (edge.src, edge.dst):
                if end in self.edges_of:
                    self.edges_of[end].append(edge)
        self.tensor_keys = {
            box: tuple((n, s.name) for n in nodes for s in shown.recording.graph.node(n).tensor_slots)
            for box, nodes in self.folded.members.items()
        }
        self.summary_slot = {
            box: graph.node(box).saved[0].name for box in self.tensor_keys if graph.node(box).saved
        }

    def node_state(self, state: StepState, node_id: str) -> NodeState:
        members = self.member_sets.get(node_id)
        if members is None:
            return self.shown.node_state(state, node_id)
        return self.shown.summary_state(state, members)

    def is_gone(self, state: StepState, node_id: str) -> bool:
        if node_id in self.folded.members:
            return self.node_state(state, node_id) == "gone"
        return self.shown.is_gone(state, node_id)

    def slot_state(self, state: StepState, key: SlotKey) -> SlotShow:
        keys = self.tensor_keys.get(key[0])
        if keys is None:
            return self.shown.slot_state(state, key)
        found = {self.shown.slot_state(state, k) for k in keys}
        return next((s for s in SLOT_SUMMARY if s in found), "hidden")

    def version_note(self, state: StepState, key: SlotKey) -> str:
        return "" if key[0] in self.tensor_keys else self.shown.version_note(state, key)

    def edge_state(self, state: StepState, edge: Edge) -> EdgeState:
        real = self.folded.real_edges.get(edge)
        if real is None:  # an edge between two nodes drawn as themselves
            return self.shown.edge_state(state, edge)
        found = {self.shown.edge_state(state, e) for e in real}
        return next((s for s in EDGE_SUMMARY if s in found), "hidden")

    def cluster_state(self, state: StepState, name: str) -> ClusterState:
        return self.shown.cluster_state(state, name)

    def changed_nodes(self, before: StepState | None, after: StepState) -> set[str]:
        """The drawn nodes of :meth:`changes` alone (a box when any of its nodes changed)."""
        nodes = self.shown.changed_nodes(before, after)
        if not self.box_of:
            return nodes
        if len(nodes) <= len(self.member_sets):
            return set(map(self.box_of.get, nodes, nodes))
        # more changed nodes than boxes (a call's end): bounded by what is drawn, not by the call
        drawn = nodes & self.unboxed
        drawn.update(box for box, members in self.member_sets.items() if not members.isdisjoint(nodes))
        return drawn

    def node_states(self, state: StepState, nodes: Iterable[str]) -> Iterator[tuple[str, NodeState]]:
        """``(node, node_state(state, node))`` for each drawn node of ``nodes``; a box sums its
        members up as :meth:`ShownStates.summary_states` does, with the step's sets looked up once."""
        nodes = list(nodes)
        boxes = [n for n in nodes if n in self.member_sets]
        summed = self.shown.summary_states(state, map(self.member_sets.__getitem__, boxes))
        yield from zip(boxes, summed, strict=True)
        for node_id in nodes:
            if node_id not in self.member_sets:
                yield node_id, self.shown.node_state(state, node_id)

    def changes(self, before: StepState | None, after: StepState) -> Changes:
        """What to restyle among the drawn items (a box when any of its nodes changed)."""
        folded = self.folded
        if not folded.members:
            return self.shown.changes(before, after)
        shown, box_of = self.shown, self.box_of
        real_nodes, own_slots = shown.changed_parts(before, after)  # a changed node's slots: below
        nodes = set(map(box_of.get, real_nodes, real_nodes))
        boxes = nodes & folded.members.keys()
        # a changed node's saved values: its box's summary value when it is in one (the box is in
        # ``boxes``), else its own (a call's end of a 20,000-node stack made and filtered every
        # node's keys, ~50 ms)
        slots = {k for k in own_slots if k[0] not in box_of}
        slots.update(chain.from_iterable(map(shown.slots_of.get, nodes - boxes, repeat(()))))
        boxes |= {box_of[k[0]] for k in own_slots if k[0] in box_of}
        slots |= {(b, self.summary_slot[b]) for b in boxes if b in self.summary_slot}
        # The edges drawn to or from what changed. A changed node inside a box has its edges
        # inside the box (not drawn) or drawn to or from the box, every one of which is restyled
        # with it: only the nodes drawn as themselves need their own edges looked up (a call's
        # end of a 20,000-node stack looked up the 20,000 nodes' edges, ~40 ms).
        real_edges = shown.edges_of_nodes(nodes - folded.members.keys())
        drawn: set[Edge | None] = set(map(folded.edge_of.get, real_edges, real_edges))
        drawn.discard(None)  # an edge inside a box is not drawn
        edges = cast("set[Edge]", drawn)
        edges |= {e for b in boxes for e in self.edges_of[b]}
        return Changes(frozenset(nodes), frozenset(slots), frozenset(edges))
