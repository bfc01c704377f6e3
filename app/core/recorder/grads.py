"""The grad watch: which leaves' ``.grad`` changed since the last step, and what a call added.

A step holds each changed ``.grad`` as plain :class:`Values` (floats packed: NOTE [packed
values]), copied out of the tensor when the step is taken: the program may write into the same
tensor later (the next backward adds to it, ``zero_grad`` zeroes it).

>>> import torch
>>> from app.core.recorder.capture import GraphCapture
>>> from app.core.recorder.leaves import LeafNames
>>> x = torch.ones(2, requires_grad=True)
>>> leaves = LeafNames(GraphCapture(), name_of=lambda t: None, in_use=lambda n: False)
>>> _ = leaves.known(x, "x")
>>> watch = GradWatch(leaves)
>>> watch.changes("forward", None)
{}
>>> (x * 3).sum().backward()
>>> watch.changes("forward", None)["x"].tolist()
[3.0, 3.0]
>>> watch.changes("forward", None)
{}
"""

from __future__ import annotations

import ctypes
import math
import struct
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import torch

from app.core.model.timeline import StepKind
from app.core.model.values import PackedNumbers, Values
from app.core.recorder.capture import frozen
from app.core.recorder.leaves import LeafNames

__all__ = ["GradWatch", "values_of"]


def values_of(tensor: torch.Tensor) -> Values:
    """A detached CPU copy of ``tensor`` as plain :class:`Values` (floats packed: NOTE [packed values]).

    A sparse tensor (the gradient of ``gather(..., sparse_grad=True)`` or ``embedding(...,
    sparse=True)``) is shown with its zeros, as the dense tensor it stands for; a tensor on the
    meta device, which has no values (a script's: programs stop where they make one), as NaN.
    """
    code = _PACKED.get(tensor.dtype)
    if code is not None and tensor.is_cpu and tensor.layout == torch.strided:
        raw = _raw_bytes(tensor)  # most values: a float CPU tensor, read as it is
        if raw is not None:  # as many numbers as the shape holds: Values' own check is spared
            packed = PackedNumbers(raw, code)
            return frozen(Values, shape=tuple(tensor.shape), flat=packed, dtype=_DTYPE_NAMES[tensor.dtype])
    if tensor.is_meta:  # 4 bytes an element, as the real tensor would have taken
        return Values(tuple(tensor.shape), PackedNumbers(struct.pack("f", math.nan) * tensor.numel(), "f"))
    data = tensor.detach().to("cpu")
    if data.layout != torch.strided:
        data = data.to_dense()
    if data.is_complex():
        data = data.abs()
    dtype = str(data.dtype).removeprefix("torch.")
    if not data.is_floating_point() or data.numel() == 0:
        return Values(tuple(data.shape), tuple(data.reshape(-1).tolist()), dtype)
    if data.dtype not in _PACKED:  # float16, bfloat16: every one of their values is a float32
        data = data.float()
    data = data.contiguous()
    raw = ctypes.string_at(data.data_ptr(), data.numel() * data.element_size())  # `data` holds it
    return Values(tuple(data.shape), PackedNumbers(raw, _PACKED[data.dtype]), dtype)


def _raw_bytes(tensor: torch.Tensor) -> bytes | None:
    """The bytes of a contiguous, non-empty CPU tensor's elements (None for any other)."""
    count = tensor.numel()
    if not count or not tensor.is_contiguous():
        return None
    return ctypes.string_at(tensor.data_ptr(), count * tensor.element_size())


_COMPARED_BY_VALUE = 65_536  # elements: a .grad this small is compared by value after a write in place
_PACKED = {torch.float32: "f", torch.float64: "d"}  # struct's codes for them, in the machine's order
_DTYPE_NAMES = {dtype: str(dtype).removeprefix("torch.") for dtype in _PACKED}


