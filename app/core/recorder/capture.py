"""Capture the autograd graph behind some tensors as plain, immutable data.

Capture is separate from drawing (``app.render``) and from recording
(``app.core.recorder.recorder``): it walks ``grad_fn.next_functions`` once, gives every
node an id of our own, and reads each ``_saved_*`` slot while it is still
readable.

A :class:`GraphCapture` keeps the live ``grad_fn`` objects while a recording
runs (NOTE [node ids] in ``app/core/model/graph.py``), and the resulting
:class:`Graph` holds none.
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import torch

from app.core.model.graph import Edge, Graph, GraphNode, SavedSlot, SlotKind, StorageRef

__all__ = [
    "Edge",
    "Graph",
    "GraphCapture",
    "GraphNode",
    "SavedSlot",
    "SlotKind",
    "StorageRef",
    "frozen",
    "saved_slot_names",
    "storage_ref",
    "trace",
]

SAVED_PREFIX = "_saved_"
RAW_PREFIX = "_raw_saved_"
T = TypeVar("T")


def frozen(cls: type[T], **fields: Any) -> T:
    """An instance of the frozen dataclass ``cls``, every one of its fields given (no defaults).

    A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__``: ~1 us a
    field, ~20 us a step of 19 fields. A recording makes a step, a node and a slot or two per
    node, so their fields go into the instance's ``__dict__`` at once instead (as ``__init__``
    would have left them).
    """
    instance: T = object.__new__(cls)
    object.__setattr__(instance, "__dict__", fields)  # ``fields`` is this call's own dict
    return instance


def saved_slot_names(fn: Any) -> list[str]:
    """Names of a node's saved slots, without the ``_saved_`` prefix."""
    # The _saved_* accessors are properties of each generated node class, so one dir() per class
    # (dir() of every node was a tenth of a recording's time at 1,000 nodes).
    names = _SLOT_NAMES.get(type(fn))
    if names is None:
        listed = dir(type(fn))
        names = _SLOT_NAMES[type(fn)] = tuple(
            a[len(SAVED_PREFIX) :] for a in listed if a.startswith(SAVED_PREFIX)
        ) or ((CUSTOM_SLOT,) if RAW_PREFIX + CUSTOM_SLOT in listed else ())
    return list(names)


# A custom autograd.Function's node (a reentrant checkpoint's among them) keeps what its forward
# gave ctx.save_for_backward as one list slot: ``saved_tensors``, raw as ``_raw_saved_tensors``.
CUSTOM_SLOT = "tensors"


def read_saved(fn: Any, name: str) -> Any:
    """The slot's value, unpacked by PyTorch (raises once freed, or when modified in place)."""
    if name == CUSTOM_SLOT and not hasattr(fn, SAVED_PREFIX + name):
        return fn.saved_tensors
    return getattr(fn, SAVED_PREFIX + name)


def _raw_slot_names(kind: type) -> frozenset[str]:
    """The slots of a node class with a raw saved value (``_raw_saved_<name>``): its tensor slots.
    A slot without one holds a number or sizes, which no saved-tensor hook ever packs."""
    names = _RAW_SLOT_NAMES.get(kind)
    if names is None:
        listed = dir(kind)
        names = _RAW_SLOT_NAMES[kind] = frozenset(
            a[len(RAW_PREFIX) :] for a in listed if a.startswith(RAW_PREFIX)
        )
    return names


_SLOT_NAMES: dict[type, tuple[str, ...]] = {}
_RAW_SLOT_NAMES: dict[type, frozenset[str]] = {}
_Parts = tuple[str, tuple[SavedSlot, ...], int | None, bool]  # a node's name, slots, call, leaf


def describe_slot(name: str, value: Any) -> SavedSlot:
    if value is None:
        return SavedSlot(name, "none")
    if isinstance(value, torch.Tensor):  # most slots: one tensor, described in one go
        ref = storage_ref(value)
        dtype = _dtype_text(value.dtype)
        return frozen(
            SavedSlot,
            name=name,
            kind="tensor",
            shape=tuple(value.shape),
            dtype=dtype,
            device=ref.device,
            nbytes=ref.nbytes,
            storages=(ref,),
            value=None,
            saved_version=value._version,
        )
    tensors = _as_tensors(value)
    if tensors is None:
        return _value_slot(name, value)
    return _tensor_slot(name, tensors, None)


