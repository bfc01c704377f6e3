"""The parent's side: start recording children, send them programs, read recordings back.

One concept, kept in one file past 500 lines: a child's life seen from the parent (start, limits,
requests, death told as one message), which the NOTE below explains as a whole.

# NOTE [recording in a child]
A program is untrusted data. The checked language refuses what it can see,
but a single native operator can outlive any time limit, crash, or take all
memory, and inside the window's process that would freeze or kill the window
in front of a room. So programs are recorded in a child process
(``python -m app.child``) started with hard limits: address space
(``RLIMIT_AS`` beyond what its imports mapped, NOTE [memory limit]; not set for
CUDA, whose driver reserves a huge address space),
CPU time per request (``RLIMIT_CPU``), open files, no core files, no
descriptors but its two pipes (``close_fds``), its own session (a Ctrl+C in
the terminal reaches the parent, which decides), and a wall-clock limit
enforced here by killing it. The recording comes back as ``.lens`` bytes and is
read by the same checked reader as a file from a stranger; nothing is
unpickled.

A child that dies (a signal, a limit, a broken pipe) becomes a
:class:`ChildFailure`, a :class:`ProgramError` that names what happened and
which option raises the limit; it is killed and reaped, never left running,
and the next recording starts a fresh one. One healthy child is kept warm
(:class:`ChildPool`), so a re-record after a toggle costs no new
``import torch``; a child whose recording hit a device error is retired.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from app.child.protocol import PREFIX, ProtocolError, check_prefix, decode_header, encode_frame
from app.core.model.errors import ProgramError, ProgramRaised, RecordingTimeout
from app.core.sizing.limits import Limits

if TYPE_CHECKING:
    from app.core.model.program import Program
    from app.core.model.recording import Recording
    from app.core.recorder.first_backward import TorchvizDot

__all__ = [
    "DEFAULT_MEMORY_MB",
    "IDLE_CHILDREN",
    "POOL",
    "ChildFailure",
    "ChildLimits",
    "ChildPool",
    "Device",
    "RecordingBug",
    "RecordingChild",
    "record_in_child",
    "request_source",
    "set_default_limits",
    "torchviz_in_child",
]

DEFAULT_MEMORY_MB = 4096
START_TIMEOUT_S = 120.0  # a fresh interpreter importing torch on a cold, busy machine
GRACE_S = 5.0  # the recorder stops itself at its own deadline; this is for an operator that never returns
DEBUG_ENV = "AUTOGRAD_LENS_DEBUG"  # also shows the child's stderr
FAULT_ENV = "AUTOGRAD_LENS_CHILD_FAULT"  # a fault for every request (tests; needs the child's FAULTS_ENV)


@dataclasses.dataclass(frozen=True)
class ChildLimits:
    """What a recording may use: its time limit (s) and the child's address space (MB, None: no limit)."""

    time_limit_s: float = Limits.time_limit_s
    memory_mb: int | None = DEFAULT_MEMORY_MB


