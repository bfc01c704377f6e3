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

# NOTE [packed values]
A model's gradients are tens of thousands of numbers per leaf and per call.
Made into a tuple of Python floats while the user's script runs, they were
the largest part of what recording a training step costs (each float an
object to allocate, and every young collection walked the tuples). The
recorder copies a gradient out as its raw bytes instead (one memcpy) into a
:class:`PackedNumbers`, which is a read-only sequence like the tuple: the
numbers are made the first time something reads them (a panel, a caption's
first few, the ``.lens`` writer), and a part is read without the rest.
"""

from __future__ import annotations

import array
import struct
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, overload

__all__ = ["PACKED_SIZES", "Number", "PackedNumbers", "Values"]

Number = float | int | bool
# How a PackedNumbers may store its numbers (a struct code) -> bytes a number; the .lens
# reader accepts these codes and no others.
PACKED_SIZES = MappingProxyType({"f": 4, "d": 8})


class PackedNumbers(Sequence[float]):
    """Floats kept as their machine bytes, read as a tuple when asked (NOTE [packed values]).

    >>> packed = PackedNumbers(struct.pack("3f", 1.0, 2.5, -4.0), "f")
    >>> len(packed), packed[1], packed[:2], packed == (1.0, 2.5, -4.0)
    (3, 2.5, (1.0, 2.5), True)
    """

    __slots__ = ("_code", "_count", "_numbers", "_raw")

    def __init__(self, raw: bytes, code: str) -> None:
        size = PACKED_SIZES.get(code)
        if size is None or len(raw) % size:
            raise ValueError(f"{len(raw)} bytes are not whole {code!r} numbers")
        self._raw = raw
        self._code = code
        self._count = len(raw) // size
        self._numbers: tuple[float, ...] | None = None

    @property
    def code(self) -> str:
        """``"f"`` (float32) or ``"d"`` (float64): how each number is stored."""
        return self._code

    def little_endian(self) -> bytes:
        """The numbers' bytes, least significant first (how a ``.lens`` file stores them)."""
        return self._raw if sys.byteorder == "little" else _swapped(self._raw, self._code)

    @classmethod
    def from_little_endian(cls, raw: bytes, code: str) -> PackedNumbers:
        return cls(raw if sys.byteorder == "little" else _swapped(raw, code), code)

    def numbers(self) -> tuple[float, ...]:
        """All of them, as a tuple (made once; two threads may both make it, alike)."""
        numbers = self._numbers
        if numbers is None:
            numbers = self._numbers = struct.unpack(f"{self._count}{self._code}", self._raw)
        return numbers

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[float, ...]: ...
    def __getitem__(self, index: int | slice) -> float | tuple[float, ...]:
        if self._numbers is not None or not isinstance(index, slice) or index.step not in (None, 1):
            return self.numbers()[index]
        start, stop, _ = index.indices(self._count)  # a head or a window: only its bytes are read
        size = PACKED_SIZES[self._code]
        return struct.unpack_from(f"{max(0, stop - start)}{self._code}", self._raw, start * size)

    def __iter__(self) -> Iterator[float]:
        return iter(self.numbers())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedNumbers):
            other = other.numbers()
        return isinstance(other, tuple) and self.numbers() == other

    def __hash__(self) -> int:
        return hash(self.numbers())

    def __repr__(self) -> str:
        return repr(self.numbers())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.numbers(),))


def _swapped(raw: bytes, code: str) -> bytes:
    numbers = array.array(code, raw)
    numbers.byteswap()
    return numbers.tobytes()


@dataclass(frozen=True)
class Values:
    """The elements of a tensor, flattened, with its shape and dtype name.

    >>> grad = Values((2, 2), (1.0, 2.0, 3.0, 4.0))
    >>> grad.tolist(), grad.numel()
    ([[1.0, 2.0], [3.0, 4.0]], 4)
    """

    shape: tuple[int, ...]
    flat: tuple[Number, ...] | PackedNumbers  # NOTE [packed values]
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
