"""The one error type a learner sees for a bad program."""

from __future__ import annotations

__all__ = ["ProgramError", "ProgramRaised", "RecordingTimeout"]


class ProgramError(Exception):
    """A program that cannot be loaded or run, worded for a learner.

    ``field`` names the program field (``forward.code``, ``calls[1].loss``),
    ``line`` and ``col`` are 1-based positions inside that field's text.

    >>> str(ProgramError("name 'z' is not defined", field="calls[0].loss", line=1, col=3))
    "calls[0].loss, line 1, column 3: name 'z' is not defined"
    """

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.line = line
        self.col = col

    def where(self) -> str:
        parts = [self.field] if self.field else []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.col is not None:
            parts.append(f"column {self.col}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


class RecordingTimeout(ProgramError):
    """A recording ran past its time limit."""


class ProgramRaised(ProgramError):
    """An exception the program's own code raised (PyTorch's or Python's), not a refusal.

    A recording ends at it with an ``error`` step, as Python would end the
    program; refusals of the language (:class:`ProgramError`) stop the
    recording instead, since nothing real ran.
    """
