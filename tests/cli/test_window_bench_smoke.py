"""Smoke test of ``benchmarks/window_bench.py``: it steps a small program in the window and reports
every number it documents, finite and positive. No timing is asserted."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_measure_steps_in_window_reports_every_number(qtbot):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    window_bench = importlib.import_module("benchmarks.window_bench")
    from app.core import record
    from benchmarks.programs import training_program

    recording = record(training_program(3))
    out = window_bench.measure_steps_in_window(recording, steps=20)
    assert out["steps"] == 20 and out["nodes"] == len(recording.graph)
    for key in ("step_p50_ms", "step_p95_ms", "step_cpu_p50_ms", "step_cpu_p95_ms", "max_heartbeat_gap_ms"):
        assert math.isfinite(out[key]) and out[key] > 0, key
    assert out["step_p50_ms"] <= out["step_p95_ms"] <= out["step_max_ms"]
