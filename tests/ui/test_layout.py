"""The window in the room: it fits the screen, the graph gets its share, docks and F5 behave.

The offscreen platform of the test session has one 800x800 screen, so the real
screens of a classroom (1280x720, 1366x768) are faked in a child process with the
offscreen plugin's screen configuration; this file is that child's script too.
"""

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QApplication

from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow
from app.ui.window.screen_fit import MIN_WINDOW, clamp_geometry, dock_plan, fresh_geometry

TIMEOUT = 30_000
ROOMS = {"projector": (1280, 720), "laptop": (1366, 768)}
GRAPH_SHARE = 0.5


# -- the rules, as functions ----------------------------------------------------------------
@pytest.mark.parametrize("size", [(1280, 720), (1366, 768), (1920, 1080), (1600, 900)])
def test_a_fresh_window_fills_a_small_screen(size):
    available = QRect(0, 24, size[0], size[1] - 24)  # a panel at the top
    assert fresh_geometry(available) == available


def test_a_fresh_window_on_a_big_screen_is_centred_on_it():
    available = QRect(1920, 0, 2560, 1400)
    rect = fresh_geometry(available)
    assert available.contains(rect) and rect.center() == available.center()


@pytest.mark.parametrize(
    ("frame", "available"),
    [
        (QRect(0, 0, 1600, 1000), QRect(0, 0, 1280, 720)),  # bigger than the screen
        (QRect(2000, 300, 1200, 700), QRect(0, 0, 1920, 1080)),  # its screen is gone
        (QRect(-500, -40, 900, 600), QRect(0, 30, 1366, 738)),
        (QRect(1400, 900, 3000, 3000), QRect(1280, 0, 1366, 768)),  # second screen
    ],
)
def test_a_remembered_geometry_is_clamped_onto_the_screen(frame, available):
    clamped = clamp_geometry(frame, available)
    assert available.contains(clamped)
    assert clamped.width() == min(frame.width(), available.width())
    assert clamped.height() == min(frame.height(), available.height())


def test_a_geometry_that_fits_is_kept():
    frame = QRect(100, 80, 1000, 600)
    assert clamp_geometry(frame, QRect(0, 0, 1920, 1080)) == frame


@pytest.mark.parametrize("width", [1280, 1366])
def test_on_small_screens_every_panel_shares_one_column(width):
    plan = dock_plan(width)
    assert not plan.two_columns and width - plan.left >= 0.7 * width


@pytest.mark.parametrize(("width", "scale"), [(1600, 1.0), (1920, 1.0), (1920, 1.5)])
def test_wide_windows_get_a_right_column_that_grows_with_the_text(width, scale):
    plan = dock_plan(width, scale)
    assert plan.two_columns and width - plan.left - plan.right >= 0.55 * width
    assert plan.left >= 240 * scale and plan.right >= 200 * scale


# -- a real window ------------------------------------------------------------------------------
@pytest.fixture
def window(qtbot, tmp_path):
    def make(settings: AppSettings | None = None, size: tuple[int, int] | None = (1280, 720)) -> MainWindow:
        made = MainWindow(settings or AppSettings(tmp_path / "settings.ini"), "two-losses")
        qtbot.addWidget(made)
        if size is not None:
            made.set_size(*size)
        made.show()
        with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
            made.start()
        qtbot.waitUntil(lambda: made.editor is not None, timeout=TIMEOUT)
        made_windows.append(made)
        return made

    made_windows: list[MainWindow] = []
    yield make
    for made in made_windows:
        made.session.worker.wait_idle()


def _graph_share(window: MainWindow) -> float:
    view = window.graph_view
    assert view is not None and view.isVisible()
    return view.width() * view.height() / (window.width() * window.height())


def test_at_1280x720_the_graph_gets_half_the_window(qtbot, window):
    shown = window()
    qtbot.waitUntil(lambda: shown.size() == QSize(1280, 720), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: _graph_share(shown) >= GRAPH_SHARE, timeout=TIMEOUT)


