"""Responsiveness: a heartbeat timer's gaps while a window loads a recording, and GC pauses."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer

from app.core import Program, Recording, record
from benchmarks.common import BIG_LIMITS, HEARTBEAT_MS, PAINT_WAIT_MS, child_json, keep_none_alive
from benchmarks.programs import (
    chain_program,
    training_program,
)
from benchmarks.steps import application, layout_of, settle, wait_built

# -- 4. responsiveness -------------------------------------------------------------------------------


class Heartbeat:
    """A 10 ms precise QTimer on the GUI thread; remembers the largest gap between ticks."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(self._on_tick)
        self.clock = QElapsedTimer()
        self.last = 0
        self.gaps: list[tuple[float, str]] = []
        self.ends: list[float] = []  # time.perf_counter() at the tick that ended each gap
        # the GUI thread's own CPU time in each gap (time.thread_time()): on a loaded machine most of a
        # wall gap is waiting for a processor; this is the work that ran between two ticks
        self.cpu_ms: list[float] = []
        self._cpu_last = 0.0
        self.started = 0.0
        self.phase = "start"  # set from any thread: what is running now
        self._phase_at_last = "start"

    def start(self) -> None:
        self.clock.start()
        self.started = time.perf_counter()
        self.last = 0
        self._cpu_last = time.thread_time()
        self.timer.start()

    def _on_tick(self) -> None:
        cpu = time.thread_time()
        self.cpu_ms.append((cpu - self._cpu_last) * 1000)
        keep_none_alive()
        now, phase = self.clock.nsecsElapsed(), self.phase
        during = phase if phase == self._phase_at_last else f"{self._phase_at_last} -> {phase}"
        self.gaps.append(((now - self.last) / 1e6, during))
        self.ends.append(time.perf_counter())
        self.last, self._phase_at_last = now, phase
        self._cpu_last = time.thread_time()  # the tick's own bookkeeping is not the window's work

    def stop(self) -> tuple[float, str]:
        self.timer.stop()
        return max(self.gaps, default=(math.nan, "none"))

    def cpu_of_largest(self) -> tuple[float, float]:
        """The GUI thread's CPU ms in the largest wall gap, and the largest CPU ms in any gap."""
        if not self.gaps:
            return (math.nan, math.nan)
        i = max(range(len(self.gaps)), key=lambda k: self.gaps[k][0])
        return (self.cpu_ms[i], max(self.cpu_ms))

    def top(self, count: int = 3) -> tuple[tuple[float, str], ...]:
        return tuple(sorted(self.gaps, reverse=True)[:count])

    def largest_span(self) -> tuple[float, float]:
        """When the largest gap began and ended, in ``time.perf_counter()`` seconds."""
        if not self.gaps:
            return (math.nan, math.nan)
        i = max(range(len(self.gaps)), key=lambda k: self.gaps[k][0])
        return (self.ends[i - 1] if i else self.started, self.ends[i])


@dataclass(frozen=True)
class Responsiveness:
    max_gap_ms: float
    phase: str  # what ran when the largest gap happened
    path: str  # "window" (Session + RecordingWorker) or "pool" (a QThreadPool of our own)
    load_s: float
    note: str = ""
    gc_pauses: tuple[tuple[float, int, str], ...] = ()  # slowest (ms, generation, thread) during the load
    top_gaps: tuple[tuple[float, str], ...] = ()  # the largest gaps and what ran meanwhile
    max_gap_cpu_ms: float = math.nan  # the GUI thread's CPU time inside the largest gap
    max_cpu_gap_ms: float = math.nan  # the most CPU time the GUI thread spent between two ticks


class GcPauses:
    """Times every garbage-collector pass (any thread: a pass holds the GIL, so it stops the GUI too)."""

    def __init__(self) -> None:
        self.passes: list[tuple[float, int, str]] = []
        self.spans: list[tuple[float, float]] = []  # each pass's start and end, time.perf_counter()
        self._started: dict[int, float] = {}

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        thread = threading.get_ident()
        if phase == "start":
            self._started[thread] = time.perf_counter()
            return
        began = self._started.pop(thread, None)
        if began is not None:
            name = "GUI thread" if threading.current_thread() is threading.main_thread() else "worker"
            end = time.perf_counter()
            self.passes.append(((end - began) * 1000, info["generation"], name))
            self.spans.append((began, end))

    def ms_within(self, start: float, end: float) -> float:
        """Milliseconds of collection between two ``time.perf_counter()`` times."""
        return sum((max(0.0, min(b, end) - max(a, start)) for a, b in self.spans), 0.0) * 1000

    def slowest(self, count: int = 3) -> tuple[tuple[float, int, str], ...]:
        return tuple(sorted(self.passes, reverse=True)[:count])


