"""Start-up: the window's first painted graph against ``python -c "import torch"``, fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from benchmarks.common import ROOT

# -- 3. start-up -------------------------------------------------------------------------------------


def startup_once(source: str = "two-losses") -> float:
    """Seconds from spawning the window's process to its first painted graph (the seed program, or
    any source the window opens: a ``.lens`` file, whose preview may be that picture)."""
    return startup_marks(source)[0]


def startup_marks(source: str = "two-losses") -> tuple[float, float]:
    """Seconds from spawning the window's process to its first painted graph, and to its graph
    view drawing the recording (``benchmarks/first_paint.py``'s two lines)."""
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    start = time.perf_counter()
    marks: dict[str, float] = {}
    with subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "first_paint.py"), source],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            marks.setdefault(line.strip(), time.perf_counter() - start)
            if "graph-ready" in marks:
                break
        proc.wait(timeout=60)
    if "first-paint" not in marks or "graph-ready" not in marks:
        raise RuntimeError("the window never painted a graph (see benchmarks/first_paint.py)")
    return marks["first-paint"], marks["graph-ready"]


def torch_import_once() -> float:
    """Seconds from spawning ``python -c "import torch"`` to the import being done (read as a line,
    as the start-up is: the interpreter's teardown after it counts for neither)."""
    start = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, "-c", "import torch; print('imported', flush=True)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - start
        proc.wait(timeout=60)
    if line.strip() != "imported":
        raise RuntimeError("python -c 'import torch' failed")
    return elapsed


def measure_startup(runs: int, *, warm_up: bool = True) -> tuple[list[float], list[float]]:
    """Start-up and ``import torch`` times, alternating. The window's modules are compiled to
    bytecode once, by a first start that is not counted, as on a user's machine after its first
    start (with ``PYTHONDONTWRITEBYTECODE`` set, every start would compile them again); a smoke
    run, which only checks that each number is there, skips that start."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if warm_up:
        startup_once()
    startup, imports = [], []
    for _ in range(runs):
        imports.append(torch_import_once())
        startup.append(startup_once())
    return startup, imports
