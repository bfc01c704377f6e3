"""The errors a person is told: :class:`UserError` at the root, :class:`ProgramError` for a program.

Everything the window or the command line tells a person as a sentence (a refused program, a
damaged ``.lens`` file, an export past its budget) is a :class:`UserError`: caught as one, shown
as its text. Anything else reaching the top is a bug of ours and is told as one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RUN_HINT", "ProgramError", "ProgramRaised", "RecordingTimeout", "UserError", "with_run_hint"]

# NOTE [own scripts] in app/core/language/hints.py: how a refusal points to recording a trusted script.
RUN_HINT = "to record a script of your own with full Python, run: python -m app run SCRIPT.py"


def with_run_hint(message: str) -> str:
    """``message`` ending with how to record the text as a trusted script.

    >>> with_run_hint("comprehensions are not allowed.").replace(RUN_HINT, "RUN_HINT")
    'comprehensions are not allowed; RUN_HINT'
    """
    if message.endswith(RUN_HINT):
        return message
    return f"{message.rstrip('. ')}; {RUN_HINT}"


class UserError(Exception):
    """A failure worded for the person using Autograd Lens: ``message`` is the whole sentence.

    >>> str(UserError("the export needs 9 files; its limit is 2 (steps)"))
    'the export needs 9 files; its limit is 2 (steps)'
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def where(self) -> str:
        """Where in what the person gave it stands (empty: nowhere in particular)."""
        return ""

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


class ProgramError(UserError):
    """A program that cannot be loaded or run, worded for a learner.

    ``field`` names the program field (``forward.code``, ``calls[1].loss``),
    ``line`` and ``col`` are 1-based positions inside that field's text.
    ``python_type`` and ``python_text``: the Python exception an error of the program's own code
    stands for and what it said, for ``except`` clauses (NOTE [caught errors]); ``unwound``: the
    scopes of the calls it went out of, innermost first, as a traceback keeps them.

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
        python_type: type[BaseException] | None = None,
        python_text: str | None = None,
    ) -> None:
        super().__init__(message)
        self.field = field
        self.line = line
        self.col = col
        self.python_type = python_type
        self.python_text = python_text
        self.unwound: list[Any] = []

    def where(self) -> str:
        parts = [self.field] if self.field else []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.col is not None:
            parts.append(f"column {self.col}")
        return ", ".join(parts)


class RecordingTimeout(ProgramError):
    """A recording ran past its time limit (``Limits.time_limit_s``): ``record`` raises it.

    >>> issubclass(RecordingTimeout, ProgramError)
    True
    """


class ProgramRaised(ProgramError):
    """An exception the program's own code raised (PyTorch's or Python's), not a refusal.

    A recording ends at it with an ``error`` step, as Python would end the
    program; refusals of the language (:class:`ProgramError`) stop the
    recording instead, since nothing real ran.

    >>> exc = ProgramRaised("ValueError: no", field="program", line=3, python_type=ValueError)
    >>> str(exc), exc.python_type.__name__
    ('program, line 3: ValueError: no', 'ValueError')
    """
