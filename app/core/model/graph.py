"""The captured autograd graph as plain, immutable data (no torch objects).

# NOTE [node ids]
torchviz names nodes ``str(id(obj))``; ids of freed Python wrappers are reused,
and unpacked saved tensors are temporaries that collide on ``id()``. The
capture gives every node ``n<k>`` in discovery order and each slot
``n<k>.<name>``; a :class:`Graph` holds none of the live objects.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields
from typing import Any, Literal, NamedTuple, TypeVar

__all__ = [
    "Edge",
    "Graph",
    "GraphNode",
    "LoopMark",
    "SavedSlot",
    "SlotKind",
    "SourceRef",
    "StorageNumbers",
    "StorageRef",
    "numbered_storages",
]

SlotKind = Literal["tensor", "value", "none"]


@dataclass(frozen=True)
class LoopMark:
    """One enclosing loop at a moment of the program: the ``for`` line and the iteration (from 0).

    >>> LoopMark(line=4, index=0, count=3)  # the first of three rounds of the loop on line 4
    LoopMark(line=4, index=0, count=3)
    """

    line: int
    index: int
    count: int | None  # iterations in all, when known before the loop ran


class SourceRef(NamedTuple):
    """Where in the user's code a node was made: the file and its line (1-based).

    The innermost frame in the recorded program's own file, not a frame of torch:
    for ``model(x)`` inside a training loop, the line in the user's ``forward``.
    """

    file: str
    line: int


class StorageRef(NamedTuple):
    """One storage a saved tensor lives in: shared buffers are counted once."""

    device: str
    pointer: int  # data pointer; 0 for an empty storage
    nbytes: int


@dataclass(frozen=True)
class SavedSlot:
    """One ``_saved_<name>`` attribute of a node, as it was at capture time.

    >>> slot = SavedSlot("self", "tensor", shape=(2,), storages=(StorageRef("cpu", 4096, 8),))
    >>> slot.storage
    ('cpu', 4096)
    """

    name: str
    kind: SlotKind
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    nbytes: int | None = None  # bytes of the distinct storages it holds
    storages: tuple[StorageRef, ...] = ()  # one per tensor it holds (a list slot holds several)
    value: str | None = None  # text of a non-tensor value, e.g. "2" or "(2,)"
    saved_version: int | None = None  # the tensor's version counter when it was saved

    @property
    def storage(self) -> tuple[str, int] | None:
        """(device, data pointer) of the first tensor's storage, when it has one."""
        first = next((s for s in self.storages if s.pointer), None)
        return None if first is None else (first.device, first.pointer)


@dataclass(frozen=True)
class GraphNode:
    """One autograd node (a ``grad_fn``) the recording captured, with its saved slots.

    >>> node = GraphNode("n0", "PowBackward0", "y = x.square()", saved=(SavedSlot("self", "tensor"),))
    >>> [slot.name for slot in node.tensor_slots]
    ['self']
    """

    id: str
    name: str  # PyTorch's class name, e.g. "PowBackward0"
    label: str | None  # the program text that made it, or the leaf's name
    saved: tuple[SavedSlot, ...] = ()
    added_at_call: int | None = None  # None: part of the forward graph
    is_leaf: bool = False
    line: int | None = None  # program line whose statement created it
    loops: tuple[LoopMark, ...] = ()  # the iteration it was created in
    created_at_step: int | None = None
    gone_at_step: int | None = None  # the step at which nothing the program holds reached it
    module: str | None = None  # the nn.Module whose forward made it, as "model.layers.3.self_attn"
    source: SourceRef | None = None  # the user's file and line that made it

    @functools.cached_property
    def tensor_slots(self) -> tuple[SavedSlot, ...]:
        return tuple(s for s in self.saved if s.kind == "tensor")


class Edge(NamedTuple):
    """From a node to one of its ``next_functions``.

    >>> Edge("n0", "n1").dst
    'n1'
    """

    src: str
    dst: str


