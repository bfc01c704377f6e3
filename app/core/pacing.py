"""Sharing the interpreter with a thread that must stay responsive.

# NOTE [pacing]
A long recording runs Python on a worker thread while the window's GUI thread
waits for its turn at the GIL. CPython hands the GIL over when a waiting thread
asks, but a waiter only asks after ``sys.getswitchinterval()`` passes with no
hand-over at all; torch's bindings release and retake the GIL all the time, so
the GUI thread's request may never be raised and it waits as long as the worker
runs. Measured here: a 10 ms heartbeat on the GUI thread stalled 75-190 ms
while the graph capture walked 5,000 nodes, and 3,500 nodes were registered
during one stall; changing the switch interval did not help.

So the hand-over is cooperative. While a responsive thread needs the GIL it
calls :meth:`Pacer.start` and then :meth:`Pacer.beat` every few ms (the window
does this from a timer while a recording runs). Long loops in ``app.core`` and
``app.render`` call :func:`pace`: when the beats are overdue, the calling
thread sleeps a moment, and a real sleep lets the waiting thread take the GIL.
With no responsive thread registered (the CLI, tests), :func:`pace` costs one
attribute check.

Pure-Python stretches of the worker (parsing Graphviz's JSON, checking a
program) do give the GIL up when asked, but only after the switch interval:
each of the GUI thread's Python calls (a timer's slot, an event filter) then
waited up to 5 ms, several of them per repaint. While a responsive thread is
registered the interval is 1 ms; the last :meth:`Pacer.stop` restores it.
"""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["PACER", "Pacer", "pace"]


class Pacer:
    """Naps the calling thread when a responsive thread's beats are overdue.

    >>> pacer = Pacer(overdue_s=0.0, nap_s=0.0)
    >>> pacer(), pacer.naps       # nobody to make way for
    (None, 0)
    >>> before = sys.getswitchinterval()
    >>> pacer.start(); sys.getswitchinterval() <= 0.001
    True
    >>> pacer(), pacer.naps       # the beating thread itself never naps
    (None, 0)
    >>> worker = threading.Thread(target=pacer); worker.start(); worker.join(); pacer.naps
    1
    >>> pacer.stop(); sys.getswitchinterval() == before
    True
    """

    def __init__(self, overdue_s: float = 0.015, nap_s: float = 0.001, switch_s: float = 0.001) -> None:
        self.overdue_s = overdue_s
        self.nap_s = nap_s
        self.switch_s = switch_s
        self.naps = 0  # how often a thread made way (for tests and benchmarks)
        self._switch_before = sys.getswitchinterval()
        self._lock = threading.Lock()
        self._holders = 0
        self._beater: int | None = None
        self._seen = 0.0

    def start(self) -> None:
        """The calling thread needs the GIL regularly from now on; it must call :meth:`beat`."""
        with self._lock:
            if not self._holders:
                self._switch_before = sys.getswitchinterval()
                sys.setswitchinterval(min(self.switch_s, self._switch_before))
            self._holders += 1
            self._beater = threading.get_ident()
            self._seen = time.monotonic()

    def stop(self) -> None:
        with self._lock:
            if self._holders == 1:
                sys.setswitchinterval(self._switch_before)
            self._holders = max(self._holders - 1, 0)

    def beat(self) -> None:
        """The responsive thread ran just now."""
        self._seen = time.monotonic()

    def __call__(self) -> None:
        if not self._holders or time.monotonic() - self._seen <= self.overdue_s:
            return
        if threading.get_ident() == self._beater:
            return  # the responsive thread is the one running: nobody to make way for
        self.naps += 1
        time.sleep(self.nap_s)


PACER = Pacer()


def pace() -> None:
    """Called by long loops: make way for a responsive thread that has waited too long."""
    PACER()