def measure_heartbeat(program: Program, log: Callable[[str], None]) -> Responsiveness:
    """Load ``program`` through the window (worker thread: record + layout, then the view is filled
    on the GUI thread) while a 10 ms heartbeat runs; the largest gap between its ticks."""
    from app.ui.runtime.settings import AppSettings
    from app.ui.window.main_window import MainWindow

    beat = Heartbeat()
    patched = _lift_worker_limits(beat)
    settings = AppSettings(str(Path(tempfile.mkdtemp(prefix="lens-bench-")) / "settings.ini"))
    window = MainWindow(settings)
    window.show()
    settle()
    _show_seed_first(window)
    session, loop = window.session, QEventLoop()
    failed: list[str] = []
    session.step_applied.connect(lambda _i: _quit_when_built(window.graph_view, beat, loop))
    session.failed.connect(lambda message: (failed.append(message), loop.quit()))
    beat.phase = "record (worker)"
    with GcPauses() as pauses:
        beat.start()
        start = time.perf_counter()
        session.load(program)
        loop.exec()  # the real event loop, as the window runs it
        load_s = time.perf_counter() - start
        gap, phase = beat.stop()
    gap_cpu, most_cpu = beat.cpu_of_largest()
    session.worker.wait_idle()
    window.hide()  # close() would ask about the unsaved in-memory program (a modal dialog)
    window.deleteLater()
    settle()
    note = f"recording failed: {failed[0]}" if failed else ""
    note = (note + "; " if note else "") + patched
    log(f"heartbeat: {gap:.1f} ms ({gap_cpu:.1f} ms CPU) during {phase}; load {load_s:.1f} s; {note}")
    return Responsiveness(gap, phase, "window", load_s, note, pauses.slowest(), beat.top(), gap_cpu, most_cpu)


def _show_seed_first(window: Any) -> None:
    """As a user would: the window shows the seed before the big program is opened (so one-off
    imports of the late widgets are not counted as the big graph's)."""
    loop = QEventLoop()
    window.session.step_applied.connect(loop.quit)
    window.session.load("two-losses")
    loop.exec()
    window.session.step_applied.disconnect(loop.quit)
    wait_built(window.graph_view)
    settle()


def heartbeat_child(size: int, *, program: bool = False) -> None:
    """(child process) Warm up like a window that already showed the seed, then measure the load of
    the ``size``-node chain, or of the ``size``-iteration training program."""
    application()
    record(chain_program(10))

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    result = measure_heartbeat(training_program(size) if program else chain_program(size), log)
    print(json.dumps(dataclasses.asdict(result)))


def heartbeat_in_child(size: int, *, program: bool = False) -> Responsiveness:
    """The heartbeat in a fresh process: the benchmark's own heap (GBs after the big sizes) must not
    slow the garbage collector or the event loop of the window being measured."""
    data = child_json("--child-heartbeat-program" if program else "--child-heartbeat", size)
    data["gc_pauses"] = tuple(tuple(p) for p in data["gc_pauses"])
    data["top_gaps"] = tuple(tuple(g) for g in data["top_gaps"])
    return Responsiveness(**data)


def _quit_when_built(view: Any, beat: Heartbeat, loop: QEventLoop) -> None:
    """Once the view holds every item (it may fill in slices), beat a little longer while it paints."""
    if view is not None and getattr(view, "building", False):
        beat.phase = "fill the view (GUI thread, in slices)"
        view.model_ready.connect(lambda: _quit_when_built(view, beat, loop))
        return
    beat.phase = "paint (GUI thread)"
    QTimer.singleShot(PAINT_WAIT_MS, loop.quit)


def _lift_worker_limits(beat: Heartbeat) -> str:
    """The worker's default recording limit (30 s) and layout timeout (20 s) would refuse a big graph
    before its load can be observed. Replace the two seams it offers (module attributes) with the same
    calls under the benchmark's limits, marking the heartbeat's phase as each one ends."""
    import app.ui.runtime.worker as worker_module

    def record_program(source: Program | str, device: str) -> Recording:
        from app.child.client import record_in_child  # the window's own path: the warm child

        recording = record_in_child(source, device, recorder_limits=BIG_LIMITS, lesson=True)
        beat.phase = "layout (worker)"
        return recording

    def layout_recording(recording: Recording) -> Any:
        layout = layout_of(recording)
        beat.phase = "apply (GUI thread)"
        return layout

    worker_module.record_program = record_program
    worker_module.layout_recording = layout_recording
    return "worker seams record_program/layout_recording replaced to lift the time limits"
