"""Record and lay out a program off the GUI thread.

# NOTE [one result per request]
Every :meth:`RecordingWorker.request` gets a number. A pool thread has the
program recorded in a child process (a real PyTorch run there, NOTE
[recording in a child] in ``app/child/client.py``; a ``.lens`` file is read
instead, running nothing), reads the recording back and lays out its graph
(one Graphviz run), then hands the result back through a signal, which Qt
queues onto the GUI thread. Only the newest request's answer is delivered: a
slower answer to an older request (the learner clicked again meanwhile) is
dropped. The window's process never runs torch work, so the GUI thread never
waits for a thread that holds the interpreter inside a torch call.

# NOTE [no full GC while loading]
A full (generation-2) collection walks every tracked object and holds the GIL
while it does, on whichever thread triggered it: once a 5,000-node recording
and its drawing exist that is 100-350 ms in which the GUI thread cannot run.
Loading one creates hundreds of thousands of long-lived objects, which is
exactly what triggers such passes. So from a request until the GUI has taken
its result, and while the graph view fills in, :class:`GcPause` sets the
generation-2 threshold out of reach. Holders from both threads count up and
down under one lock; the last release restores the thresholds exactly.

Young collections wait too: a collection runs on whichever thread allocates
when it comes due, and one on a pool thread may find a cycle holding Qt
objects (a window of a previous session, a connection's lambda) and delete
them off the GUI thread, leaving a timer registered with the GUI's event loop
that later fires at freed memory (a segfault). So nothing is collected
automatically while a pool thread works for the window: the GUI thread's
collector takes the young objects in small batches meanwhile (NOTE [young
objects of a load] in ``app/ui/runtime/collector.py``), and the last release collects
the rest on its own thread (the GUI thread: the worker's hand-over,
the view's last slice). Every thread that works for the
window (the recording worker, its import of the language's checks, the
module layouts) holds a pause until the GUI thread has its result. Outside
pauses, the window's process collects only from a timer on the GUI thread
(NOTE [collect on the GUI thread] in ``app/ui/runtime/collector.py``).

A big load is then frozen (``gc.freeze``, as NOTE [gc freeze] does for
torch's import-time objects): later full passes skip it, and when it is
replaced reference counting frees it (it holds no reference cycles; a
cycle would leak it, which ``tests/ui/test_responsive_load.py`` would catch).
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal

from app.ui.runtime.after_paint import unless_busy

if TYPE_CHECKING:
    from app.core.model.program import Program
    from app.core.model.recording import Recording

__all__ = [
    "FREEZE_NODES",
    "NEVER",
    "GcPause",
    "RecordingFailure",
    "RecordingResult",
    "RecordingWorker",
    "layout_recording",
    "prepare_shown",
    "record_program",
    "recording_of",
]

log = logging.getLogger(__name__)

NEVER = 1_000_000_000  # a generation-2 threshold that is never reached
CHECKS_AFTER_MS = 1000  # the checks (and torch) are imported this long after the first graph arrives
CHECKS_WAITS = 10  # times the import waits CHECKS_AFTER_MS more while the first graph is still drawn
FREEZE_NODES = 1000  # recordings at least this big are frozen once loaded (NOTE [no full GC while loading])


class GcPause:
    """No automatic full collection while anyone holds the pause (NOTE [no full GC while loading]).

    >>> before = gc.get_threshold()
    >>> GcPause.hold("doc"); gc.get_threshold()[2] == NEVER
    True
    >>> GcPause.release("doc"); gc.get_threshold() == before
    True
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _holders: ClassVar[set[Hashable]] = set()
    _saved: ClassVar[tuple[int, int, int]] = (700, 10, 10)
    _freeze: ClassVar[bool] = False

    @classmethod
    def hold(cls, key: Hashable) -> None:
        with cls._lock:
            if not cls._holders:
                cls._saved = gc.get_threshold()
                gc.set_threshold(0, cls._saved[1], NEVER)  # 0: no automatic collection at all
            cls._holders.add(key)

    @classmethod
    def release(cls, key: Hashable, *, freeze: bool = False) -> None:
        """Drop ``key``'s hold; the last one restores the thresholds exactly as they were.

        ``freeze``: what was loaded is big and lives on; the last release freezes it.
        """
        with cls._lock:
            if key not in cls._holders:
                return
            cls._holders.discard(key)
            cls._freeze = cls._freeze or freeze
            if cls._holders:
                return
            gc.collect(1)  # the young garbage, here (the GUI thread) rather than on a pool thread
            if cls._freeze:
                gc.freeze()
            cls._freeze = False
            gc.set_threshold(*cls._saved)

    @classmethod
    def release_all(cls, keys: set[Hashable], *_: object) -> None:
        """Let go of every pause in ``keys`` (and empty it): their holder was deleted, and its
        answers will never be handed over (connected to its ``destroyed`` signal)."""
        for key in list(keys):
            cls.release(key)
        keys.clear()

    @classmethod
    def held(cls) -> bool:
        with cls._lock:
            return bool(cls._holders)


