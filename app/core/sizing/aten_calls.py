"""Reading one ATen call as the size guard sees it: its name, tensors and arguments.

Small, shape-only helpers shared by the cost estimates (``op_costs.py``,
``op_bounds.py``) and the guard itself; none of them runs the operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

__all__ = [
    "ArgumentsRejected",
    "bind",
    "broadcast",
    "dim_size",
    "flat_elements",
    "flat_tensors",
    "numel",
    "op_name",
    "op_names",
    "shape",
    "storage_elements",
]


class ArgumentsRejected(Exception):
    """The meta run refused the arguments (a shape mismatch, a bad dim)."""


def op_name(func: torch._ops.OpOverload) -> str:
    """``aten::add.Tensor`` -> ``add``."""
    return func._schema.name.split("::")[-1]


def op_names(text: str) -> frozenset[str]:
    """A set of op names written as one line of words."""
    return frozenset(text.split())


def flat_tensors(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor inside ``value`` (lists, tuples, dicts, return types).

    The guard calls this several times per ATen op; walking the few container
    types ATen uses directly is about 10x cheaper than ``torch.utils._pytree``.
    """
    found: list[torch.Tensor] = []
    _collect_tensors(value, found)
    return iter(found)


def _collect_tensors(value: Any, found: list[torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):  # return types (torch.return_types) are tuples
        for item in value:
            _collect_tensors(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_tensors(item, found)


def flat_elements(value: Any) -> int:
    """Elements of every tensor inside ``value``."""
    return sum(t.numel() for t in flat_tensors(value))


def numel(value: Any) -> int:
    """Elements of ``value`` if it is a tensor, else 0."""
    return value.numel() if isinstance(value, torch.Tensor) else 0


def shape(value: Any) -> tuple[int, ...]:
    """Shape of ``value`` if it is a tensor, else ``()``."""
    return tuple(value.shape) if isinstance(value, torch.Tensor) else ()


def storage_elements(tensor: torch.Tensor) -> int:
    """Elements in the storage behind ``tensor`` (a view's storage may hold more than the view)."""
    return tensor.untyped_storage().nbytes() // max(tensor.element_size(), 1)


_MISSING = object()


def bind(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Schema argument name -> value (defaults filled in)."""
    bound: dict[str, Any] = {}
    positional = iter(args)
    for argument in func._schema.arguments:
        if not argument.kwarg_only:
            value = next(positional, _MISSING)
            if value is not _MISSING:
                bound[argument.name] = value
                continue
        if argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
    return bound


def dim_size(tensor: Any, dim: Any) -> int:
    """Size of ``tensor`` along ``dim``; 1 when either is not what a split expects."""
    if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0 or not isinstance(dim, int):
        return 1
    return int(tensor.shape[dim % tensor.dim()])


def broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """``torch.broadcast_shapes`` without its symbolic-shape machinery (which imports sympy)."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for shape_ in shapes:
        for i, size in enumerate(shape_, start=rank - len(shape_)):
            if size != 1 and out[i] not in (1, size):
                raise ArgumentsRejected
            out[i] = size if size != 1 else out[i]
    return tuple(out)
