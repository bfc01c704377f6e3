"""The lesson's edits for a recording (fixes, advice), found on a pool thread within a deadline.

# NOTE [the lesson off the GUI thread]
Fixes and advice read the program text of a recording, which may come from
anyone (a ``.lens`` file is safe to open): they parse it, edit it and diff each
edit against it. That work is linear in the text, but a 100,000-character
program is still milliseconds to seconds of it, and one pattern that
backtracked once took hours on a line of spaces. So the panels never do it on
the GUI thread: :class:`LessonWorker` runs it on a pool thread, the panel
shows the recording's own words at once and its edits when they arrive, and
stepping goes on meanwhile. Only the newest request's answer is delivered.
The work gets a deadline (:data:`LESSON_DEADLINE_S`): ``fixes_for`` stops
between its fixes once it passes, and an answer finished later still (one
deadline more) is dropped, so a panel never offers edits long after its
recording came on screen. Like every thread that works for the window, a run holds a
:class:`~app.ui.runtime.worker.GcPause` until the GUI thread has its answer (NOTE [no
full GC while loading]).

# NOTE [the lesson after the graph]
A pool thread still shares the interpreter with the GUI thread: parsing a
3,000-line program is one call that holds it for 0.1-0.5 s, and the lesson's
walks over the tree take half of it in turns of a few milliseconds. Run while
the window fills in a big graph in slices, that made the window's largest
stalls of the load (0.5-1 s on two busy cores). So a request waits while
``wait()`` says the window is still drawing a graph (the window passes its
graph area's ``loading_graph``), looking first in the turn after the request
(the recording reaches the graph view in the request's own turn), then again
every :data:`LESSON_WAIT_MS`, at most :data:`LESSON_WAITS` times; its deadline
counts from when it starts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from app.ui.runtime.after_paint import unless_busy
from app.ui.runtime.worker import GcPause

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["LESSON_DEADLINE_S", "LESSON_WAITS", "LESSON_WAIT_MS", "LessonWorker"]

log = logging.getLogger(__name__)

LESSON_DEADLINE_S = 2.0  # the lesson of a built-in takes ~10 ms; of a 100,000-character program ~0.1 s
LESSON_WAIT_MS = (
    200  # a request waiting for the graph looks again this often (NOTE [the lesson after the graph])
)
LESSON_WAITS = 50  # and starts after this many looks even if the graph is still being drawn


class LessonWorker(QObject):
    """Runs ``find(recording, deadline)`` on a pool thread; ``ready`` hands its result over.

    ``deadline`` is a ``time.monotonic()`` value; ``find`` should stop by then.
    """

    ready = Signal(object, object)  # (recording, what find returned) of the newest request, in time
    _done = Signal(int, object, object)  # from a pool thread; queued onto this object's thread

    def __init__(
        self,
        find: Callable[[Recording, float], Any],
        parent: QObject | None = None,
        deadline_s: float = LESSON_DEADLINE_S,
    ) -> None:
        super().__init__(parent)
        self._find = find
        self._deadline_s = deadline_s  # proving fixes records each one: longer than finding them
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)  # a superseded run may still be finishing
        self._latest = 0
        self._waiting = False
        self._pauses: set[Hashable] = set()
        # while it says True, a request waits (NOTE [the lesson after the graph]); the window sets it
        self.wait: Callable[[], bool] | None = None
        self._done.connect(self._on_done)
        self.destroyed.connect(partial(GcPause.release_all, self._pauses))

    def request(self, recording: Recording) -> int:
        """Find the lesson of ``recording``; returns the request's number."""
        self._latest += 1
        if self.wait is None:
            self._start_when_drawn(self._latest, recording)
        else:  # first look in the next turn: the window is given the recording in this one
            QTimer.singleShot(0, self, partial(self._start_when_drawn, self._latest, recording))
        return self._latest

    @property
    def waiting(self) -> bool:
        """A request waits for the window to draw its graph (NOTE [the lesson after the graph])."""
        return self._waiting

    def _start_when_drawn(self, number: int, recording: Recording) -> None:
        if number != self._latest:
            return  # superseded before its first look: the newer request runs instead

        def busy() -> bool:  # a superseded request stops looking: it will not run
            wait = self.wait
            return number == self._latest and wait is not None and wait()

        start = partial(self._start, number, recording)
        self._waiting = unless_busy(self, busy, start, every_ms=LESSON_WAIT_MS, looks=LESSON_WAITS)

    def _start(self, number: int, recording: Recording) -> None:
        if number != self._latest:
            return  # superseded while it waited: the newer request runs instead
        self._waiting = False
        key = (id(self), number)
        self._pauses.add(key)
        GcPause.hold(key)  # released on this thread once the answer is here
        deadline = time.monotonic() + self._deadline_s
        self._pool.start(lambda: self._run(number, recording, deadline))

    def wait_idle(self, msecs: int = 30_000) -> bool:
        """Block until every started run has ended (for closing and tests).

        Their pauses end here, on this thread: a closing window's answer is queued and may never
        be handed over, and its pause would otherwise keep every full collection off after it.
        """
        done = bool(self._pool.waitForDone(msecs))
        if done:
            GcPause.release_all(self._pauses)
        return done

    def _run(self, number: int, recording: Recording, deadline: float) -> None:
        # Runs on a pool thread: must never raise, and touches no widget.
        try:
            found = self._find(recording, deadline)
            if time.monotonic() > deadline + self._deadline_s:
                log.warning("the lesson of a recording took too long; no edits are offered")
                found = None
        except Exception:  # a bug in the lesson must not take the window down: no edits then
            log.exception("the lesson of a recording failed")
            found = None
        try:
            self._done.emit(number, recording, found)
        except RuntimeError:  # the worker was deleted while this ran (window closed)
            log.debug("dropped a lesson: its worker is gone")

    def _on_done(self, number: int, recording: Recording, found: Any) -> None:
        key = (id(self), number)
        self._pauses.discard(key)
        GcPause.release(key)
        if number != self._latest:
            return  # superseded: a newer recording came meanwhile
        try:
            self.ready.emit(recording, found)  # None: nothing to offer (the panel stops checking)
        except RuntimeError:  # the answer was queued as its panel was deleted
            log.debug("dropped a lesson: its panel is gone")
