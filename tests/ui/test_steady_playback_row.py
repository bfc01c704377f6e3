"""Nothing moves when Play turns into Pause or while a recording runs: the playback row keeps
its widgets where they are, and the graph keeps its height."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication, QWidget

from app.ui.runtime.settings import AppSettings
from app.ui.window import dialogs
from app.ui.window.main_window import MainWindow

TIMEOUT = 60_000


@pytest.fixture
def window(qtbot, tmp_path):
    window = MainWindow(AppSettings(tmp_path / "settings.ini"), "two-losses")
    qtbot.addWidget(window)
    window.set_size(1280, 720)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.graph_view is not None, timeout=TIMEOUT)
    qtbot.wait(200)
    yield window
    window.session.pause()
    window.session.worker.wait_idle()


def _places(window: MainWindow) -> dict[str, QRect]:
    bar = window.timeline_bar
    widgets: dict[str, QWidget] = {
        "graph": window.graph_view,
        "playback row": window.bars.playback_bar,
        "play": bar.play_button,
        "step": bar.next_button,
        "slider": bar.slider,
        "device": window.bars.device_label,
    }
    return {name: QRect(w.mapTo(window, w.rect().topLeft()), w.size()) for name, w in widgets.items()}


def _settled(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(30)


def test_play_becoming_pause_moves_nothing(qtbot, window):
    before = _places(window)
    window.session.go_to(0)
    window.session.set_speed(0.5)  # slow: the pause face stays while the places are read
    window.session.play()
    _settled(qtbot)
    assert window.timeline_bar.play_button.text() != "▶ Play"
    during = _places(window)
    window.session.pause()
    assert {k: v for k, v in during.items() if v != before[k]} == {}


def test_a_recording_under_way_moves_nothing(qtbot, window):
    before = _places(window)
    window.bars.busy_label.set_busy(True)  # what a recording, an export or a layout shows
    _settled(qtbot)
    assert window.bars.busy_label.isVisible()
    during = _places(window)
    window.bars.busy_label.set_busy(False)
    _settled(qtbot)
    assert {k: v for k, v in during.items() if v != before[k]} == {}
    assert _places(window) == before


def test_an_empty_program_says_so_and_offers_nothing_to_play(qtbot, window, tmp_path, monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(dialogs, "ask", lambda parent, title, *rest: asked.append(title) or "Discard")
    empty = tmp_path / "empty.py"
    empty.write_text("# nothing yet\n")
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.load_program(str(empty))
    recording = window.session.recording
    assert len(recording.timeline) == 1 and len(recording.graph) == 0 and not recording.calls
    assert not window.timeline_bar.play_button.isEnabled()
    assert "nothing autograd records" in recording.timeline.steps[0].caption
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.load_program("two-losses")
    assert window.timeline_bar.play_button.isEnabled()
    assert asked == []  # opening a file and another program is no edit to save