def _value_slot(name: str, value: Any) -> SavedSlot:
    """A non-tensor slot; the many alike (``self_sym_sizes=(32, 64)``) share one immutable slot."""
    text = _short_text(value)
    slot = _VALUE_SLOTS.get((name, text))
    if slot is None:
        if len(_VALUE_SLOTS) >= _VALUE_SLOTS_KEPT:
            _VALUE_SLOTS.clear()
        slot = _VALUE_SLOTS[(name, text)] = SavedSlot(name, "value", value=text)
    return slot


_VALUE_SLOTS: dict[tuple[str, str], SavedSlot] = {}
_VALUE_SLOTS_KEPT = 4096


def _device_text(device: torch.device) -> str:
    text = _DEVICE_TEXT.get(device)
    if text is None:
        text = _DEVICE_TEXT[device] = str(device)
    return text


def _dtype_text(dtype: torch.dtype) -> str:
    text = _DTYPE_TEXT.get(dtype)
    if text is None:
        text = _DTYPE_TEXT[dtype] = str(dtype).removeprefix("torch.")
    return text


_DEVICE_TEXT: dict[torch.device, str] = {}
_DTYPE_TEXT: dict[torch.dtype, str] = {}


def _tensor_slot(
    name: str, tensors: list[torch.Tensor], single: torch.Tensor | None, version: int | None = None
) -> SavedSlot:
    refs = tuple(dict.fromkeys(storage_ref(t) for t in tensors))
    first = tensors[0]
    return SavedSlot(
        name,
        "tensor",
        shape=None if single is None else tuple(single.shape),
        dtype=_dtype_text(first.dtype),
        device=_device_text(first.device),
        nbytes=sum(r.nbytes for r in refs),
        storages=refs,
        saved_version=first._version if version is None and single is not None else version,
    )


def storage_ref(tensor: torch.Tensor) -> StorageRef:
    storage = tensor.untyped_storage()
    return StorageRef(_device_text(tensor.device), storage.data_ptr(), storage.nbytes())


def _unreadable_slot(fn: Any, name: str, exc: RuntimeError) -> SavedSlot:
    """A slot whose read raised: freed (details gone) or modified in place (PyTorch refuses to
    unpack it, but the raw saved tensor still holds its storage: read that, unchecked)."""
    expected = _EXPECTED_VERSION.search(str(exc))
    tensors = raw_saved_tensors(fn, name)
    single = tensors[0] if len(tensors) == 1 else None
    if not tensors:
        return SavedSlot(name, "tensor")
    try:
        return _tensor_slot(name, tensors, single, None if expected is None else int(expected[1]))
    except RuntimeError:  # a vmap or forward-mode wrapper (hessian's forward-mode): no storage
        return SavedSlot(name, "tensor")


_EXPECTED_VERSION = re.compile(r"expected version (\d+)")


# NOTE [saved-tensor hooks]
# Under ``torch.autograd.graph.saved_tensors_hooks`` (``save_on_cpu()``, a non-reentrant
# ``checkpoint``, or the program's own pack and unpack functions), a slot keeps whatever the pack
# function returned, and reading ``_saved_<name>`` runs the unpack function: for a checkpoint, that
# is the recompute of the whole block, outside any backward. So a hooked slot is never read through
# ``_saved_``: its raw saved value (``_raw_saved_<name>.data``, the packed object) is described
# instead, and its bytes are what that object holds (nothing for a checkpoint's placeholder).
NOT_HOOKED = object()


