"""The window's panels and the HTML page say the same words at every step of every built-in.

Both take them from ``app.core.lesson.panel_words``; here the window's own widgets, driven through
a session, are read and compared with what the page is given to show (``step_data``, whose
strings the page's script only picks by step: ``tests/render/test_web_player.py`` reads them in a
browser).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from app.core.loading import builtin_names
from app.core.model.recording import Recording
from app.render.web.steps import step_data
from app.ui.panels.error_panel import ErrorPanel
from app.ui.panels.grad_panel import GradPanel
from app.ui.panels.step_counter import StepCounter
from app.ui.panels.timeline_bar import TimelineBar
from app.ui.panels.timeline_marks import TimelineMarks
from tests.support.recorded import builtin_recording


def _shown(data: dict[str, Any], column: list[int], i: int) -> str:
    return str(data["strings"][column[i]])


def _run_at(runs: list[list[Any]], i: int) -> Any:
    """What a column of runs ``[first step, value]`` holds at step ``i`` (read as a scan here; the
    page's script searches them)."""
    assert runs and runs[0][0] == 0 and all(a[0] < b[0] for a, b in pairwise(runs))
    return [value for first, value in runs if first <= i][-1]


@pytest.mark.parametrize("name", builtin_names())
def test_at_every_step_the_page_says_what_the_panels_say(
    qtbot: Any, session: Any, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setattr(ErrorPanel, "_ask_lesson", lambda self, recording: None)  # fixes: not compared here
    recording: Recording = builtin_recording(name)
    counter, bar, grads, error = (cls(session) for cls in (StepCounter, TimelineBar, GradPanel, ErrorPanel))
    for widget in (counter, bar, grads, error):
        qtbot.addWidget(widget)
    session.apply(recording)
    data = step_data(recording)
    marks = bar.findChild(TimelineMarks)
    assert [[m.step, m.kind, m.label, m.tip] for m in marks.marks()] == data["marks"]
    page_error = data["error_panel"]
    leaves = grads.leaf_names()
    assert leaves == data["grads"]["leaves"][: len(leaves)]
    for i in range(len(recording.timeline)):
        session.go_to(i)
        assert counter.detail.text() == _shown(data, data["detail"], i), i
        for leaf in leaves:
            text = data["strings"][_run_at(data["grads"]["text"][leaf], i)]
            assert grads.grad_text(leaf) == text, (i, leaf)
            lines = [str(data["strings"][k]) for k in _run_at(data["grads"]["history"][leaf], i)]
            assert grads.history_text(leaf) == "\n".join(lines), (i, leaf)
        at_error = page_error is not None and page_error["step"] == i
        assert error.isHidden() != at_error, i
        if at_error:
            assert error.title.text() == page_error["title"]
