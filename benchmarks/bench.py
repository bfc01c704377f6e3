"""Autograd Lens benchmark: step latency, recording cost, start-up, responsiveness, memory.

    python benchmarks/bench.py [--json] [--sizes 10,100,1000,5000] [--quick]

Everything is measured side by side in one run, alternatives interleaved and repeated, and reported
as medians (the machine is shared and noisy). See ``benchmarks/README.md`` for what each number
means and the targets it is held to. No number here is ever asserted by a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import torch  # noqa: E402
from PySide6 import __version__ as pyside_version  # noqa: E402
from PySide6.QtCore import QByteArray, QElapsedTimer, QEvent, QEventLoop, QObject, Qt, QTimer, qVersion  # noqa: E402
from PySide6.QtWidgets import QApplication, QGraphicsScene, QGraphicsView, QWidget  # noqa: E402

from app.core import Limits, Program, Recording, record  # noqa: E402
from app.core.language.evaluator import Evaluator  # noqa: E402
from app.core.language.parsing import parse  # noqa: E402
from app.core.recording.recorder import SEED  # noqa: E402
from benchmarks.scenarios import (  # noqa: E402
    chain_losses,
    chain_scenario,
    chain_spec,
    plain_chain,
    training_program,
)

T = TypeVar("T")
DEFAULT_SIZES = (10, 100, 1000, 5000)
HEARTBEAT_MS = 10
HEARTBEAT_NODES = 5000
PROGRAM_ITERATIONS = 200
PAINT_WAIT_MS = 300  # after the first step is applied, keep beating while it paints
BIG_LIMITS = Limits(time_limit_s=3600.0)  # the benchmark measures; it must not be cut short
LAYOUT_TIMEOUT_S = 3600.0
HEAP_SKIP_S = 150.0  # tracemalloc triples a recording's time: skipped when one takes longer than this
RERENDER_FULL_UP_TO = 100  # above this many nodes, re-render a sample of steps only
RERENDER_SAMPLES = 5
RERENDER_BUDGET_S = 120.0  # stop sampling re-renders of one size once they took this long in all
TARGETS = {
    "step_p95_ms": 16.0,
    "step_vs_rerender": 10.0,
    "record_vs_plain": 3.0,
    "program_record_vs_plain": 2.0,
    "startup_vs_torch": 1.5,
    "max_heartbeat_gap_ms": 50.0,
    "real_model_record_vs_plain": 1.5,
    "lens_open_vs_torch": 0.5,
}


# -- a guard for PySide6 6.12.0 on Python 3.11 ----------------------------------------------------

_NONE_BANK: list[None] = []
NONE_FLOOR = 2_000_000


@functools.cache
def _qt_drops_none() -> bool:
    """Whether void Qt calls drop references to ``None`` here (PySide6 6.12.0 on Python 3.11)."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal (PEP 683)
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(100):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before


def keep_none_alive() -> None:
    """Top up the references to ``None`` where Qt calls drop them.

    PySide6 6.12.0 on Python 3.11 drops one reference to ``None`` on every Qt call that returns
    nothing (see ``tests/ui/test_soak.py``); after ~50,000 such calls Python aborts with "deallocating
    None". The benchmark makes millions, so on such a build it holds spare references (8 bytes each)
    and tops them up outside the timed regions. A no-op where the bindings are sound.
    """
    if not _qt_drops_none():
        return
    have = sys.getrefcount(None)
    if have < NONE_FLOOR:
        _NONE_BANK.extend([None] * (2 * NONE_FLOOR - have))


