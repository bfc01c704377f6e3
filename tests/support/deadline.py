"""A call timed in a forked process, killed past a generous deadline.

A quadratic or backtracking function holds the interpreter, so no thread could stop it; a forked
child can be killed. The tests that use this assert only that the call finished in time.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

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


def all_finish(calls: Sequence[Callable[[], object]], deadline_s: float = DEADLINE_S) -> list[bool]:
    """:func:`finishes` for each of ``calls``, in turn, in one forked process: each still gets
    ``deadline_s`` of its own (the child says when each returns), and the fork is paid once.
    A call that does not finish in time, or raises what is not a refusal, is ``False``; those
    after it are not run and are ``False`` too."""
    receive, send = multiprocessing.get_context("fork").Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=_each_quietly, args=(calls, send))
    process.start()
    send.close()
    finished: list[bool] = []
    try:
        while len(finished) < len(calls) and receive.poll(deadline_s):
            try:
                finished.append(receive.recv() is True)
            except EOFError:
                break
            if not finished[-1]:
                break
    finally:
        process.kill()
        process.join()
    return finished + [False] * (len(calls) - len(finished))


def _each_quietly(calls: Sequence[Callable[[], object]], send: Connection) -> None:
    for call in calls:
        done: Any = True
        try:
            _quietly(call)
        except BaseException:
            done = False
        send.send(done)
        if not done:
            return