class GradWatch:
    """Each leaf's ``.grad`` as the last step read it, and which leaves no step has read yet."""

    def __init__(self, leaves: LeafNames) -> None:
        self.leaves = leaves
        # The mark holds the grad tensor itself, not its ``id()``: create_graph makes
        # AccumulateGrad replace ``.grad`` out of place, and a new tensor can reuse a dead one's
        # id with the same version number.
        self._marks: dict[str, tuple[torch.Tensor, int] | None] = {}
        self._values: dict[str, Values | None] = {}  # each leaf's .grad as its last step read it

    def changes(self, kind: StepKind, node: str | None, *, written: bool = False) -> dict[str, Values | None]:
        """Leaves whose ``.grad`` is another tensor, or the same one changed in place, since last time.

        Inside a call only a leaf's own AccumulateGrad writes its ``.grad``, so a node's step
        reads that leaf (and leaves never read yet); the other steps read every leaf.
        ``written``: the program wrote into some tensor in place since the last step, so a
        ``.grad`` whose version did not move may still have changed through an alias with a
        version of its own (``w.grad.data.zero_()``): a small one is compared by its values.
        """
        leaves = self.leaves
        names: Iterable[str] = leaves.tensors
        if kind == "node":
            leaf = leaves.names.get(node or "")
            if leaf is None and not leaves.unread:
                return {}  # most node steps: an operation's node writes no .grad
            names = dict.fromkeys([*([leaf] if leaf else []), *leaves.unread])
        changes: dict[str, Values | None] = {}
        marks = self._marks
        for name in names:
            leaves.unread.pop(name, None)
            grad = leaves.tensors[name].grad
            if name not in marks and grad is None:  # None from the start: nothing changed
                marks[name] = None
            elif (
                name not in marks
                or not _unchanged(marks[name], grad)
                or (written and self._written_through_alias(name, grad))
            ):
                marks[name] = None if grad is None else (grad, grad._version)
                changes[name] = self._values[name] = None if grad is None else values_of(grad)
        return changes

    def _written_through_alias(self, name: str, grad: torch.Tensor | None) -> bool:
        """Whether a small ``.grad`` holds other values than its last step read."""
        if grad is None or grad.numel() > _COMPARED_BY_VALUE:
            return False
        now, before = values_of(grad), self._values.get(name)
        if before is None or now.shape != before.shape:
            return True
        if isinstance(now.flat, PackedNumbers) and isinstance(before.flat, PackedNumbers):
            return now.flat.little_endian() != before.flat.little_endian()  # NaN is itself here
        return now != before

    def before_call(self) -> dict[str, torch.Tensor | None]:
        """A copy of each leaf's ``.grad`` as a call starts (the call may add to it in place)."""
        return {name: _grad_clone(tensor) for name, tensor in self.leaves.tensors.items()}

    def contributions(self, before: Mapping[str, torch.Tensor | None]) -> Mapping[str, Values | None]:
        """What the call added to each leaf's ``.grad`` since :meth:`before_call`."""
        return MappingProxyType({name: self._contribution(name, before[name]) for name in before})

    def _contribution(self, name: str, before: torch.Tensor | None) -> Values | None:
        """All of the ``.grad`` when it had none before, which its last step has read already (the
        copy is shared: a model's grads are large)."""
        leaf = self.leaves.tensors[name]
        if before is None and leaf.grad is not None:
            return self._values.get(name)
        return _contribution(leaf, before)


def _unchanged(mark: tuple[torch.Tensor, int] | None, grad: torch.Tensor | None) -> bool:
    if mark is None or grad is None:
        return mark is None and grad is None
    return mark[0] is grad and mark[1] == grad._version


def _grad_clone(leaf: torch.Tensor) -> torch.Tensor | None:
    grad = leaf.grad
    return None if grad is None else grad.detach().clone()


def _contribution(leaf: torch.Tensor, before: torch.Tensor | None) -> Values | None:
    """What a call added to ``leaf.grad``: subtracted by torch, in the grad's dtype (one copy out,
    where subtracting two copies in Python took longer than the call on a model's weights)."""
    after = leaf.grad
    if after is None:
        return None
    if before is None or before.shape != after.shape:
        return values_of(after)
    if after.is_complex() or before.dtype != after.dtype:  # shown by magnitude: |after| - |before|
        return values_of(after) - values_of(before)
    return values_of(after.detach() - before)