@dataclass(frozen=True)
class RecordingResult:
    request: int
    recording: Recording
    layout: Any | None  # app.render.layout.Layout, or None when Graphviz failed
    layout_error: str | None
    shown: Any | None = None  # app.render.states.ShownStates, built here rather than on the GUI thread


@dataclass(frozen=True)
class RecordingFailure:
    request: int
    message: str
    error: BaseException


_IMPORT_LOCK = threading.Lock()


def import_core() -> None:
    """Import what a recording needs, one thread at a time.

    Two pool threads importing different modules of ``app.core`` at once can
    deadlock on Python's per-module import locks (each holds one the other
    needs), so the first import is serialised; later calls return at once.
    """
    with _IMPORT_LOCK:
        import app.child.client
        import app.core.lensfile
        import app.core.model.errors
        import app.render.layout
        import app.render.states  # noqa: F401

        if gc.get_freeze_count() == 0:
            # NOTE [gc freeze]: the imports leave ~10^5 objects tracked by the collector, all
            # alive for the whole process (10^6 once the editor has imported torch to check a
            # program). A full collection triggered on this worker walks them all while holding
            # the GIL, and the GUI thread stalls. Freezing them once moves them out of every
            # later collection's reach; nothing they own becomes uncollectable.
            gc.freeze()


class _ChecksImported(QObject):
    """Says, from the import's own thread, that the checks are imported.

    # NOTE [the import's news]
    The checks are imported on a thread of their own, and a worker waits to hear that it is done.
    A worker can be deleted on the GUI thread at any moment (its window closed); a thread that
    emits a signal of that worker races the deletion, and lost it once in a full test run (a
    crash inside the emit). So the thread emits the signal of this object, one for the process,
    made on the GUI thread and never deleted; each waiting worker is connected to it once, and
    Qt removes the connection of a worker that is gone.
    """

    done = Signal()


@cache
def _checks_news() -> _ChecksImported:
    """The one :class:`_ChecksImported` (made on first use, which is on the GUI thread)."""
    return _ChecksImported()


def import_checks() -> None:
    """Import the language's checks (and so torch) once the first graph is shown, off the GUI thread."""
    with _IMPORT_LOCK:
        import app.core.loading  # noqa: F401


def recording_of(source: Program | str | Path, device: str) -> tuple[Recording, Any]:
    """A ``.lens`` file read back with the layout it keeps (or None), or the program (object,
    built-in name, ``.toml``, ``.py``) recorded, with no layout yet."""
    from app.core.lensfile import is_lens, open_lens

    if is_lens(
        source
    ):  # the file stays the program's origin, through every edit (NOTE [trusted script offer])
        recording, layout = open_lens(source, lazy=True)  # steps made as shown (NOTE [steps on demand])
        return replace(recording, program=replace(recording.program, path=Path(source))), layout
    return record_program(source, device), None


def record_program(source: Program | str | Path, device: str) -> Recording:
    """The real recording, in the warm child process; a module attribute so tests can replace it.

    A built-in name or a file is read and checked by the child, so the window's
    process needs no torch to show it. The child finds the lesson's candidates too (NOTE [the
    lesson found in the child] in ``app/core/lesson/candidates.py``).
    """
    from app.child.client import record_in_child

    return record_in_child(source, device, lesson=True)


def layout_recording(recording: Recording) -> Any:
    """One Graphviz layout of the recording's graph (raises LayoutError)."""
    from app.render.layout import layout_graph

    return layout_graph(recording.graph)


def prepare_shown(recording: Recording) -> Any:
    """What each box shows per step (``ShownStates``): its tables are O(graph), so built here."""
    from app.render.states import ShownStates

    shown = ShownStates(recording)
    if len(recording.timeline):  # the step shown first, replayed (O(graph)) into the timeline's
        # cache; a file's damaged step before it fails the opening here, off the GUI thread
        recording.timeline.state(recording.opening_step)
    timeline = recording.timeline  # the O(steps) series the panels read when it arrives, made here
    timeline.call_starts()
    timeline.iteration_starts()
    timeline.memory_series()
    recording.graph.neighbours  # noqa: B018  # O(edges), read when the first step is followed
    return shown


def _layout_or_error(recording: Recording, stored: Any = None) -> tuple[Any | None, str | None]:
    """The layout a ``.lens`` file kept (``stored``) when it fits the graph, else Graphviz's."""
    if stored is not None:
        from app.render.layout import LayoutError
        from app.render.layout_store import layout_from_json

        try:
            return layout_from_json(stored, recording.graph), None
        except LayoutError as exc:  # a cache only: lay the graph out again
            log.info("%s; laying it out again", exc)
    try:
        return layout_recording(recording), None
    except Exception as exc:  # LayoutError (dot missing, crashed, timed out) or a bug: draw nothing
        log.warning("graph layout failed: %s", exc)
        return None, str(exc) or type(exc).__name__


def _failure_text(exc: BaseException, device: str) -> str:
    try:
        from app.core.model.errors import UserError
    except ImportError:  # PyTorch itself could not be imported
        return f"Recording failed: {type(exc).__name__}: {exc}"
    if isinstance(exc, UserError):
        return str(exc)
    kind = getattr(exc, "kind", type(exc).__name__)  # a RecordingBug names the child's exception
    return f"Recording on {device} failed: {kind}: {exc}"


