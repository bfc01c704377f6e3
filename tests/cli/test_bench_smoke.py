"""Smoke test of the benchmark at its smallest size (``--smoke``: each part once, at the smallest
size it takes): it runs, and its JSON has the documented shape.

No timing is asserted here (numbers live in benchmarks/README.md); only that every number the
benchmark reports exists, is finite and positive, and that its generated programs are the graphs
they claim to be (PyTorch's own graph is the oracle).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from app.core import Recording, record, trace
from tests.support.oracle import check_against_plain, check_against_probes

ROOT = Path(__file__).resolve().parents[2]
SMOKE_ITERATIONS = 4  # benchmarks/common.py: the training loop's iterations in a --smoke run
SIZE_KEYS = {
    "nodes": int,
    "step_median_ms": float,
    "step_p95_ms": float,
    "rerender_median_ms": float,
    "step_vs_rerender": float,
    "record_vs_plain": float,
    "bytes_per_step": int,
}
TOP_KEYS = {
    "sizes": list,
    "startup_s": float,
    "torch_import_s": float,
    "lens_open_s": float,
    "lens_ready_s": float,
    "max_heartbeat_gap_ms": float,
    "peak_rss_mb": float,
    "program": dict,
    "real_model": dict,
    "web": dict,  # the HTML player in Chromium (benchmarks/web.py); None where Chromium is missing
    "language": dict,
}
REAL_MODEL_KEYS = {"nodes": int, "record_vs_plain": float}
LANGUAGE_KEYS = {"plain_python_s": float, "evaluator_s": float, "record_s": float}
PROGRAM_KEYS = {
    "iterations": int,
    "steps": int,
    "record_vs_plain": float,
    "bytes_per_step": int,
    "step_p95_ms": float,
    "max_heartbeat_gap_ms": float,
}


@pytest.fixture(scope="module")
def programs() -> ModuleType:
    """``benchmarks/programs.py`` (benchmarks/ is a folder beside app/, not an installed package)."""
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module("benchmarks.programs")
    finally:
        sys.path.remove(str(ROOT))


@pytest.mark.parametrize("nodes", [10, 100])
def test_generated_program_records_the_graph_pytorch_builds(programs: ModuleType, nodes: int) -> None:
    spec = programs.chain_spec(nodes)
    recording = record(programs.chain_program(nodes))
    assert len(recording.graph) == spec.expected_nodes
    assert abs(len(recording.graph) - nodes) <= 2
    ours = Counter(n.name for n in recording.graph.nodes)
    theirs = Counter(n.name for n in trace(*programs.chain_losses(spec)).nodes)
    assert ours == theirs
    assert recording.failed is None


def test_chain_losses_share_a_trunk_that_needs_retention(programs: ModuleType) -> None:
    spec = programs.chain_spec(10)
    first, second = programs.chain_losses(spec)
    first.backward()  # no retention: the shared trunk's buffers are freed
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        second.backward()
    first, second = programs.chain_losses(spec)
    first.backward(retain_graph=True)
    second.backward()  # as the program and plain_chain do


def test_training_program_records_what_pytorch_does(programs: ModuleType) -> None:
    """The benchmark's training loop, a few iterations: PyTorch agrees, and each iteration lets go
    of the one before, so the alive nodes and saved bytes do not grow with the iterations."""
    recording = record(programs.training_program(4))
    check_against_plain(recording)
    check_against_probes(recording)
    assert len(recording.calls) == 4 and recording.failed is None
    ends = [recording.timeline[c.last_step] for c in recording.calls]
    assert len({(s.alive_nodes, s.saved_bytes) for s in ends}) == 1
    longer = record(programs.training_program(8))
    assert stored_changes(longer)[0] == stored_changes(recording)[0]  # a step: one iteration at most
    assert stored_changes(longer)[1] <= 2.2 * stored_changes(recording)[1]  # the whole: linear


def stored_changes(recording: Recording) -> tuple[int, int]:
    """The most changes one step stores, and all the steps together."""
    sizes = [len(s.slot_changes) + len(s.grad_changes) + len(s.added_nodes) for s in recording.timeline.steps]
    return max(sizes), sum(sizes)


@pytest.mark.slow
def test_smoke_benchmark_prints_its_json_object() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--json", "--smoke", "--sizes", "10"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) == {*TOP_KEYS, "fixes"}
    for key, kind in TOP_KEYS.items():
        assert isinstance(result[key], kind) or (key == "web" and result[key] is None), key
    assert len(result["sizes"]) == 1
    size = result["sizes"][0]
    assert set(size) == set(SIZE_KEYS)
    for key, kind in SIZE_KEYS.items():
        assert isinstance(size[key], kind), key
        assert math.isfinite(size[key]) and size[key] > 0, (key, size[key])
    # lens_open_s, lens_ready_s: a window that failed to open the .lens in time leaves them NaN
    fixes = result.pop("fixes")  # proving a fix next to recording the program again
    assert fixes["checked"] == 2 and 0 < fixes["check_vs_record"] < 10
    for key in TOP_KEYS.keys() - {
        "sizes",
        "program",
        "real_model",
        "web",
        "language",
        "lens_open_s",
        "lens_ready_s",
    }:
        assert math.isfinite(result[key]) and result[key] > 0, (key, result[key])
    program = result["program"]
    assert set(program) == set(PROGRAM_KEYS)
    for key, kind in PROGRAM_KEYS.items():
        assert isinstance(program[key], kind), key
        assert math.isfinite(program[key]) and program[key] > 0, (key, program[key])
    assert program["iterations"] == SMOKE_ITERATIONS and program["steps"] > program["iterations"]
    assert size["nodes"] == 11  # 3 per block + 2 leaves + 4 loss-side nodes (programs.py)
    real = result["real_model"]
    assert set(real) == set(REAL_MODEL_KEYS)
    for key, kind in REAL_MODEL_KEYS.items():
        assert isinstance(real[key], kind), key
        assert math.isfinite(real[key]) and real[key] > 0, (key, real[key])
    assert real["nodes"] > 100  # a TransformerEncoderLayer and its head, three training steps
    language = result["language"]  # one Net(nn.Module) loop: plain Python, the evaluator, recorded
    assert set(language) == set(LANGUAGE_KEYS)
    for key, kind in LANGUAGE_KEYS.items():
        assert isinstance(language[key], kind), key
        assert math.isfinite(language[key]) and language[key] > 0, (key, language[key])


def test_the_report_judges_the_program_and_the_stack_against_their_targets() -> None:
    """The Targets lines name every judged number, met or missed by its own value."""
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT))
    try:
        bench = importlib.import_module("benchmarks.report")
        steps = importlib.import_module("benchmarks.steps")
    finally:
        sys.path.remove(str(ROOT))
    program = SimpleNamespace(
        iterations=200,
        window=steps.StepTimes(ms=[10.0] * 99 + [30.0]),  # p95 10 ms
        heartbeat=SimpleNamespace(max_gap_ms=60.0),
    )
    report = SimpleNamespace(
        sizes=[],
        startup_s=[1.0],
        torch_import_s=[1.0],
        real_model=None,
        lens_open=bench.LensOpen([0.4], [0.9], [1.0]),
        program=program,
        stack={"peak_rss_mb": 600.0, "step_p95_ms": 20.0, "max_heartbeat_gap_ms": math.nan},
        heartbeat=None,
    )
    lines = [line.strip() for line in bench._target_lines(report)]
    assert "[met ] 200-iteration program: step p95 < 16 ms: 10.00" in lines
    assert "[MISS] 200-iteration program: heartbeat gap while it loads < 50 ms: 60.00" in lines
    assert "[MISS] 20,000-node stack: step p95 < 16 ms: 20.00" in lines
    assert "[ -- ] 20,000-node stack: heartbeat gap < 50 ms: not measured" in lines
    assert "[met ] .lens open <= 0.5x import torch: 0.40" in lines


def test_the_window_benchmark_names_the_step_of_its_largest_gap(qtbot) -> None:
    """``measure_steps_in_window`` says at which step and kind its largest heartbeat gap ended."""
    from app.core import load_builtin

    sys.path.insert(0, str(ROOT))
    try:
        window_bench = importlib.import_module("benchmarks.window_bench")
    finally:
        sys.path.remove(str(ROOT))
    rec = record(load_builtin("two-losses"))
    total = len(rec.timeline)
    kinds = [window_bench.step_kind(rec, i) for i in range(total)]
    starts = [
        s.index
        for s in rec.timeline.steps[1:]
        if s.call is not None and s.call != rec.timeline[s.index - 1].call
    ]
    assert [i for i, kind in enumerate(kinds) if kind == "call_start"] == starts and len(starts) == 2
    assert {"forward", "node", "call_end"} <= set(kinds)
    result = window_bench.measure_steps_in_window(rec, steps=12)
    step = result["max_gap_step"]
    assert total - 12 <= step < total
    assert result["max_gap_kind"] == kinds[step]
    assert f"step {step} ({kinds[step]})" in result["max_gap_during"]
    assert (
        math.isfinite(result["max_gap_gc_ms"])
        and 0 <= result["max_gap_gc_ms"] <= result["max_heartbeat_gap_ms"]
    )
