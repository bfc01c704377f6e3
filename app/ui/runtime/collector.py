"""Garbage collection on the GUI thread only, between events.

# NOTE [collect on the GUI thread]
CPython collects reference cycles whenever an allocation finds a generation
due, on whichever thread allocates and at whatever point that thread is. A
cycle may hold Qt objects (a closed window, a panel a connection's lambda
refers to); collecting it deletes them. Two places where that crashes:

- on a pool thread: a QObject deleted off its own thread (a timer still
  registered with the GUI's event loop fires at freed memory later);
- on the GUI thread *inside* a Qt call that walks a snapshot of widgets:
  ``setStyleSheet`` (of the application or a window) takes the list of widgets,
  then unpolishes and repolishes each; repolishing calls Python (the ``qproperty-`` colour
  setters of the views), Python allocates, a collection comes due and deletes
  widgets further down Qt's snapshot, which Qt then touches. Measured with a
  theme change and garbage windows alive: dozens of widgets deleted during the
  one call (``tests/ui/test_collector.py``), and a segfault in some runs.

So the window's process turns automatic collection off and collects here, from
a timer on the GUI thread: a timer fires only from the event loop, never inside
a Qt call. The generations are collected as CPython would (a generation when
its count passes its threshold), except that a full pass waits until the time
since the last one is at least ``FULL_PASS_BUDGET`` times what that one took,
standing in for CPython's own limit on full passes (a big heap is collected
rarely). While :class:`~app.ui.runtime.worker.GcPause` is held (NOTE [no full GC
while loading]) there are no full passes, but the young generations are still
collected here once ``YOUNG_WHILE_PAUSED`` objects have piled up, looking
every ``PAUSED_CHECK_MS``: see NOTE [young objects of a load].

# NOTE [young objects of a load]
A big load allocates hundreds of thousands of objects on the loading thread
(the recording read back, the shown states, the layout). Left to the pause's
last release they made one 360 ms pass over all of them (the 5,000-node
chain). In batches of 10,000, looked at every ``CHECK_MS``, each gen-1 pass
still took 10-30 ms of the GUI thread (6-12 ms of CPU: a batch's dicts and
lists are traversed edge by edge), the largest gaps of the window's
heartbeat; in batches of 2,500, looked at every 5 ms, the passes take 2-5 ms.
Freezing each batch instead (``gc.freeze``, no traversal at all) was tried and
taken out: it freezes every generation, so cycles that were garbage already,
or that became garbage later (a closed window's widgets), were never
collected.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import ClassVar

from PySide6.QtCore import QCoreApplication, QObject, QTimer

from app.ui.runtime.worker import GcPause

__all__ = ["CHECK_MS", "FULL_PASS_BUDGET", "PAUSED_CHECK_MS", "YOUNG_WHILE_PAUSED", "GuiCollector"]

CHECK_MS = 20  # how often the GUI thread looks at the generation counts
PAUSED_CHECK_MS = 5  # ... while a load holds a pause: its young objects come fast
YOUNG_WHILE_PAUSED = 2_500  # net new objects that make a young pass due while a load pauses full ones
FULL_PASS_BUDGET = 20  # a full pass waits at least this many times its own duration after the last


class GuiCollector(QObject):
    """The process's only garbage collector once installed: see NOTE [collect on the GUI thread]."""

    _instance: ClassVar[GuiCollector | None] = None

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self._was_enabled = gc.isenabled()
        self._last_full = time.monotonic()
        self._full_cost = 0.0
        self.collections = [0, 0, 0]  # passes run here, per generation
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self.check)
        gc.disable()
        self._timer.start()

    @classmethod
    def install(cls) -> GuiCollector | None:
        """Take over collection for this process (once; on the GUI thread, with an application)."""
        app = QCoreApplication.instance()
        if app is None or threading.current_thread() is not threading.main_thread():
            return None
        if cls._instance is None:
            cls._instance = cls(app)
            app.destroyed.connect(cls._forget)
        return cls._instance

    @classmethod
    def installed(cls) -> GuiCollector | None:
        return cls._instance

    @classmethod
    def _forget(cls) -> None:
        instance, cls._instance = cls._instance, None
        if instance is not None and instance._was_enabled:
            gc.enable()

    def uninstall(self) -> None:
        """Give collection back to CPython (tests)."""
        self._timer.stop()
        if GuiCollector._instance is self:
            GuiCollector._forget()
        self.deleteLater()

    def due(self) -> int | None:
        """The oldest generation whose count passed its threshold, as CPython would pick it."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if GcPause.held():
            return 1 if counts[0] > YOUNG_WHILE_PAUSED else None
        for generation in (2, 1, 0):
            if thresholds[generation] and counts[generation] > thresholds[generation]:
                if (
                    generation == 2
                    and time.monotonic() - self._last_full < FULL_PASS_BUDGET * self._full_cost
                ):
                    continue
                return generation
        return None

    def check(self) -> int | None:
        """Collect the generation that is due, here; returns it (``None``: nothing was due)."""
        self._timer.setInterval(PAUSED_CHECK_MS if GcPause.held() else CHECK_MS)
        generation = self.due()
        if generation is None:
            return None
        start = time.monotonic()
        gc.collect(generation)
        if generation == 2:
            self._last_full = time.monotonic()
            self._full_cost = self._last_full - start
        self.collections[generation] += 1
        return generation
