"""What is offered at a recording, proven: its fixes (or, with no error, its advice) as the window,
``trace`` and ``run`` show them.

The same objects go everywhere: :func:`lesson_json` is the ``"fixes"`` and
``"advice"`` of ``trace --json`` and ``run --json``, :func:`lesson_text` what
``trace`` prints under the error step and ``run`` after PyTorch's message (each
fix as a unified diff against the program, or the user's own file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.core.lesson.advice import Advice
from app.core.lesson.advised import advices_of
from app.core.lesson.edits import new_line_numbers, unified_diff
from app.core.lesson.prove import ProvenFix, Record, proven_fixes
from app.core.model.recording import Recording

__all__ = ["Lesson", "fix_json", "lesson_json", "lesson_of", "lesson_text"]


@dataclass(frozen=True)
class Lesson:
    """The proven fixes of a recording's error, or the advice (with its proven edits) of one that ran.

    ``path``: the file the diffs name (the user's script, for ``run``).
    """

    recording: Recording
    fixes: tuple[ProvenFix, ...] = ()
    advice: Advice | None = None
    advice_fixes: tuple[ProvenFix, ...] = ()
    path: str = "program.py"

    def json(self) -> dict[str, Any]:
        return lesson_json(self.recording, self)

    def json_fields(self) -> str:
        """``"fixes":[...],"advice":...`` as strict JSON text, for the end of a ``--json`` object."""
        return json.dumps(self.json(), separators=(",", ":"), allow_nan=False)[1:-1]

    def text(self) -> str:
        return lesson_text(self.recording, self, self.path)


def lesson_of(recording: Recording, record: Record, *, parallel: int = 1, path: str = "program.py") -> Lesson:
    """Prove what ``recording`` would be offered; a fix or an edit that fails its proof is left out."""
    if recording.failed is not None or recording.error is not None:
        fixes = proven_fixes(recording, record=record, parallel=parallel)
        return Lesson(recording, tuple(fixes), path=path)
    for advice in advices_of(recording):
        edits = proven_fixes(recording, advice.fixes, record=record, parallel=parallel)
        if edits:
            return Lesson(recording, (), advice, tuple(edits), path)
    return Lesson(recording, path=path)


def fix_json(proven: ProvenFix, old: str) -> dict[str, Any]:
    """One fix as ``--json`` writes it: the whole edited program, its changed lines, what was checked."""
    fix, checked = proven.fix, proven.checked
    return {
        "title": fix.title,
        "explanation": fix.explanation,
        "code": fix.code,
        "changed_lines": new_line_numbers(old, fix.code),
        "band_aid": fix.band_aid,
        "checked": {
            "error_gone": checked.error_gone,
            "other_error": checked.other_error,
            "claims": [{"text": c.text, "holds": c.holds} for c in checked.claims],
        },
    }


def lesson_json(recording: Recording, lesson: Lesson) -> dict[str, Any]:
    """``{"fixes": [...], "advice": {"headline", "evidence", "fixes": [...]} | None}``."""
    old = recording.program.code
    advice = None
    if lesson.advice is not None:
        advice = {
            "headline": lesson.advice.headline,
            "evidence": lesson.advice.evidence,
            "fixes": [fix_json(p, old) for p in lesson.advice_fixes],
        }
    return {"fixes": [fix_json(p, old) for p in lesson.fixes], "advice": advice}


def lesson_text(recording: Recording, lesson: Lesson, path: str = "program.py") -> str:
    """The proven fixes (or advice) as text: a title, its check, its explanation, its diff."""
    old = recording.program.code
    blocks: list[str] = []
    fixes = lesson.fixes
    if lesson.advice is not None:
        blocks.append(f"{lesson.advice.headline}\n{lesson.advice.evidence}")
        fixes = lesson.advice_fixes
    for i, proven in enumerate(fixes, 1):
        fix = proven.fix
        blocks.append(
            f"Fix {i}: {fix.title}\n  ({proven.checked.mark()})\n  {fix.explanation}\n"
            + unified_diff(old, fix.code, path).rstrip("\n")
        )
    return "\n\n".join(blocks)
