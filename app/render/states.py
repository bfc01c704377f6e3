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

from collections.abc import Iterable
from dataclasses import dataclass, field

from app.core.model.graph import Edge, GraphNode
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, StepState
from app.render.dot_source import iterations
from app.render.labels import drawn_slots, node_kinds, version_text
from app.render.style import ClusterState, EdgeState, NodeKind, NodeState, SlotShow

__all__ = ["Changes", "ShownStates"]


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
        self.value_slots = frozenset(
            (n.id, s.name) for n in graph.nodes for s in drawn_slots(n) if s.kind == "value"
        )
        self.slots_of = {n.id: tuple((n.id, s.name) for s in drawn_slots(n)) for n in graph.nodes}
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
            group.name: _span(graph.node(n) for n in group.nodes) for group in iterations(graph)
        }  # cluster -> (step its first node is built, step its last node is gone)
        self._ran = _Ran()
        self._memo: dict[int, dict[str, NodeState]] = {}  # the last two steps asked for
        self._last = -1

    # -- per item -------------------------------------------------------
    def node_state(self, state: StepState, node_id: str) -> NodeState:
        if node_id not in state.visible_nodes:
            return "hidden"
        shown = self.active(state).get(node_id)
        if shown in ("running", "failed"):
            return shown
        return "gone" if node_id in state.gone else shown or "idle"

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
        return cache.nodes if step.kind != "node" else {n: None for n in cache.nodes if n != step.node}

    def changes(self, before: StepState | None, after: StepState) -> Changes:
        """What to restyle going from ``before`` to ``after`` (everything when ``before`` is None)."""
        graph = self.recording.graph
        if before is None:
            nodes: set[str] = {n.id for n in graph.nodes}
            slots: set[SlotKey] = {k for keys in self.slots_of.values() for k in keys}
        else:
            slots, nodes = self.recording.timeline.changed_between(before.step.index, after.step.index)
            old, new = self.active(before), self.active(after)
            nodes |= {n for n in old.keys() | new.keys() if old.get(n) != new.get(n)}
            nodes |= {n for n in (before.step.node, after.step.node) if n is not None}
            slots |= {k for n in nodes for k in self.slots_of.get(n, ())}
        return Changes(frozenset(nodes), frozenset(slots), frozenset(self._edges(nodes)))

    def _edges(self, nodes: Iterable[str]) -> set[Edge]:
        return {e for n in nodes for e in self.edges_of.get(n, ())}


def _span(nodes: Iterable[GraphNode]) -> tuple[int, int | None]:
    """First step any of ``nodes`` is built, and the step the last of them is gone (None: never)."""
    built, gone = [], []
    for node in nodes:
        built.append(node.created_at_step or 0)
        gone.append(node.gone_at_step)
    last_gone = None if not gone or None in gone else max(g for g in gone if g is not None)
    return min(built, default=0), last_gone
