"""Recording in a child process, measured side by side with recording in the window's own process.

    python benchmarks/child.py [--json] [--runs N] [--nodes N]

1. Re-record after a toggle (the warm child): the window's whole path, record +
   layout + shown states, with the recording made in the child vs in this
   process, alternating, same program. Target: at most 1.2x.
2. GUI heartbeat (a 10 ms timer) while a fresh window records and loads the
   ``--nodes`` chain through the child: the largest gap. Target: under 33 ms.
3. Start-up to the first painted graph vs ``import torch``, both in fresh
   processes. Target: at most 1.2x.

Timings are medians of interleaved runs; the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.child.client import ChildLimits, ChildPool, record_in_child  # noqa: E402

TARGETS = {"rerecord_child_vs_in_process": 1.2, "max_heartbeat_gap_ms": 33.0, "startup_vs_torch": 1.2}


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def measure_rerecord(runs: int) -> dict[str, Any]:
    """The window's re-record path (worker: record, layout, shown states) in the child vs here."""
    from app.core.lesson.edits import set_call_keyword
    from app.core.loading import load_program
    from app.core.recorder.recorder import record
    from app.ui.runtime.worker import layout_recording, prepare_shown

    program = load_program("rnn-no-detach")
    first_call = record(program).calls[0].call
    toggled = [program, program.with_code(set_call_keyword(program.code, first_call, "retain_graph", "True"))]
    pool = ChildPool()
    record_in_child(program, pool=pool)  # the warm child, as after the window's first recording

    def whole(recording_of: Callable[[Any], Any], source: Any) -> float:
        start = time.perf_counter()
        recording = recording_of(source)
        prepare_shown(recording)
        layout_recording(recording)
        return time.perf_counter() - start

    here: list[float] = []
    child: list[float] = []
    for i in range(runs):
        source = toggled[i % 2]
        here.append(whole(record, source))
        child.append(whole(lambda p: record_in_child(p, pool=pool), source))
    pool.close()
    ratios = [c / h for c, h in zip(child, here, strict=True)]
    return {
        "program": "rnn-no-detach",
        "in_process_ms": _median_ms(here),
        "child_ms": _median_ms(child),
        "ratio": round(statistics.median(ratios), 3),
    }


def heartbeat_child(nodes: int) -> None:
    """(fresh process) The window loads the ``nodes`` chain through the warm child; print JSON."""
    from benchmarks import heartbeat, steps
    from benchmarks.common import BIG_LIMITS
    from benchmarks.programs import chain_program

    pool = ChildPool()

    def lift(beat: Any) -> str:
        import app.ui.runtime.worker as worker_module

        def record_program(source: Any, device: str) -> Any:
            recording = record_in_child(source, device, pool=pool, recorder_limits=BIG_LIMITS)
            beat.phase = "read back + layout (worker)"
            return recording

        def layout_recording(recording: Any) -> Any:
            layout = steps.layout_of(recording)
            beat.phase = "apply (GUI thread)"
            return layout

        worker_module.record_program = record_program
        worker_module.layout_recording = layout_recording
        return "recorded in the warm child under the benchmark's limits"

    heartbeat._lift_worker_limits = lift
    steps.application()
    record_in_child("two-losses", pool=pool)  # warm, as a window that already showed the seed
    result = heartbeat.measure_heartbeat(chain_program(nodes), lambda text: print(text, file=sys.stderr))
    pool.close()
    print(json.dumps(dataclasses.asdict(result)))


def measure_heartbeat(nodes: int) -> dict[str, Any]:
    import subprocess

    done = subprocess.run(
        [sys.executable, __file__, "--child-heartbeat", str(nodes)],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
        cwd=ROOT,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        raise RuntimeError(f"heartbeat run failed: {done.stderr[-2000:]}")
    data = json.loads(lines[-1])
    return {
        "nodes": nodes,
        "max_gap_ms": round(data["max_gap_ms"], 1),
        "phase": data["phase"],
        "load_s": round(data["load_s"], 2),
        "top_gaps": data["top_gaps"],
    }


def measure_startup(runs: int) -> dict[str, Any]:
    from benchmarks.startup import measure_startup as startup_runs

    startup, imports = startup_runs(runs)
    return {
        "startup_s": round(statistics.median(startup), 3),
        "torch_import_s": round(statistics.median(imports), 3),
        "ratio": round(statistics.median(startup) / statistics.median(imports), 3),
    }


def main(argv: list[str] | None = None) -> int:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--child-heartbeat", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    if args.child_heartbeat:
        heartbeat_child(args.child_heartbeat)
        return 0
    report = {
        "rerecord": measure_rerecord(args.runs),
        "heartbeat": measure_heartbeat(args.nodes),
        "startup": measure_startup(max(3, args.runs // 3)),
        "limits": dataclasses.asdict(ChildLimits()),
        "targets": TARGETS,
    }
    if args.json:
        print(json.dumps(report))
    else:
        r, h, s = report["rerecord"], report["heartbeat"], report["startup"]
        print(f"re-record (record + layout + shown): here {r['in_process_ms']} ms, child {r['child_ms']} ms")
        print(f"  child / here: {r['ratio']}x  (target <= {TARGETS['rerecord_child_vs_in_process']}x)")
        print(f"heartbeat loading {h['nodes']} nodes: {h['max_gap_ms']} ms during {h['phase']}")
        print(f"  load {h['load_s']} s")
        print(f"  (target < {TARGETS['max_heartbeat_gap_ms']} ms); largest gaps: {h['top_gaps']}")
        print(f"start-up to first graph {s['startup_s']} s, import torch {s['torch_import_s']} s")
        print(f"  ratio {s['ratio']}x")
        print(f"  (target <= {TARGETS['startup_vs_torch']}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