def hooked_packed(fn: Any, name: str) -> Any:
    """What a hooked slot's pack function returned (None once freed); ``NOT_HOOKED`` otherwise."""
    try:
        raw = getattr(fn, RAW_PREFIX + name)
    except (AttributeError, RuntimeError):
        return NOT_HOOKED
    if isinstance(raw, (list, tuple)):  # a list slot: hooked when any of its tensors is
        if not any(getattr(r, "unpack_hook", None) is not None for r in raw):
            return NOT_HOOKED
        return [None if r is None else r.data for r in raw]
    if raw is None or getattr(raw, "unpack_hook", None) is None:
        return NOT_HOOKED
    return raw.data


def packed_slot(name: str, packed: Any) -> SavedSlot:
    """A hooked slot: the tensors its packed value holds (a tensor, or a tuple such as
    ``save_on_cpu``'s ``(device, tensor)``); a placeholder that holds none takes no bytes."""
    if isinstance(packed, torch.Tensor):
        return describe_slot(name, packed)
    items = packed if isinstance(packed, (list, tuple)) else ()
    nested = [t for i in items for t in (i if isinstance(i, (list, tuple)) else (i,))]
    tensors = [t for t in nested if isinstance(t, torch.Tensor)]
    if tensors:
        return _tensor_slot(name, tensors, tensors[0] if len(tensors) == 1 else None)
    return SavedSlot(name, "tensor", nbytes=0)


# NOTE [checkpoint inputs]
# A non-reentrant checkpoint keeps the block's inputs itself, as saved tensors of its frame (the
# object its pack and unpack hooks share), not in any node: PyTorch's pack hooks see them packed,
# and they live until the block's last node has run and the frame is let go. The first node of
# the block that is captured (its output) shows them as one more slot, ``INPUTS_SLOT``, held while
# the frame is (a weak reference: the recording must not keep it alive).
INPUTS_SLOT = "checkpoint inputs"


def checkpoint_frame(unpack_hook: Any) -> Any:
    """The checkpoint frame an unpack hook belongs to (PyTorch's ``_CheckpointFrame``), or None."""
    seen = [unpack_hook]
    for _ in range(3):  # the hook itself, or a hook wrapping it
        cells = [c.cell_contents for f in seen for c in (getattr(f, "__closure__", None) or ())]
        found = next((c for c in cells if hasattr(c, "saved_args") and hasattr(c, "recompute_fn")), None)
        if found is not None:
            return found
        seen = [c for c in cells if callable(c)]
    return None


def frame_inputs(frame: Any) -> list[torch.Tensor]:
    """The tensors a checkpoint frame keeps for its recompute ([] once released)."""
    saved = getattr(frame, "saved_args", None) or []
    data = [getattr(s, "data", None) for s in saved if not isinstance(s, torch.Tensor)]
    return [t for t in data if isinstance(t, torch.Tensor)]


def inputs_slot(frame: Any) -> SavedSlot:
    tensors = frame_inputs(frame)
    if not tensors:
        return SavedSlot(INPUTS_SLOT, "tensor", nbytes=0)
    return _tensor_slot(INPUTS_SLOT, tensors, tensors[0] if len(tensors) == 1 else None)


def raw_saved_tensors(fn: Any, name: str) -> list[torch.Tensor]:
    """The tensors a slot still holds, read without PyTorch's version check; [] once freed."""
    try:
        raw = getattr(fn, RAW_PREFIX + name)
        raws = raw if isinstance(raw, (list, tuple)) else [raw]
        data = [r.data for r in raws if r is not None]
    except (AttributeError, RuntimeError):
        return []
    return [t for t in data if isinstance(t, torch.Tensor)]


