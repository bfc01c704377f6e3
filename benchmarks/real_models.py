"""Real models recorded as scripts: a TransformerEncoderLayer step and a 20,000-node stack."""

from __future__ import annotations

import gc
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from benchmarks.common import child_json, median_of_ratios, timed
from benchmarks.memory import rss_mb
from benchmarks.recording_cost import one_intra_op_thread
from benchmarks.steps import application

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
    from app.core.recorder.script import record_script

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
    row = child_json("--child-real-model", rounds)
    return RealModelResult(int(row["nodes"]), list(row["record_s"]), list(row["plain_s"]))


def stack_child(nodes: int) -> None:
    """(child process) Record the transformer stack through the script path; peak RSS, and the
    window's stepping when ``benchmarks/window_bench.py`` is there."""
    from app.core.recorder.script import record_script

    application()
    baseline = rss_mb()
    path = script_file(STACK_SCRIPT, "transformer_stack.py", LAYERS=max(1, nodes // STACK_NODES_PER_LAYER))
    start = time.perf_counter()
    recording = record_script(path).recording
    row: dict[str, Any] = {
        "nodes": len(recording.graph),
        "steps": len(recording.timeline),
        "record_s": round(time.perf_counter() - start, 2),
        "baseline_mb": round(baseline, 1),
        "after_record_mb": round(rss_mb(), 1),
    }
    try:
        from benchmarks.window_bench import measure_steps_in_window
    except ImportError:  # the window's stepping benchmark is optional
        measure_steps_in_window = None
    if measure_steps_in_window is not None:
        window = measure_steps_in_window(recording, steps=300)
        row |= {key: window[key] for key in ("step_p95_ms", "max_heartbeat_gap_ms", *MAX_GAP_KEYS)}
    row["peak_rss_mb"] = round(rss_mb(), 1)
    print(json.dumps(row))
