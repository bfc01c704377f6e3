"""Bounds the size guard reads from an ATen call's argument *values*, before it runs.

How many tensors a split returns, and the most elements a value-dependent
operation (``nonzero``, ``unique``, boolean masks, ``bincount`` ...) can
return: a meta run cannot tell either (see NOTE [size guard] in ``guard.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from app.core.sizing.aten_calls import bind, broadcast, dim_size, numel, op_name, op_names

__all__ = ["dynamic_bound", "pieces_in"]

_SPLITS = op_names(
    "unbind split unsafe_split chunk unsafe_chunk split_with_sizes unsafe_split_with_sizes tensor_split"
)


def pieces_in(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """How many tensors ``func`` takes in one list argument or returns, known before it runs."""
    lists = [a for a in args if isinstance(a, (list, tuple))]
    taken = max((sum(isinstance(t, torch.Tensor) for t in a) for a in lists), default=0)
    name = op_name(func)
    if name not in _SPLITS:
        return taken
    b = bind(func, args, kwargs)
    size = dim_size(b.get("self"), b.get("dim", 0))
    if name == "unbind":
        return size
    if name in ("split", "unsafe_split"):
        step = b.get("split_size")
        return -(-size // step) if isinstance(step, int) and step > 0 else size
    if name in ("chunk", "unsafe_chunk"):
        return int(b.get("chunks", 1))
    if name in ("split_with_sizes", "unsafe_split_with_sizes"):
        return len(b.get("split_sizes", ()))
    return _tensor_split_pieces(b)


def _tensor_split_pieces(b: dict[str, Any]) -> int:
    for key in ("sections", "indices", "tensor_indices_or_sections"):
        value = b.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, (list, tuple)):
            return len(value) + 1
        if isinstance(value, torch.Tensor):
            return int(value.item()) if value.dim() == 0 else value.numel() + 1
    return 1


def dynamic_bound(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """Most elements a value-dependent op can return, from its real inputs; None if unknown."""
    bound = _DYNAMIC_BOUNDS.get(op_name(func))
    return None if bound is None else bound(bind(func, args, kwargs))


def _top(value: Any) -> int:
    """One more than the largest value (the classes or bins it needs)."""
    return int(value.max().item()) + 1 if numel(value) else 0


def _masked_bound(b: dict[str, Any]) -> int:
    shapes = [tuple(t.shape) for t in (b.get("self"), b.get("mask")) if isinstance(t, torch.Tensor)]
    return math.prod(broadcast(shapes))


def _index_bound(b: dict[str, Any]) -> int:
    indices = [t for t in b.get("indices", ()) if isinstance(t, torch.Tensor) and t.dtype != torch.bool]
    return numel(b.get("self")) * math.prod(t.numel() for t in indices)


def _repeat_bound(b: dict[str, Any]) -> int | None:
    size, repeats = b.get("output_size"), b.get("repeats")
    if isinstance(size, int):
        return size
    return int(repeats.sum().item()) if isinstance(repeats, torch.Tensor) else None


def _one_hot_bound(b: dict[str, Any]) -> int:
    classes = int(b.get("num_classes", -1))
    return numel(b.get("self")) * (classes if classes >= 0 else _top(b.get("self")))


def _nonzero_bound(b: dict[str, Any]) -> int:
    self_ = b.get("self")
    return numel(self_) * max(self_.dim() if isinstance(self_, torch.Tensor) else 1, 1)


def _unique_bound(b: dict[str, Any]) -> int:
    return numel(b.get("self"))


def _bincount_bound(b: dict[str, Any]) -> int:
    return max(_top(b.get("self")), int(b.get("minlength", 0)))


_DYNAMIC_BOUNDS: dict[str, Callable[[dict[str, Any]], int | None]] = {
    **dict.fromkeys(
        op_names("_unique _unique2 unique_consecutive unique_dim unique_dim_consecutive"), _unique_bound
    ),
    "nonzero": _nonzero_bound,
    "argwhere": _nonzero_bound,
    "masked_select": _masked_bound,
    "index": _index_bound,
    "bincount": _bincount_bound,
    "repeat_interleave": _repeat_bound,
    "one_hot": _one_hot_bound,
}