class ChildFailure(ProgramError):
    """The recording's process ended or was stopped; ``limit`` names the limit it hit, if one."""

    def __init__(self, message: str, *, limit: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class RecordingBug(RuntimeError):
    """An exception inside the child that is not a refusal: a bug, or a device that failed.

    ``kind`` is the exception's class name in the child, ``str()`` its message.
    """

    def __init__(self, text: str) -> None:
        kind, _, message = text.partition(": ")
        super().__init__(message or kind)
        self.kind = kind if message else "RuntimeError"


class Device(NamedTuple):
    """A device as the child's torch reports it (``app.core.devices.DeviceInfo``, without torch here)."""

    name: str
    description: str
    available: bool
    reason: str = ""


def _devices(raw: Any) -> tuple[Device, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(
        Device(str(d[0]), str(d[1]), bool(d[2]), str(d[3]))
        for d in raw
        if isinstance(d, list) and len(d) == 4
    )


class _ChildEnded(Exception):
    """The child closed its pipe or died."""


class RecordingChild:
    """One child process and its two pipes."""

    def __init__(self, memory_mb: int | None) -> None:
        self.memory_mb = memory_mb
        self.torch_version: str | None = None
        self.devices: tuple[Device, ...] = ()  # what torch reports in the child (it owns the devices)
        self.requests = 0
        request_r, self._to = os.pipe()
        self._from, answer_w = os.pipe()
        command = [sys.executable, "-m", "app.child", str(request_r), str(answer_w)]
        if memory_mb is not None:
            command += ["--memory-mb", str(memory_mb)]
        try:
            self.process = subprocess.Popen(
                command,
                pass_fds=(request_r, answer_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None if os.environ.get(DEBUG_ENV) else subprocess.DEVNULL,
                env=child_env(),
                start_new_session=True,
            )
        except BaseException:
            os.close(self._to)
            os.close(self._from)
            raise
        finally:
            os.close(request_r)
            os.close(answer_w)
        self._ready = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Block until the child has imported torch and said so."""
        if self._ready:
            return
        header, _ = self._receive(time.monotonic() + timeout_s)
        if not header.get("ready"):
            raise _ChildEnded
        self.torch_version = str(header.get("torch"))
        self.devices = _devices(header.get("devices"))
        self._ready = True

    def ask(self, request: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], bytes]:
        """Send one request; its answer, or ``TimeoutError`` / :class:`_ChildEnded`."""
        self.requests += 1
        self._send(encode_frame(request))
        return self._receive(time.monotonic() + timeout_s)

    def kill(self) -> None:
        """Stop it now and reap it."""
        if self.alive():
            self.process.kill()
        self._reap(None)

    def close(self) -> None:
        """Let it end on its own (its input ends), killing it if it does not within a second."""
        self._close_pipe("_to")
        try:
            self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._reap(None)

    def ended(self) -> str:
        """What happened to a child that stopped answering (it is reaped first)."""
        self._reap(1.0)
        code = self.process.returncode
        if code is None:
            return "stopped answering"
        if code < 0:
            return f"was ended by {signal_name(-code)}"
        return f"ended unexpectedly (exit status {code})"

    def _reap(self, timeout: float | None) -> None:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._close_pipe("_to")
        self._close_pipe("_from")

    def _close_pipe(self, name: str) -> None:
        fd = getattr(self, name)
        if fd >= 0:
            setattr(self, name, -1)
            os.close(fd)

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._to, view) :]
        except (BrokenPipeError, OSError):
            raise _ChildEnded from None

    def _receive(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        head_size, payload_size = check_prefix(self._read(PREFIX.size, deadline))
        header = decode_header(self._read(head_size, deadline))
        return header, self._read(payload_size, deadline) if payload_size else b""

    def _read(self, size: int, deadline: float) -> bytes:
        """``size`` bytes from the child, read into one buffer as they come (joining the pieces
        of a recording's 10 MB afterwards held the GIL for 14 ms, a gap in the window's heartbeat;
        ``readv`` fills the buffer with the GIL let go)."""
        buffer = bytearray(size)
        done = 0
        with memoryview(buffer) as view:
            while done < size:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    raise TimeoutError
                ready, _, _ = select.select([self._from], [], [], min(wait, 0.5))
                if not ready:
                    continue
                got = os.readv(self._from, [view[done : min(size, done + (1 << 22))]])
                if not got:
                    raise _ChildEnded
                done += got
        return buffer  # type: ignore[return-value]  # bytes' reading methods, without a copy


def child_env() -> dict[str, str]:
    """The parent's environment, with this package importable wherever the child starts."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; the number itself when Python knows no such signal."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


IDLE_CHILDREN = 2  # the window's recording and a proof of its panels run at once, each in a child


class ChildPool:
    """At most :data:`IDLE_CHILDREN` idle children kept warm; busy ones are owned by their caller
    until given back.

    A window records an edit while its panels prove a fix of the recording before: two children at
    once. Keeping only one idle closed the other when it came back, and the next edit started it
    again (an ``import torch``: a second of CPU before that edit's recording or proof could run).
    An idle child holds about 220 MB once torch is imported.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[RecordingChild] = []
        self._started = 0
        self.limits = ChildLimits()  # of recordings given none (``--time-limit``, ``--memory-limit``)
        self.devices: tuple[Device, ...] | None = None  # as the last child to start reported them

    @property
    def started(self) -> int:
        """How many children this pool has started (a warm pool starts one for many recordings)."""
        return self._started

    def prestart(self) -> None:
        """Start a child now, so the first recording finds torch already imported."""
        with self._lock:
            if not self._idle:
                self._idle.append(self._start(self.limits.memory_mb))

    def take(self, memory_mb: int | None) -> RecordingChild:
        """An idle child with that memory limit (the newest first), or a new one; an idle child
        that died or has another limit is closed on the way."""
        found: RecordingChild | None = None
        unfit: list[RecordingChild] = []
        with self._lock:
            while self._idle and found is None:
                child = self._idle.pop()
                if child.alive() and child.memory_mb == memory_mb:
                    found = child
                else:
                    unfit.append(child)
        for child in unfit:
            child.close()
        if found is not None:
            return found
        with self._lock:
            return self._start(memory_mb)

    def give_back(self, child: RecordingChild) -> None:
        with self._lock:
            keep = len(self._idle) < IDLE_CHILDREN and child.alive()
            if keep:
                self._idle.append(child)
        if not keep:
            child.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for child in idle:
            child.close()

    def _start(self, memory_mb: int | None) -> RecordingChild:
        self._started += 1
        return RecordingChild(memory_mb)


POOL = ChildPool()
atexit.register(POOL.close)


def prestart_for(source: str | None) -> None:
    """Start the warm child at once when the window will record ``source`` (a ``.lens`` is only read).

    Called first thing on the way to a window, before Qt and the window's modules are imported:
    the child's ``import torch`` (the longest part of a start) then runs beside them.
    """
    if source is not None:
        from app.core.lensfile import is_lens

        if is_lens(source):
            return
    POOL.prestart()


def set_default_limits(limits: ChildLimits) -> None:
    """The limits of every later recording that is given none of its own."""
    POOL.limits = limits


def record_in_child(
    source: Program | str | Path,
    device: str = "cpu",
    *,
    limits: ChildLimits | None = None,
    pool: ChildPool | None = None,
    recorder_limits: Limits | None = None,
    fault: dict[str, Any] | None = None,
    lesson: bool = False,
) -> Recording:
    """Record ``source`` (a program, or a built-in name or file the child reads) in a child process.

    Raises what an in-process recording would (:class:`ProgramError` and its
    kinds, with the same message and place), or :class:`ChildFailure`.
    ``recorder_limits``: every bound of the recording (its time limit is
    ``limits.time_limit_s`` unless given). ``lesson``: the child finds the lesson's candidates
    too, kept beside the recording (NOTE [the lesson found in the child]).
    """
    request = {"op": "record", "source": request_source(source), "device": device, "lesson": lesson}
    answer, payload = _run_in_child(
        request, limits=limits, pool=pool, recorder_limits=recorder_limits, fault=fault
    )
    if not lesson or not answer.get("ok"):
        return _outcome(answer, payload, source)
    from app.child.lesson_answer import split_lesson

    payload, keep = split_lesson(answer, payload)
    return keep(_outcome(answer, payload, source))


MAX_TORCHVIZ_BYTES = 64_000_000  # make_dot's DOT of the largest graph a recording allows is a few MB


def torchviz_in_child(
    source: Program | str | Path,
    device: str = "cpu",
    *,
    limits: ChildLimits | None = None,
    pool: ChildPool | None = None,
) -> TorchvizDot:
    """torchviz's ``make_dot`` DOT for the graph ``source``'s first autograd call starts from, made
    in a child process (``app.core.recorder.first_backward``); raises as :func:`record_in_child`."""
    from app.core.recorder.first_backward import TorchvizDot

    request = {"op": "torchviz", "source": request_source(source), "device": device}
    answer, payload = _run_in_child(request, limits=limits, pool=pool)
    if not answer.get("ok"):
        _outcome(answer, payload, source)  # raises what the child said
    if len(payload) > MAX_TORCHVIZ_BYTES:
        raise RecordingBug(f"ValueError: the child sent {len(payload):,} bytes of DOT")
    try:
        return TorchvizDot(payload.decode("utf-8"), str(answer.get("note") or ""))
    except UnicodeDecodeError:
        raise RecordingBug("UnicodeDecodeError: the child sent DOT that is not UTF-8") from None


def _run_in_child(
    request: dict[str, Any],
    *,
    limits: ChildLimits | None,
    pool: ChildPool | None,
    recorder_limits: Limits | None = None,
    fault: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """``request`` answered by a pooled child under ``limits``; the child goes back to the pool."""
    pool = pool or POOL
    limits = limits or pool.limits
    fault = fault or _fault_from_environment()
    if recorder_limits is not None:
        limits = dataclasses.replace(limits, time_limit_s=recorder_limits.time_limit_s)
    memory_mb = limits.memory_mb if request["device"] == "cpu" else None
    request = {
        **request,
        "limits": dataclasses.asdict(recorder_limits or Limits(time_limit_s=limits.time_limit_s)),
        "cpu_s": (limits.time_limit_s + GRACE_S) * (os.cpu_count() or 1),
        "fault": fault,
    }
    child = pool.take(memory_mb)
    answer, payload = _ask(child, request, limits)
    pool.devices = child.devices
    if answer.get("retire"):
        child.close()
    else:
        pool.give_back(child)
    return answer, payload


def _fault_from_environment() -> dict[str, Any] | None:
    """The test seam, for a whole command: ``AUTOGRAD_LENS_CHILD_FAULT='{"kind": "abort"}'``."""
    from app.child.server import FAULTS_ENV

    if os.environ.get(FAULTS_ENV) != "1" or not os.environ.get(FAULT_ENV):
        return None
    fault = json.loads(os.environ[FAULT_ENV])
    return fault if isinstance(fault, dict) else None


def _ask(child: RecordingChild, request: dict[str, Any], limits: ChildLimits) -> tuple[dict[str, Any], bytes]:
    """The child's answer; a child that fails to give one is killed and reaped here."""
    try:
        child.wait_ready()
        return child.ask(request, limits.time_limit_s + GRACE_S)
    except TimeoutError:
        child.kill()
        raise ChildFailure(_time_message(limits), limit="time") from None
    except (_ChildEnded, ProtocolError):
        raise _death(child, limits) from None
    except BaseException:  # KeyboardInterrupt, a bug here: never leave a child running
        child.kill()
        raise


def _death(child: RecordingChild, limits: ChildLimits) -> ChildFailure:
    what = child.ended()
    code = child.process.returncode
    if code == -signal.SIGXCPU:
        return ChildFailure(_time_message(limits, cpu=True), limit="time")
    if code == -signal.SIGKILL and limits.memory_mb is not None:
        what += " (perhaps for memory: the system ends the largest process when memory runs out)"
    return ChildFailure(
        f"the recording process {what}; nothing else was affected, and the next recording starts a fresh one"
    )


def _time_message(limits: ChildLimits, *, cpu: bool = False) -> str:
    used = "used more CPU time than" if cpu else "ran past"
    return (
        f"the recording {used} its time limit of {limits.time_limit_s:g} s and its process was stopped; "
        "to allow more, start with --time-limit SECONDS"
    )


def memory_message(memory_mb: int | None) -> str:
    limit = f"{memory_mb:,} MB" if memory_mb is not None else "the memory it was given"
    return (
        f"the recording needed more memory than its limit of {limit} and was stopped; "
        "to allow more, start with --memory-limit MB"
    )


def request_source(source: Program | str | Path) -> dict[str, Any]:
    """What a request names to record: a built-in or file the child loads, or a program in the
    ``.lens`` file's own form of it (``server.requested_program`` reads it back)."""
    if isinstance(source, (str, Path)):
        return {"load": str(source)}
    from app.core.lensfile.writer import program_record  # the .lens file's own form of a program

    return {"program": program_record(source)}


_ERROR_KINDS: dict[str, type[ProgramError]] = {
    "ProgramError": ProgramError,
    "RecordingTimeout": RecordingTimeout,
    "ProgramRaised": ProgramRaised,
}


def _outcome(answer: dict[str, Any], payload: bytes, source: Program | str | Path) -> Recording:
    if answer.get("ok"):
        from app.core.lensfile import recording_from_bytes

        recording = recording_from_bytes(payload)
        if not isinstance(source, (str, Path)):  # the very program asked for (its path, too)
            return dataclasses.replace(recording, program=source)
        if Path(source).exists():  # a file, as the child read it (NOTE: load_program does the same)
            program = dataclasses.replace(recording.program, path=Path(source))
            return dataclasses.replace(recording, program=program)
        return recording
    if answer.get("limit") == "memory":
        raise ChildFailure(memory_message(answer.get("memory_mb")), limit="memory")
    error = answer.get("error")
    if isinstance(error, dict):
        kind = _ERROR_KINDS.get(str(error.get("type")), ProgramError)
        raise kind(
            str(error.get("message")),
            field=_optional(error.get("field"), str),
            line=_optional(error.get("line"), int),
            col=_optional(error.get("col"), int),
        )
    raise RecordingBug(
        str(answer.get("internal", "RuntimeError: the recording process answered with nothing"))
    )


def _optional(value: Any, kind: type) -> Any:
    return value if isinstance(value, kind) and not isinstance(value, bool) else None
