"""The one-file HTML player in a real headless Chromium: page size, first paint and step time.

    python benchmarks/web.py [--nodes 5000] [--iterations 200]

For the 5,000-node chain and the 200-iteration training loop, the page ``export --format html``
writes is opened from a file in the system's Chromium (driven by Playwright, no browser download)
and measured inside the page with ``performance.now()``:

- ``bytes_per_node``: the page's size over the recording's nodes;
- ``first_paint_ms``: from navigation start to the first frame after the page drew its graph
  (a ``setTimeout`` queued from the first ``requestAnimationFrame``: it runs once that frame is out);
- ``step_p95_ms``: steps as the Right key makes them (stretches of 50, spread over the recording
  and ending at each call's end): the page's ``go(i)`` and the style and layout it causes (forced
  with ``offsetHeight``), 95th percentile. Raster is left out: it runs on the compositor's own
  thread, after the step is on its way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core import Limits, Program, Recording, record  # noqa: E402
from app.render.web import write_player  # noqa: E402
from benchmarks.programs import chain_program, training_program  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WINDOWS = 20  # stretches of steps spread over the recording, each stepped through with Right
WINDOW_STEPS = 50
# Steps as the Right key makes them, in stretches: WINDOWS spread evenly, and one ending at each
# call's end (where nearly every box changes); the forced layout makes the step's style and layout
# count. On a machine at load 10, stepping all 13,328 steps of the chain took over ten minutes.
STEP_STRETCHES = """([starts, length]) => {
  const p = window.lensPlayer, times = [];
  for (const start of starts) {
    p.go(start); document.body.offsetHeight;
    for (let i = start + 1; i < Math.min(p.count, start + length + 1); i++) {
      const t = performance.now();
      p.go(i);
      document.body.offsetHeight;
      times.push(performance.now() - t);
    }
  }
  return times;
}"""


def stretch_starts(recording: Recording) -> list[int]:
    """Where each stretch of :data:`WINDOW_STEPS` steps begins."""
    last = len(recording.timeline) - 1
    even = [last * k // WINDOWS for k in range(WINDOWS)]
    ends = [max(0, c.last_step - WINDOW_STEPS // 2) for c in recording.calls[:WINDOWS]]
    return sorted(set(even + ends))


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure_page(recording: Recording, folder: Path) -> dict[str, Any]:
    """One recording's page: written, opened in Chromium, its first paint and every step timed."""
    from playwright.sync_api import sync_playwright

    path = write_player(recording, folder / f"{recording.program.name}.html")
    size = path.stat().st_size
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(path.as_uri())
            # Polled through evaluate: wait_for_function's string predicate is compiled with
            # new Function in the page, which the page's Content-Security-Policy refuses.
            deadline = time.monotonic() + 120
            while not page.evaluate("() => Boolean(window.lensPlayer && lensPlayer.first_paint_ms !== null)"):
                if time.monotonic() > deadline:
                    raise TimeoutError("the page never painted")
                time.sleep(0.02)
            first_paint = page.evaluate("lensPlayer.first_paint_ms")
            starts = stretch_starts(recording)
            steps: list[float] = page.evaluate(STEP_STRETCHES, [starts, WINDOW_STEPS])
        finally:
            browser.close()
    return {
        "nodes": len(recording.graph),
        "steps": len(recording.timeline),
        "page_bytes": size,
        "bytes_per_node": round(size / max(len(recording.graph), 1)),
        "first_paint_ms": round(first_paint, 1),
        "steps_timed": len(steps),
        "step_median_ms": round(statistics.median(steps), 3) if steps else float("nan"),
        "step_p95_ms": round(p95(steps), 3),
    }


def measure_web(
    log: Callable[[str], None] = print, nodes: int = 5000, iterations: int = 200
) -> dict[str, Any]:
    """``{"chain_<nodes>": {...}, "program_<iterations>": {...}}`` (see the module's docstring)."""
    programs: list[tuple[str, Program]] = [
        (f"chain_{nodes}", chain_program(nodes)),
        (f"program_{iterations}", training_program(iterations)),
    ]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lens-web-") as folder:
        for key, program in programs:
            log(f"web: recording {program.name}")
            start = time.perf_counter()
            made = record(program, limits=Limits(time_limit_s=3600.0))
            log(f"web: {len(made.graph)} nodes in {time.perf_counter() - start:.1f} s; the page in Chromium")
            out[key] = measure_page(made, Path(folder))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args(argv)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    print(json.dumps(measure_web(log, args.nodes, args.iterations)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
