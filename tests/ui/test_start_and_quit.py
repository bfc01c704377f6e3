"""The window's start (``AUTOGRAD_LENS_STEP``, with or without a screenshot) and its quitting."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QApplication

from app.ui.main import StartStep
from app.ui.runtime import worker as worker_module
from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow

TIMEOUT = 60_000


@pytest.fixture
def window(qtbot, tmp_path):
    made: list[MainWindow] = []

    def make(program: str, step: str) -> tuple[MainWindow, StartStep]:
        window = MainWindow(AppSettings(tmp_path / "settings.ini"), program)
        start = StartStep(window, step)
        qtbot.addWidget(window)
        window.show()
        with qtbot.waitSignal(start.shown, timeout=TIMEOUT):
            window.start()
        made.append(window)
        return window, start

    yield make
    for each in made:
        each.session.worker.wait_idle()
    QApplication.processEvents()


def test_call_n_opens_on_the_error_pytorch_raised_in_that_call(window):
    shown, _ = window("forgot-retain", "call:2")
    recording = shown.session.recording
    step = recording.timeline.steps[shown.session.index]
    assert step.kind == "error"
    assert "backward through the graph a second time" in (step.error or "")
    assert recording.calls[1].error is not None and step.call == 1


def test_end_opens_on_the_last_step_and_a_bad_text_on_the_first(window, caplog):
    shown, _ = window("two-losses", "end")
    assert shown.session.index == shown.session.last_index > 0
    stays, _ = window("two-losses", "step seven")
    assert stays.session.index == 0
    assert any("AUTOGRAD_LENS_STEP" in record.getMessage() for record in caplog.records)


def test_quitting_does_not_wait_for_the_editors_checks_to_import(qtbot, tmp_path, monkeypatch):
    """The checks import torch (a second or more) after the first graph: a quit meanwhile is not
    held up by them; recordings are still waited for."""
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def held_import() -> None:
        started.set()
        release.wait(10)  # a slow import: held until released, or 10 s
        finished.set()

    monkeypatch.setattr(worker_module, "import_checks", held_import)
    monkeypatch.setattr(worker_module, "CHECKS_AFTER_MS", 0)
    window = MainWindow(AppSettings(tmp_path / "settings.ini"), "two-losses")
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(started.is_set, timeout=TIMEOUT)
    try:
        assert window.close()
        assert not window.isVisible() and not finished.is_set()
    finally:
        release.set()
