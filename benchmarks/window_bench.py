"""Step time of the real window on one recording: p50/p95 ms per step and the largest GUI gap.

    python benchmarks/window_bench.py [--iterations 200] [--steps 500] [--json]

``measure_steps_in_window(recording, steps=500)`` opens the main window (offscreen, 1600x1000, the
graph fitted), steps through ``steps`` steps the way a key press does (``session.go_to``) and waits
for the events each step posted, the graph view's paint included. A 10 ms heartbeat timer runs
meanwhile: its largest gap is the longest time the GUI thread was busy at once. The steps are the
recording's last ``steps`` (every node of the graph is built by then, so each step restyles and
paints the whole graph's neighbourhood), after a warm-up pass over the ones before them.
No test asserts these numbers; ``bench.py`` may report them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core import Recording, record  # noqa: E402
from benchmarks.common import BIG_LIMITS, median, p95  # noqa: E402  (sets QT_QPA_PLATFORM before Qt starts)
from benchmarks.heartbeat import GcPauses, Heartbeat  # noqa: E402
from benchmarks.programs import training_program  # noqa: E402
from benchmarks.steps import Window, application, flush_events, layout_of, timed_steps  # noqa: E402

WARM_UP_STEPS = 100


def measure_steps_in_window(recording: Recording, steps: int = 500, layout: Any = None) -> dict[str, Any]:
    """Step the last ``steps`` steps of ``recording`` in the real window; p50/p95 ms and the largest
    gap, with the step running when it ended (``max_gap_step``), that step's kind, what ran during
    the gap and the garbage collection inside it.

    ``layout``: the recording's layout when already made (else Graphviz runs here, untimed).
    """
    application()
    layout = layout if layout is not None else layout_of(recording)
    window = Window.open(recording, layout)
    total = len(recording.timeline)
    measured = list(range(max(0, total - steps), total))
    warm = list(range(max(0, measured[0] - WARM_UP_STEPS), measured[0])) if measured else []
    view = window.window.graph_view
    try:
        window.step_through(warm or measured[:1])
        beat = Heartbeat()
        cpu_ms: list[float] = []
        go = window.window.session.go_to
        labels: dict[str, int] = {}

        def timed_go(index: int) -> None:  # the GUI thread's own CPU time: robust on a busy machine
            label = f"step {index} ({step_kind(recording, index)})"
            labels[label] = index
            beat.phase = label  # the heartbeat names what ran in each gap
            start = time.thread_time()
            go(index)
            flush_events()
            cpu_ms.append((time.thread_time() - start) * 1000)

        def mark(phase: str) -> None:
            beat.phase = phase

        with GcPauses() as collections:
            beat.start()
            times = timed_steps(view, measured, timed_go, max(1, len(measured) // 20), mark)
            gap, during = beat.stop()
        start, end = beat.largest_span()
    finally:
        window.close()
    # the step running when the late tick came (a full frame of the benchmark's own comes between steps)
    at = next((labels[p] for p in reversed(during.split(" -> ")) if p in labels), -1)
    return {
        "steps": len(measured),
        "nodes": len(recording.graph),
        "step_p50_ms": round(median(times.ms), 3),
        "step_p95_ms": round(p95(times.ms), 3),
        "step_max_ms": round(max(times.ms), 3),
        "step_cpu_p50_ms": round(median(cpu_ms), 3),
        "step_cpu_p95_ms": round(p95(cpu_ms), 3),
        "full_frame_ms": round(median(times.full_frame_ms), 3) if times.full_frame_ms else float("nan"),
        "painted_share": round(times.painted / max(1, len(measured)), 3),
        "max_heartbeat_gap_ms": round(gap, 1),
        "max_gap_step": at,
        "max_gap_kind": step_kind(recording, at) if at >= 0 else "none",
        "max_gap_during": during,
        "max_gap_gc_ms": round(collections.ms_within(start, end), 1),
    }


def step_kind(recording: Recording, index: int) -> str:
    """A step's kind as the window sees it: ``call_start`` for the first step of a call, else the
    recorded kind (``forward``, ``node``, ``call_end``, ``error``)."""
    steps = recording.timeline.steps
    step = steps[index]
    if step.call is not None and (index == 0 or steps[index - 1].call != step.call):
        return "call_start"
    return step.kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200, help="training-loop iterations")
    parser.add_argument("--steps", type=int, default=500, help="steps measured")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    recording = record(training_program(args.iterations), limits=BIG_LIMITS)
    start = time.perf_counter()
    layout = layout_of(recording)
    result: dict[str, Any] = {"layout_s": round(time.perf_counter() - start, 2)}
    result |= measure_steps_in_window(recording, args.steps, layout)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")


if __name__ == "__main__":
    main()
