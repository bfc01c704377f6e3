"""What proving a fix costs, next to recording the same program once more.

A fix is offered only once its edited program is recorded and checked
(``app.core.lesson.prove``). Side by side, alternating so noise hits both: one
re-record of the broken program, and the proof of its first fix (the edited
program's recording plus the checks), for the ``rnn-no-detach`` built-in (in
the warm child) and for a transformer script's error (a fresh process each,
as ``run`` proves a script's fixes). ``check_vs_record`` is the larger of the
two median ratios; ``checked``: how many fixes were proven.

    python benchmarks/fixes.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCRIPT = ROOT / "tests" / "support" / "scripts" / "fixes" / "transformer_memory_carried.py"


def _seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _side_by_side(record: Callable[[], object], prove: Callable[[], object], rounds: int) -> float:
    ratios = []
    for _ in range(rounds):
        again, proof = _seconds(record), _seconds(prove)
        ratios.append(proof / again)
    return statistics.median(ratios)


def measure(rounds: int = 3) -> dict[str, float | int]:
    """``{"checked": int, "check_vs_record": float, "builtin": float, "script": float}``."""
    from app.child.client import record_in_child
    from app.child.proofs import ScriptSource, in_child, in_script_child
    from app.core.lesson.fixes import fixes_for
    from app.core.lesson.prove import prove
    from app.core.loading import load_builtin

    program = load_builtin("rnn-no-detach")
    broken = record_in_child(program)
    fix = fixes_for(broken)[0]
    record = in_child(broken)
    record(broken.program.code)  # the warm child, as the window has it
    checked = int(prove(broken, fix, record).holds)
    builtin = _side_by_side(lambda: record_in_child(program), lambda: prove(broken, fix, record), rounds * 3)

    script = in_script_child(ScriptSource(SCRIPT))
    code = SCRIPT.read_text(encoding="utf-8")
    original = script(code)
    assert not isinstance(original, str) and original.failed is not None, original
    script_fix = fixes_for(original)[0]
    checked += int(prove(original, script_fix, script).holds)
    ran = _side_by_side(lambda: script(code), lambda: prove(original, script_fix, script), rounds)
    return {
        "checked": checked,
        "check_vs_record": round(max(builtin, ran), 3),
        "builtin": round(builtin, 3),
        "script": round(ran, 3),
    }


if __name__ == "__main__":
    print(json.dumps(measure()))
