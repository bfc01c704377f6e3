"""Tensor values as plain data: what a recording keeps of a gradient or a result.

A recording never holds live tensors: a ``.lens`` file is read without
importing torch, and stepping back must not touch torch state. A
:class:`Values` is a shape and its elements in row-major order.

>>> v = Values((2, 2), (1.0, 2.0, 3.0, 4.0))
>>> v.tolist(), v.dim(), v.numel()
([[1.0, 2.0], [3.0, 4.0]], 2, 4)
>>> (v - Values((2, 2), (1.0, 1.0, 1.0, 1.0))).tolist()
[[0.0, 1.0], [2.0, 3.0]]
>>> Values((), (3.0,)).tolist()
3.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Number", "Values"]

Number = float | int | bool


@dataclass(frozen=True)
class Values:
    """The elements of a tensor, flattened, with its shape and dtype name."""

    shape: tuple[int, ...]
    flat: tuple[Number, ...]
    dtype: str = "float32"

    def __post_init__(self) -> None:
        count = 1
        for size in self.shape:
            count *= size
        if count != len(self.flat):
            raise ValueError(f"shape {self.shape} holds {count} elements, not {len(self.flat)}")

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return len(self.flat)

    def tolist(self) -> Any:
        """Nested lists, as ``torch.Tensor.tolist`` gives (a number for a 0-d value)."""
        if not self.shape:
            return self.flat[0]
        return _nest(list(self.flat), self.shape)

    def __sub__(self, other: Values) -> Values:
        if other.shape != self.shape:
            raise ValueError(f"cannot subtract shape {other.shape} from {self.shape}")
        return Values(
            self.shape, tuple(a - b for a, b in zip(self.flat, other.flat, strict=True)), self.dtype
        )

    @classmethod
    def from_list(cls, data: Any, dtype: str = "float32") -> Values:
        """The inverse of :meth:`tolist` (for files and tests).

        >>> Values.from_list([[1, 2], [3, 4]]).shape
        (2, 2)
        """
        shape: list[int] = []
        probe = data
        while isinstance(probe, list):
            shape.append(len(probe))
            probe = probe[0] if probe else None
        flat: list[Number] = []
        _flatten(data, flat)
        return cls(tuple(shape), tuple(flat), dtype)


def _nest(flat: list[Number], shape: tuple[int, ...]) -> Any:
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _flatten(data: Any, out: list[Number]) -> None:
    if isinstance(data, list):
        for item in data:
            _flatten(item, out)
    else:
        out.append(data)
