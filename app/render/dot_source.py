"""Graphviz DOT text for a captured :class:`~app.core.recorder.capture.Graph`, in torchviz's look.

As in torchviz ``make_dot(show_saved=True)``: backward nodes are lightgrey
boxes, leaves (AccumulateGrad) lightblue, the outputs (losses)
darkolivegreen1, and saved tensors small orange boxes tied to their node by
an undirected (here dotted) edge. Arrows go from a node's ``next_functions``
to the node, so leaves sit on top and losses at the bottom. Non-tensor saved
values (``exponent = 2``) get boxes too, rounded and pale; a node's several
values (``alpha``, ``beta``, ``mat1_sym_sizes``...) share one box, a line each
(``labels.SharedValues``), so its row stays narrow. Unlike torchviz,
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
A proxy shares its user's rank too, to its left (a flat edge runs left to
right): on a rank of its own, above the user, each proxy cost the x-position
pass of Graphviz 2.43 a network-simplex pivot across the whole chain, and the
5,000-node chain took 55 s instead of 4 s.

# NOTE [iteration clusters]
Nodes a loop iteration made sit in a cluster of their own (``cluster_12x0``:
the ``for`` on line 12, iteration 0; nested loops join their marks), so a
hidden state carried from one iteration into the next reads as one cluster
chained to the one before. Leaves stay outside: a parameter belongs to the
program, not to the iteration that first used it (NOTE [shared leaves]). Clusters are part of the one
Graphviz run (``layout.py``'s NOTE [layout once]); the scene draws their frames
from the layout and only shows or fades them per step.

# NOTE [shared leaves]
A weight that every iteration of a training loop reads had an edge into every
iteration's frame. Graphviz put it above the middle iteration ("iteration 100
of 200"), where the edges from all the others met in thick bands across the
drawing, and a view following the run crossed the graph to it and back. A
leaf read by more than ``SHARED_ITERATIONS`` iterations is drawn once, above
the first iteration that reads it (which keeps its real edges), and every
later iteration reads it from a proxy box beside the user, as a long edge
does (NOTE [large graphs]): each iteration's frame holds all it takes from
outside, and no edge crosses another frame. A few iterations (a lesson's
loop of three) keep their real edges: there the one weight feeding each is
the point.

# NOTE [frame titles]
Zoomed out, the scene draws a frame's title *above* the frame, in a band up to
``TITLE_ROOM`` units tall (``items.ClusterItem``). Graphviz keeps every node
outside a cluster clear of the cluster's box, but knew nothing of that band, so
a leaf on the row above sat on the title. So each cluster's label is a table
whose first row is empty and ``TITLE_ROOM`` points tall: Graphviz grows the
cluster's box by it and moves the row above clear of it, and ``layout.py``
reports the frame without it. The band above every frame (iteration or module)
is then free of boxes whatever the graph (the scene's spread only widens it),
at the cost of that much height at each frame's top.

# NOTE [reading order]
A learner reads iterations left to right, but Graphviz's crossing minimiser
orders sibling clusters as it likes: two iterations hanging from the same
weights cross equally few edges either way, and it kept the last one it tried
(logged-loss came out 3, 2, 1). The usual levers fail for clusters: the order
of the source changes nothing, an edge between two clusters on one rank is
dropped from ordering, and ``ordering=out`` skips edges into a cluster. What
does count is a crossing: for each two iterations drawn side by side, a tiny
invisible box above them sends an edge from its west side to the first one's
top node and one from its east side to the second's, so that the swapped order
crosses the two. The boxes are linked in turn (``minlen=0``: a flat link keeps
two boxes on one row left to right, a downward one makes the minimiser meet
the boxes in order), without which a staircase of iterations, each starting a
little lower, came out mirrored. A box sits just above the higher of its two
top nodes, and only iterations that share a row get one (not when the next
begins below every node of this one: stacked frames need no order), so none
of these edges reaches further down than one iteration is tall: a few virtual
nodes per iteration, never the long edges of NOTE [large graphs]. It is a
preference the minimiser weighs, not a constraint: Graphviz has none for the
order of clusters.

# NOTE [flat edges]
Graphviz 2.43 (Debian's and Ubuntu's ``dot``) fails to route an edge between
two boxes of one rank when other boxes sit between them inside a cluster
("triangulation failed", exit status 1): a node's dotted edges to its second
and third saved values did so in every recorded training loop. So a node's
saved values hang in a chain, each from the one before it (the node, then its
first value, ...): every flat edge joins two neighbours, which dot draws
without routing. The scene draws each dotted line from the node itself
(``layout.py``'s ``_straight``), so the chain is invisible in the drawing.
Whatever else dot refuses is met by ``layout.py``'s NOTE [layout ladder].

Ids are ours (``n3``, ``n3.self``), never ``id()``; every fact comes from the
``Graph``, so no ``_saved_*`` attribute is read again (it may be freed).

>>> from app.core.model.graph import Edge, Graph, GraphNode
>>> leaf = GraphNode("n1", "AccumulateGrad", "x", is_leaf=True)
>>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), leaf), (Edge("n0", "n1"),))
>>> print(dot_source(g).splitlines()[-2])
  "n1" -> "n0" [weight=4];
"""

