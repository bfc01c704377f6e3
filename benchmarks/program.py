"""The 200-iteration training-loop program: recorded against run plainly, then stepped in the window."""

from __future__ import annotations

import dataclasses
import gc
import math
from dataclasses import dataclass
from typing import Any

from app.core import Recording, record
from benchmarks.common import BIG_LIMITS, attempt, median_of_ratios, p95, timed
from benchmarks.heartbeat import Responsiveness, heartbeat_in_child
from benchmarks.memory import StepBytes, bytes_per_step
from benchmarks.programs import (
    training_program,
)
from benchmarks.recording_cost import one_intra_op_thread, run_plainly
from benchmarks.sizes import Options
from benchmarks.steps import StepTimes, Window, layout_of


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