def _as_tensors(value: Any) -> list[torch.Tensor] | None:
    """The tensors of a tensor slot: one tensor, or a list of them (``None`` entries allowed,
    as in the ``indices`` of ``x[:, i]``)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, torch.Tensor) for v in value):
        tensors = [v for v in value if v is not None]
        return tensors or None
    return None


def _short_text(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _next_functions(fn: Any) -> Iterator[Any]:
    for child, _ in fn.next_functions:
        if child is not None:
            yield child


class GraphCapture:
    """A growing graph over live ``grad_fn`` objects (only while recording).

    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> capture = GraphCapture()
    >>> _ = capture.add_roots([x.square().sum().grad_fn])
    >>> [n.name for n in capture.freeze().nodes]
    ['SumBackward0', 'PowBackward0', 'AccumulateGrad']
    """

    def __init__(self) -> None:
        self.fns: dict[str, Any] = {}  # our id -> grad_fn (insertion = discovery order)
        self._ids: dict[int, str] = {}  # id(grad_fn) -> our id; safe: we hold every fn
        # What each node is, kept as parts: a GraphNode is made once, by freeze()
        self._parts: dict[str, _Parts] = {}
        self._tensor_slots: dict[str, tuple[SavedSlot, ...]] = {}
        self._edges: list[Edge] = []
        self.labels: dict[str, str] = {}
        self.unreadable: set[tuple[str, str]] = set()  # slots whose read raised when captured
        # NOTE [checkpoint inputs]: the node that shows a checkpoint's kept inputs -> its frame
        self.frames: dict[str, weakref.ref[Any]] = {}
        self._frames_seen: weakref.WeakSet[Any] = weakref.WeakSet()
        self.changes = 0  # nodes registered or forgotten so far: a walk's results stand until it moves

    def id_of(self, fn: Any) -> str | None:
        return self._ids.get(id(fn))

    def add_roots(self, roots: Iterable[Any], *, call: int | None = None) -> list[str]:
        """Walk from ``roots``; return the ids of nodes seen for the first time."""
        new: list[str] = []
        made: list[tuple[str, list[Any]]] = []  # each new node and its children, in walk order
        ids = self._ids
        stack = [r for r in roots if r is not None]
        while stack:
            fn = stack.pop()
            if id(fn) in ids:
                continue
            node_id = self._register(fn, call)
            new.append(node_id)
            children = [child for child, _ in fn.next_functions if child is not None]
            made.append((node_id, children))
            stack.extend(reversed(children))
        # Every child is registered by now (walked, or known before): each edge names both ends.
        self._edges.extend(Edge(node_id, ids[id(child)]) for node_id, children in made for child in children)
        return new

    def _register(self, fn: Any, call: int | None) -> str:
        node_id = f"n{len(self._parts)}"  # never reused, even after forget()
        self.changes += 1
        self.fns[node_id] = fn
        self._ids[id(fn)] = node_id
        saved = tuple(self._read_slots(fn, node_id))
        self._parts[node_id] = (type(fn).__name__, saved, call, hasattr(fn, "variable"))
        self._tensor_slots[node_id] = tuple(s for s in saved if s.kind == "tensor")
        return node_id

    def _read_slots(self, fn: Any, node_id: str) -> Iterator[SavedSlot]:
        frame = None
        raw = _raw_slot_names(type(fn))
        for name in saved_slot_names(fn):
            packed = hooked_packed(fn, name) if name in raw else NOT_HOOKED
            if packed is not NOT_HOOKED:  # NOTE [saved-tensor hooks]: read what pack returned
                frame = frame or self._new_frame(fn, name, packed)
                yield packed_slot(name, packed)
                continue
            try:
                yield describe_slot(name, read_saved(fn, name))
            except RuntimeError as exc:
                self.unreadable.add((node_id, name))
                yield _unreadable_slot(fn, name, exc)
        if frame is not None:
            self.frames[node_id] = weakref.ref(frame)
            yield inputs_slot(frame)

    def _new_frame(self, fn: Any, name: str, packed: Any) -> Any:
        """The checkpoint a placeholder belongs to, the first time one of its nodes is seen."""
        if isinstance(packed, (torch.Tensor, list, tuple)):
            return None
        frame = checkpoint_frame(getattr(fn, RAW_PREFIX + name).unpack_hook)
        if frame is None or frame in self._frames_seen:
            return None
        self._frames_seen.add(frame)
        return frame

    def inputs_held(self, node_id: str) -> bool:
        """Whether the checkpoint whose inputs ``node_id`` shows still keeps them."""
        ref = self.frames.get(node_id)
        frame = None if ref is None else ref()
        return frame is not None and bool(frame_inputs(frame))

    def node(self, node_id: str) -> GraphNode:
        name, saved, call, is_leaf = self._parts[node_id]
        return GraphNode(node_id, name, None, saved, call, is_leaf)

    def tensor_slots(self, node_id: str) -> tuple[SavedSlot, ...]:
        """The node's tensor slots (``node(node_id).tensor_slots``, without making the node)."""
        return self._tensor_slots[node_id]

    def reachable_from_all(self, roots: Iterable[Any]) -> list[str]:
        """Ids of the known nodes reachable from any of ``roots``.

        A node this capture does not know is walked through too: a graph the
        program holds may reach known nodes through nodes never captured.
        """
        return self.reachable_from(roots, {})

    def reachable_from(self, roots: Iterable[Any], walked: dict[int, Any]) -> list[str]:
        """As :meth:`reachable_from_all`, past the nodes in ``walked`` (those an earlier walk went
        through, and counted, by id); the nodes walked now are added to it. It keeps each node's
        Python object, so that no id is another node's while the walks that share it last."""
        seen: dict[str, None] = {}
        stack = list(roots)
        while stack:
            fn = stack.pop()
            if id(fn) in walked:
                continue
            walked[id(fn)] = fn
            node_id = self.id_of(fn)
            if node_id is not None:
                seen[node_id] = None
            stack.extend(_next_functions(fn))
        return list(seen)

    def label(self, fn: Any, text: str, *, override: bool = False) -> None:
        node_id = self.id_of(fn)
        if node_id is not None and (override or node_id not in self.labels):
            self.labels[node_id] = text

    def leaf_variable(self, node_id: str) -> torch.Tensor | None:
        return getattr(self.fns.get(node_id), "variable", None)

    def forget(self, node_id: str) -> None:
        """Let go of a node nothing else holds: its ``grad_fn`` (and buffers) can be freed.

        Its data stays in the graph; a new ``grad_fn`` that reuses the Python id gets a new node id.
        """
        fn = self.fns.pop(node_id, None)
        if fn is not None:
            self._ids.pop(id(fn), None)
            self.changes += 1

    def freeze(
        self,
        fields: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        saved: Callable[[tuple[SavedSlot, ...]], tuple[SavedSlot, ...]] | None = None,
    ) -> Graph:
        """The graph as data; ``fields`` sets more of each node's fields (its line, loops, steps),
        and ``saved`` gives each node's slots as the graph holds them (its storages numbered)."""
        more = fields or {}
        labels = self.labels
        nodes = tuple(
            _graph_node(node_id, parts, labels.get(node_id), more.get(node_id, {}), saved)
            for node_id, parts in self._parts.items()
        )
        return Graph(nodes, tuple(dict.fromkeys(self._edges)))


def _graph_node(
    node_id: str,
    parts: _Parts,
    label: str | None,
    more: Mapping[str, Any],
    slots: Callable[[tuple[SavedSlot, ...]], tuple[SavedSlot, ...]] | None,
) -> GraphNode:
    name, saved, call, is_leaf = parts
    if slots is not None:
        saved = slots(saved)
    fields: dict[str, Any] = {"id": node_id, "name": name, "label": label, "saved": saved}
    fields.update(added_at_call=call, is_leaf=is_leaf, **more)
    return frozen(GraphNode, **fields) if fields.keys() == _NODE_FIELDS else GraphNode(**fields)


_NODE_FIELDS = frozenset(f.name for f in dataclasses.fields(GraphNode))


def trace(*tensors: torch.Tensor) -> Graph:
    """The graph behind ``tensors``: nodes, edges and saved slots (``micrograd``'s ``trace``).

    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> g = trace(x.square().sum())
    >>> [(s.name, s.kind) for s in g.nodes[1].saved]
    [('exponent', 'value'), ('self', 'tensor')]
    """
    capture = GraphCapture()
    capture.add_roots(t.grad_fn for t in tensors)
    return capture.freeze()
