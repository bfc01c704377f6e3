"""Record and lay out a scenario off the GUI thread.

# NOTE [one result per request]
Every :meth:`RecordingWorker.request` gets a number. A pool thread loads the
scenario, records it (a real PyTorch run) and lays out its graph (one Graphviz
run), then hands the result back through a signal, which Qt queues onto the
GUI thread. Only the newest request's answer is delivered: a slower answer to
an older request (the learner clicked again meanwhile) is dropped. ``app.core``
and ``app.render`` are imported inside the thread, so the window can paint
before ``import torch`` has finished.
"""

from __future__ import annotations

import gc
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThreadPool, Signal

if TYPE_CHECKING:
    from app.core.recorder import Recording
    from app.core.scenario import Scenario

__all__ = ["RecordingFailure", "RecordingResult", "RecordingWorker", "layout_recording", "record_scenario"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordingResult:
    request: int
    recording: Recording
    layout: Any | None  # app.render.layout.Layout, or None when Graphviz failed
    layout_error: str | None


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
        import app.core.errors
        import app.core.recorder
        import app.core.scenario
        import app.render.layout  # noqa: F401

        if gc.get_freeze_count() == 0:
            # NOTE [gc freeze]: `import torch` leaves ~10^5-10^6 objects tracked by the
            # collector, all alive for the whole process. A full collection triggered by
            # a recording on this worker walks them all while holding the GIL, and the
            # GUI thread stalls for hundreds of ms. Freezing them once moves them out of
            # every later collection's reach; nothing they own becomes uncollectable.
            gc.freeze()


def load_source(source: Scenario | str | Path) -> Scenario:
    from app.core.scenario import Scenario, load_scenario

    return source if isinstance(source, Scenario) else load_scenario(source)


def record_scenario(scenario: Scenario, device: str) -> Recording:
    """The real recording; a module attribute so tests can replace it."""
    from app.core.recorder import record

    return record(scenario, device=device)


def layout_recording(recording: Recording) -> Any:
    """One Graphviz layout of the recording's graph (raises LayoutError)."""
    from app.render.layout import layout_graph

    return layout_graph(recording.graph)


def _layout_or_error(recording: Recording) -> tuple[Any | None, str | None]:
    try:
        return layout_recording(recording), None
    except Exception as exc:  # LayoutError (dot missing, crashed, timed out) or a bug: draw nothing
        log.warning("graph layout failed: %s", exc)
        return None, str(exc) or type(exc).__name__


def _failure_text(exc: BaseException, device: str) -> str:
    try:
        from app.core.errors import ScenarioError
    except ImportError:  # PyTorch itself could not be imported
        return f"Recording failed: {type(exc).__name__}: {exc}"
    if isinstance(exc, ScenarioError):
        return str(exc)
    return f"Recording on {device} failed: {type(exc).__name__}: {exc}"


class RecordingWorker(QObject):
    """Runs :func:`record_scenario` + :func:`layout_recording` on a thread pool."""

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
        self._done.connect(self._on_done)

    @property
    def busy(self) -> bool:
        return self._busy

    def request(self, source: Scenario | str | Path, device: str = "cpu") -> int:
        """Start recording ``source`` on ``device``; returns the request's number."""
        self._latest += 1
        number = self._latest
        self._pool.start(lambda: self._run(number, source, device))
        self._set_busy(True)
        return number

    def wait_idle(self, msecs: int = 30_000) -> bool:
        """Block until every started run has ended (for closing and tests)."""
        return bool(self._pool.waitForDone(msecs))

    def _run(self, number: int, source: Scenario | str | Path, device: str) -> None:
        # Runs on a pool thread: must never raise, and touches no widget.
        try:
            import_core()
            recording = record_scenario(load_source(source), device)
            layout, layout_error = _layout_or_error(recording)
            outcome: RecordingResult | RecordingFailure = RecordingResult(
                number, recording, layout, layout_error
            )
        except Exception as exc:
            log.info("recording failed: %s", exc)
            outcome = RecordingFailure(number, _failure_text(exc, device), exc)
        try:
            self._done.emit(outcome)
        except RuntimeError:  # the worker was deleted while this run went on (window closed)
            log.debug("dropped a recording: its worker is gone")

    def _on_done(self, outcome: RecordingResult | RecordingFailure) -> None:
        if outcome.request != self._latest:
            return  # superseded: a newer request is running or done
        self._set_busy(False)
        if isinstance(outcome, RecordingResult):
            self.finished.emit(outcome)
        else:
            self.failed.emit(outcome)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
