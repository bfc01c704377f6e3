"""The child's side: set its limits, import torch once, then record one request after another.

Started by :mod:`app.child.client` as ``python -m app.child IN_FD OUT_FD
[--memory-mb N]``; it reads request frames from ``IN_FD`` and answers each
on ``OUT_FD`` (:mod:`app.child.protocol`). It ends when its input ends.

A request is ``{"op": "record", "source": ..., "device": ..., "limits":
{...}, "cpu_s": ...}``; the source is ``{"load": NAME_OR_PATH}`` (a
built-in or a file, read and checked here) or ``{"program": {code, name,
title, summary, notes, twin}}``; ``"lesson": true`` asks for the lesson's candidates too (NOTE
[the lesson found in the child] in ``app/core/lesson/candidates.py``). The answer is ``{"ok": true}`` with the
recording's ``.lens`` bytes (followed by ``lesson_bytes`` bytes of the lesson's JSON when asked),
``{"ok": false, "error": {...}}`` for a
:class:`ProgramError` (its class, message and place), or ``{"ok": false,
"limit": "memory"}`` when an allocation failed under the memory limit.

``{"op": "torchviz", ...}`` (same fields) runs the program only up to its first
autograd call and answers ``{"ok": true, "note": ...}`` with torchviz's
``make_dot`` DOT text as UTF-8 (``app.core.recorder.first_backward``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import resource
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from app.child.protocol import read_frame, write_frame

if TYPE_CHECKING:
    from app.core.model.program import Program

__all__ = ["FAULTS_ENV", "main", "requested_program"]

FAULTS_ENV = "AUTOGRAD_LENS_CHILD_FAULTS"  # "1": requests may ask for an injected fault (tests only)
MAX_OPEN_FILES = 256
LESSON_DEADLINE_S = 2.0  # as the window's own (app/ui/runtime/lesson_worker.py)
NICE = 5  # below the window (layout.py's NOTE [helpers below the window]): it records while the window paints
_ALLOCATION_FAILED = ("can't allocate memory", "MemoryError", "std::bad_alloc", "out of memory")
# A device's own memory or state, not this process's address space: the program's error, as PyTorch
# words it, and a fresh child next (a CUDA error can leave the process's device context unusable).
_DEVICE_FAULTS = ("CUDA out of memory", "CUDA error", "MPS backend out of memory", "device-side assert")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.child")
    parser.add_argument("fd_in", type=int)
    parser.add_argument("fd_out", type=int)
    parser.add_argument("--memory-mb", type=int, default=None)
    args = parser.parse_args(argv)
    _set_limits()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when a recording stops
    with open(args.fd_in, "rb", buffering=0) as inbox, open(args.fd_out, "wb") as outbox:
        return _serve(inbox, outbox, args.memory_mb)


def _set_limits() -> None:
    """Open files, no core files from a crash (the address space: :func:`_limit_memory`), and a
    priority below the window's."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _lower(resource.RLIMIT_NOFILE, MAX_OPEN_FILES)
    with contextlib.suppress(OSError):  # a processor for the window's GUI thread first
        os.nice(NICE)


def _limit_memory(memory_mb: int | None) -> None:
    """The address space a recording may add to what the imports mapped (NOTE [memory limit]).

    # NOTE [memory limit]
    ``RLIMIT_AS`` counts every mapping, and a CUDA build of torch maps its
    libraries (cuBLAS, cuDNN, ...) at import: measured on a CUDA machine, a
    limit of 4,096 MB set before ``import torch`` left so little that a
    36 MB tensor failed, and programs the checks refuse with their own words
    (an operator too big) died on the memory limit instead. So the limit is
    set after the imports, at what they mapped plus ``memory_mb``: the same
    room for a program on a CPU-only build and on a CUDA build.
    """
    if memory_mb is not None:
        _lower(resource.RLIMIT_AS, _mapped_bytes() + memory_mb * 2**20)


