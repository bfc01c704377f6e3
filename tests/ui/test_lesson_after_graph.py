"""The lesson is found after the window has drawn and filled in its graph (NOTE [the lesson after
the graph] in ``app/ui/runtime/lesson_worker.py``): its parse would hold the interpreter while
the graph view builds in slices. No timing is asserted; the order of events is."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from app.core import load_builtin, record
from app.ui.graph import graph_view as graph_view_module
from app.ui.panels.advice_panel import AdvicePanel
from app.ui.panels.fixes_panel import Lesson
from app.ui.runtime import lesson_worker
from app.ui.runtime.lesson_worker import LessonWorker
from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow

TIMEOUT = 60_000


@pytest.fixture
def make_window(tmp_path):
    """Makes a shown window on two-losses, not yet started; deleted afterwards, with its timers (a
    later test's patched checks import must not hear from this window's worker)."""
    windows: list[MainWindow] = []

    def make() -> MainWindow:
        windows.append(MainWindow(AppSettings(str(tmp_path / "settings.ini")), "two-losses"))
        windows[-1].show()
        return windows[-1]

    yield make
    for made in windows:
        _delete(made)


def _delete(made: MainWindow) -> None:
    made.session.worker.wait_idle()
    for panel in (made.error_panel, made.memory_chart.advice):
        panel.wait_idle()
    made.hide()  # close() would ask about an unsaved program
    made.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)


@pytest.fixture
def two_losses():
    return record(load_builtin("two-losses"))


def test_a_lesson_waits_while_the_graph_is_drawn_then_is_found(qtbot, monkeypatch, two_losses):
    monkeypatch.setattr(lesson_worker, "LESSON_WAIT_MS", 5)
    found, asked, drawing = [], [], [True]
    worker = LessonWorker(lambda recording, _deadline: found.append(recording) or len(recording.graph))
    worker.wait = lambda: asked.append(1) or drawing[0]
    worker.request(two_losses)
    qtbot.waitUntil(lambda: len(asked) >= 3, timeout=TIMEOUT)
    assert found == [] and worker.waiting
    with qtbot.waitSignal(worker.ready, timeout=TIMEOUT) as blocker:
        drawing[0] = False
    assert blocker.args == [two_losses, len(two_losses.graph)]
    assert found == [two_losses] and not worker.waiting
    assert worker.wait_idle()


def test_only_the_newest_waiting_request_is_found(qtbot, monkeypatch, two_losses):
    monkeypatch.setattr(lesson_worker, "LESSON_WAIT_MS", 5)
    older = record(load_builtin("forgot-retain"))
    found, drawing = [], [True]
    worker = LessonWorker(lambda recording, _deadline: found.append(recording))
    worker.wait = lambda: drawing[0]
    worker.request(older)
    worker.request(two_losses)
    qtbot.waitUntil(lambda: worker.waiting, timeout=TIMEOUT)
    with qtbot.waitSignal(worker.ready, timeout=TIMEOUT) as blocker:
        drawing[0] = False
    assert blocker.args[0] is two_losses
    assert worker.wait_idle() and found == [two_losses]


def test_a_lesson_waits_for_a_graph_only_so_long(qtbot, monkeypatch, two_losses):
    monkeypatch.setattr(lesson_worker, "LESSON_WAIT_MS", 1)
    asked = []
    worker = LessonWorker(lambda recording, _deadline: len(recording.graph))
    worker.wait = lambda: asked.append(1) or True  # a graph never drawn
    with qtbot.waitSignal(worker.ready, timeout=TIMEOUT) as blocker:
        worker.request(two_losses)
    assert blocker.args == [two_losses, len(two_losses.graph)]
    assert len(asked) == lesson_worker.LESSON_WAITS
    assert worker.wait_idle()


def test_the_window_finds_its_advice_after_the_graph_is_built(qtbot, monkeypatch, make_window):
    """Every graph is built in slices here, a little a turn: the advice's lesson (made quick, no
    advice) would otherwise be found long before the view holds every item."""
    events: list[str] = []

    def find(recording, deadline):  # on the pool thread
        events.append("lesson")
        return Lesson([], [])

    monkeypatch.setattr(AdvicePanel, "find_lesson", staticmethod(find))
    monkeypatch.setattr(graph_view_module, "PROGRESSIVE_ITEMS", 0)
    monkeypatch.setattr(graph_view_module, "SLICE_S", 0.0001)
    window = make_window()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.graph_view is not None, timeout=TIMEOUT)
    view = window.graph_view
    view.model_ready.connect(lambda: events.append("built"))
    events.clear()
    with qtbot.waitSignal(window.memory_chart.advice._lesson.ready, timeout=TIMEOUT):
        window.session.load("logged-loss")
    assert events.count("lesson") == 1 and "built" in events[: events.index("lesson")]
    assert not view.building
    window.memory_chart.advice.wait_idle()


def test_the_editor_is_made_once_the_first_big_graph_is_painted(qtbot, monkeypatch, make_window):
    """The first recording's graph, built in slices, is painted before the editor is made (its
    text set and highlighted), and the editor then holds the recorded program."""
    monkeypatch.setattr(graph_view_module, "PROGRESSIVE_ITEMS", 0)
    window = make_window()
    editor_when_shown: list[bool] = []

    def watch(_recording):
        view = window.graph_view
        view.graph_shown.connect(lambda: editor_when_shown.append(window.editor is not None))

    window.session.recording_applied.connect(watch)
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.editor is not None, timeout=TIMEOUT)
    assert editor_when_shown == [False]
    assert window.code_panel.toPlainText() == load_builtin("two-losses").code


def test_the_lesson_of_a_recording_is_found_in_the_child_not_in_the_window(qtbot, monkeypatch, make_window):
    """NOTE [the lesson found in the child]: the window's process proves the advice the recording
    child found, and never parses the program or looks for advice itself."""
    from app.core.lesson import advised, edits

    looked, parsed = [], []
    advice_for, source_init = advised.advice_for, edits.Source.__init__
    monkeypatch.setattr(advised, "advice_for", lambda r: looked.append(r) or advice_for(r))
    monkeypatch.setattr(edits.Source, "__init__", lambda s, code: parsed.append(code) or source_init(s, code))
    edits.parsed.cache_clear()
    window = make_window()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    advice = window.memory_chart.advice
    window.session.load("logged-loss")
    qtbot.waitUntil(lambda: bool(advice.fixes), timeout=TIMEOUT)  # proven, after two-losses' none
    assert advice.title.text().startswith("⚠")
    assert looked == [] and parsed == []
    advice.wait_idle()