from __future__ import annotations

import html
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from app.core.model.graph import Edge, Graph, GraphNode, LoopMark, SavedSlot
from app.core.terminal import terminal_text
from app.render.labels import (
    FONT_FAMILY,
    NODE_FONT_PX,
    SLOT_FONT_PX,
    drawn_slots,
    node_kinds,
    node_lines,
    proxy_lines,
    slot_lines,
    version_room,
)
from app.render.modules import module_groups
from app.render.style import NODE_TAGS, NodeKind, slot_tags

__all__ = [
    "FULL",
    "MAX_DOT_STRING",
    "MAX_SPAN",
    "TITLE_ROOM",
    "DotStringTooLong",
    "Drawing",
    "Iteration",
    "depths",
    "dot_source",
    "frame_names",
    "iterations",
    "long_edges",
    "proxied_edges",
    "proxy_dot_id",
    "readable",
    "slot_dot_id",
]

MAX_DOT_STRING = 16_000  # characters: Graphviz refuses a quoted string past 16,384 (its own limit)


class DotStringTooLong(ValueError):
    """A name, label or id longer than Graphviz takes (a recording from a file can hold any)."""


MAX_SPAN = 8  # an edge spanning more ranks than this is drawn from a proxy box
SHARED_ITERATIONS = 3  # a leaf read by more loop iterations than this: NOTE [shared leaves]
EDGE_WEIGHT = 4  # graph edges pull straighter than the dotted lines to saved values and proxies
KIND_FILL: dict[NodeKind, str] = {"op": "lightgrey", "leaf": "lightblue", "root": "darkolivegreen1"}
TITLE_ROOM = 60  # points above a frame kept for its title (NOTE [frame titles]); an integer for Graphviz
# NOTE [reading order]'s boxes: a port's side is found from the box's width, so not a zero-size point
ORDER_BOX = 'shape=box, width=0.02, height=0.02, fixedsize=true, style=invis, label=""'
TENSOR_FILL = "orange"
VALUE_FILL = "gray96"


def slot_dot_id(node_id: str, slot: str) -> str:
    """The DOT name of a saved slot's box: ``n3.self`` (as in ``app.core.recorder.capture``'s NOTE)."""
    return f"{node_id}.{slot}"


def proxy_dot_id(edge: Edge) -> str:
    """The DOT name of the proxy box of ``edge.dst`` drawn beside ``edge.src``."""
    return f"{edge.dst}@{edge.src}"


