"""Graphviz DOT text for a captured :class:`~app.core.graph.Graph`, in torchviz's look.

As in torchviz ``make_dot(show_saved=True)``: backward nodes are lightgrey
boxes, leaves (AccumulateGrad) lightblue, the outputs (losses)
darkolivegreen1, and saved tensors small orange boxes hanging off their node
by an undirected (here dotted) edge. Arrows go from a node's
``next_functions`` to the node, so leaves sit on top and losses at the bottom.
Non-tensor saved values (``exponent = 2``) get boxes too, rounded and pale.

Ids are ours (``n3``, ``n3.self``), never ``id()``; every fact comes from the
``Graph``, so no ``_saved_*`` attribute is read again (it may be freed).

>>> from app.core.graph import Edge, Graph, GraphNode
>>> leaf = GraphNode("n1", "AccumulateGrad", "x", is_leaf=True)
>>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), leaf), (Edge("n0", "n1"),))
>>> print(dot_source(g).splitlines()[-2])
  "n1" -> "n0";
"""

from __future__ import annotations

from app.core.graph import Graph, GraphNode, SavedSlot

from .labels import FONT_FAMILY, NODE_FONT_PX, SLOT_FONT_PX, drawn_slots, node_kinds, node_lines, slot_lines
from .style import NODE_TAGS, NodeKind, slot_tags

__all__ = ["LARGE_GRAPH", "dot_source", "slot_dot_id"]

LARGE_GRAPH = 500  # above this many nodes, bound dot's crossing minimisation (layout time)
KIND_FILL: dict[NodeKind, str] = {"op": "lightgrey", "leaf": "lightblue", "root": "darkolivegreen1"}
TENSOR_FILL = "orange"
VALUE_FILL = "gray96"


def slot_dot_id(node_id: str, slot: str) -> str:
    """The DOT name of a saved slot's box: ``n3.self`` (as in ``app.core.graph``'s NOTE)."""
    return f"{node_id}.{slot}"


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ")
    return f'"{escaped}"'


def _label(lines: tuple[str, ...]) -> str:
    return "\\n".join(_quote(line)[1:-1] for line in lines)


def _widest(tags: tuple[str, ...]) -> str:
    return max(tags, key=len)


def _node_stmt(node: GraphNode, kind: NodeKind, reserve_tags: bool) -> str:
    lines = node_lines(node) + ((_widest(tuple(NODE_TAGS.values())),) if reserve_tags else ())
    return f'  {_quote(node.id)} [label="{_label(lines)}", fillcolor={KIND_FILL[kind]}];'


def _slot_stmts(node: GraphNode, slot: SavedSlot, reserve_tags: bool) -> list[str]:
    name = _quote(slot_dot_id(node.id, slot.name))
    tag = _widest(slot_tags(slot.kind)) if reserve_tags else ""
    label = _label(slot_lines(slot, tag))
    if slot.kind == "value":
        attrs = f'fillcolor={VALUE_FILL}, style="filled,rounded"'
    else:
        attrs = f"fillcolor={TENSOR_FILL}"
    return [
        f'  {name} [label="{label}", fontsize={SLOT_FONT_PX:g}, {attrs}];',
        f"  {_quote(node.id)} -> {name} [dir=none, style=dotted];",
    ]


def _header(graph: Graph) -> list[str]:
    speed = ", nslimit=2, mclimit=0.5, searchsize=20" if len(graph) > LARGE_GRAPH else ""
    return [
        "digraph autograd {",
        f"  graph [rankdir=TB, nodesep=0.3, ranksep=0.4{speed}];",
        f'  node [shape=box, style=filled, fontname="{FONT_FAMILY}", fontsize={NODE_FONT_PX:g}, '
        'margin="0.18,0.08"];',
        f'  edge [fontname="{FONT_FAMILY}"];',
    ]


def dot_source(graph: Graph, *, reserve_tags: bool = False) -> str:
    """DOT text for ``graph``.

    ``reserve_tags`` adds the widest state tag to each label so that the boxes
    Graphviz sizes have room for any state the view will write in them.
    """
    kinds = node_kinds(graph)
    lines = _header(graph)
    for node in graph.nodes:
        lines.append(_node_stmt(node, kinds[node.id], reserve_tags))
        for slot in drawn_slots(node):
            lines.extend(_slot_stmts(node, slot, reserve_tags))
    lines.extend(f"  {_quote(e.dst)} -> {_quote(e.src)};" for e in graph.edges)
    lines.append("}")
    return "\n".join(lines) + "\n"
