"""The error panel in the room: at 1280x720 (fresh settings, text scale 1.0) the first fix is on
screen without scrolling at every built-in's error, and a new error opens at the panel's top."""

import pytest
from PySide6.QtCore import QSize

from app.core import record
from app.core.loading import builtin_names, load_builtin
from app.ui.panels.error_panel import first_sentence
from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow

TIMEOUT = 30_000


@pytest.fixture(scope="module")
def failing():
    """Each built-in that fails, recorded (PyTorch's own outcome, not a list kept by hand)."""
    recordings = {name: record(load_builtin(name)) for name in builtin_names()}
    found = {name: r for name, r in recordings.items() if r.failed is not None or r.error is not None}
    assert len(found) >= 5
    return found


@pytest.fixture
def room(qtbot, tmp_path):
    windows: list[MainWindow] = []

    def make(program: str) -> MainWindow:
        window = MainWindow(AppSettings(tmp_path / "settings.ini"), program)
        qtbot.addWidget(window)
        window.set_size(1280, 720)
        window.show()
        with qtbot.waitSignal(window.error_panel.lesson_shown, timeout=TIMEOUT):
            window.start()
        qtbot.waitUntil(lambda: window.editor is not None, timeout=TIMEOUT)
        qtbot.waitUntil(lambda: window.size() == QSize(1280, 720), timeout=TIMEOUT)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.session.worker.wait_idle()


def _load(qtbot, window: MainWindow, name: str) -> None:
    with qtbot.waitSignal(window.error_panel.lesson_shown, timeout=TIMEOUT):
        window.load_program(name)
    qtbot.waitUntil(lambda: window.session.recording.program.name == name, timeout=TIMEOUT)


def _settled(qtbot, window: MainWindow) -> None:
    """Laid out: the stage has capped the panel, and the panel shows the step's error."""
    panel = window.error_panel
    qtbot.waitUntil(lambda: panel.isVisible() and panel.fix_buttons[0].isVisible(), timeout=TIMEOUT)
    qtbot.wait(50)  # the posted layout requests of the new texts


def test_the_first_fix_is_on_screen_at_every_built_ins_error(qtbot, room, failing):
    names = sorted(failing)
    window = room(names[0])
    panel = window.error_panel
    for name in names:
        if name != names[0]:
            _load(qtbot, window, name)
        _settled(qtbot, window)
        recording = window.session.recording
        assert window.session.index == recording.opening_step, name
        assert panel.fixes, name  # every failing built-in teaches an edit
        assert panel.first_fix_visible(), (
            name,
            panel.fix_buttons[0].geometry(),
            panel._scroll.viewport().size(),
        )
        assert panel._scroll.verticalScrollBar().value() == 0, name
        message = (recording.failed.error if recording.failed else recording.error) or ""
        assert panel.message.text() == message  # the whole message is a click away, as PyTorch wrote it
        assert panel.message_start.text().startswith(first_sentence(message)), name
        assert not panel.message.isVisible() and panel.message_start.isVisible()


def test_a_new_error_opens_at_the_top_with_its_folds_closed(qtbot, room):
    window = room("forgot-retain")
    panel = window.error_panel
    _settled(qtbot, window)
    panel.why_button.click()
    panel.more_button.click()
    assert panel.explanation.isVisible() and panel.message.isVisible() and not panel.message_start.isVisible()
    bar = panel._scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=TIMEOUT)  # unfolded, it no longer fits
    bar.setValue(bar.maximum())
    assert not panel.first_fix_visible() or bar.value() > 0
    _load(qtbot, window, "inplace-sigmoid")
    _settled(qtbot, window)
    assert bar.value() == 0
    assert not panel.explanation.isVisible() and not panel.message.isVisible()
    assert panel.first_fix_visible()
    # stepping away and back to the same error opens it at its top too
    panel.why_button.click()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=TIMEOUT)
    bar.setValue(bar.maximum())
    error_step = window.session.index
    window.session.home()
    assert panel.isHidden()
    window.session.go_to(error_step)
    assert bar.value() == 0
