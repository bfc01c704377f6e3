"""The window on a classroom's small screen at a large text scale, and remembered panels.

A screen is faked by the window's size and a maximum size of the same (the offscreen
platform's one screen is 800x800): what the window asks for beyond it would be cut
off on a real projector.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QToolButton, QWidget

from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import SUMMARY_LINES, MainWindow

TIMEOUT = 30_000
ROOMS = [((1280, 720), 1.0), ((1280, 720), 1.3), ((1280, 720), 1.5), ((1024, 640), 1.0)]
BUSIEST = ("logged-loss", "projector")  # memory advice, the largest theme: 744-822 px asked at 1.5


@pytest.fixture
def window(qtbot, tmp_path):
    made_windows: list[MainWindow] = []

    def make(
        settings: AppSettings | None = None, size: tuple[int, int] = (1280, 720), program: str = "two-losses"
    ) -> MainWindow:
        made = MainWindow(settings or AppSettings(tmp_path / "settings.ini"), program)
        qtbot.addWidget(made)
        made.set_size(*size)
        made.show()
        with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
            made.start()
        qtbot.waitUntil(lambda: made.editor is not None and not made._fresh_docks, timeout=TIMEOUT)
        made_windows.append(made)
        return made

    yield make
    for made in made_windows:
        made.session.worker.wait_idle()


def _on_screen(window: MainWindow, size: tuple[int, int]) -> None:
    """The window held to a screen of ``size``, as a window manager holds it to a real one."""
    window.setMaximumSize(*size)
    window.resize(*size)


def _inside(window: MainWindow, widget: QWidget) -> bool:
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    return widget.isVisible() and window.rect().contains(rect)


def _unreachable(window: MainWindow) -> list[str]:
    """The controls that are neither inside the window nor behind a toolbar's » button inside it."""
    lost = []
    for bar in (window.bars.toolbar, window.bars.playback_bar):
        more = bar.findChild(QToolButton, "qt_toolbar_ext_button")
        overflow = more is not None and _inside(window, more)
        for action in bar.actions():
            if action.isSeparator():
                continue
            widget = bar.widgetForAction(action)
            if widget is not None and not _inside(window, widget) and not overflow:
                lost.append(action.text() or type(widget).__name__)
    bar = window.timeline_bar
    for button in (
        bar.home_button,
        bar.prev_call_button,
        bar.prev_button,
        bar.play_button,
        bar.next_button,
        bar.next_call_button,
        bar.end_button,
    ):
        if not _inside(window, button):
            lost.append(button.text())
    return lost


def _fits(hint: QSize, size: tuple[int, int]) -> bool:
    return hint.width() <= size[0] and hint.height() <= size[1]


@pytest.mark.parametrize("busiest", [False, True], ids=["two-losses", "logged-loss-predicting"])
@pytest.mark.parametrize(("size", "scale"), ROOMS)
def test_every_control_and_the_graph_stay_on_a_small_screen(qtbot, window, size, scale, busiest):
    program, theme = BUSIEST if busiest else ("two-losses", "light")
    shown = window(size=size, program=program)
    _on_screen(shown, size)
    shown.set_theme(theme)
    shown.commands.predict.setChecked(busiest)  # the question and its choices in the code column
    shown.set_font_scale(scale)
    for index in range(shown.session.last_index + 1):  # every caption and panel text at that scale
        shown.session.go_to(index)
        qtbot.wait(5)
    qtbot.waitUntil(lambda: shown.size() == QSize(*size), timeout=TIMEOUT)
    hint = shown.minimumSizeHint().expandedTo(shown.minimumSize())
    assert _fits(hint, size), (hint, size, scale)
    qtbot.waitUntil(lambda: not _unreachable(shown), timeout=TIMEOUT)
    view = shown.graph_view
    assert view is not None and _inside(shown, view)
    assert view.width() >= size[0] // 3 and view.height() >= size[1] // 4, view.size()


