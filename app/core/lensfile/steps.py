"""A file's steps made as they are first asked for (timeline's NOTE [steps on demand]).

Opening the 5,000-node chain's file made and checked all 13,329 of its steps (0.9 s of the
open) before one could be shown, though a learner looks at a few hundred. Here each step's raw
JSON is kept, and made into a :class:`Step` (decoded and checked by the reader, as it always
was: untrusted data) the first time anything asks for it. A damaged step raises
:class:`LensError` then, naming it: the window tells it when that step is shown.

What the series over every step read (:class:`StepHead`) is decoded for every step up front, in
a few calls into C, and checked as the whole steps are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import msgspec
from msgspec import Raw

from app.core.lensfile.format import damaged
from app.core.lensfile.refusal import DECODE_ERRORS, refusal
from app.core.lensfile.schema import HEADS, StepHeadEntry
from app.core.model.graph import LoopMark
from app.core.model.timeline import Step, StepHead

__all__ = ["StepsOnDemand", "step_heads"]

HEADS_AT_ONCE = 2_000  # steps' heads decoded per call: no call holds the interpreter for long
_HEAD = msgspec.json.Decoder(StepHeadEntry)


class StepsOnDemand(Sequence[Step]):
    """The steps of ``raws``, each made by ``make(raw, index)`` when first asked for, then kept."""

    def __init__(self, raws: Sequence[Raw], make: Callable[[Raw, int], Step]) -> None:
        self._raws = raws
        self._make = make
        self._made: list[Step | None] = [None] * len(raws)

    def __len__(self) -> int:
        return len(self._raws)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Step, ...]: ...
    def __getitem__(self, index: int | slice) -> Step | tuple[Step, ...]:
        if isinstance(index, slice):
            return tuple(self._step(i) for i in range(*index.indices(len(self._raws))))
        if index < 0:
            index += len(self._raws)
        if not 0 <= index < len(self._raws):
            raise IndexError(f"step {index} is outside 0..{len(self._raws) - 1}")
        return self._step(index)

    def __iter__(self) -> Iterator[Step]:
        return (self._step(i) for i in range(len(self._raws)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def made(self) -> int:
        """How many steps were made so far."""
        return sum(step is not None for step in self._made)

    def _step(self, index: int) -> Step:
        step = self._made[index]
        if step is None:  # two threads may both make it: equal steps, one kept
            step = self._made[index] = self._make(self._raws[index], index)
        return step


def step_heads(raws: Sequence[Raw], calls: int) -> tuple[StepHead, ...]:
    """Every step's head, checked: each ``call`` names one of ``calls`` calls."""
    heads: list[StepHead] = []
    for start in range(0, len(raws), HEADS_AT_ONCE):
        chunk = b"[" + b",".join(bytes(r) for r in raws[start : start + HEADS_AT_ONCE]) + b"]"
        try:
            entries = HEADS.decode(chunk)
        except DECODE_ERRORS as exc:  # the whole step's decode names the field and its step
            raise _first_refusal(raws, start, exc) from None
        heads.extend(_head(e, start + i, calls) for i, e in enumerate(entries))
    return tuple(heads)


def _head(e: StepHeadEntry, index: int, calls: int) -> StepHead:
    if e.call is not None and not 0 <= e.call < calls:
        raise damaged(f"steps[{index}].call: {e.call} is outside 0..{calls - 1}")
    loops = tuple(LoopMark(*m) for m in e.loops) if e.loops else ()
    return StepHead(e.call, loops, e.saved_bytes, e.alive_nodes, e.device_bytes)


def _first_refusal(raws: Sequence[Raw], start: int, exc: Any) -> Exception:
    """The refusal naming the first step of the chunk whose head does not decode."""
    for i in range(start, min(start + HEADS_AT_ONCE, len(raws))):
        try:
            _HEAD.decode(raws[i])
        except DECODE_ERRORS as one:
            return refusal(one, bytes(raws[i]), f"steps[{i}]")
    return refusal(exc, b"", "steps")  # pragma: no cover - a chunk fails only where one step does
