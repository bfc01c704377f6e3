"""Small things the room saw: the corner map over nodes, the toolbar after a text size and back,
the title bar, the unsaved-changes question after an undo, a refused file beside an old graph."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from app.ui.window import dialogs
from app.ui.window.main_window import MainWindow
from tests.support.room_window import sized_window

TIMEOUT = 30_000


@pytest.fixture
def asked(monkeypatch) -> list[str]:
    """The questions the window asked (each answered Discard)."""
    questions: list[str] = []

    def ask(parent, title, text, choices, default):
        questions.append(text)
        return "Discard"

    monkeypatch.setattr(dialogs, "ask", ask)
    monkeypatch.setattr(dialogs, "inform", lambda parent, title, text: None)
    return questions


@pytest.fixture
def window(qtbot, tmp_path, asked):
    made_windows: list[MainWindow] = []

    def make(
        scale: float = 1.0, program: str = "two-losses", size: tuple[int, int] = (1280, 720)
    ) -> MainWindow:
        made = sized_window(qtbot, tmp_path, scale, program, size)
        made_windows.append(made)
        return made

    yield make
    for made in made_windows:
        made.session.worker.wait_idle()


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_corner_map_never_covers_a_node(qtbot, window, scale):
    shown = window(scale, "gan-no-detach")
    view, session = shown.graph_view, shown.session
    minimap = view.minimap
    seen = 0
    for index in range(0, session.last_index + 1, 2):
        session.go_to(index)
        qtbot.wait(60)
        view.viewport().repaint()
        if not minimap.isVisible():
            continue
        seen += 1
        corner = minimap.geometry()
        for node_id, item in view.graph_scene.nodes.items():
            drawn = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
            assert not drawn.intersects(corner), (index, node_id, drawn, corner)
    assert seen  # zoomed in on a step's node, the corner showed


def test_the_toolbar_is_as_it_was_after_text_size_1_5_and_back(qtbot, window):
    shown = window(1.0)
    qtbot.wait(100)
    before = {w.objectName() or type(w).__name__: w.width() for w in (shown.device_selector,)}
    spin_shown = shown.bars.font_spin.isVisible()
    assert spin_shown  # the text size field is on the bar, not in its overflow menu
    shown.appearance.set_font_scale(1.5)
    qtbot.wait(200)
    shown.appearance.set_font_scale(1.0)
    qtbot.wait(200)
    after = {w.objectName() or type(w).__name__: w.width() for w in (shown.device_selector,)}
    assert after == before
    assert shown.bars.font_spin.isVisible()


def test_the_title_bar_names_the_program_and_leaves_the_application_to_qt(qtbot, window):
    shown = window(1.0)
    # Qt adds the application's display name after a window's title on every platform that
    # draws titles (QPlatformWindow::formatWindowTitle): the title itself must not say it again.
    assert QApplication.applicationDisplayName()
    assert shown.windowTitle().startswith(shown.session.recording.program.name)
    assert "Autograd Lens" not in shown.windowTitle()


def test_a_change_taken_back_leaves_nothing_to_save(qtbot, window, asked):
    shown = window(1.0, "forgot-retain")
    session, editor = shown.session, shown.editor
    original = session.recording.program.code
    fix = session.recording.calls[0].call
    retain = next(a for a in shown.code_panel.keyword_actions(fix.line) if "=True" in a.text())
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        retain.trigger()  # a change from the window: the text is not the saved one
    assert blocker.args[0].program.code != original
    assert editor.is_modified()
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        shown.commands.undo.trigger()  # Ctrl+Z: the text as it was opened
    assert blocker.args[0].program.code == original
    qtbot.waitUntil(lambda: editor.code_edit.text() == original, timeout=TIMEOUT)
    assert not editor.is_modified()
    assert shown.file_menu.maybe_discard() and asked == []  # quitting asks nothing
    editor.code_edit.setPlainText(original + "\n# a note\n")  # typed: something to save again
    assert editor.is_modified()
    editor.code_edit.setPlainText(original)  # and typed back
    assert not editor.is_modified()


REFUSED = (  # the language refuses `string`; the editor shows it with its refusal and the offer
    "import string\n"
    "import torch\n"
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "y = (x * (len(string.digits) // 10)).sum()\n"
    "y.backward()\n"
)


def test_a_refused_file_opened_leaves_no_old_graph_or_caption_beside_it(qtbot, window, monkeypatch, tmp_path):
    shown = window(1.0)
    old_caption = shown.caption_bar.caption()
    assert old_caption and shown.graph_area.currentWidget() is shown.graph_area.page
    script = tmp_path / "own_script.py"
    script.write_text(REFUSED, encoding="utf-8")
    monkeypatch.setattr(dialogs, "choose_open_path", lambda parent: script)
    shown.commands.open.trigger()
    assert shown.editor.code_edit.text() == REFUSED and shown.editor.error() is not None
    assert shown.session.recording is None
    assert shown.graph_area.currentWidget() is shown.graph_area.message  # not the old graph
    assert "refused" in shown.graph_area.message.text()
    assert shown.caption_bar.caption() == ""  # not the old caption
    assert shown.step_counter.number.text() == "Step 0 / 0"
