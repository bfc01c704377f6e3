"""Autograd Lens benchmark: step latency, recording cost, start-up, responsiveness, memory.

    python benchmarks/bench.py [--json] [--sizes 10,100,1000,5000] [--quick | --smoke]

Everything is measured side by side in one run, alternatives interleaved and repeated, and reported
as medians (the machine is shared and noisy). See ``benchmarks/README.md`` for what each number
means and the targets it is held to. No number here is ever asserted by a test.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core import record  # noqa: E402
from benchmarks.common import (  # noqa: E402
    DEFAULT_SIZES,
    HEARTBEAT_NODES,
    PROGRAM_ITERATIONS,
    SMOKE_ITERATIONS,
    attempt,
    child_json,
    machine_info,
)
from benchmarks.heartbeat import heartbeat_child, heartbeat_in_child  # noqa: E402
from benchmarks.language import measure_language  # noqa: E402
from benchmarks.lens_open import LENS_OPEN_NODES, LensOpen, measure_lens_open  # noqa: E402
from benchmarks.memory import child_rss, peak_rss_child  # noqa: E402
from benchmarks.program import measure_program, measure_program_in_window  # noqa: E402
from benchmarks.programs import chain_program  # noqa: E402
from benchmarks.real_models import STACK_NODES, real_model_child, real_model_in_child, stack_child  # noqa: E402
from benchmarks.report import Report, table  # noqa: E402
from benchmarks.sizes import Options, measure_size  # noqa: E402
from benchmarks.startup import measure_startup  # noqa: E402
from benchmarks.steps import application  # noqa: E402


def run(sizes: Sequence[int], opts: Options) -> Report:
    application()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))  # torchviz recurses once per node
    machine = machine_info()
    record(chain_program(10))  # warm imports and torch's first-call paths
    # As the window's worker does after its imports (NOTE [gc freeze] in app/ui/runtime/worker.py): full
    # collections then skip torch's import-time objects instead of walking them mid-recording.
    gc.collect()
    gc.freeze()
    results = [measure_size(n, opts) for n in sizes]
    # --smoke: one round of each part, at its smallest size (the largest of --sizes, a short loop)
    runs = 1 if opts.smoke else 2 if opts.quick else 5
    opts.log(f"start-up: {runs} interleaved runs of the window and of `import torch`")
    startup, imports = attempt(lambda: measure_startup(runs, warm_up=not opts.smoke), ([], []), opts.log)
    big = max(sizes)
    opts.log(f"heartbeat: loading {min(HEARTBEAT_NODES, big)} nodes in a fresh window process")
    heartbeat = attempt(lambda: heartbeat_in_child(min(HEARTBEAT_NODES, big)), None, opts.log)
    opts.log(f"peak RSS: child process with {big} nodes")
    rss = attempt(lambda: peak_rss_child(big), {}, opts.log)
    rss["nodes"] = big
    iterations = SMOKE_ITERATIONS if opts.smoke else PROGRAM_ITERATIONS
    opts.log(f"program: a {iterations}-iteration training loop, recorded and run plainly")
    program = attempt(lambda: measure_program(iterations, runs if opts.quick else 7), None, opts.log)
    if program is not None:
        opts.log("program: every step in the window")
        program = attempt(lambda: measure_program_in_window(program, opts), program, opts.log)
    opts.log("real model: a TransformerEncoderLayer step, `run` vs the plain script, in a child process")
    real = attempt(lambda: real_model_in_child(1 if opts.smoke else 3 if opts.quick else 15), None, opts.log)
    lens_nodes = big if opts.smoke else LENS_OPEN_NODES
    opts.log(f"lens open: the window on a {lens_nodes}-node .lens file, fresh processes")
    lens_open = attempt(
        lambda: measure_lens_open(1 if opts.quick else 5, opts.log, lens_nodes, time_torch=not opts.smoke),
        LensOpen(),
        opts.log,
    )
    stack = None
    if not opts.quick:
        opts.log(f"stack: {STACK_NODES} nodes of transformer layers through `run`, in a child process")
        stack = attempt(lambda: child_json("--child-stack", STACK_NODES), None, opts.log)
    from benchmarks.web import measure_web

    web_sizes = (big, iterations) if opts.smoke else (big, 20) if opts.quick else (5000, PROGRAM_ITERATIONS)
    web = attempt(lambda: measure_web(opts.log, *web_sizes), None, opts.log)
    opts.log("language: a Net(nn.Module) training loop as plain Python, the evaluator, and recorded")
    language = attempt(lambda: measure_language(runs if opts.quick else 7), None, opts.log)
    return Report(
        machine, results, startup, imports, heartbeat, rss, program, real, lens_open, stack, web, language
    )


# -- command line ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the JSON object only")
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="node counts, e.g. 10,100")
    parser.add_argument("--quick", action="store_true", help="one round of everything (a smoke run)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="each part once at its smallest size (the tests' run; implies --quick)",
    )
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

    quick = args.quick or args.smoke
    opts = Options(quick=quick, rerender_timeout_s=args.rerender_timeout, log=log, smoke=args.smoke)
    report = run(sizes, opts)
    if args.json:
        from benchmarks.fixes import measure as fixes_measure

        fixes = fixes_measure(rounds=1, builtin_rounds=1) if args.smoke else fixes_measure(1 if quick else 3)
        print(json.dumps({**report.json(), "fixes": fixes}))
    else:
        print(table(report))
        print()
        print(json.dumps(report.json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
