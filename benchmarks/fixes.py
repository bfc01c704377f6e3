"""What the fixes and advice do on real snippets, and what proving a fix costs.

``python benchmarks/fixes.py --corpus``: the error corpus
(``tests/support/snippets/errors``: real snippets from public issues and forum threads, split by a
hash of the source address into ``dev`` and ``heldout``). Each snippet is recorded as a script, as
``run`` records it. For an error: whether a fix is offered, whether one is proven (its edit recorded
again: the error gone, nothing else raised, every claim true), whether the first proven fix is
structural (not a band-aid), and whether the script with that fix applied runs plainly, unhooked,
as ``python SCRIPT.py``. For a silent problem (``# kind: missing-zero-grad``): whether advice is
offered with a proven edit, and the edited script runs plainly; ``no-advice`` snippets must get none.

``python benchmarks/fixes.py``: the cost of proving. Side by side, alternating so noise hits
both: one re-record of the broken program, and the proof of its first fix, for the
``rnn-no-detach`` built-in (in the warm child) and for a transformer script's error (a fresh
process each, as ``run`` proves a script's fixes). ``check_vs_record`` is the larger of the two
median ratios; ``checked``: how many fixes were proven.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCRIPT = ROOT / "tests" / "support" / "scripts" / "fixes" / "transformer_memory_carried.py"
CORPUS = ROOT / "tests" / "support" / "snippets" / "errors"
SILENT = ("missing-zero-grad", "silent-no-grad-fn", "no-advice")


def _seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _side_by_side(
    record: Callable[[], object], prove: Callable[[], object], rounds: int, first: float | None = None
) -> float:
    """The median of ``rounds`` ratios proof / record; ``first``: a ratio already measured, the
    first round's."""
    ratios = [] if first is None else [first]
    while len(ratios) < rounds:
        again, proof = _seconds(record), _seconds(prove)
        ratios.append(proof / again)
    return statistics.median(ratios)


def measure(rounds: int = 3, builtin_rounds: int | None = None) -> dict[str, float | int]:
    """``{"checked": int, "check_vs_record": float, "builtin": float, "script": float}``; the
    built-in's rounds are cheap and noisy, three times ``rounds`` unless ``builtin_rounds`` says."""
    from app.child.client import record_in_child
    from app.child.proofs import ScriptSource, in_child, in_script_child
    from app.core.lesson.prove import prove
    from app.core.lesson.recipes import fixes_for
    from app.core.loading import load_builtin

    program = load_builtin("rnn-no-detach")
    broken = record_in_child(program)
    fix = fixes_for(broken)[0]
    record = in_child(broken)
    record(broken.program.code)  # the warm child, as the window has it
    checked = int(prove(broken, fix, record).holds)
    builtin = _side_by_side(
        lambda: record_in_child(program), lambda: prove(broken, fix, record), builtin_rounds or rounds * 3
    )

    script = in_script_child(ScriptSource(SCRIPT))
    code = SCRIPT.read_text(encoding="utf-8")
    # A fresh process each, so the first record and proof are a round like the others: counted
    # as the first (each costs an import of torch and of its optimizers)
    start = time.perf_counter()
    original = script(code)
    recorded_s = time.perf_counter() - start
    assert not isinstance(original, str) and original.failed is not None, original
    script_fix = fixes_for(original)[0]
    start = time.perf_counter()
    checked += int(prove(original, script_fix, script).holds)
    first = (time.perf_counter() - start) / recorded_s
    ran = _side_by_side(lambda: script(code), lambda: prove(original, script_fix, script), rounds, first)
    return {
        "checked": checked,
        "check_vs_record": round(max(builtin, ran), 3),
        "builtin": round(builtin, 3),
        "script": round(ran, 3),
    }


# -- the error corpus ---------------------------------------------------------------------------


