"""The HTML player shows only fixes that were recorded and held, each with what its proof found."""

from __future__ import annotations

from app.child.proofs import proven_lesson
from app.core import load_builtin, record
from app.render.web.steps import step_data


def test_the_page_shows_the_proven_fixes_and_no_other():
    recording = record(load_builtin("forgot-retain"))
    lesson = proven_lesson(recording, here=True)
    assert lesson.fixes  # PyTorch agrees at least one edit removes the error
    panel = step_data(recording, fixes=lesson.fixes)["error_panel"]
    assert [f["title"] for f in panel["fixes"]] == [p.fix.title for p in lesson.fixes]
    assert all("recorded: no error" in f["explanation"] for f in panel["fixes"])
    assert all(f["diff"] for f in panel["fixes"])
    assert step_data(recording)["error_panel"]["fixes"] == []  # unproven: none shown
