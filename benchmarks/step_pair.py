"""Steps in the real window, two source trees side by side, alternating processes.

    python benchmarks/step_pair.py --tree A --tree B [--workload chain|program] [--steps 1500]
        [--rounds 3] [--profile N]

Each tree runs in a process of its own (its ``.venv/bin/python`` when it has one, else this
one, with the tree first on ``sys.path``), in turn, A B then B A, for ``--rounds`` rounds. Each
process opens the main window offscreen (1600x1000) on the same saved ``.lens`` file (recorded and
laid out once by this tree, cached in the temp folder: the 5,000-node chain takes a minute to
record), and steps as a key press does (``session.go_to``) until the graph view has painted.

``chain``: the 5,000-node chain, its first ``--steps`` backward steps. ``program``: the
200-iteration training program, its last ``--steps`` steps after 100 warm-up steps (as
``window_bench.py``). A step "moves" when the graph view's zoom or scroll changed.

Printed per tree: the median over rounds of each round's median and p95 (wall and the GUI thread's
CPU), the same for the steps that moved the view, and the ratio B/A of each round's figures.
``--profile N``: one more process of tree A only, stepping once, then again from the start under
cProfile for the steps that moved, the top ``N`` functions by cumulative time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORKLOADS = ("chain", "program")


def _lens(workload: str) -> Path:
    """The workload's ``.lens`` file with its layout, made once (by this tree) and then reused."""
    path = Path(tempfile.gettempdir()) / f"step-pair-{workload}.lens"
    if path.exists():
        return path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from app.core import record
    from app.render.layout_store import save_with_layout
    from benchmarks.common import BIG_LIMITS
    from benchmarks.programs import chain_program, training_program

    program = chain_program(5000) if workload == "chain" else training_program(200)
    recording = record(program, limits=BIG_LIMITS)
    partial = path.with_suffix(".part")
    save_with_layout(recording, partial)
    partial.replace(path)
    return path


def _python(tree: Path) -> str:
    own = tree / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def _run_child(tree: Path, lens: Path, workload: str, steps: int, profile: int = 0) -> dict[str, Any]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(tree))
    args = [_python(tree), __file__, "--child", str(lens), "--workload", workload, "--steps", str(steps)]
    if profile:
        args += ["--profile", str(profile)]
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: exit {done.returncode}\n{done.stderr[-4000:]}")
    if profile:
        print(done.stderr)
        return {}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# -- the child: one tree's window --------------------------------------------------------------------


def _child(lens: Path, workload: str, count: int, profile: int) -> None:
    sys.path.insert(0, os.getcwd())
    from app.core.lensfile.files import open_lens
    from app.render.layout_store import layout_from_json
    from benchmarks.steps import Window, application, backward_steps, flush_events

    application()
    recording, stored = open_lens(lens)
    layout = layout_from_json(stored, recording.graph)
    window = Window.open(recording, layout)
    if workload == "chain":
        warm: list[int] = []
        measured = backward_steps(recording)[:count]
    else:
        total = len(recording.timeline)
        measured = list(range(max(0, total - count), total))
        warm = list(range(max(0, measured[0] - 100), measured[0]))
    view, go = window.window.graph_view, window.window.session.go_to

    def where() -> tuple[float, float, int, int]:
        t = view.transform()
        return (t.m11(), t.m22(), view.horizontalScrollBar().value(), view.verticalScrollBar().value())

    for index in warm:
        go(index)
        flush_events()
    wall: list[float] = []
    cpu: list[float] = []
    moved: list[bool] = []
    for index in measured:
        before = where()
        start, start_cpu = time.perf_counter(), time.thread_time()
        go(index)
        flush_events()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        moved.append(where() != before)
    if profile:
        _profile_moved(go, warm, measured, moved, profile)
    window.close()
    print(json.dumps({"wall": wall, "cpu": cpu, "moved": moved}))


def _profile_moved(go: Any, warm: list[int], measured: list[int], moved: list[bool], top: int) -> None:
    """Step again from the start, with cProfile on during the steps that moved the view."""
    import cProfile
    import pstats

    from benchmarks.steps import flush_events

    go(warm[0] if warm else 0)
    flush_events()
    for index in warm:
        go(index)
        flush_events()
    profiler = cProfile.Profile()
    for index, was_moved in zip(measured, moved, strict=True):
        if was_moved:
            profiler.enable()
        go(index)
        flush_events()
        if was_moved:
            profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stderr)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


# -- the parent: alternating rounds ------------------------------------------------------------------


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else float("nan")


def _figures(run: dict[str, Any]) -> dict[str, float]:
    wall, cpu, moved = run["wall"], run["cpu"], run["moved"]
    moving = [w for w, m in zip(wall, moved, strict=True) if m]
    still = [w for w, m in zip(wall, moved, strict=True) if not m]
    return {
        "median": statistics.median(wall),
        "p95": _p95(wall),
        "cpu_median": statistics.median(cpu),
        "cpu_p95": _p95(cpu),
        "moved_share": len(moving) / max(1, len(wall)),
        "moved_median": statistics.median(moving) if moving else float("nan"),
        "still_median": statistics.median(still) if still else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, default=[], help="a source tree (twice)")
    parser.add_argument("--workload", choices=WORKLOADS, default="chain")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="profile the first tree's moving steps")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.workload, args.steps, args.profile)
        return
    lens = _lens(args.workload)
    trees = [t.resolve() for t in args.tree]
    if args.profile:
        _run_child(trees[0], lens, args.workload, args.steps, args.profile)
        return
    if len(trees) != 2:
        parser.error("give --tree twice")
    rows: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    for r in range(args.rounds):
        for tree in trees if r % 2 == 0 else trees[::-1]:
            rows[tree].append(_figures(_run_child(tree, lens, args.workload, args.steps)))
            print(f"round {r + 1} {tree}: " + json.dumps({k: round(v, 2) for k, v in rows[tree][-1].items()}))
    a, b = rows[trees[0]], rows[trees[1]]
    print(f"\n{args.workload}, {args.steps} steps, {args.rounds} rounds; median over rounds:")
    print(f"{'figure':>14} {'A':>9} {'B':>9} {'B/A':>6}")
    for key in a[0]:
        ratios = [y[key] / x[key] for x, y in zip(a, b, strict=True) if x[key]]
        mid_a, mid_b = statistics.median(x[key] for x in a), statistics.median(y[key] for y in b)
        mid_ratio = statistics.median(ratios) if ratios else float("nan")
        print(f"{key:>14} {mid_a:9.2f} {mid_b:9.2f} {mid_ratio:6.3f}")
    print(f"A = {trees[0]}\nB = {trees[1]}")


if __name__ == "__main__":
    main()
