"""Predict first in the room: the question and its choices beside the graph, in caption-size type,
inside a 1280x720 window at text scales 1.0 and 1.5; the reveal says right or wrong and why."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QWidget

from app.core.lesson.predict import FAILS, SUCCEEDS
from app.ui.window.main_window import MainWindow
from tests.support.room_window import sized_window

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000


@pytest.fixture
def window(qtbot, tmp_path):
    made_windows: list[MainWindow] = []

    def make(scale: float, program: str = "two-losses", size: tuple[int, int] = (1280, 720)) -> MainWindow:
        made = sized_window(qtbot, tmp_path, scale, program, size)
        made_windows.append(made)
        return made

    yield make
    for made in made_windows:
        made.session.worker.wait_idle()


def _seen(window: MainWindow, widget: QWidget, viewport: QWidget) -> bool:
    """Shown, inside the window and inside the scroll area's viewport (not scrolled away)."""
    in_window = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    in_view = QRect(widget.mapTo(viewport, QPoint(0, 0)), widget.size())
    return widget.isVisible() and window.rect().contains(in_window) and viewport.rect().contains(in_view)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_question_and_its_choices_are_over_the_graph_in_caption_type(qtbot, window, scale):
    shown = window(scale)
    shown.session.home()  # before the first call: its questions are asked
    shown.commands.predict.trigger()
    panel = shown.predict_panel
    qtbot.waitUntil(lambda: bool(panel.rows) and panel.isVisible(), timeout=TIMEOUT)
    qtbot.wait(50)
    viewport = panel.scroll_area.viewport()
    row = panel.rows[0]
    assert row.question.choices == (SUCCEEDS, FAILS)
    for widget in (panel.heading, row.text, *row.buttons, *row.labels):
        assert _seen(shown, widget, viewport), (type(widget).__name__, widget.geometry())
    page = shown.graph_area.page  # beside the graph, not in the code column
    assert panel.parentWidget() is page and page.rect().contains(panel.geometry())
    caption = shown.caption_bar.font().pointSizeF()
    assert row.text.font().pointSizeF() >= caption and row.labels[0].font().pointSizeF() >= caption
    assert shown.height() <= 720  # its text never grows the window past the screen


def test_the_reveal_says_right_or_wrong_and_why_from_the_recording(qtbot, window):
    shown = window(1.0, "forgot-retain")
    session, panel = shown.session, shown.predict_panel
    recording = session.recording
    first, second = recording.calls
    assert first.error is None and second.error is not None  # the second call fails
    shown.commands.predict.trigger()
    session.home()
    qtbot.waitUntil(lambda: bool(panel.rows), timeout=TIMEOUT)
    panel.rows[0].choose(FAILS)  # wrong: the first call succeeds
    session.go_to(first.last_step)
    assert panel.revealed()
    assert panel.rows[0].verdict.text() == (
        f"✗ Wrong. You said “{FAILS}”; the answer is “{SUCCEEDS}”: the call ran to its end without an error."
    )
    session.go_to(first.last_step + 1)  # the second call's questions
    qtbot.waitUntil(lambda: panel.call_index() == 1, timeout=TIMEOUT)
    panel.rows[0].choose(FAILS)  # right: PyTorch raises
    session.go_to(second.last_step)
    error = second.error.strip().splitlines()[0]
    assert panel.rows[0].verdict.text() == f"✓ Right: “{FAILS}”: PyTorch stopped it with “{error}”"


def _on_page(view, item, page: QWidget) -> QRect:
    """A scene item's rectangle in the graph page's pixels (through the view's camera)."""
    rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    return rect.translated(view.viewport().mapTo(page, QPoint(0, 0)))


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_asked_at_the_error_step_it_goes_back_and_gives_nothing_away(qtbot, window, scale):
    shown = window(scale, "forgot-retain")
    session, panel = shown.session, shown.predict_panel
    second = session.recording.calls[1]
    assert second.error is not None  # PyTorch raised in the second call
    assert session.index == second.last_step  # a failing program opens on its error step
    marks = shown.timeline_bar.marks
    assert "fail" in {m.kind for m in marks.marks()}
    shown.commands.predict.trigger()
    qtbot.waitUntil(lambda: bool(panel.rows) and panel.isVisible(), timeout=TIMEOUT)
    assert session.index == second.first_step  # back to the call's start: the question is open
    assert not panel.revealed() and not panel.rows[0].verdict.isVisible()
    assert "fail" not in {m.kind for m in marks.marks()}  # no ✖ before the answer
    assert shown.error_panel.isHidden()
    assert session.state().step.kind != "error"  # no node drawn as failed
    view, page = shown.graph_view, shown.graph_area.page
    qtbot.waitUntil(lambda: not panel.geometry().intersects(view.geometry()), timeout=TIMEOUT)
    qtbot.wait(200)  # the view re-fitted to the width left beside the question
    scene = view.graph_scene
    touched = {s.node for s in session.recording.timeline.steps[second.first_step : second.last_step + 1]}
    items = [scene.nodes[n] for n in touched if n in scene.nodes]
    assert items
    for item in items:
        assert not _on_page(view, item, page).intersects(panel.geometry())
    assert any(
        view.viewport().rect().intersects(view.mapFromScene(i.sceneBoundingRect()).boundingRect())
        for i in items
    )
    session.go_to(second.last_step)  # the answer: now the ✖ and the error show
    assert panel.revealed()
    assert "fail" in {m.kind for m in marks.marks()}
    shown.commands.predict.trigger()  # off: the graph has the page's whole width again
    qtbot.waitUntil(lambda: view.width() == page.width(), timeout=TIMEOUT)
