"""torchviz as the oracle of the drawing: ``make_dot``'s own graph beside ours, before the first backward.

The program runs plainly (``tests/support/oracle.py``'s :func:`execute`); at its first autograd call,
``torchviz.make_dot(outputs, params=<the leaves the program names>, show_saved=True)`` is built on
that call's outputs and read back from its DOT lines (:func:`read_make_dot`). The recording's
graph, as it stood when that call started (nodes the call's own expression made, as ``.sum()`` in
``y.sum().backward()``, join at its first step), is then matched to it from the roots down
(:func:`differences`): the same backward nodes by type name, the same edges, the same leaves and
names, the same saved tensors and shapes.

Where we differ on purpose, and so never compare:

* ids: torchviz's are ``str(id(...))`` (a saved temporary's id is reused by the next, so saved
  boxes are read by the order of the lines, not by id); ours are ``n<k>`` (NOTE [node ids]).
* roots: torchviz draws each output tensor as a green box below its grad_fn; we colour the root
  node itself.
* leaves: torchviz draws a lightblue tensor box above a grey AccumulateGrad; ours is one box, and a
  leaf the program does not name (torchviz: no name) is called ``leaf<k>``.
* a leaf's shape: torchviz prints it in the leaf's box; our graph keeps none (its ``.grad`` has it).
* non-tensor saved values (``exponent = 2``): we draw them; torchviz shows them only with
  ``show_attrs``, so tensor slots alone are compared.
* a saved list (``indices[0]``, ``indices[1]``) is one slot of ours: its name is compared, and the
  shapes of its tensors, which we keep per list only as storages, are not.
* a saved tensor written in place: ``show_saved`` raises on it, so for such a graph the slots whose
  read raises are compared with the ones we show as modified, and no shapes.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from app.core.model.graph import Graph, GraphNode
from app.core.model.recording import Recording
from tests.support.oracle import Hooked, execute, named_leaves, program_globals, slot_names, walk

__all__ = [
    "TorchvizGraph",
    "differences",
    "first_call_make_dot",
    "read_make_dot",
    "read_make_dot_source",
    "same_drawing",
]

_NODE = re.compile(r'\t(\S+) \[label=("(?:[^"\\]|\\.)*"|\S+?)(?: fillcolor=(\S+))?\]\n', re.DOTALL)
_EDGE = re.compile(r"\t(\S+) -> (\S+)(?: \[(.*)\])?\n")
_INDEXED = re.compile(r"(.*)\[\d+\]")


@dataclass
class TorchvizGraph:
    """What ``make_dot`` drew, by its own ids: grad_fn boxes, their edges, leaves, saved boxes, roots."""

    names: dict[str, str] = field(default_factory=dict)  # grad_fn id -> type name
    children: dict[str, set[str]] = field(default_factory=dict)  # grad_fn id -> its next functions
    saved: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # grad_fn id -> (attr, shape)
    leaves: dict[str, tuple[str, str]] = field(default_factory=dict)  # AccumulateGrad id -> (name, shape)
    roots: list[str] = field(default_factory=list)  # grad_fns of the outputs (and of a view's base)
    # show_saved raised (a saved tensor was written in place): the slots whose read raised, by grad_fn
    unreadable: dict[str, set[str]] | None = None


def read_make_dot(body: list[str]) -> TorchvizGraph:
    """Read ``make_dot``'s lines in order: a saved box is the node line right after its
    ``dir=none`` edge, a leaf the lightblue node line right before its edge to AccumulateGrad."""
    graph = TorchvizGraph()
    tensors: set[str] = set()
    edges: list[tuple[str, str]] = []
    lines = list(body)
    i = 0
    while i < len(lines):
        node, edge = _NODE.fullmatch(lines[i]), _EDGE.fullmatch(lines[i])
        if edge is not None and edge[3] == "dir=none":  # fn -> saved tensor, then the saved box
            box = _NODE.fullmatch(lines[i + 1])
            assert box is not None and box[3] == "orange", lines[i : i + 2]
            fn = edge[1] if box[1] == edge[2] else edge[2]  # a custom Function's saved_tensors: t -> fn
            graph.saved.setdefault(fn, []).append(_name_and_shape(box[2]))
            i += 2
        elif node is not None and node[3] == "lightblue":  # the leaf tensor, then its edge
            after = _EDGE.fullmatch(lines[i + 1])
            assert after is not None and after[1] == node[1], lines[i : i + 2]
            graph.leaves[after[2]] = _name_and_shape(node[2])
            i += 2
        elif node is not None and node[3] is not None:  # an output (or a view's base) tensor
            tensors.add(node[1])
            i += 1
        elif node is not None:
            graph.names[node[1]] = node[2].strip('"')
            i += 1
        else:
            assert edge is not None, lines[i]
            if edge[3] is None:
                edges.append((edge[1], edge[2]))
            i += 1
    for src, dst in edges:
        if dst in tensors:
            graph.roots.append(src)
        elif src not in tensors:
            graph.children.setdefault(dst, set()).add(src)
    return graph


_STATEMENT = re.compile(r'\t(?:[^"\n]|"(?:[^"\\]|\\.)*")*\n')


def read_make_dot_source(source: str) -> TorchvizGraph:
    """:func:`read_make_dot` of a written DOT file: its statements, the graph and node defaults left out."""
    body = [m[0] for m in _STATEMENT.finditer(source) if not m[0].startswith(("\tgraph [", "\tnode ["))]
    return read_make_dot(body)


def _name_and_shape(label: str) -> tuple[str, str]:
    name, _, shape = label.strip('"').partition("\n ")
    return name, shape


def first_call_make_dot(code: str, names: dict[str, Any] | None = None) -> TorchvizGraph | None:
    """Run trusted program text plainly up to its first autograd call; ``make_dot`` of that call's
    outputs, with the leaves the program names as ``params``. None when it makes no call."""
    import torchviz

    found: list[TorchvizGraph] = []

    class Reached(Exception):
        pass

    def observe(hooked: Hooked, run: Callable[[], Any]) -> Any:
        outputs = [t for t in hooked.outputs if t.grad_fn is not None]
        params = named_leaves(scope)
        root: Any = tuple(outputs) if len(outputs) > 1 else outputs[0]
        try:
            drawn = read_make_dot(torchviz.make_dot(root, params=params, show_saved=True).body)
        except RuntimeError:  # a saved tensor was written in place: make_dot cannot read it
            drawn = read_make_dot(torchviz.make_dot(root, params=params).body)
            drawn.unreadable = unreadable_slots(t.grad_fn for t in outputs)
        found.append(drawn)
        raise Reached

    scope = {**program_globals(), **(names or {})}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils", DeprecationWarning)  # torchviz 0.0.3's LooseVersion
        execute(code, observe, scope)
    return found[0] if found else None


def unreadable_slots(roots: Iterable[Any]) -> dict[str, set[str]]:
    """The ``_saved_*`` slots whose read raises, by ``str(id(grad_fn))`` as ``make_dot`` names them."""
    found: dict[str, set[str]] = {}
    for fn in walk(roots):
        for slot in slot_names(fn):
            try:
                getattr(fn, "_saved_" + slot)
            except RuntimeError:
                found.setdefault(str(id(fn)), set()).add(slot)
    return found


def same_drawing(a: TorchvizGraph, b: TorchvizGraph) -> bool:
    """Whether two ``make_dot`` drawings are the same graph whatever their ids: every node's type,
    saved tensors, leaf and the nodes under it, counted, and the same roots."""
    table: dict[tuple[Any, ...], int] = {}

    def keys(g: TorchvizGraph) -> dict[str, int]:
        done: dict[str, int] = {}

        def key(fn: str) -> int:
            if fn not in done:
                kids = tuple(sorted(key(c) for c in g.children.get(fn, ())))
                own = (g.names[fn], tuple(sorted(g.saved.get(fn, []))), g.leaves.get(fn))
                done[fn] = table.setdefault((own, kids), len(table))
            return done[fn]

        return {fn: key(fn) for fn in g.names}

    ka, kb = keys(a), keys(b)
    return Counter(ka.values()) == Counter(kb.values()) and sorted(ka[r] for r in a.roots) == sorted(
        kb[r] for r in b.roots
    )


# -- the comparison ---------------------------------------------------------------------------------


def _shape_text(shape: Iterable[int]) -> str:
    return "(" + ", ".join(str(v) for v in shape) + ")"


def our_saved(node: GraphNode) -> set[tuple[str, str]]:
    """Our tensor slots as torchviz names them: ``(attr, shape)``; a list slot by its name alone."""
    # "checkpoint inputs": what a checkpoint keeps, in no node of PyTorch's (make_dot has no box)
    slots = [s for s in node.tensor_slots if s.name != "checkpoint inputs"]
    return {(s.name, "" if s.shape is None else _shape_text(s.shape)) for s in slots}


def their_saved(pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    out = set()
    for name, shape in pairs:
        listed = _INDEXED.fullmatch(name)
        out.add((listed[1], "") if listed else (name, shape))
    return out


class _Matcher:
    """Walks both graphs from the roots down, pairing nodes of the same structure."""

    def __init__(self, rec: Recording, drawn: TorchvizGraph, visible: frozenset[str]) -> None:
        self.graph: Graph = rec.graph
        self.drawn = drawn
        self.visible = visible
        self.modified = modified_slots(rec)
        self.ours: dict[str, list[str]] = {}
        for edge in rec.graph.edges:
            self.ours.setdefault(edge.src, []).append(edge.dst)
        self.their_class: dict[str, int] = {}
        self.our_class: dict[str, int] = {}
        self.classes: dict[tuple[Any, ...], int] = {}
        self.mapping: dict[str, str] = {}  # torchviz id -> ours
        self.found: list[str] = []

    def classify(self, key: tuple[Any, ...]) -> int:
        return self.classes.setdefault(key, len(self.classes))

    def their(self, fn: str) -> int:
        """The structure under a torchviz node: its type and its children's structures."""
        if fn not in self.their_class:
            kids = sorted(self.their(c) for c in self.drawn.children.get(fn, ()))
            self.their_class[fn] = self.classify((self.drawn.names[fn], tuple(kids)))
        return self.their_class[fn]

    def our(self, node_id: str) -> int:
        if node_id not in self.our_class:
            kids = sorted(self.our(c) for c in set(self.ours.get(node_id, ())))
            self.our_class[node_id] = self.classify((self.graph.node(node_id).name, tuple(kids)))
        return self.our_class[node_id]

    def root_of_ours(self, fn: str) -> str | None:
        """Our node most like torchviz's root (the newest of them)."""
        candidates = [n.id for n in self.graph.nodes if n.id in self.visible]
        best = max(reversed(candidates), key=lambda n: self.likeness(fn, n), default=None)
        return best if best is not None and self.likeness(fn, best)[1] else None

    def pair(self, fn: str, node_id: str) -> None:
        stack = [(fn, node_id)]
        while stack:
            fn, node_id = stack.pop()
            if fn in self.mapping:
                if self.mapping[fn] != node_id:
                    self.found.append(f"torchviz's {self.drawn.names[fn]} is two nodes of ours")
                continue
            self.mapping[fn] = node_id
            self.compare_node(fn, self.graph.node(node_id))
            stack.extend(self.pair_children(fn, node_id))

    def pair_children(self, fn: str, node_id: str) -> list[tuple[str, str]]:
        theirs = sorted(self.drawn.children.get(fn, ()), key=self.their)
        ours = sorted(set(self.ours.get(node_id, ())), key=self.our)
        pairs = []
        for kid in theirs:
            best = max(ours, key=lambda o: self.likeness(kid, o), default=None)
            if best is None or self.graph.node(best).name != self.drawn.names[kid]:
                self.found.append(
                    f"edge {self.drawn.names[fn]} -> {self.drawn.names[kid]} missing at {node_id}"
                )
                continue
            ours.remove(best)
            pairs.append((kid, best))
        self.found += [f"edge {node_id} -> {o} ({self.graph.node(o).name}) not in torchviz" for o in ours]
        return pairs

    def likeness(self, fn: str, node_id: str) -> tuple[bool, bool, bool, bool]:
        """How alike two nodes are, most telling first: the graph under them, then their own facts."""
        node = self.graph.node(node_id)
        leaf = self.drawn.leaves.get(fn, ("", ""))[0]
        return (
            self.our(node_id) == self.their(fn),
            node.name == self.drawn.names[fn],
            our_saved(node) == their_saved(self.drawn.saved.get(fn, [])),
            bool(leaf) and node.label == leaf,
        )

    def compare_node(self, fn: str, node: GraphNode) -> None:
        name = self.drawn.names[fn]
        if node.name != name:
            self.found.append(f"{node.id} is {node.name}, torchviz's node is {name}")
        if node.id not in self.visible:
            self.found.append(f"{node.id} ({name}) is not in our graph before the first call")
        if self.drawn.unreadable is not None:  # make_dot raised: which slots raised, not their shapes
            raised = {(node.id, slot) for slot in self.drawn.unreadable.get(fn, ())}
            mine = {key for key in self.modified if key[0] == node.id}
            self.found += [
                f"saved {s} of {n} is readable for torchviz, modified for us" for n, s in mine - raised
            ]
            self.found += [
                f"saved {s} of {n} ({name}) raises for torchviz, not modified for us"
                for n, s in raised - mine
            ]
        else:
            theirs, ours = their_saved(self.drawn.saved.get(fn, [])), our_saved(node)
            # A non-reentrant checkpoint's slot holds a placeholder, no tensor (0 bytes for us):
            # make_dot reads it through the unpack hook, which recomputes the block, and draws
            # the recomputed tensor. Only the name is compared there.
            empty = {s.name for s in node.tensor_slots if s.nbytes == 0 and not s.storages}
            theirs = {(a, "" if a in empty else s) for a, s in theirs}
            ours = {(a, "" if a in empty else s) for a, s in ours}
            self.found += [f"saved {a} {s} of {node.id} ({name}) missing" for a, s in sorted(theirs - ours)]
            self.found += [
                f"saved {a} {s} of {node.id} ({name}) not in torchviz" for a, s in sorted(ours - theirs)
            ]
        if fn in self.drawn.leaves:
            leaf, _ = self.drawn.leaves[fn]
            if not node.is_leaf:
                self.found.append(f"{node.id} ({name}) is not a leaf")
            elif leaf and node.label != leaf:  # torchviz names only the leaves in params
                self.found.append(f"leaf {node.id} is named {node.label!r}, torchviz says {leaf!r}")