class RecordingWorker(QObject):
    """Runs :func:`recording_of` + :func:`layout_recording` on a thread pool."""

    finished = Signal(object)  # RecordingResult of the newest request
    failed = Signal(object)  # RecordingFailure of the newest request
    busy_changed = Signal(bool)
    _done = Signal(object)  # emitted from a pool thread; queued onto this object's thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)  # a superseded run may still be finishing
        self._latest = 0
        self._busy = False
        self._pauses: set[Hashable] = set()  # GcPause keys of runs not yet handed over
        self._checks_imported = False
        # Whether the window is still drawing the graph it was given (its view sets it): importing
        # torch meanwhile took the interpreter from the drawing (a second or more on a busy machine).
        self.checks_wait: Callable[[], bool] = lambda: False
        self._done.connect(self._on_done)
        self.destroyed.connect(partial(GcPause.release_all, self._pauses))

    @property
    def busy(self) -> bool:
        return self._busy

    def request(self, source: Program | str | Path, device: str = "cpu") -> int:
        """Start recording ``source`` on ``device``; returns the request's number."""
        self._latest += 1
        number = self._latest
        self._hold_gc(number)  # released once the GUI has taken the result (or dropped it)
        self._pool.start(lambda: self._run(number, source, device))
        self._set_busy(True)
        return number

    def wait_idle(self, msecs: int = 30_000) -> bool:
        """Block until every started run has ended (for closing and tests)."""
        return bool(self._pool.waitForDone(msecs))

    def _run(self, number: int, source: Program | str | Path, device: str) -> None:
        # Runs on a pool thread: must never raise, and touches no widget.
        try:
            import_core()
            recording, stored = recording_of(source, device)
            layout, layout_error = _layout_or_error(recording, stored)
            shown = prepare_shown(recording) if layout is not None else None
            if layout is not None:
                layout.places  # noqa: B018  # filed here, off the GUI thread (places.py)
            outcome: RecordingResult | RecordingFailure = RecordingResult(
                number, recording, layout, layout_error, shown
            )
        except Exception as exc:
            log.info("recording failed: %s", exc)
            outcome = RecordingFailure(number, _failure_text(exc, device), exc)
        try:
            self._done.emit(outcome)
        except RuntimeError:  # the worker was deleted while this run went on (window closed)
            log.debug("dropped a recording: its worker is gone")

    def _on_done(self, outcome: RecordingResult | RecordingFailure) -> None:
        try:
            if outcome.request != self._latest:
                return  # superseded: a newer request is running or done
            self._set_busy(False)
            if isinstance(outcome, RecordingResult):
                self.finished.emit(outcome)  # the view holds its own pause while it fills in
                if not self._checks_imported:  # the editor's checks import torch: not on the GUI thread
                    self._checks_imported = True
                    # Not at once: importing torch holds the interpreter for a second, and the
                    # window is building and painting its first graph now.
                    QTimer.singleShot(CHECKS_AFTER_MS, self, self._start_checks_import)
            else:
                self.failed.emit(outcome)
        finally:
            big = isinstance(outcome, RecordingResult) and len(outcome.recording.graph) >= FREEZE_NODES
            self._release_gc(outcome.request, freeze=big)

    def _start_checks_import(self) -> None:
        checks = self._begin_checks_import
        unless_busy(self, self.checks_wait, checks, every_ms=CHECKS_AFTER_MS, looks=CHECKS_WAITS)

    def _begin_checks_import(self) -> None:
        self._hold_gc("checks")  # released by _on_checks_imported, on this thread
        # NOTE [the import's news]: the thread tells a QObject that is never deleted, and Qt
        # queues the call to this worker while it lives. Told by this worker's own signal, the
        # thread raced the GUI thread deleting it (a closed window's): a crash in the emit.
        _checks_news().done.connect(self._on_checks_imported, Qt.ConnectionType.SingleShotConnection)
        # A daemon thread, not the pool: closing the window waits for recordings, never for this
        # import (a second or more of torch), and the process may end while it is under way.
        threading.Thread(target=self._import_checks, name="import-checks", daemon=True).start()

    @staticmethod
    def _import_checks() -> None:
        # Runs on its own thread, and touches no worker: one may be deleted on the GUI thread
        # while this runs (NOTE [the import's news]).
        try:
            import_checks()
        except Exception as exc:  # the window closing meanwhile; the editor imports them when it needs them
            log.warning("the editor's checks were not imported ahead: %s", exc)
        finally:
            _checks_news().done.emit()

    def _on_checks_imported(self) -> None:
        self._release_gc("checks", freeze=False)

    def _hold_gc(self, number: Hashable) -> None:
        key = (id(self), number)
        self._pauses.add(key)
        GcPause.hold(key)

    def _release_gc(self, number: Hashable, *, freeze: bool) -> None:
        key = (id(self), number)
        self._pauses.discard(key)
        GcPause.release(key, freeze=freeze)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