@dataclass(frozen=True)
class Drawing:
    """How much of the full drawing dot is asked for (``layout.py``'s NOTE [layout ladder]).

    ``routing``: dot's ``splines`` (``spline`` curves around boxes, ``line`` straight).
    ``frames``: ``clusters`` when dot lays iteration and module frames out; ``iterations`` when it
    lays out iteration frames only, module frames drawn around their boxes afterwards (no cluster
    in a cluster); ``placed`` when it lays out the boxes alone and every frame is drawn around them
    afterwards; ``none`` for no frames, no rank constraints and no reading-order boxes: the
    plainest graph dot can draw.
    """

    routing: Literal["spline", "line"] = "spline"
    frames: Literal["clusters", "iterations", "placed", "none"] = "clusters"


FULL = Drawing()


@dataclass(frozen=True)
class Iteration:
    """The nodes one loop iteration made (NOTE [iteration clusters]); ``name`` is its DOT cluster."""

    name: str
    label: str
    nodes: tuple[str, ...]


def _iteration_label(loops: tuple[LoopMark, ...]) -> str:
    parts = []
    for mark in loops:
        total = f" of {mark.count}" if mark.count is not None else ""
        parts.append(f"line {mark.line} · iteration {mark.index + 1}{total}")
    return " › ".join(parts)


def frame_names(graph: Graph) -> list[str]:
    """The frames a layout of ``graph`` places: each loop iteration's, then each module group's."""
    return [g.name for g in iterations(graph)] + [g.name for g in module_groups(graph)]


def iterations(graph: Graph) -> tuple[Iteration, ...]:
    """Every loop iteration that made nodes other than leaves, in the order they were made.

    >>> from app.core.model.graph import GraphNode, LoopMark
    >>> mark = LoopMark(line=3, index=1, count=2)
    >>> its = iterations(Graph((GraphNode("n0", "MulBackward0", "h * w", loops=(mark,)),), ()))
    >>> its[0].name, its[0].label, its[0].nodes
    ('cluster_3x1', 'line 3 · iteration 2 of 2', ('n0',))
    """
    groups: dict[tuple[LoopMark, ...], list[str]] = {}
    for node in graph.nodes:
        if node.loops and not node.is_leaf:
            groups.setdefault(node.loops, []).append(node.id)
    return tuple(
        Iteration(
            "cluster_" + "_".join(f"{m.line}x{m.index}" for m in loops), _iteration_label(loops), tuple(ids)
        )
        for loops, ids in groups.items()
    )


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


def shared_leaf_edges(graph: Graph, most: int = SHARED_ITERATIONS) -> frozenset[Edge]:
    """The edges from a leaf into every iteration but the first that reads it, for a leaf read by
    more than ``most`` loop iterations (NOTE [shared leaves])."""
    made = {node.id: place for place, node in enumerate(graph.nodes)}
    readers: dict[str, dict[tuple[LoopMark, ...], list[Edge]]] = {}
    for edge in graph.edges:
        target, user = graph.node(edge.dst), graph.node(edge.src)
        if target.is_leaf and user.loops:
            readers.setdefault(edge.dst, {}).setdefault(user.loops, []).append(edge)
    proxied: list[Edge] = []
    for by_iteration in readers.values():
        if len(by_iteration) > most:
            first = min(by_iteration, key=lambda loops: min(made[e.src] for e in by_iteration[loops]))
            proxied += [e for loops, edges in by_iteration.items() if loops != first for e in edges]
    return frozenset(proxied)


def proxied_edges(graph: Graph) -> frozenset[Edge]:
    """Every edge drawn from a proxy box beside its user: the long ones (NOTE [large graphs]) and a
    shared leaf's (NOTE [shared leaves])."""
    return long_edges(graph) | shared_leaf_edges(graph)


def readable(text: str) -> str:
    """``text`` as Graphviz is given it, whichever name or label it is (NOTE [readable names]): line
    breaks as spaces, every other character that is not printable as its escape (``\\x01``)."""
    return terminal_text(text.replace("\n", " ").replace("\r", " "))


