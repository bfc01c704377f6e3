"""A call timed in a forked process, killed past a generous deadline.

A quadratic or backtracking function holds the interpreter, so no thread could stop it; a forked
child can be killed. The tests that use this assert only that the call finished in time.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable

from app.core.model.errors import ProgramError

DEADLINE_S = 5.0  # per call, in a process of its own: linear takes well under a second


def finishes(call: Callable[[], object], deadline_s: float = DEADLINE_S) -> bool:
    """Whether ``call`` returns (or raises a refusal) within ``deadline_s`` in a forked process."""
    process = multiprocessing.get_context("fork").Process(target=_quietly, args=(call,))
    process.start()
    process.join(deadline_s)
    if process.is_alive():
        process.kill()
        process.join()
        return False
    return process.exitcode == 0


def _quietly(call: Callable[[], object]) -> None:
    with contextlib.suppress(SyntaxError, ValueError, ProgramError):  # a refusal is timed too
        call()