# -- small statistics ----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else math.nan


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank (no interpolation)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)])


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of_ratios(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of each round's ``a / b``: a round's two runs are adjacent, so they share the
    machine's load (a ratio of medians mixes quiet and busy moments)."""
    return median([ratio(x, y) for x, y in zip(a, b, strict=True)])


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


# -- the machine ---------------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    return {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "qt": f"{qVersion()} (PySide6 {pyside_version})",
        "graphviz": _dot_version(),
        "commit": _git(["rev-parse", "--short", "HEAD"])
        + (" (dirty tree)" if _git(["status", "-s"]) else ""),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _dot_version() -> str:
    try:
        done = subprocess.run(["dot", "-V"], capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return "missing"
    return done.stderr.strip().removeprefix("dot - ")


def _git(args: list[str]) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip()


# -- 2. recording cost -----------------------------------------------------------------------------


def run_plainly(program: Program, limits: Limits = BIG_LIMITS) -> None:
    """The program through the project's evaluator, with the same seed and checks as a recording but
    no hooks, no snapshots, no labels: what ``record`` adds on top of this is the cost of recording."""
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        Evaluator({}, field="program", limits=limits).run(parse(program.code, field="program", mode="exec"))


@dataclass
class RecordCost:
    record_s: list[float] = field(default_factory=list)
    evaluated_s: list[float] = field(default_factory=list)  # run_plainly
    native_s: list[float] = field(default_factory=list)  # plain Python, no evaluator
    record_1t_s: list[float] = field(default_factory=list)  # the same two with one intra-op thread
    evaluated_1t_s: list[float] = field(default_factory=list)

    @property
    def vs_plain(self) -> float:
        return median_of_ratios(self.record_s, self.evaluated_s)

    @property
    def vs_plain_1t(self) -> float:
        return median_of_ratios(self.record_1t_s, self.evaluated_1t_s)

    @property
    def vs_native(self) -> float:
        return ratio(median(self.record_s), median(self.native_s))


@contextmanager
def one_intra_op_thread() -> Iterator[None]:
    """torch's intra-op threads on a busy 2-core machine: an op on 4x8 tensors waits for a second
    core (~400 us instead of ~5 us), which swamps what recording adds. One thread shows it."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def measure_record_cost(
    nodes: int, scenario: Program, repeats: int, budget_s: float
) -> tuple[RecordCost, Recording]:
    """``record`` vs the same calls run plainly, interleaved; stops repeating once ``budget_s`` is
    spent. Also returns the last recording made."""
    cost = RecordCost()
    native = plain_chain(chain_spec(nodes))
    started = time.perf_counter()
    made: list[Recording] = []
    for _ in range(repeats):
        made[:] = []
        cost.record_s.append(timed(lambda: made.append(record(scenario, limits=BIG_LIMITS))))
        cost.evaluated_s.append(timed(lambda: run_plainly(scenario)))
        cost.native_s.append(timed(native))
        with one_intra_op_thread():
            cost.record_1t_s.append(timed(lambda: record(scenario, limits=BIG_LIMITS)))
            cost.evaluated_1t_s.append(timed(lambda: run_plainly(scenario)))
        gc.collect()
        if time.perf_counter() - started > budget_s:
            break
    return cost, made[0]


# -- 5. memory -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepBytes:
    mean: float  # bytes kept per step, averaged over every step
    max: int
    changes_mean: float  # slot + grad entries changed per step
    bytes_per_change: float


def bytes_per_step(recording: Recording) -> StepBytes:
    """Size of what each step stores: its slot_changes entries (dict + key tuples) and the bytes of
    the gradient tensors it keeps (grad_changes, contribution, result)."""
    sizes, changes = [], []
    for step in recording.timeline.steps:
        slot_bytes = sys.getsizeof(dict(step.slot_changes)) + sum(sys.getsizeof(k) for k in step.slot_changes)
        tensors = [*step.grad_changes.values(), *(step.contribution or {}).values()]
        tensors += list((step.result or {}).values())
        grad_bytes = sum(
            sys.getsizeof(t) + sys.getsizeof(t.flat) + 8 * t.numel() for t in tensors if t is not None
        )
        sizes.append(slot_bytes + grad_bytes)
        changes.append(len(step.slot_changes) + len(step.grad_changes))
    total_changes = max(sum(changes), 1)
    return StepBytes(
        mean=statistics.fmean(sizes),
        max=max(sizes),
        changes_mean=statistics.fmean(changes),
        bytes_per_change=sum(sizes) / total_changes,
    )


@dataclass(frozen=True)
class ProgramResult:
    """A training-loop program: recording against the same program through the evaluator alone."""

    iterations: int
    steps: int
    record_s: list[float]
    evaluated_s: list[float]
    step_bytes: StepBytes
    window: StepTimes | None = None  # every step of the program, stepped in the window
    heartbeat: Responsiveness | None = None  # loading the program in a fresh window process

    def json(self) -> dict[str, Any]:
        return {
            "iterations": self.iterations,
            "steps": self.steps,
            "record_vs_plain": round(median_of_ratios(self.record_s, self.evaluated_s), 3),
            "bytes_per_step": round(self.step_bytes.mean),
            "step_p95_ms": round(p95(self.window.ms), 3) if self.window and self.window.ms else math.nan,
            "max_heartbeat_gap_ms": round(self.heartbeat.max_gap_ms, 1) if self.heartbeat else math.nan,
        }


def measure_program(iterations: int, repeats: int) -> ProgramResult:
    """``record`` of the training loop against ``run_plainly`` of it, interleaved, one intra-op thread
    (on a busy 2-core machine torch's thread pool swamps both with waits)."""
    program = training_program(iterations)
    record_s: list[float] = []
    evaluated_s: list[float] = []
    made: list[Recording] = []
    with one_intra_op_thread():
        run_plainly(program)
        for _ in range(repeats):
            made[:] = []
            record_s.append(timed(lambda: made.append(record(program, limits=BIG_LIMITS))))
            evaluated_s.append(timed(lambda: run_plainly(program)))
            gc.collect()
    recording = made[0]
    return ProgramResult(
        iterations, len(recording.timeline), record_s, evaluated_s, bytes_per_step(recording)
    )


def measure_program_in_window(result: ProgramResult, opts: Options) -> ProgramResult:
    """The program's every step in the real window (after a warm-up pass), and the heartbeat while a
    fresh window process loads it."""
    recording = record(training_program(result.iterations), limits=BIG_LIMITS)
    window = Window.open(recording, layout_of(recording))
    steps = list(range(len(recording.timeline)))
    if opts.quick:  # a smoke run: the first iterations only
        steps = steps[:300]
    try:
        window.step_through(steps[: min(len(steps), 200)])  # warm-up: first paints, caches
        times = window.step_through(steps)
    finally:
        window.close()
    opts.log(f"program: heartbeat while a fresh window loads the {result.iterations}-iteration loop")
    beat = attempt(lambda: heartbeat_in_child(result.iterations, program=True), None, opts.log)
    return dataclasses.replace(result, window=times, heartbeat=beat)


@dataclass(frozen=True)
class HeapDelta:
    recording: int  # bytes the Recording keeps, right after record()
    after_replay: int  # the same after replaying every step (timeline checkpoints built)


def heap_delta(scenario: Program) -> HeapDelta:
    """tracemalloc: Python heap kept by one Recording (record's temporaries collected)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        recording = record(scenario, limits=BIG_LIMITS)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        for index in range(len(recording.timeline)):
            recording.timeline.state(index)
        gc.collect()
        replayed = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del recording
    return HeapDelta(kept, replayed)


def peak_rss_child(nodes: int) -> dict[str, float]:
    """Peak RSS of a fresh process that records, lays out, draws and steps the ``nodes`` scenario."""
    result: dict[str, float] = _child_json("--child-rss", nodes)
    return result


def _child_json(flag: str, nodes: int) -> Any:
    """Run this file with ``flag nodes`` in a fresh process; its last stdout line is JSON."""
    done = subprocess.run(
        [sys.executable, __file__, flag, str(nodes)],
        capture_output=True,
        text=True,
        timeout=7200,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{flag} child failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1])


def _rss_mb() -> float:
    """Peak resident memory of this process so far, in MB.

    VmHWM from /proc (Linux), which starts afresh at exec; ``ru_maxrss`` does not: a child inherits
    its parent's peak, so a child spawned from a big benchmark process would report the parent's.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child_rss(nodes: int) -> None:
    """(child process) Record, lay out, build the view, visit every step; print peak RSS in MB."""
    application()
    record(chain_scenario(10))  # torch's lazily imported meta kernels count as start-up, not as the graph
    baseline = _rss_mb()
    recording = record(chain_scenario(nodes), limits=BIG_LIMITS)
    after_record = _rss_mb()
    layout = layout_of(recording)
    view = make_graph_view(recording, layout)
    for index in range(len(recording.timeline)):
        keep_none_alive()
        view.show_state(recording.timeline.state(index))
    QApplication.processEvents()
    view.viewport().repaint()
    print(json.dumps({"baseline_mb": baseline, "after_record_mb": after_record, "peak_mb": _rss_mb()}))


# -- 1. step latency -------------------------------------------------------------------------------


def application() -> QApplication:
    keep_none_alive()
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    return QApplication([sys.argv[0]])


def layout_of(recording: Recording) -> Any:
    from app.render.layout import layout_graph

    return layout_graph(recording.graph, timeout_s=LAYOUT_TIMEOUT_S)


def make_graph_view(recording: Recording, layout: Any) -> Any:
    from app.ui.graph.graph_view import GraphView

    keep_none_alive()
    view = GraphView()
    view.resize(1200, 800)
    view.show()
    view.set_model(recording, layout)
    wait_built(view)
    return view


def wait_built(view: Any, timeout_s: float = 3600.0) -> None:
    """Run the event loop until the view has built every item (it builds in slices, off a timer)."""
    deadline = time.perf_counter() + timeout_s
    QApplication.processEvents()
    while getattr(view, "building", False) and time.perf_counter() < deadline:
        QApplication.processEvents()


def backward_steps(recording: Recording) -> list[int]:
    """Every step of the backward calls (everything after the forward step)."""
    return [s.index for s in recording.timeline.steps if s.call is not None]


class PaintCounter(QObject):
    """Counts paint events a widget (the graph view's viewport) receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


@dataclass
class StepTimes:
    """One pass of steps: per-step ms, how many steps painted the graph, and full repaints."""

    ms: list[float] = field(default_factory=list)
    painted: int = 0
    full_frame_ms: list[float] = field(default_factory=list)

    def extend(self, other: StepTimes) -> None:
        self.ms += other.ms
        self.painted += other.painted
        self.full_frame_ms += other.full_frame_ms


def flush_events() -> None:
    """Deliver what a step posted: the scene's change signal, then the viewport's paint of the
    dirty region (two passes: the first posts the update request the second paints)."""
    QApplication.processEvents()
    QApplication.processEvents()


def timed_steps(
    view: Any,
    steps: Iterable[int],
    go: Callable[[int], None],
    full_every: int,
    mark: Callable[[str], None] | None = None,
) -> StepTimes:
    """``go(i)`` then the events it posted, until the graph view has painted, in ms per step. Every
    ``full_every`` steps, also the time of a full repaint of the view (what a pan or zoom costs).
    ``mark``: told ``"full frame"`` before each of those repaints (a heartbeat's phase)."""
    out = StepTimes()
    counter = PaintCounter(view.viewport())
    for n, index in enumerate(steps):
        keep_none_alive()
        before = counter.count
        start = time.perf_counter()
        go(index)
        flush_events()
        out.ms.append((time.perf_counter() - start) * 1000)
        out.painted += counter.count > before
        if n % full_every == 0:
            if mark is not None:
                mark("full frame")
            out.full_frame_ms.append(timed(view.viewport().repaint) * 1000)
    view.viewport().removeEventFilter(counter)
    return out


def step_through_view(view: Any, recording: Recording, steps: Sequence[int]) -> StepTimes:
    """GraphView alone: ``timeline.state(i)`` + ``show_state`` + the paint it causes."""
    timeline = recording.timeline
    return timed_steps(view, steps, lambda i: view.show_state(timeline.state(i)), _full_every(steps))


def _full_every(steps: Sequence[int]) -> int:
    return max(1, len(steps) // 20)  # about 20 full repaints per pass


@dataclass
class Window:
    """The real main window, offscreen, holding one recording (through its Session)."""

    window: Any

    @classmethod
    def open(cls, recording: Recording, layout: Any) -> Window:
        from app.ui.runtime.settings import AppSettings
        from app.ui.window.main_window import MainWindow

        keep_none_alive()
        settings = AppSettings(str(Path(tempfile.mkdtemp(prefix="lens-bench-")) / "settings.ini"))
        window = MainWindow(settings)
        window.resize(1600, 1000)
        window.show()
        QApplication.processEvents()
        window.session.apply(recording, layout)
        wait_built(window.graph_view)
        _settle(for_s=0.2)  # the editor's copy of the text comes on a timer once the graph is built
        return cls(window)

    def step_through(self, steps: Sequence[int]) -> StepTimes:
        """``session.go_to(i)`` (what a key press calls) until the graph view has painted."""
        return timed_steps(self.window.graph_view, steps, self.window.session.go_to, _full_every(steps))

    def close(self) -> None:
        self.window.session.worker.wait_idle()
        self.window.hide()  # close() may ask about unsaved edits (a modal dialog)
        self.window.deleteLater()
        _settle()


def _settle(for_s: float = 0.0) -> None:
    """Deliver what is pending (and, for ``for_s`` seconds, what timers bring)."""
    deadline = time.perf_counter() + for_s
    for _ in range(3):
        QApplication.processEvents()
    while time.perf_counter() < deadline:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)


# -- 1b. the alternative: torchviz + Graphviz + SVG per step -------------------------------------------


class SvgViewer:
    """A QGraphicsView showing one SVG, as a user would load torchviz's output."""

    def __init__(self) -> None:
        from PySide6.QtSvg import QSvgRenderer

        self._renderer_type = QSvgRenderer
        self.scene = QGraphicsScene()
        self.view = QGraphicsView(self.scene)
        self.view.resize(1200, 800)
        self.view.show()
        self.renderer: Any = None

    def show(self, svg: bytes) -> None:
        from PySide6.QtSvgWidgets import QGraphicsSvgItem

        self.scene.clear()
        self.renderer = self._renderer_type(QByteArray(svg))
        item = QGraphicsSvgItem()
        item.setSharedRenderer(self.renderer)
        self.scene.addItem(item)
        self.view.fitInView(item, Qt.AspectRatioMode.KeepAspectRatio)
        QApplication.processEvents()
        self.view.viewport().repaint()

    def close(self) -> None:
        self.view.close()
        self.view.deleteLater()


@dataclass
class Rerender:
    times_ms: list[float] = field(default_factory=list)
    timed_out: bool = False  # a dot run hit the cap: the median is a lower bound

    @property
    def median_ms(self) -> float:
        return median(self.times_ms)


def rerender_once(losses: tuple[torch.Tensor, ...], viewer: SvgViewer, timeout_s: float) -> float | None:
    """make_dot(show_saved=True) + ``dot -Tsvg`` + load into the SVG view, in ms; None past the cap."""
    from torchviz import make_dot

    start = time.perf_counter()
    source = make_dot(losses, show_saved=True).source
    try:
        done = subprocess.run(
            ["dot", "-Tsvg"], input=source.encode(), capture_output=True, timeout=timeout_s, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    viewer.show(done.stdout)
    return (time.perf_counter() - start) * 1000


def rerender_samples(count: int, steps: int) -> list[int]:
    """Which steps to re-render: all of them, or ``count`` spread evenly."""
    if steps <= count:
        return list(range(steps))
    return [round(i * (steps - 1) / (count - 1)) for i in range(count)]


# -- one size, interleaved ----------------------------------------------------------------------------


@dataclass
class SizeResult:
    nodes: int
    steps: int
    backward_steps: int
    record: RecordCost
    layout_s: float
    set_model_s: float
    window: StepTimes
    view: StepTimes
    rerender: Rerender
    rerender_sampled: bool
    step_bytes: StepBytes
    heap: HeapDelta | None

    def json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "step_median_ms": round(median(self.window.ms), 3),
            "step_p95_ms": round(p95(self.window.ms), 3),
            "rerender_median_ms": round(self.rerender.median_ms, 3),
            "step_vs_rerender": round(ratio(self.rerender.median_ms, median(self.window.ms)), 2),
            "record_vs_plain": round(self.record.vs_plain, 3),
            "bytes_per_step": round(self.step_bytes.mean),
        }


@dataclass(frozen=True)
class Options:
    quick: bool
    rerender_timeout_s: float
    log: Callable[[str], None]


def measure_size(nodes: int, opts: Options) -> SizeResult:
    scenario = chain_scenario(nodes)
    big = nodes >= 1000
    repeats = 1 if opts.quick else (3 if nodes >= 5000 else 7)
    opts.log(f"[{nodes}] recording cost ({repeats} interleaved rounds)")
    cost, recording = measure_record_cost(nodes, scenario, repeats, budget_s=120 if big else 30)
    keep_none_alive()
    opts.log(f"[{nodes}] {len(recording.graph)} nodes, {len(recording.timeline)} steps; layout")
    start = time.perf_counter()
    layout = layout_of(recording)
    layout_s = time.perf_counter() - start
    steps = backward_steps(recording)
    window, view, rerender, sampled = _interleaved_steps(nodes, recording, layout, steps, opts)
    heap = None if (opts.quick and big) or median(cost.record_s) > HEAP_SKIP_S else heap_delta(scenario)
    start = time.perf_counter()
    make_graph_view(recording, layout).deleteLater()
    set_model_s = time.perf_counter() - start
    return SizeResult(
        nodes=len(recording.graph),
        steps=len(recording.timeline),
        backward_steps=len(steps),
        record=cost,
        layout_s=layout_s,
        set_model_s=set_model_s,
        window=window,
        view=view,
        rerender=rerender,
        rerender_sampled=sampled,
        step_bytes=bytes_per_step(recording),
        heap=heap,
    )


def _interleaved_steps(
    nodes: int, recording: Recording, layout: Any, steps: list[int], opts: Options
) -> tuple[list[float], list[float], Rerender, bool]:
    """Rounds of: a pass through every backward step in the window, the same in a bare GraphView,
    then a share of the re-render samples. Passes alternate direction (Right, then Left)."""
    rounds = 1 if (opts.quick or nodes >= 5000) else 3
    sampled = nodes > RERENDER_FULL_UP_TO
    picks = rerender_samples(RERENDER_SAMPLES if sampled else len(steps), len(steps))
    if opts.quick:
        picks = picks[:1]
    losses = chain_losses(chain_spec(nodes))  # taken before any backward: show_saved needs live buffers
    window = Window.open(recording, layout)
    view = make_graph_view(recording, layout)
    viewer = SvgViewer()
    window_times, view_times = StepTimes(), StepTimes()
    rerender = Rerender()
    shares = [picks[r::rounds] for r in range(rounds)]
    try:
        for r in range(rounds):
            order = steps if r % 2 == 0 else steps[::-1]
            opts.log(f"[{nodes}] round {r + 1}/{rounds}: {len(order)} steps in window and view")
            window_times.extend(window.step_through(order))
            view_times.extend(step_through_view(view, recording, order))
            if shares[r]:
                opts.log(
                    f"[{nodes}] round {r + 1}/{rounds}: up to {len(shares[r])} re-renders (torchviz+dot+SVG)"
                )
            for _ in shares[r]:
                if rerender.timed_out or sum(rerender.times_ms) > RERENDER_BUDGET_S * 1000:
                    break
                keep_none_alive()
                ms = rerender_once(losses, viewer, opts.rerender_timeout_s)
                if ms is None:
                    rerender.timed_out = True
                    rerender.times_ms.append(opts.rerender_timeout_s * 1000)
                else:
                    rerender.times_ms.append(ms)
    finally:
        window.close()
        view.deleteLater()
        viewer.close()
        _settle()
    return window_times, view_times, rerender, sampled


# -- 3. start-up -------------------------------------------------------------------------------------


def startup_once(source: str = "two-losses") -> float:
    """Seconds from spawning the window's process to its first painted graph (the seed scenario, or
    any source the window opens: a ``.lens`` file, whose preview may be that picture)."""
    return startup_marks(source)[0]


def startup_marks(source: str = "two-losses") -> tuple[float, float]:
    """Seconds from spawning the window's process to its first painted graph, and to its graph
    view drawing the recording (``benchmarks/first_paint.py``'s two lines)."""
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    start = time.perf_counter()
    marks: dict[str, float] = {}
    with subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "first_paint.py"), source],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            marks.setdefault(line.strip(), time.perf_counter() - start)
            if "graph-ready" in marks:
                break
        proc.wait(timeout=60)
    if "first-paint" not in marks or "graph-ready" not in marks:
        raise RuntimeError("the window never painted a graph (see benchmarks/first_paint.py)")
    return marks["first-paint"], marks["graph-ready"]


def torch_import_once() -> float:
    """Seconds from spawning ``python -c "import torch"`` to the import being done (read as a line,
    as the start-up is: the interpreter's teardown after it counts for neither)."""
    start = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, "-c", "import torch; print('imported', flush=True)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - start
        proc.wait(timeout=60)
    if line.strip() != "imported":
        raise RuntimeError("python -c 'import torch' failed")
    return elapsed


def measure_startup(runs: int) -> tuple[list[float], list[float]]:
    """Start-up and ``import torch`` times, alternating. The window's modules are compiled to
    bytecode once, by a first start that is not counted, as on a user's machine after its first
    start (with ``PYTHONDONTWRITEBYTECODE`` set, every start would compile them again)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    startup_once()
    startup, imports = [], []
    for _ in range(runs):
        imports.append(torch_import_once())
        startup.append(startup_once())
    return startup, imports


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
        self.started = 0.0
        self.phase = "start"  # set from any thread: what is running now
        self._phase_at_last = "start"

    def start(self) -> None:
        self.clock.start()
        self.started = time.perf_counter()
        self.last = 0
        self.timer.start()

    def _on_tick(self) -> None:
        keep_none_alive()
        now, phase = self.clock.nsecsElapsed(), self.phase
        during = phase if phase == self._phase_at_last else f"{self._phase_at_last} -> {phase}"
        self.gaps.append(((now - self.last) / 1e6, during))
        self.ends.append(time.perf_counter())
        self.last, self._phase_at_last = now, phase

    def stop(self) -> tuple[float, str]:
        self.timer.stop()
        return max(self.gaps, default=(math.nan, "none"))

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


def measure_heartbeat(scenario: Program, log: Callable[[str], None]) -> Responsiveness:
    """Load ``scenario`` through the window (worker thread: record + layout, then the view is filled
    on the GUI thread) while a 10 ms heartbeat runs; the largest gap between its ticks."""
    from app.ui.runtime.settings import AppSettings
    from app.ui.window.main_window import MainWindow

    beat = Heartbeat()
    patched = _lift_worker_limits(beat)
    settings = AppSettings(str(Path(tempfile.mkdtemp(prefix="lens-bench-")) / "settings.ini"))
    window = MainWindow(settings)
    window.show()
    _settle()
    _show_seed_first(window)
    session, loop = window.session, QEventLoop()
    failed: list[str] = []
    session.step_applied.connect(lambda _i: _quit_when_built(window.graph_view, beat, loop))
    session.failed.connect(lambda message: (failed.append(message), loop.quit()))
    beat.phase = "record (worker)"
    with GcPauses() as pauses:
        beat.start()
        start = time.perf_counter()
        session.load(scenario)
        loop.exec()  # the real event loop, as the window runs it
        load_s = time.perf_counter() - start
        gap, phase = beat.stop()
    session.worker.wait_idle()
    window.hide()  # close() would ask about the unsaved in-memory scenario (a modal dialog)
    window.deleteLater()
    _settle()
    note = f"recording failed: {failed[0]}" if failed else ""
    note = (note + "; " if note else "") + patched
    log(f"heartbeat: {gap:.1f} ms during {phase}; load {load_s:.1f} s; {note}")
    return Responsiveness(gap, phase, "window", load_s, note, pauses.slowest(), beat.top())


def _show_seed_first(window: Any) -> None:
    """As a user would: the window shows the seed before the big scenario is opened (so one-off
    imports of the late widgets are not counted as the big graph's)."""
    loop = QEventLoop()
    window.session.step_applied.connect(loop.quit)
    window.session.load("two-losses")
    loop.exec()
    window.session.step_applied.disconnect(loop.quit)
    wait_built(window.graph_view)
    _settle()


def heartbeat_child(size: int, *, program: bool = False) -> None:
    """(child process) Warm up like a window that already showed the seed, then measure the load of
    the ``size``-node chain, or of the ``size``-iteration training program."""
    application()
    record(chain_scenario(10))

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    result = measure_heartbeat(training_program(size) if program else chain_scenario(size), log)
    print(json.dumps(dataclasses.asdict(result)))


def heartbeat_in_child(size: int, *, program: bool = False) -> Responsiveness:
    """The heartbeat in a fresh process: the benchmark's own heap (GBs after the big sizes) must not
    slow the garbage collector or the event loop of the window being measured."""
    data = _child_json("--child-heartbeat-program" if program else "--child-heartbeat", size)
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

        recording = record_in_child(source, device, recorder_limits=BIG_LIMITS)
        beat.phase = "layout (worker)"
        return recording

    def layout_recording(recording: Recording) -> Any:
        layout = layout_of(recording)
        beat.phase = "apply (GUI thread)"
        return layout

    worker_module.record_program = record_program
    worker_module.layout_recording = layout_recording
    return "worker seams record_program/layout_recording replaced to lift the time limits"


# -- 6. real models, recorded as scripts ----------------------------------------------------------------

REAL_MODEL_SCRIPT = """\
# A TransformerEncoderLayer training step
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256, batch_first=True)
head = nn.Linear(64, 1)
opt = torch.optim.AdamW([*layer.parameters(), *head.parameters()], lr=1e-3)
x, y = torch.randn(32, 32, 64), torch.randn(32, 32, 1)
for step in range(STEPS):
    loss = (head(layer(x)) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

STACK_SCRIPT = """\
# A stack of transformer layers, one training step
import torch
from torch import nn

torch.manual_seed(0)
layers = nn.Sequential(*[nn.TransformerEncoderLayer(16, 2, 32, batch_first=True) for _ in range(LAYERS)])
opt = torch.optim.SGD(layers.parameters(), lr=1e-3)
x = torch.randn(2, 8, 16)
loss = layers(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
"""
STACK_NODES_PER_LAYER = 76  # nodes one layer adds to STACK_SCRIPT's graph (measured: 151 for 2, 303 for 4)
STACK_NODES = 20_000
# where the stack's largest heartbeat gap happened: the step in flight, its kind, the whole
# label (``step 19988 (call_end) -> step 19989 (forward)``), and the collections inside the gap
MAX_GAP_KEYS = ("max_gap_step", "max_gap_kind", "max_gap_during", "max_gap_gc_ms")
LENS_OPEN_NODES = 5_000


def script_file(text: str, name: str, **values: int) -> Path:
    """``text`` with its upper-case placeholders replaced, written to a fresh temporary file."""
    for key, value in values.items():
        text = text.replace(key, str(value))
    path = Path(tempfile.mkdtemp(prefix="lens-bench-")) / name
    path.write_text(text, encoding="utf-8")
    return path


def run_script_plainly(path: Path) -> None:
    """The script as ``python path`` runs it (the caller's random streams kept)."""
    import runpy

    with torch.random.fork_rng():
        runpy.run_path(str(path), run_name="__main__")


@dataclass
class RealModelResult:
    """A TransformerEncoderLayer training step: ``run`` (the script path) against the plain script."""

    nodes: int
    record_s: list[float] = field(default_factory=list)
    plain_s: list[float] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "record_vs_plain": round(median_of_ratios(self.record_s, self.plain_s), 3),
        }


def measure_real_model(rounds: int, steps: int = 3) -> RealModelResult:
    """``record_script`` of the transformer step vs ``runpy`` of it, interleaved, one intra-op thread."""
    from app.core.recording.script import record_script

    path = script_file(REAL_MODEL_SCRIPT, "transformer_step.py", STEPS=steps)
    with one_intra_op_thread():
        run_script_plainly(path)
        result = RealModelResult(len(record_script(path).recording.graph))
        for _ in range(rounds):
            result.plain_s.append(timed(lambda: run_script_plainly(path)))
            result.record_s.append(timed(lambda: record_script(path)))
            gc.collect()
    return result


def real_model_child(rounds: int) -> None:
    """(child process) :func:`measure_real_model` in a fresh process, as ``run SCRIPT.py`` records:
    the parent's heap (the window benchmarks before it) is not this measurement's."""
    result = measure_real_model(rounds)
    print(json.dumps({"nodes": result.nodes, "record_s": result.record_s, "plain_s": result.plain_s}))


def real_model_in_child(rounds: int) -> RealModelResult:
    row = _child_json("--child-real-model", rounds)
    return RealModelResult(int(row["nodes"]), list(row["record_s"]), list(row["plain_s"]))


@dataclass
class LensOpen:
    """Seconds to a ``.lens`` file's first painted graph (its preview: lensfile.format's NOTE [picture
    first]), to its graph view drawing the recording (steps can be taken), and ``import torch``
    timed between them."""

    first_s: list[float] = field(default_factory=list)
    ready_s: list[float] = field(default_factory=list)
    torch_import_s: list[float] = field(default_factory=list)


def measure_lens_open(runs: int, log: Callable[[str], None]) -> LensOpen:
    """The window spawned on a saved ``.lens`` of the 5,000-node chain (nothing recorded, torch
    never imported), alternating with ``python -c "import torch"``. The file is written as ``trace
    --save`` writes it, with its layout (layout_store's NOTE [stored layouts]) and its preview."""
    from app.render.layout_store import save_with_layout

    recording = record(chain_scenario(LENS_OPEN_NODES), limits=BIG_LIMITS)
    path = Path(tempfile.mkdtemp(prefix="lens-bench-")) / "chain-5000.lens"
    save_with_layout(recording, path)
    log(f"lens open: {len(recording.graph)} nodes, {path.stat().st_size / 1e6:.1f} MB on disk")
    result = LensOpen()
    for _ in range(runs):
        result.torch_import_s.append(torch_import_once())
        first, ready = startup_marks(str(path))
        result.first_s.append(first)
        result.ready_s.append(ready)
    return result


def stack_child(nodes: int) -> None:
    """(child process) Record the transformer stack through the script path; peak RSS, and the
    window's stepping when ``benchmarks/window_bench.py`` is there."""
    from app.core.recording.script import record_script

    application()
    baseline = _rss_mb()
    path = script_file(STACK_SCRIPT, "transformer_stack.py", LAYERS=max(1, nodes // STACK_NODES_PER_LAYER))
    start = time.perf_counter()
    recording = record_script(path).recording
    row: dict[str, Any] = {
        "nodes": len(recording.graph),
        "steps": len(recording.timeline),
        "record_s": round(time.perf_counter() - start, 2),
        "baseline_mb": round(baseline, 1),
        "after_record_mb": round(_rss_mb(), 1),
    }
    try:
        from benchmarks.window_bench import measure_steps_in_window
    except ImportError:  # the window's stepping benchmark is optional
        measure_steps_in_window = None
    if measure_steps_in_window is not None:
        window = measure_steps_in_window(recording, steps=300)
        row |= {key: window[key] for key in ("step_p95_ms", "max_heartbeat_gap_ms", *MAX_GAP_KEYS)}
    row["peak_rss_mb"] = round(_rss_mb(), 1)
    print(json.dumps(row))


# -- the run -------------------------------------------------------------------------------------------


@dataclass
class Report:
    machine: dict[str, str]
    sizes: list[SizeResult]
    startup_s: list[float]
    torch_import_s: list[float]
    heartbeat: Responsiveness | None
    rss: dict[str, float]
    program: ProgramResult | None = None
    real_model: RealModelResult | None = None
    lens_open: LensOpen = field(default_factory=LensOpen)
    stack: dict[str, Any] | None = None  # the 20,000-node transformer stack (full runs)
    web: dict[str, Any] | None = None  # the HTML player in headless Chromium (benchmarks/web.py)

    def json(self) -> dict[str, Any]:
        stack = [self.stack] if self.stack else []
        return {
            "program": self.program.json() if self.program else None,
            "real_model": self.real_model.json() if self.real_model else None,
            "sizes": [s.json() for s in self.sizes] + stack,
            "startup_s": round(median(self.startup_s), 3),
            "lens_open_s": round(median(self.lens_open.first_s), 3),
            "lens_ready_s": round(median(self.lens_open.ready_s), 3),
            "torch_import_s": round(median(self.torch_import_s), 3),
            "max_heartbeat_gap_ms": round(self.heartbeat.max_gap_ms if self.heartbeat else math.nan, 1),
            "peak_rss_mb": round(self.rss.get("peak_mb", math.nan), 1),
            "web": self.web,
        }


def run(sizes: Sequence[int], opts: Options) -> Report:
    application()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))  # torchviz recurses once per node
    machine = machine_info()
    record(chain_scenario(10))  # warm imports and torch's first-call paths
    # As the window's worker does after its imports (NOTE [gc freeze] in app/ui/runtime/worker.py): full
    # collections then skip torch's import-time objects instead of walking them mid-recording.
    gc.collect()
    gc.freeze()
    results = [measure_size(n, opts) for n in sizes]
    runs = 2 if opts.quick else 5
    opts.log(f"start-up: {runs} interleaved runs of the window and of `import torch`")
    startup, imports = attempt(lambda: measure_startup(runs), ([], []), opts.log)
    big = max(sizes)
    opts.log(f"heartbeat: loading {min(HEARTBEAT_NODES, big)} nodes in a fresh window process")
    heartbeat = attempt(lambda: heartbeat_in_child(min(HEARTBEAT_NODES, big)), None, opts.log)
    opts.log(f"peak RSS: child process with {big} nodes")
    rss = attempt(lambda: peak_rss_child(big), {}, opts.log)
    rss["nodes"] = big
    opts.log(f"program: a {PROGRAM_ITERATIONS}-iteration training loop, recorded and run plainly")
    program = attempt(lambda: measure_program(PROGRAM_ITERATIONS, 2 if opts.quick else 7), None, opts.log)
    if program is not None:
        opts.log("program: every step in the window")
        program = attempt(lambda: measure_program_in_window(program, opts), program, opts.log)
    opts.log("real model: a TransformerEncoderLayer step, `run` vs the plain script, in a child process")
    real = attempt(lambda: real_model_in_child(3 if opts.quick else 15), None, opts.log)
    opts.log(f"lens open: the window on a {LENS_OPEN_NODES}-node .lens file, fresh processes")
    lens_open = attempt(lambda: measure_lens_open(1 if opts.quick else 5, opts.log), LensOpen(), opts.log)
    stack = None
    if not opts.quick:
        opts.log(f"stack: {STACK_NODES} nodes of transformer layers through `run`, in a child process")
        stack = attempt(lambda: _child_json("--child-stack", STACK_NODES), None, opts.log)
    from benchmarks.web import measure_web

    web_sizes = (max(sizes), 20) if opts.quick else (5000, PROGRAM_ITERATIONS)
    web = attempt(lambda: measure_web(opts.log, *web_sizes), None, opts.log)
    return Report(machine, results, startup, imports, heartbeat, rss, program, real, lens_open, stack, web)


def attempt(measure: Callable[[], T], fallback: T, log: Callable[[str], None]) -> T:
    """One section of the benchmark; a failure is reported and leaves the others standing."""
    try:
        return measure()
    except Exception as exc:
        log(f"FAILED: {type(exc).__name__}: {exc}")
        return fallback


# -- output --------------------------------------------------------------------------------------------


def table(report: Report) -> str:
    return "\n".join(_table_lines(report))


def _table_lines(report: Report) -> Iterator[str]:
    yield "Machine"
    for key, value in report.machine.items():
        yield f"  {key:<9} {value}"
    yield ""
    yield "1. Step latency, ms per step (window: Session.go_to -> graph painted; view: bare GraphView)"
    yield (
        f"  {'nodes':>6} {'steps':>6} {'window med':>10} {'p95':>7} {'view med':>9} {'p95':>7} "
        f"{'full frame':>10} {'re-render':>11} {'n':>3} {'speed-up':>9}"
    )
    for s in report.sizes:
        bound = ">=" if s.rerender.timed_out else "  "
        yield (
            f"  {s.nodes:>6} {s.backward_steps:>6} {median(s.window.ms):>10.2f} {p95(s.window.ms):>7.2f} "
            f"{median(s.view.ms):>9.2f} {p95(s.view.ms):>7.2f} {median(s.window.full_frame_ms):>10.1f} "
            f"{bound}{s.rerender.median_ms:>9.0f} {len(s.rerender.times_ms):>3} "
            f"{bound}{ratio(s.rerender.median_ms, median(s.window.ms)):>7.0f}x"
        )
    for s in report.sizes:
        painted = s.window.painted / max(len(s.window.ms), 1)
        sampled = "a sample of steps" if s.rerender_sampled else "every step"
        yield f"  {s.nodes:>6}: graph painted on {painted:.0%} of window steps; re-render timed on {sampled}"
    yield ""
    yield "2. Recording cost (s, medians) and one-off costs of a new recording"
    yield (
        f"  {'nodes':>6} {'record':>8} {'plain':>8} {'native':>8} {'rec/plain':>9} {'rec/native':>10} "
        f"{'1 thread':>8} {'layout':>8} {'set_model':>9}"
    )
    for s in report.sizes:
        r = s.record
        yield (
            f"  {s.nodes:>6} {median(r.record_s):>8.3f} {median(r.evaluated_s):>8.3f} "
            f"{median(r.native_s):>8.3f} {r.vs_plain:>8.1f}x {r.vs_native:>9.1f}x "
            f"{r.vs_plain_1t:>7.1f}x {s.layout_s:>8.2f} {s.set_model_s:>9.2f}"
        )
    yield "  (rec/plain: median of each round's ratio; 1 thread: the same with torch.set_num_threads(1))"
    yield ""
    yield "5. Memory kept per recorded step"
    yield (
        f"  {'nodes':>6} {'B/step':>8} {'max B':>8} {'changes':>8} {'B/change':>9} "
        f"{'heap':>10} {'replayed':>10}"
    )
    for s in report.sizes:
        b, h = s.step_bytes, s.heap
        heap = f"{h.recording / 1e6:>8.1f}MB {h.after_replay / 1e6:>8.1f}MB" if h else f"{'skipped':>21}"
        yield (
            f"  {s.nodes:>6} {b.mean:>8.0f} {b.max:>8} {b.changes_mean:>8.2f} "
            f"{b.bytes_per_change:>9.0f} {heap}"
        )
    rss = report.rss
    yield (
        f"  peak RSS ({rss.get('nodes', 0):.0f} nodes, fresh process): {rss.get('peak_mb', math.nan):.0f} MB "
        f"(after imports and a 10-node warm-up {rss.get('baseline_mb', math.nan):.0f} MB, after record "
        f"{rss.get('after_record_mb', math.nan):.0f} MB)"
    )
    yield ""
    startup, imports = median(report.startup_s), median(report.torch_import_s)
    yield "3. Start-up (s, medians of interleaved runs)"
    yield (
        f"  first painted graph {startup:.2f}   import torch {imports:.2f}   "
        f"ratio {ratio(startup, imports):.2f}x"
    )
    yield f"  runs: window {_fmt(report.startup_s)}  torch {_fmt(report.torch_import_s)}"
    yield ""
    hb = report.heartbeat
    if hb is not None:
        yield "4. Responsiveness (10 ms heartbeat on the GUI thread)"
        yield f"  largest gap {hb.max_gap_ms:.1f} ms during {hb.phase}"
        yield f"  load took {hb.load_s:.1f} s via the {hb.path}"
        pauses = ", ".join(f"{ms:.0f} ms (gen {gen}, {where})" for ms, gen, where in hb.gc_pauses)
        yield f"  slowest garbage-collector passes meanwhile: {pauses or 'none'}"
        gaps = "; ".join(f"{ms:.0f} ms ({during})" for ms, during in hb.top_gaps)
        yield f"  largest gaps: {gaps}"
        if hb.note:
            yield f"  note: {hb.note}"
        yield ""
    yield from _own_code_lines(report)
    yield ""
    yield from _target_lines(report)


def _own_code_lines(report: Report) -> Iterator[str]:
    yield "6. Your own code (`python -m app run`)"
    if report.real_model is not None:
        real = report.real_model
        yield (
            f"  TransformerEncoderLayer step ({real.nodes} nodes): record {median(real.record_s):.3f} s, "
            f"plain {median(real.plain_s):.3f} s, ratio {median_of_ratios(real.record_s, real.plain_s):.2f}x"
        )
    lens = report.lens_open
    yield (
        f"  .lens of {LENS_OPEN_NODES} nodes: first painted graph (its preview) "
        f"{median(lens.first_s):.2f} s, graph drawn and steps ready {median(lens.ready_s):.2f} s; "
        f"import torch beside them "
        f"{median(lens.torch_import_s):.2f} s"
    )
    if report.stack:
        yield f"  transformer stack: {json.dumps(report.stack)}"


def _fmt(values: Sequence[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def _target_lines(report: Report) -> Iterator[str]:
    yield "Targets"
    at = next((s for s in report.sizes if 900 <= s.nodes <= 1100), None)
    if at is not None:
        yield _verdict(
            f"step p95 at {at.nodes} nodes < 16 ms", p95(at.window.ms), TARGETS["step_p95_ms"], "<"
        )
        speed = ratio(at.rerender.median_ms, median(at.window.ms))
        yield _verdict(f"step >= 10x faster than re-render at {at.nodes}", speed, 10.0, ">=")
        yield _verdict(f"record <= 3x plain at {at.nodes}", at.record.vs_plain, 3.0, "<=")
    startup = ratio(median(report.startup_s), median(report.torch_import_s))
    yield _verdict("start-up <= 1.5x import torch", startup, 1.5, "<=")
    if report.real_model is not None:
        real = median_of_ratios(report.real_model.record_s, report.real_model.plain_s)
        yield _verdict(
            "transformer step recorded <= 1.5x plain", real, TARGETS["real_model_record_vs_plain"], "<="
        )
    lens = report.lens_open
    lens_open = ratio(median(lens.first_s), median(lens.torch_import_s or report.torch_import_s))
    yield _verdict(".lens open <= 0.5x import torch", lens_open, TARGETS["lens_open_vs_torch"], "<=")
    program = report.program
    if program is not None and program.window is not None and program.window.ms:
        label = f"{program.iterations}-iteration program: step p95 < 16 ms"
        yield _verdict(label, p95(program.window.ms), TARGETS["step_p95_ms"], "<")
    if program is not None and program.heartbeat is not None:
        label = f"{program.iterations}-iteration program: heartbeat gap while it loads < 50 ms"
        yield _verdict(label, program.heartbeat.max_gap_ms, TARGETS["max_heartbeat_gap_ms"], "<")
    if report.stack:
        yield _verdict("20,000-node stack peak RSS < 2 GB", report.stack["peak_rss_mb"], 2048.0, "<")
        for key, label, target in (
            ("step_p95_ms", "20,000-node stack: step p95 < 16 ms", TARGETS["step_p95_ms"]),
            (
                "max_heartbeat_gap_ms",
                "20,000-node stack: heartbeat gap < 50 ms",
                TARGETS["max_heartbeat_gap_ms"],
            ),
        ):
            if key in report.stack:
                yield _verdict(label, report.stack[key], target, "<")
    if report.heartbeat is not None:
        yield _verdict("heartbeat gap < 50 ms", report.heartbeat.max_gap_ms, 50.0, "<")


def _verdict(label: str, value: float, target: float, op: str) -> str:
    if math.isnan(value):
        return f"  [ -- ] {label}: not measured"
    ok = {"<": value < target, "<=": value <= target, ">=": value >= target}[op]
    return f"  [{'met ' if ok else 'MISS'}] {label}: {value:.2f}"


# -- command line ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the JSON object only")
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="node counts, e.g. 10,100")
    parser.add_argument("--quick", action="store_true", help="one round of everything (a smoke run)")
    parser.add_argument("--rerender-timeout", type=float, default=120.0, help="cap on one dot run, s")
    parser.add_argument("--child-rss", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-heartbeat", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-heartbeat-program", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-stack", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-real-model", type=int, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child_rss:
        child_rss(args.child_rss)
        return 0
    if args.child_heartbeat:
        heartbeat_child(args.child_heartbeat)
        return 0
    if args.child_stack:
        stack_child(args.child_stack)
        return 0
    if args.child_real_model:
        real_model_child(args.child_real_model)
        return 0
    if args.child_heartbeat_program:
        heartbeat_child(args.child_heartbeat_program, program=True)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    report = run(sizes, Options(quick=args.quick, rerender_timeout_s=args.rerender_timeout, log=log))
    if args.json:
        from benchmarks.fixes import measure as fixes_measure

        print(json.dumps({**report.json(), "fixes": fixes_measure(rounds=1 if args.quick else 3)}))
    else:
        print(table(report))
        print()
        print(json.dumps(report.json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
