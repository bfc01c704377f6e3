"""Nodes grouped by the ``nn.Module`` that made them; a group can be drawn collapsed to one box (Qt-free).

# NOTE [module groups]
A node recorded from a script knows the module whose ``forward`` made it
(``GraphNode.module``, a dotted path such as ``model.layers.3.self_attn``).
The nodes of one module in one loop iteration form a group, drawn as a
Graphviz cluster inside the iteration's cluster (dot_source's NOTE [iteration
clusters]); leaves (parameters) join their module's group outside any
iteration. A collapsed group is drawn as one box: the module's name, how many
nodes it holds, the bytes their saved tensors hold, a state summing up its
nodes' states, and beside it one saved-value box with the worst state of its
saved tensors. Edges into and out of the group are drawn to the box.

:func:`fold` makes the graph as drawn for a set of collapsed groups; the
layout of that graph is made once per set (``layout.py``'s NOTE [layout
once]), never per step. A graph of more than ``COLLAPSE_ABOVE`` nodes is first
laid out with every group collapsed.

>>> from app.core.model.graph import Edge, Graph, GraphNode, SavedSlot
>>> mat = SavedSlot("mat1", "tensor", (2, 4), "float32", "cpu", 32)
>>> g = Graph((GraphNode("n0", "SumBackward0", "loss"),
...            GraphNode("n1", "AddmmBackward0", None, (mat,), module="model.0"),
...            GraphNode("n2", "AccumulateGrad", "model.0.bias", is_leaf=True, module="model.0")),
...           (Edge("n0", "n1"), Edge("n1", "n2")))
>>> [(m.name, m.module, m.nodes) for m in module_groups(g)]
[('cluster_m_model.0', 'model.0', ('n1', 'n2'))]
>>> drawn = fold(g, {"cluster_m_model.0"})
>>> [n.id for n in drawn.graph.nodes], drawn.graph.edges
(['n0', 'm:model.0'], (Edge(src='n0', dst='m:model.0'),))
>>> box = drawn.graph.node("m:model.0")
>>> box.name, box.label, [(s.name, s.nbytes) for s in box.saved]
('model.0', '2 nodes · 32 B saved', [('1 tensor', 32)])
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from app.core.model.graph import Edge, Graph, GraphNode, LoopMark, SavedSlot
from app.core.model.text import format_bytes

__all__ = [
    "COLLAPSE_ABOVE",
    "Folded",
    "ModuleGroup",
    "box_id",
    "default_collapsed",
    "fold",
    "iteration_key",
    "module_groups",
]

COLLAPSE_ABOVE = 300  # graphs with more nodes than this open with every module collapsed


def iteration_key(node: GraphNode) -> tuple[LoopMark, ...]:
    """The loop iteration whose cluster holds ``node`` (leaves belong to no iteration)."""
    return () if node.is_leaf else node.loops


def iteration_part(loops: tuple[LoopMark, ...]) -> str:
    """``3x1`` for the ``for`` on line 3, iteration 1; nested loops joined by ``_``."""
    return "_".join(f"{m.line}x{m.index}" for m in loops)


@dataclass(frozen=True)
class ModuleGroup:
    """The nodes one module made in one loop iteration (NOTE [module groups])."""

    name: str  # its DOT cluster: cluster_m_model.0, or cluster_3x1_m_model.0 inside an iteration
    module: str
    loops: tuple[LoopMark, ...]
    nodes: tuple[str, ...]


def box_id(group: ModuleGroup) -> str:
    """The id of the box a collapsed group is drawn as (never a node's ``n<k>``)."""
    part = iteration_part(group.loops)
    return f"m:{part}:{group.module}" if part else f"m:{group.module}"


def module_groups(graph: Graph) -> tuple[ModuleGroup, ...]:
    """Every group of nodes made by one module in one iteration, in the order first made."""
    members: dict[tuple[tuple[LoopMark, ...], str], list[str]] = {}
    for node in graph.nodes:
        if node.module:
            members.setdefault((iteration_key(node), node.module), []).append(node.id)
    out = []
    for (loops, module), ids in members.items():
        part = iteration_part(loops)
        name = f"cluster_{part}_m_{module}" if part else f"cluster_m_{module}"
        out.append(ModuleGroup(name, module, loops, tuple(ids)))
    return tuple(out)


def default_collapsed(graph: Graph) -> frozenset[str]:
    """The groups a graph is first drawn with collapsed: all of them above ``COLLAPSE_ABOVE`` nodes."""
    if len(graph) <= COLLAPSE_ABOVE:
        return frozenset()
    return frozenset(g.name for g in module_groups(graph))


@dataclass(frozen=True)
class Folded:
    """``graph`` as drawn with some groups collapsed: each such group one box node.

    ``members``: box id -> the ids of the nodes it stands for; ``box_of`` the reverse.
    ``edge_of``: an edge of the recording touching a box -> the edge drawn for it (None inside
    a box); ``real_edges``: a drawn edge touching a box -> the edges of the recording it stands
    for. Every other edge is drawn as itself.
    """

    graph: Graph
    collapsed: frozenset[str]
    groups: Mapping[str, ModuleGroup]  # box id -> its group
    members: Mapping[str, tuple[str, ...]]
    box_of: Mapping[str, str]
    edge_of: Mapping[Edge, Edge | None]
    real_edges: Mapping[Edge, tuple[Edge, ...]]

    def is_box(self, node_id: str) -> bool:
        return node_id in self.members

    def box_named(self, group: str) -> str | None:
        """The box drawn for the collapsed group named ``group`` (None while it is expanded)."""
        return next((box for box, found in self.groups.items() if found.name == group), None)

    def shown_as(self, node_id: str) -> str:
        """The drawn node that shows ``node_id``: its box when its group is collapsed, else itself."""
        return self.box_of.get(node_id, node_id)


def fold(graph: Graph, collapsed: Collection[str]) -> Folded:
    """The graph drawn with the groups named in ``collapsed`` each as one box (unknown names are
    ignored). Edges into and out of a group go to its box; edges inside it are not drawn."""
    chosen = [g for g in module_groups(graph) if g.name in collapsed] if collapsed else []
    if not chosen:
        empty: Mapping[str, Any] = MappingProxyType({})
        return Folded(graph, frozenset(), empty, empty, empty, MappingProxyType({}), MappingProxyType({}))
    box_of = {n: box_id(g) for g in chosen for n in g.nodes}
    groups = {box_id(g): g for g in chosen}
    boxes = {box_id(g): _box_node(graph, g) for g in chosen}
    nodes: list[GraphNode] = []
    for node in graph.nodes:  # a box takes the place of its group's first node
        box = box_of.get(node.id)
        if box is None:
            nodes.append(node)
        elif graph.node(groups[box].nodes[0]) is node:
            nodes.append(boxes[box])
    edge_of: dict[Edge, Edge | None] = {}
    real_edges: dict[Edge, list[Edge]] = {}  # every drawn edge, in the recording's order
    for edge in graph.edges:
        drawn = Edge(box_of.get(edge.src, edge.src), box_of.get(edge.dst, edge.dst))
        if drawn == edge:
            real_edges.setdefault(drawn, []).append(edge)
            continue
        edge_of[edge] = None if drawn.src == drawn.dst else drawn
        if drawn.src != drawn.dst:
            real_edges.setdefault(drawn, []).append(edge)
    return Folded(
        graph=Graph(tuple(nodes), tuple(real_edges)),
        collapsed=frozenset(g.name for g in chosen),
        groups=MappingProxyType(groups),
        members=MappingProxyType({box: g.nodes for box, g in groups.items()}),
        box_of=MappingProxyType(box_of),
        edge_of=MappingProxyType(edge_of),
        real_edges=MappingProxyType(
            {e: tuple(real) for e, real in real_edges.items() if e.src in groups or e.dst in groups}
        ),
    )


def saved_bytes(nodes: Iterable[GraphNode]) -> int:
    """The bytes the saved tensors of ``nodes`` hold, as recorded (a slot of unknown size counts 0)."""
    return sum(slot.nbytes or 0 for node in nodes for slot in node.tensor_slots)


def _box_node(graph: Graph, group: ModuleGroup) -> GraphNode:
    members = [graph.node(n) for n in group.nodes]
    tensors = sum(len(n.tensor_slots) for n in members)
    total = saved_bytes(members)
    count = len(members)
    label = f"{count} node{'s' * (count != 1)} · {format_bytes(total)} saved"
    summary = (
        (SavedSlot(f"{tensors} tensor{'s' * (tensors != 1)}", "tensor", nbytes=total),) if tensors else ()
    )
    built = [n.created_at_step for n in members if n.created_at_step is not None]
    gone = [n.gone_at_step for n in members]
    return GraphNode(
        box_id(group),
        group.module,
        label,
        summary,
        loops=group.loops,
        created_at_step=min(built) if built else None,
        gone_at_step=None if None in gone else max(g for g in gone if g is not None),
    )