def test_the_window_never_asks_for_more_than_1280x720(qtbot, window):
    shown = window()
    hint = shown.minimumSizeHint().expandedTo(shown.minimumSize())
    assert hint.width() <= MIN_WINDOW.width() and hint.height() <= MIN_WINDOW.height()


def test_f5_shows_only_graph_caption_counter_and_code_and_brings_the_layout_back(qtbot, window):
    shown = window()
    qtbot.waitUntil(lambda: not shown._fresh_docks, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: shown.editor is not None, timeout=TIMEOUT)  # made after the first paint
    before = shown.docks.shown()
    share = _graph_share(shown)
    with qtbot.waitSignal(shown.presentation.toggled, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(shown, Qt.Key.Key_F5)
    assert blocker.args == [True] and shown.commands.presentation.isChecked()
    assert shown.docks.shown() == ["code"]
    # the code dock is shown in presentation's own turn; the panel in it may come a turn later
    qtbot.waitUntil(lambda: shown.code_panel.isVisible() and shown.code_panel.marks_shown, timeout=TIMEOUT)
    for chrome in (shown.menuBar(), shown.bars.toolbar, shown.statusBar(), shown.timeline_bar):
        assert not chrome.isVisible()
    for kept in (shown.caption_bar, shown.step_counter, shown.graph_view):
        assert kept.isVisible()
    qtbot.waitUntil(lambda: _graph_share(shown) > share, timeout=TIMEOUT)
    qtbot.keyClick(shown, Qt.Key.Key_Right)  # the keys still step
    assert shown.session.index == 1
    with qtbot.waitSignal(shown.presentation.toggled, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(shown, Qt.Key.Key_F5)
    assert blocker.args == [False] and not shown.commands.presentation.isChecked()
    assert shown.docks.shown() == before
    assert shown.bars.toolbar.isVisible() and shown.timeline_bar.isVisible()


def test_f5_before_the_editor_exists_presents_the_editor_once_it_is_made(qtbot, tmp_path):
    """F5 pressed while the program is still recording (the editor is made after the first graph
    is painted): the editor, once made, is what the code dock shows, and F5 brings every dock and
    the chrome back."""
    shown = MainWindow(AppSettings(tmp_path / "settings.ini"), "two-losses")
    qtbot.addWidget(shown)
    shown.set_size(1280, 720)
    shown.show()
    shown.activateWindow()
    qtbot.waitUntil(shown.isActiveWindow, timeout=TIMEOUT)
    before = shown.docks.shown()
    qtbot.keyClick(shown, Qt.Key.Key_F5)
    assert shown.editor is None and shown.presentation.active
    with qtbot.waitSignal(shown.session.recording_applied, timeout=TIMEOUT):
        shown.start()
    qtbot.waitUntil(lambda: shown.editor is not None, timeout=TIMEOUT)
    editor = shown.editor
    assert editor is not None
    qtbot.waitUntil(lambda: editor.isVisible() and shown.code_panel.marks_shown, timeout=TIMEOUT)
    assert shown.docks.shown() == ["code"] and shown.presentation.active
    assert shown.docks.dock("code").isAncestorOf(editor)
    for chrome in (shown.menuBar(), shown.bars.toolbar, shown.statusBar(), shown.timeline_bar):
        assert not chrome.isVisible()
    with qtbot.waitSignal(shown.presentation.toggled, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(shown, Qt.Key.Key_F5)
    assert blocker.args == [False]
    assert shown.docks.shown() == before
    assert shown.bars.toolbar.isVisible() and shown.timeline_bar.isVisible() and editor.isVisible()
    shown.session.worker.wait_idle()


def test_a_dock_hidden_from_the_view_menu_is_remembered(qtbot, window, tmp_path):
    settings_path = tmp_path / "docks.ini"
    first = window(AppSettings(settings_path))
    toggles = {action.text(): action for action in first.docks.toggle_actions()}
    assert set(toggles) == {"Code", "Details", "Calls", "Gradients", "Memory", "Legend"}
    toggles["Memory"].trigger()
    toggles["Calls"].trigger()
    assert first.docks.dock("memory").isHidden() and first.docks.dock("calls").isHidden()
    first.close()
    second = window(AppSettings(settings_path), size=None)
    assert second.docks.dock("memory").isHidden() and second.docks.dock("calls").isHidden()
    assert not second.docks.dock("gradients").isHidden()
    restore = {action.text(): action for action in second.docks.toggle_actions()}["Memory"]
    restore.trigger()
    assert not second.docks.dock("memory").isHidden()


def test_presentation_on_at_closing_remembers_the_layout_before_it(qtbot, window, tmp_path):
    settings_path = tmp_path / "f5.ini"
    first = window(AppSettings(settings_path))
    first.presentation.enter()
    first.close()
    second = window(AppSettings(settings_path), size=None)
    assert not second.presentation.active
    assert set(second.docks.shown()) == {"code", "details", "calls", "gradients", "memory", "legend"}


def test_a_remembered_geometry_bigger_than_the_screen_is_clamped(qtbot, window, tmp_path):
    settings_path = tmp_path / "big.ini"
    first = window(AppSettings(settings_path), size=(2400, 1600))
    first.close()
    second = window(AppSettings(settings_path), size=None)
    available = second.screen().availableGeometry()  # 800x800: less than the window's minimum
    least = second.minimumSizeHint()
    assert second.width() <= max(available.width(), least.width())
    assert second.height() <= max(available.height(), least.height())


# -- faked classroom screens (a child process) ----------------------------------------------------
def test_a_fresh_start_fits_each_classroom_screen(tmp_path):
    screens = [
        {"name": name, "x": 2000 * i, "y": 0, "width": w, "height": h, "logicalDpi": 96, "dpr": 1}
        for i, (name, (w, h)) in enumerate(ROOMS.items())
    ]
    config = tmp_path / "screens.json"
    config.write_text(json.dumps({"screens": screens}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    done = subprocess.run(
        [sys.executable, __file__, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(results) == set(ROOMS)
    for name, result in results.items():
        available = QRect(*result["available"])
        frame = QRect(*result["frame"])
        assert available.contains(frame), (name, result)
        assert frame.width() >= available.width() - 2 and frame.height() >= available.height() - 2, name
        assert result["graph_share"] >= GRAPH_SHARE, (name, result)


def _probe(folder: Path) -> dict[str, dict[str, object]]:
    """In the child: a fresh window on each screen, its frame and the graph's share of it."""
    from PySide6.QtCore import QEventLoop, QTimer

    app = QApplication.instance() or QApplication(sys.argv[:1])
    results: dict[str, dict[str, object]] = {}
    for screen in app.screens():
        window = MainWindow(AppSettings(folder / f"{screen.name()}.ini"), "two-losses")
        window.setScreen(screen)
        window.place_on(screen)
        loop = QEventLoop()
        settle = partial(QTimer.singleShot, 1500, loop.quit)  # the graph fitted, the docks sized
        window.session.recording_applied.connect(lambda _recording, then=settle: then())
        QTimer.singleShot(60_000, loop.quit)
        window.show()
        window.start()
        loop.exec()
        frame, view = window.frameGeometry(), window.graph_view
        share = view.width() * view.height() / (window.width() * window.height()) if view else 0.0
        results[screen.name()] = {
            "available": screen.availableGeometry().getRect(),
            "frame": frame.getRect(),
            "graph_share": round(share, 3),
        }
        window.session.worker.wait_idle()
        window.close()
    return results


if __name__ == "__main__":
    print(json.dumps(_probe(Path(sys.argv[1]))))
