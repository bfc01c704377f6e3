"""Graphviz DOT text for a captured :class:`~app.core.recording.capture.Graph`, in torchviz's look.

As in torchviz ``make_dot(show_saved=True)``: backward nodes are lightgrey
boxes, leaves (AccumulateGrad) lightblue, the outputs (losses)
darkolivegreen1, and saved tensors small orange boxes tied to their node by
an undirected (here dotted) edge. Arrows go from a node's ``next_functions``
to the node, so leaves sit on top and losses at the bottom. Non-tensor saved
values (``exponent = 2``) get boxes too, rounded and pale. Unlike torchviz,
saved values sit *beside* their node, on its rank (see below): a node and
what it saved read as one row, and a chain stays a straight column.

# NOTE [large graphs]
Graphviz's time explodes with edges that span many ranks (a weight shared by
every block of a deep chain: each such edge becomes hundreds of virtual
nodes) and with saved-value boxes on ranks of their own (they crowd the next
node's rank and the chain drifts sideways). So an edge longer than
``MAX_SPAN`` ranks is drawn from a small *proxy* box of its target placed
beside the user (clicking it finds the real node), and saved values share
their node's rank (``rank=same``, laid out by ``newrank``). A 1,000-node
chain goes from minutes to under a second, 5,000 nodes to a few seconds.

Ids are ours (``n3``, ``n3.self``), never ``id()``; every fact comes from the
``Graph``, so no ``_saved_*`` attribute is read again (it may be freed).

>>> from app.core.model.graph import Edge, Graph, GraphNode
>>> leaf = GraphNode("n1", "AccumulateGrad", "x", is_leaf=True)
>>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), leaf), (Edge("n0", "n1"),))
>>> print(dot_source(g).splitlines()[-2])
  "n1" -> "n0" [weight=4];
"""

from __future__ import annotations

from collections import defaultdict

from app.core.model.graph import Edge, Graph, GraphNode, SavedSlot
from app.render.labels import (
    FONT_FAMILY,
    NODE_FONT_PX,
    SLOT_FONT_PX,
    drawn_slots,
    node_kinds,
    node_lines,
    proxy_lines,
    slot_lines,
)
from app.render.style import NODE_TAGS, NodeKind, slot_tags

__all__ = ["MAX_SPAN", "depths", "dot_source", "long_edges", "proxy_dot_id", "slot_dot_id"]

MAX_SPAN = 8  # an edge spanning more ranks than this is drawn from a proxy box
EDGE_WEIGHT = 4  # graph edges pull straighter than the dotted lines to saved values and proxies
KIND_FILL: dict[NodeKind, str] = {"op": "lightgrey", "leaf": "lightblue", "root": "darkolivegreen1"}
TENSOR_FILL = "orange"
VALUE_FILL = "gray96"


def slot_dot_id(node_id: str, slot: str) -> str:
    """The DOT name of a saved slot's box: ``n3.self`` (as in ``app.core.recording.capture``'s NOTE)."""
    return f"{node_id}.{slot}"


def proxy_dot_id(edge: Edge) -> str:
    """The DOT name of the proxy box of ``edge.dst`` drawn beside ``edge.src``."""
    return f"{edge.dst}@{edge.src}"


def depths(graph: Graph) -> dict[str, int]:
    """Longest distance of each node from a root (a loss): roughly its rank in the drawing."""
    children: dict[str, list[str]] = defaultdict(list)
    waiting: dict[str, int] = {n.id: 0 for n in graph.nodes}
    for edge in graph.edges:
        children[edge.src].append(edge.dst)
        waiting[edge.dst] += 1
    depth = dict.fromkeys(waiting, 0)
    ready = [n for n, count in waiting.items() if count == 0]
    while ready:  # Kahn's order; a (never seen) cycle just stops here
        node_id = ready.pop()
        for child in children[node_id]:
            depth[child] = max(depth[child], depth[node_id] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    return depth


def long_edges(graph: Graph, max_span: int = MAX_SPAN) -> frozenset[Edge]:
    """Edges drawn from a proxy box (see NOTE [large graphs]); a node's deepest user keeps a real edge."""
    depth = depths(graph)
    return frozenset(e for e in graph.edges if depth[e.dst] - depth[e.src] > max_span)


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


def _beside(node: GraphNode) -> str:
    names = "; ".join(_quote(slot_dot_id(node.id, s.name)) for s in drawn_slots(node))
    return f"  {{rank=same; {_quote(node.id)}; {names}}}"


def _proxy_stmts(edge: Edge, target: GraphNode, kind: NodeKind) -> list[str]:
    name = _quote(proxy_dot_id(edge))
    return [
        f'  {name} [label="{_label(proxy_lines(target))}", fontsize={SLOT_FONT_PX:g}, '
        f'fillcolor={KIND_FILL[kind]}, style="filled,dashed"];',
        f"  {name} -> {_quote(edge.src)};",
    ]


def _header() -> list[str]:
    return [
        "digraph autograd {",
        "  graph [newrank=true, rankdir=TB, nodesep=0.3, ranksep=0.4];",
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
    lines = _header()
    for node in graph.nodes:
        lines.append(_node_stmt(node, kinds[node.id], reserve_tags))
        for slot in drawn_slots(node):
            lines.extend(_slot_stmts(node, slot, reserve_tags))
        if drawn_slots(node):
            lines.append(_beside(node))
    proxied = long_edges(graph)
    for edge in graph.edges:
        if edge in proxied:
            lines.extend(_proxy_stmts(edge, graph.node(edge.dst), kinds[edge.dst]))
        else:
            lines.append(f"  {_quote(edge.dst)} -> {_quote(edge.src)} [weight={EDGE_WEIGHT}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
