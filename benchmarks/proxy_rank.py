"""Graphviz's time for a deep chain with its long edges drawn from proxy boxes, by where a proxy sits.

    python benchmarks/proxy_rank.py [--nodes N] [--runs N] [--timeout S] [--json]

The same graph, the same DOT text, laid out by ``dot -Tjson0`` two ways, alternating:
each proxy on its user's rank (``{rank=same; user; proxy}``, what ``dot_source`` writes), and each
proxy on a rank of its own above its user (the same text without those lines, as before). A run
that passes ``--timeout`` counts as the timeout (the ratio is then a lower bound). See
``app/render/dot_source.py``'s NOTE [large graphs].
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.programs import chain_program  # noqa: E402

PROXY_RANK = re.compile(r'^\s*\{rank=same; "[^"]+"; "[^"@]+@[^"]+"\}\n', re.MULTILINE)


def sources(nodes: int) -> tuple[str, str, int]:
    """(DOT as written, DOT with proxies on ranks of their own, how many proxies)."""
    from app.core import Limits, record
    from app.render.dot_source import dot_source, long_edges

    graph = record(chain_program(nodes), limits=Limits(time_limit_s=3600.0)).graph
    text = dot_source(graph)
    above, count = PROXY_RANK.subn("", text)
    if count != len(long_edges(graph)):
        raise RuntimeError(f"found {count} proxy rank lines for {len(long_edges(graph))} long edges")
    return text, above, count


def time_dot(text: str, timeout_s: float) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.dot"
        path.write_text(text, encoding="utf-8")
        dot = shutil.which("dot") or "dot"
        start = time.perf_counter()
        try:
            subprocess.run(
                [dot, "-Tjson0", "-o", str(path.with_suffix(".json")), str(path)],
                timeout=timeout_s,
                check=True,
            )
        except subprocess.TimeoutExpired:
            return timeout_s
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    beside, above, proxies = sources(args.nodes)
    times: dict[str, list[float]] = {"beside": [], "above": []}
    for _ in range(args.runs):
        times["beside"].append(time_dot(beside, args.timeout))
        times["above"].append(time_dot(above, args.timeout))
    medians = {key: statistics.median(values) for key, values in times.items()}
    report = {
        "nodes": args.nodes,
        "proxies": proxies,
        "beside_s": round(medians["beside"], 2),
        "above_s": round(medians["above"], 2),
        "above_timed_out": any(t >= args.timeout for t in times["above"]),
        "above_vs_beside": round(medians["above"] / medians["beside"], 1),
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"{args.nodes} nodes, {proxies} proxies: dot {report['beside_s']} s with proxies beside their "
            f"user, {report['above_s']} s on ranks of their own ({report['above_vs_beside']}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