def _mapped_bytes() -> int:
    """This process's address space now (Linux: ``/proc/self/statm``; elsewhere 0)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _lower(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, hard))


def _serve(inbox: BinaryIO, outbox: BinaryIO, memory_mb: int | None) -> int:
    import torch

    import app.core.lensfile
    import app.core.loading
    import app.core.recorder.recorder  # noqa: F401
    from app.core.devices import list_devices
    from app.core.sizing.meta_without_dynamo import references_without_dynamo

    devices = [[d.name, d.description, d.available, d.reason] for d in list_devices()]
    _limit_memory(memory_mb)
    references_without_dynamo()  # before the freeze: it finds the references among gc's objects
    gc.freeze()  # torch's import-time objects: out of every later collection's reach
    write_frame(
        outbox, {"ready": True, "pid": os.getpid(), "torch": str(torch.__version__), "devices": devices}
    )
    while True:
        try:
            request, _ = read_frame(inbox)
        except EOFError:
            return 0
        header, payload = _answer(request, memory_mb)
        write_frame(outbox, header, payload)


def _answer(request: dict[str, Any], memory_mb: int | None) -> tuple[dict[str, Any], bytes]:
    from app.core.lensfile import lens_bytes
    from app.core.model.errors import ProgramError

    _limit_cpu(float(request.get("cpu_s", 0)))
    try:
        with _fault(request.get("fault")):
            if request.get("op") == "torchviz":
                drawn = _torchviz(request)
                return {"ok": True, "note": drawn.note}, drawn.source.encode("utf-8")
            recording = _record(request)
    except ProgramError as exc:
        error = {"type": type(exc).__name__, "message": exc.message, "field": exc.field}
        return {"ok": False, "error": {**error, "line": exc.line, "col": exc.col}}, b""
    except MemoryError:
        return {"ok": False, "limit": "memory", "memory_mb": memory_mb}, b""
    except Exception as exc:  # a bug in Autograd Lens, or a device that went away: a fresh child next
        if _allocation_failed(str(exc), memory_mb):
            return {"ok": False, "limit": "memory", "memory_mb": memory_mb}, b""
        return {"ok": False, "internal": f"{type(exc).__name__}: {exc}", "retire": True}, b""
    if _allocation_failed(recording.error or "", memory_mb):
        return {"ok": False, "limit": "memory", "memory_mb": memory_mb}, b""
    error = recording.error
    retire = error is not None and (recording.device != "cpu" or _device_fault(error))
    payload = lens_bytes(recording, compress=False)
    lesson = _lesson(recording) if request.get("lesson") else None
    if lesson is None:
        return {"ok": True, "retire": retire}, payload
    return {"ok": True, "retire": retire, "lesson_bytes": len(lesson)}, payload + lesson


def _lesson(recording: Any) -> bytes | None:
    """The lesson's candidates for ``recording`` as JSON bytes (NOTE [the lesson found in the child]
    in ``app/core/lesson/candidates.py``), or None when finding them failed: the window finds them
    itself then."""
    import json

    from app.core.lesson.candidates import candidates_json, candidates_of

    try:
        found = candidates_of(recording, time.monotonic() + LESSON_DEADLINE_S)
        return json.dumps(candidates_json(found), separators=(",", ":")).encode("utf-8")
    except Exception:  # a bug in the lesson must not lose the recording
        return None


def _allocation_failed(text: str, memory_mb: int | None) -> bool:
    """An allocation failed while this child has a memory limit: the limit, not the program, ended it."""
    if _device_fault(text):
        return False
    return memory_mb is not None and any(words in text for words in _ALLOCATION_FAILED)


def _device_fault(text: str) -> bool:
    """Whether an error comes from a device (its memory ran out, a kernel failed) rather than from us."""
    return any(words in text for words in _DEVICE_FAULTS)


def _record(request: dict[str, Any]) -> Any:
    from app.core.recorder.recorder import record
    from app.core.sizing.limits import Limits

    limits = Limits(**request.get("limits", {}))
    return record(
        requested_program(request["source"]), device=str(request.get("device", "cpu")), limits=limits
    )


def _torchviz(request: dict[str, Any]) -> Any:
    from app.core.recorder.first_backward import first_backward_dot
    from app.core.sizing.limits import Limits

    limits = Limits(**request.get("limits", {}))
    return first_backward_dot(
        requested_program(request["source"]), str(request.get("device", "cpu")), limits=limits
    )


def requested_program(source: dict[str, Any]) -> Program:
    """The program ``client.request_source`` named: loaded by name or path, or read as a ``.lens``
    file's program is."""
    from app.core.lensfile.reader import program_from_record
    from app.core.loading import load_program

    if "load" in source:
        return load_program(str(source["load"]))
    return program_from_record(source["program"])


def _limit_cpu(seconds: float) -> None:
    """This request may use ``seconds`` more of CPU time (all threads): past it the kernel stops us."""
    if seconds <= 0:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


@contextlib.contextmanager
def _fault(spec: Any) -> Iterator[None]:
    """A test seam: a fault inside the first PyTorch operation the recording runs.

    Honoured only when the child was started with ``AUTOGRAD_LENS_CHILD_FAULTS=1``.
    """
    if not spec or os.environ.get(FAULTS_ENV) != "1":
        yield
        return
    from torch.overrides import TorchFunctionMode

    kind = str(spec.get("kind"))
    seconds = float(spec.get("seconds", 3600))
    only = spec.get("op")  # the operator to fail in (``"square"``); any operator when not given
    if kind == "bug":
        raise RuntimeError("an injected bug")

    class Fault(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            name = getattr(func, "__name__", "")
            if name != "device" and only in (None, name):  # an operator, not naming the device
                _inject(kind, seconds)
            return func(*args, **(kwargs or {}))

    with Fault():
        yield


def _inject(kind: str, seconds: float) -> None:
    if kind == "abort":
        os.abort()
    elif kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif kind == "exit":
        os._exit(3)
    elif kind == "sleep":  # a native operator that never returns in time
        time.sleep(seconds)
    elif kind == "spin":  # burns CPU time in one call
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
    elif kind == "device-oom":  # what CUDA raises when the device's memory runs out
        import torch

        raise torch.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 8.00 GiB"
            " (injected)"
        )
    elif kind == "allocate":
        import torch

        torch.empty(2**40, dtype=torch.uint8)  # a terabyte: past any memory limit
        gc.collect()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