# NOTE [readable names]: a name or label comes from a program or a stranger's .lens file. Graphviz
# copies a control character into its JSON and SVG, where it is not allowed (the layout could not
# be read, no graph was drawn); every string reaches DOT through readable(), here and for
# torchviz's DOT (render/torchviz_export.py).
def _quote(text: str) -> str:
    escaped = readable(text).replace("\\", "\\\\").replace('"', '\\"')
    if len(escaped) > MAX_DOT_STRING:
        raise DotStringTooLong(f"a name or label of {len(text):,} characters is longer than Graphviz draws")
    return f'"{escaped}"'


def _label(lines: tuple[str, ...]) -> str:
    return "\\n".join(_quote(line)[1:-1] for line in lines)


def _widest(tags: tuple[str, ...]) -> str:
    return max(tags, key=len)


def _node_stmt(node: GraphNode, kind: NodeKind, reserve_tags: bool) -> str:
    lines = node_lines(node) + ((_widest(tuple(NODE_TAGS.values())),) if reserve_tags else ())
    return f'  {_quote(node.id)} [label="{_label(lines)}", fillcolor={KIND_FILL[kind]}];'


def _slot_stmts(node: GraphNode, slot: SavedSlot, left: str, reserve_tags: bool) -> list[str]:
    """The box of ``slot`` and its dotted edge from ``left``: the node, or the slot drawn before it
    (NOTE [flat edges])."""
    name = _quote(slot_dot_id(node.id, slot.name))
    tag = _widest(slot_tags(slot.kind)) if reserve_tags else ""
    lines = slot_lines(slot, tag)
    if reserve_tags and slot.kind == "tensor":  # room for "saved at v0, now v1" in the second line
        lines = (lines[0], _widest((lines[1], version_room(slot))))
    label = _label(lines)
    if slot.kind == "value":
        attrs = f'fillcolor={VALUE_FILL}, style="filled,rounded"'
    else:
        attrs = f"fillcolor={TENSOR_FILL}"
    return [
        f'  {name} [label="{label}", fontsize={SLOT_FONT_PX:g}, {attrs}];',
        f"  {_quote(left)} -> {name} [dir=none, style=dotted];",
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
        f"  {{rank=same; {_quote(edge.src)}; {name}}}",  # to its user's left: see NOTE [large graphs]
    ]


def _header(drawing: Drawing) -> list[str]:
    return [
        "digraph autograd {",
        f"  graph [newrank=true, rankdir=TB, nodesep=0.3, ranksep=0.4, splines={drawing.routing}];",
        f'  node [shape=box, style=filled, fontname="{FONT_FAMILY}", fontsize={NODE_FONT_PX:g}, '
        'margin="0.18,0.08"];',
        f'  edge [fontname="{FONT_FAMILY}"];',
    ]


def _title(label: str) -> str:
    """The cluster's label as Graphviz sizes it: an empty row ``TITLE_ROOM`` points tall above the
    text (NOTE [frame titles]); the text keeps the frame at least as wide as the title."""
    _quote(label)  # refused past Graphviz's own limit, as any other label
    text = html.escape(readable(label), quote=False)
    return (
        '<<table border="0" cellborder="0" cellspacing="0" cellpadding="0">'
        f'<tr><td height="{TITLE_ROOM}"></td></tr><tr><td>{text}</td></tr></table>>'
    )


def _cluster_stmts(name: str, label: str, body: list[str]) -> list[str]:
    return [
        f"  subgraph {_quote(name)} {{",
        f"    label={_title(label)}; labeljust=l; fontsize={SLOT_FONT_PX:g}; "
        'style="rounded,dashed"; margin=10;',
        *("  " + line for line in body),
        "  }",
    ]


def _top(group: Iteration, depth: dict[str, int]) -> str:
    """The node of ``group`` drawn highest: the one farthest from a loss."""
    return max(group.nodes, key=depth.__getitem__)


def _side_by_side(first: Iteration, then: Iteration, depth: dict[str, int]) -> bool:
    """Whether the two frames share a row: ``then`` does not begin below every node of ``first``."""
    return depth[_top(then, depth)] >= min(depth[n] for n in first.nodes)