def test_resetting_the_text_scale_restores_the_minimum(qtbot, window):
    shown = window()
    _on_screen(shown, (1280, 720))
    qtbot.wait(200)
    stage = shown.centralWidget()
    before, stage_before = shown.minimumSizeHint(), stage.minimumSizeHint()
    shown.set_font_scale(1.5)
    for index in range(shown.session.last_index + 1):  # the tallest captions at 1.5
        shown.session.go_to(index)
        qtbot.wait(5)
    shown.session.go_to(0)
    qtbot.waitUntil(lambda: shown.minimumSizeHint().height() > before.height(), timeout=TIMEOUT)
    shown.appearance.reset()
    qtbot.waitUntil(lambda: shown.minimumSizeHint() == before, timeout=TIMEOUT)
    # the graph's column too: the caption and counter kept their height at 1.5 (+106 px)
    qtbot.waitUntil(lambda: stage.minimumSizeHint() == stage_before, timeout=TIMEOUT)


def _graph_share(window: MainWindow) -> float:
    view = window.graph_view
    assert view is not None and view.isVisible()
    return view.width() * view.height() / (window.width() * window.height())


def test_panels_saved_on_a_large_screen_are_refitted_on_a_small_one(qtbot, window, tmp_path):
    settings_path = tmp_path / "big.ini"
    first = window(AppSettings(settings_path), size=(1920, 1080))
    qtbot.waitUntil(lambda: first.docks.dock("gradients").x() > first.width() // 2, timeout=TIMEOUT)
    first.docks.dock("memory").close()
    first.close()
    second = window(AppSettings(settings_path), size=(1280, 720))
    _on_screen(second, (1280, 720))
    qtbot.waitUntil(lambda: _graph_share(second) >= 0.5, timeout=TIMEOUT)
    assert second.docks.dock("memory").isHidden()  # what was closed stays closed
    assert not second.docks.dock("gradients").isHidden()


def test_reset_panels_brings_every_panel_back_docked(qtbot, window):
    shown = window()
    docks = shown.docks
    docks.dock("legend").setFloating(True)
    docks.dock("calls").close()
    shown.resizeDocks([docks.dock("code")], [900], Qt.Orientation.Horizontal)  # the graph squeezed
    entries = {action.text(): action for action in shown.menu_named("&View").actions() if action.menu()}
    panels = {action.text(): action for action in entries["&Panels"].menu().actions()}
    panels["&Reset panels"].trigger()
    assert set(docks.shown()) == {"code", "details", "calls", "gradients", "memory", "legend"}
    assert not any(dock.isFloating() for dock in docks.docks.values())
    qtbot.waitUntil(lambda: _graph_share(shown) >= 0.5, timeout=TIMEOUT)


def test_a_closed_floating_panel_comes_back_docked(qtbot, window):
    shown = window()
    legend = shown.docks.dock("legend")
    toggle = legend.toggleViewAction()
    legend.setFloating(True)
    toggle.trigger()  # closed while floating
    assert legend.isHidden()
    toggle.trigger()
    assert not legend.isHidden() and not legend.isFloating()
    assert shown.dockWidgetArea(legend) == Qt.DockWidgetArea.LeftDockWidgetArea  # where it was


def test_a_long_summary_leaves_the_editor_its_room_at_a_large_text_scale(qtbot, window):
    shown = window()
    _on_screen(shown, (1280, 720))
    shown.set_font_scale(1.5)
    room, summary = shown.code_column.summary_room, shown.code_column.summary
    lines = SUMMARY_LINES * summary.fontMetrics().lineSpacing() + 2
    qtbot.waitUntil(lambda: room.height() == lines, timeout=TIMEOUT)  # it would take more: it scrolls
    assert summary.heightForWidth(room.viewport().width()) > room.height()
    editor = shown.code_panel
    assert editor.height() >= 3 * editor.fontMetrics().lineSpacing(), editor.height()
    shown.appearance.reset()
    qtbot.waitUntil(lambda: room.height() == summary.heightForWidth(room.viewport().width()), timeout=TIMEOUT)
