"""Shared pieces of the benchmark: its constants and targets, small statistics, the machine it
ran on, the guard for Qt calls that drop ``None``, and running ``bench.py`` in a child process."""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, qVersion

from app.core import Limits

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication is made

T = TypeVar("T")
DEFAULT_SIZES = (10, 100, 1000, 5000)
HEARTBEAT_MS = 10
HEARTBEAT_NODES = 5000
PROGRAM_ITERATIONS = 200
SMOKE_ITERATIONS = 4  # --smoke: the training loop and the page at their smallest
PAINT_WAIT_MS = 300  # after the first step is applied, keep beating while it paints
BIG_LIMITS = Limits(time_limit_s=3600.0)  # the benchmark measures; it must not be cut short
LAYOUT_TIMEOUT_S = 3600.0
HEAP_SKIP_S = 150.0  # tracemalloc triples a recording's time: skipped when one takes longer than this
RERENDER_FULL_UP_TO = 100  # above this many nodes, re-render a sample of steps only
RERENDER_SAMPLES = 5
RERENDER_BUDGET_S = 120.0  # stop sampling re-renders of one size once they took this long in all
TARGETS = {
    "step_p95_ms": 16.0,
    "step_vs_rerender": 10.0,
    "record_vs_plain": 3.0,
    "program_record_vs_plain": 2.0,
    "startup_vs_torch": 1.5,
    "max_heartbeat_gap_ms": 50.0,
    "real_model_record_vs_plain": 1.5,
    "lens_open_vs_torch": 0.5,
}


# -- a guard for PySide6 6.12.0 on Python 3.11 ----------------------------------------------------

_NONE_BANK: list[None] = []
NONE_FLOOR = 2_000_000


@functools.cache
def _qt_drops_none() -> bool:
    """Whether void Qt calls drop references to ``None`` here (PySide6 6.12.0 on Python 3.11)."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal (PEP 683)
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(100):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before


def keep_none_alive() -> None:
    """Top up the references to ``None`` where Qt calls drop them.

    PySide6 6.12.0 on Python 3.11 drops one reference to ``None`` on every Qt call that returns
    nothing (see ``tests/ui/test_soak.py``); after ~50,000 such calls Python aborts with "deallocating
    None". The benchmark makes millions, so on such a build it holds spare references (8 bytes each)
    and tops them up outside the timed regions. A no-op where the bindings are sound.
    """
    if not _qt_drops_none():
        return
    have = sys.getrefcount(None)
    if have < NONE_FLOOR:
        _NONE_BANK.extend([None] * (2 * NONE_FLOOR - have))


# -- small statistics ----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else math.nan


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank (no interpolation)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)])


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of_ratios(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of each round's ``a / b``: a round's two runs are adjacent, so they share the
    machine's load (a ratio of medians mixes quiet and busy moments)."""
    return median([ratio(x, y) for x, y in zip(a, b, strict=True)])


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


# -- the machine ---------------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    return {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "qt": f"{qVersion()} (PySide6 {pyside_version})",
        "graphviz": _dot_version(),
        "commit": _git(["rev-parse", "--short", "HEAD"])
        + (" (dirty tree)" if _git(["status", "-s"]) else ""),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _dot_version() -> str:
    try:
        done = subprocess.run(["dot", "-V"], capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return "missing"
    return done.stderr.strip().removeprefix("dot - ")


def _git(args: list[str]) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip()


def attempt(measure: Callable[[], T], fallback: T, log: Callable[[str], None]) -> T:
    """One section of the benchmark; a failure is reported and leaves the others standing."""
    try:
        return measure()
    except Exception as exc:
        log(f"FAILED: {type(exc).__name__}: {exc}")
        return fallback


def child_json(flag: str, nodes: int) -> Any:
    """Run ``bench.py`` with ``flag nodes`` in a fresh process; its last stdout line is JSON."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), flag, str(nodes)],
        capture_output=True,
        text=True,
        timeout=7200,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{flag} child failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1])