def kind_of(path: Path) -> str:
    """The ``# kind:`` header of a corpus snippet."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# kind:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def _in_process(folder: Path) -> Callable[[str], Any]:
    """Record each edited snippet here (the corpus is this project's own, trusted)."""
    from app.core.model.errors import ProgramError
    from app.core.recorder.script import record_script

    count = iter(range(10**6))

    def run(code: str) -> Any:
        path = folder / f"edited_{next(count)}.py"
        path.write_text(code, encoding="utf-8")
        try:
            return record_script(path, stdout=io.StringIO()).recording
        except ProgramError as exc:
            return str(exc)

    return run


def runs_plainly(folder: Path, code: str) -> bool:
    """Whether ``code`` runs as ``python SCRIPT.py`` would, unhooked, without raising."""
    import torch

    path = folder / "plain.py"
    path.write_text(code, encoding="utf-8")
    enabled = torch.is_grad_enabled()  # a script's set_grad_enabled ends with its process
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(path), run_name="__main__")
    except Exception:
        return False
    finally:
        torch.set_grad_enabled(enabled)
    return True


def snippet_outcome(path: Path) -> dict[str, Any]:
    """What one snippet is offered: ``offered``, ``proven``, ``structural``, ``runs`` (the first
    proven fix, applied, runs plainly), ``every_runs`` (every proven fix does), ``first``."""
    from app.core.lesson.offered import lesson_of
    from app.core.recorder.script import record_script

    with tempfile.TemporaryDirectory(prefix="lens-corpus-") as name:
        folder = Path(name)
        original = folder / path.name
        original.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        recording = record_script(original, stdout=io.StringIO()).recording
        failed = recording.failed is not None or recording.error is not None
        if failed:
            from app.core.lesson.recipes import fixes_for

            offered = len(fixes_for(recording))
        lesson = lesson_of(recording, _in_process(folder))
        proven = lesson.advice_fixes if lesson.advice is not None else lesson.fixes
        if not failed:
            offered = len(lesson.advice.fixes) if lesson.advice is not None else 0
        first = proven[0].fix if proven else None
        failing = [p.fix.title for p in proven if not runs_plainly(folder, p.fix.code)]
        return {
            "every_runs": not failing,
            "failing": failing,
            "failed": failed,
            "offered": offered > 0,
            "proven": bool(proven),
            "structural": first is not None and not first.band_aid,
            "runs": first is not None and runs_plainly(folder, first.code),
            "first": first.title if first is not None else "",
        }


def corpus(half: str) -> dict[str, Any]:
    """Per kind: snippets, fixes offered, proven, structural first, applied-runs-plainly."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    missed: list[str] = []
    for path in sorted((CORPUS / half).glob("*.py")):
        kind, outcome = kind_of(path), snippet_outcome(path)
        row = table[kind]
        row["snippets"] += 1
        for key in ("offered", "proven", "structural", "runs"):
            row[key] += int(outcome[key])
        row["every_applied_runs"] += int(outcome["every_runs"])
        good = not outcome["proven"] if kind == "no-advice" else outcome["structural"] and outcome["runs"]
        if not good:
            missed.append(f"{path.name}: {outcome['first'] or 'nothing proven'}")
        missed += [f"{path.name}: {title} fails when applied" for title in outcome["failing"]]
    return {"kinds": {k: dict(v) for k, v in sorted(table.items())}, "missed": missed}


def _print_corpus(half: str, result: dict[str, Any]) -> None:
    print(f"{half}: kind  snippets  offered  proven  structural-first  applied-runs  every-fix-runs")
    for kind, row in result["kinds"].items():
        keys = ("snippets", "offered", "proven", "structural", "runs", "every_applied_runs")
        cells = [row.get(k, 0) for k in keys]
        print(f"  {kind:18} " + "  ".join(f"{c:>3}" for c in cells))
    for line in result["missed"]:
        print(f"  missed: {line}")


if __name__ == "__main__":
    if "--corpus" in sys.argv:
        halves = [h for h in ("dev", "heldout") if h in sys.argv] or ["dev", "heldout"]
        results = {half: corpus(half) for half in halves}
        for half, result in results.items():
            _print_corpus(half, result)
        print(json.dumps({h: r["kinds"] for h, r in results.items()}))
    else:
        print(json.dumps(measure()))