def _order_stmts(groups: tuple[Iteration, ...], depth: dict[str, int]) -> list[str]:
    """The invisible boxes that keep iteration frames in reading order (NOTE [reading order])."""
    pairs = [(a, b) for a, b in pairwise(groups) if _side_by_side(a, b, depth)]
    names = [_quote(f"{a.name}>{b.name}") for a, b in pairs]
    lines = [f"  {name} [{ORDER_BOX}];" for name in names]
    for name, (first, then) in zip(names, pairs, strict=True):
        lines += [
            f"  {name}:w -> {_quote(_top(first, depth))} [style=invis];",
            f"  {name}:e -> {_quote(_top(then, depth))} [style=invis];",
        ]
    lines += [f"  {a} -> {b} [style=invis, minlen=0, weight=0];" for a, b in pairwise(names)]
    return lines


def dot_source(graph: Graph, *, reserve_tags: bool = False, drawing: Drawing = FULL) -> str:
    """DOT text for ``graph``.

    ``reserve_tags`` adds the widest state tag to each label so that the boxes
    Graphviz sizes have room for any state the view will write in them.
    Nodes of one loop iteration share a cluster (NOTE [iteration clusters]); inside it, the nodes
    of one module share one of their own (modules.py's NOTE [module groups]). Every cluster keeps
    room for its title (NOTE [frame titles]) and iterations read left to right (NOTE [reading order]).
    ``drawing`` leaves some of that out, for a graph dot cannot lay out in full.
    """
    kinds = node_kinds(graph)
    clustered = drawing.frames in ("clusters", "iterations")
    groups = iterations(graph) if clustered else ()
    modules = module_groups(graph) if drawing.frames == "clusters" else ()
    ranked = drawing.frames != "none"
    in_iteration = {node_id: i for i, group in enumerate(groups) for node_id in group.nodes}
    in_module = {node_id: j for j, group in enumerate(modules) for node_id in group.nodes}
    bodies: list[list[str]] = [[] for _ in groups]
    module_bodies: list[list[str]] = [[] for _ in modules]
    lines = _header(drawing)

    def body_of(node_id: str, outside: list[str]) -> list[str]:
        if node_id in in_module:
            return module_bodies[in_module[node_id]]
        return bodies[in_iteration[node_id]] if node_id in in_iteration else outside

    proxied = proxied_edges(graph)
    for node in graph.nodes:
        into = body_of(node.id, lines)
        into.append(_node_stmt(node, kinds[node.id], reserve_tags))
        left = node.id
        for slot in drawn_slots(node):
            into.extend(_slot_stmts(node, slot, left, reserve_tags))
            if ranked:  # a chain on the node's row; without rank constraints each hangs from the node
                left = slot_dot_id(node.id, slot.name)
        if drawn_slots(node) and ranked:
            into.append(_beside(node))
    edges: list[str] = []
    for edge in graph.edges:
        if edge in proxied:  # the stand-in sits beside its user, in the user's cluster
            proxy = _proxy_stmts(edge, graph.node(edge.dst), kinds[edge.dst])
            body_of(edge.src, edges).extend(proxy if ranked else proxy[:-1])
        else:
            edges.append(f"  {_quote(edge.dst)} -> {_quote(edge.src)} [weight={EDGE_WEIGHT}];")
    for module, body in zip(modules, module_bodies, strict=True):
        first = module.nodes[0]  # a module's group inside an iteration holds that iteration's nodes
        into = bodies[in_iteration[first]] if module.loops and first in in_iteration else lines
        into.extend(_cluster_stmts(module.name, module.module, body))
    for group, body in zip(groups, bodies, strict=True):
        lines.extend(_cluster_stmts(group.name, group.label, body))
    lines.extend(edges)
    order = groups if clustered else iterations(graph) if ranked else ()
    if len(order) > 1:
        lines.extend(_order_stmts(order, depths(graph)))
    lines.append("}")
    return "\n".join(lines) + "\n"