def differences(rec: Recording, drawn: TorchvizGraph) -> list[str]:
    """How our graph, as it stood when the first call started, differs from ``make_dot``'s: []
    when it draws the same nodes, edges, leaves and saved tensors."""
    first = rec.calls[0].first_step
    matcher = _Matcher(rec, drawn, rec.timeline.state(first).visible_nodes)
    roots: list[str] = []
    for fn in dict.fromkeys(drawn.roots):
        ours = matcher.root_of_ours(fn)
        if ours is None:
            matcher.found.append(f"no node of ours is torchviz's root {drawn.names[fn]}")
            continue
        roots.append(ours)
        matcher.pair(fn, ours)
    mapped = set(matcher.mapping.values())
    extra = [n for n in rec.graph.reached_from(roots) if n not in mapped]
    matcher.found += [f"{n} ({rec.graph.node(n).name}) is not in torchviz's graph" for n in extra]
    missing = set(drawn.names) - set(matcher.mapping)
    matcher.found += [f"torchviz's {drawn.names[fn]} has no node of ours" for fn in sorted(missing)]
    return matcher.found


def modified_slots(rec: Recording) -> set[tuple[str, str]]:
    """Slots our recording shows as written in place just before the first call starts."""
    before = rec.timeline.state(max(rec.calls[0].first_step - 1, 0))
    return {key for key, state in before.slots.items() if state == "modified"}
