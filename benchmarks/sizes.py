"""One graph size measured end to end, the alternatives interleaved."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core import Recording
from benchmarks.common import (
    HEAP_SKIP_S,
    RERENDER_BUDGET_S,
    RERENDER_FULL_UP_TO,
    RERENDER_SAMPLES,
    keep_none_alive,
    median,
    p95,
    ratio,
)
from benchmarks.memory import HeapDelta, StepBytes, bytes_per_step, heap_delta
from benchmarks.programs import (
    chain_losses,
    chain_program,
    chain_spec,
)
from benchmarks.recording_cost import RecordCost, measure_record_cost
from benchmarks.rerender import Rerender, SvgViewer, rerender_once, rerender_samples
from benchmarks.steps import (
    StepTimes,
    Window,
    backward_steps,
    layout_of,
    make_graph_view,
    settle,
    step_through_view,
)

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
    smoke: bool = False  # each part once at its smallest size: what the tests run (implies quick)


def measure_size(nodes: int, opts: Options) -> SizeResult:
    program = chain_program(nodes)
    big = nodes >= 1000
    repeats = 1 if opts.quick else (3 if nodes >= 5000 else 7)
    opts.log(f"[{nodes}] recording cost ({repeats} interleaved rounds)")
    cost, recording = measure_record_cost(nodes, program, repeats, budget_s=120 if big else 30)
    keep_none_alive()
    opts.log(f"[{nodes}] {len(recording.graph)} nodes, {len(recording.timeline)} steps; layout")
    start = time.perf_counter()
    layout = layout_of(recording)
    layout_s = time.perf_counter() - start
    steps = backward_steps(recording)
    window, view, rerender, sampled = _interleaved_steps(nodes, recording, layout, steps, opts)
    heap = None if (opts.quick and big) or median(cost.record_s) > HEAP_SKIP_S else heap_delta(program)
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
        settle()
    return window_times, view_times, rerender, sampled