@dataclass(frozen=True)
class Graph:
    """The nodes a recording captured and the edges between them, looked up by node id.

    >>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"),), ())
    >>> "n0" in g, g.node("n0").name, len(g)
    (True, 'SumBackward0', 1)
    """

    nodes: tuple[GraphNode, ...]
    edges: tuple[Edge, ...]
    _index: dict[str, GraphNode] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update({n.id: n for n in self.nodes})

    def node(self, node_id: str) -> GraphNode:
        return self._index[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._index

    def __len__(self) -> int:
        return len(self.nodes)

    @functools.cached_property
    def neighbours(self) -> dict[str, list[str]]:
        """Each node's neighbours, its next functions first, then the nodes whose next function
        it is; made once (O(edges)): the window follows a run through it at every step, and its
        worker makes it off the GUI thread.

        >>> Graph((), (Edge("n0", "n1"), Edge("n1", "n2"))).neighbours
        {'n0': ['n1'], 'n1': ['n2', 'n0'], 'n2': ['n1']}
        """
        found: dict[str, list[str]] = {}
        for edge in self.edges:
            found.setdefault(edge.src, []).append(edge.dst)
        for edge in self.edges:
            found.setdefault(edge.dst, []).append(edge.src)
        return found

    def reached_from(self, roots: list[str]) -> list[str]:
        """``roots`` and every node the engine can reach from them (next functions, on down),
        breadth first.

        >>> g = Graph((), (Edge("n0", "n1"), Edge("n1", "n2"), Edge("n3", "n2")))
        >>> g.reached_from(["n0"])
        ['n0', 'n1', 'n2']
        """
        nexts: dict[str, list[str]] = {}
        for edge in self.edges:
            nexts.setdefault(edge.src, []).append(edge.dst)
        seen = dict.fromkeys(roots)
        queue = list(seen)
        for node_id in queue:  # grows as it goes: breadth first
            for nxt in nexts.get(node_id, ()):
                if nxt not in seen:
                    seen[nxt] = None
                    queue.append(nxt)
        return queue


def numbered_storages(graph: Graph) -> Graph:
    """``graph`` with each storage's data pointer replaced by its number (1, 2, ... in order of
    first use; 0, an empty storage, stays 0): a recording is shared as a file, which must hold no
    address of the process that recorded it, and the number still tells which saved values share a
    buffer. Numbering numbers is the identity.
    """
    numbered = StorageNumbers()
    nodes = tuple(
        _changed(n, saved=numbered(n.saved)) if any(s.storages for s in n.saved) else n for n in graph.nodes
    )
    return Graph(nodes, graph.edges)


class StorageNumbers:
    """Numbers storages in the order their slots are shown to it (``numbered_storages``, one node's
    slots at a time): a graph's nodes can be numbered as they are made, not made twice."""

    def __init__(self) -> None:
        self._numbers: dict[tuple[str, int], int] = {}

    def __call__(self, saved: tuple[SavedSlot, ...]) -> tuple[SavedSlot, ...]:
        """``saved`` with every storage numbered (the same tuple when none has a storage)."""
        if not any(s.storages for s in saved):
            return saved
        return tuple(self._slot(s) if s.storages else s for s in saved)

    def _slot(self, slot: SavedSlot) -> SavedSlot:
        numbers = self._numbers
        refs = tuple(
            ref
            if ref.pointer == 0
            else StorageRef(
                ref.device, numbers.setdefault((ref.device, ref.pointer), len(numbers) + 1), ref.nbytes
            )
            for ref in slot.storages
        )
        return _changed(slot, storages=refs)


_Frozen = TypeVar("_Frozen", SavedSlot, GraphNode)


def _changed(instance: _Frozen, **changes: Any) -> _Frozen:
    """``replace(instance, **changes)`` for a node or a slot, without running ``__init__`` again
    (it sets each frozen field one by one: most of numbering a recording's storages, a slot or two
    a node). A cached property (``tensor_slots``) is not copied: it is worked out again."""
    kind = type(instance)
    new: _Frozen = object.__new__(kind)
    values = instance.__dict__.copy()
    if len(values) != len(_FIELD_NAMES[kind]):  # a cached property's value (or a missing field)
        values = {k: v for k, v in values.items() if k in _FIELD_NAMES[kind]}
    values.update(changes)
    object.__setattr__(new, "__dict__", values)
    return new


_FIELD_NAMES = {kind: frozenset(f.name for f in fields(kind)) for kind in (SavedSlot, GraphNode)}
