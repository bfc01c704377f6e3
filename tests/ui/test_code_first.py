"""Code first: one code editor with Python colours from the palette, errors at the parser's place, the
running line marked Python Tutor style (and not while the text is no longer the recorded one), a click
on a line number to its first step, a call's keywords edited from its line."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.core import load_builtin, record
from app.core.lesson.lines import first_step_of_line, node_origin, node_tooltip
from app.core.model.program import Program
from app.ui.editor.code_edit import CodeEdit, error_colour
from app.ui.editor.code_panel import FAILED, MARKS_OFF, MARKS_OFF_SHORT, RUNNING, CodePanel
from app.ui.editor.editor import ProgramEditor
from app.ui.editor.python_highlighter import colour_for, token_spans
from app.ui.runtime.session import Session

TIMEOUT = 60_000


def _palette(base: str, text: str) -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor(base))
    palette.setColor(QPalette.ColorRole.Text, QColor(text))
    return palette


def _format_at(edit: CodeEdit | CodePanel, line: int, column: int) -> QTextCharFormat:
    """The highlighter's format of the character at (line, column), 0-based."""
    block = edit.document().findBlockByNumber(line)
    spots = block.layout().formats()  # held: each format lives as long as this list
    for spot in spots:
        if spot.start <= column < spot.start + spot.length:
            return QTextCharFormat(spot.format)
    return QTextCharFormat()


# -- colours ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("base", "text"), [("#ffffff", "#000000"), ("#1e1f22", "#ececec")])
def test_python_colours_come_from_the_palette(qtbot: QtBot, base: str, text: str) -> None:
    edit = CodeEdit()
    qtbot.addWidget(edit)
    palette = _palette(base, text)
    edit.setPalette(palette)
    edit.setPlainText("for i in range(3):  # loop\n    y = 'a' + 2.5\n")
    expected = {
        (0, 0): "keyword",
        (0, 9): "builtin",
        (0, 15): "number",
        (0, 20): "comment",
        (1, 8): "string",
        (1, 14): "number",
    }
    for (line, column), kind in expected.items():
        assert _format_at(edit, line, column).foreground().color() == colour_for(kind, palette), kind
    assert _format_at(edit, 1, 4).foreground().style() == Qt.BrushStyle.NoBrush  # a plain name


def test_python_colours_follow_a_theme_change(qtbot: QtBot) -> None:
    edit = CodeEdit()
    qtbot.addWidget(edit)
    light, dark = _palette("#ffffff", "#000000"), _palette("#1e1f22", "#ececec")
    edit.setPalette(light)
    edit.setPlainText("if True:\n    pass\n")
    assert _format_at(edit, 0, 0).foreground().color() == colour_for("keyword", light)
    edit.setPalette(dark)
    assert _format_at(edit, 0, 0).foreground().color() == colour_for("keyword", dark)
    assert colour_for("keyword", light) != colour_for("keyword", dark)


def test_triple_quoted_strings_carry_over_lines() -> None:
    first, state = token_spans('s = """one')
    assert first == [(4, 6, "string")] and state
    second, state = token_spans('two""" + x', 0, state)
    assert second == [(0, 6, "string")] and state == 0


def test_the_code_panel_is_the_programs_text_coloured_with_its_marks_in_the_margin(
    qtbot: QtBot, session: Session, two_losses
) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(two_losses)
    assert panel.text() == two_losses.program.code  # no numbers or markers in the text
    number = next(i for i, line in enumerate(two_losses.program.lines) if line.startswith("import"))
    keyword = colour_for("keyword", panel.palette())
    assert _format_at(panel, number, 0).foreground().color() == keyword
    marked = panel.highlighted_lines()
    assert marked and all(panel.marker(line) in (RUNNING, FAILED) for line in marked)
    assert panel.marker(number) == "" and not panel.isReadOnly()


# -- errors at the parser's place ---------------------------------------------------------------
@pytest.mark.parametrize("bad", ["y = x +* 2", "y = (x", "y = x.square())", "for i in range(3)"])
def test_a_language_error_is_underlined_at_the_parsers_line_and_column(qtbot: QtBot, bad: str) -> None:
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    code = f"import torch\n\nx = torch.ones(2)\n{bad}\n"
    editor.code_edit.setPlainText(code)
    assert editor.flush() is None
    with pytest.raises(SyntaxError) as python:
        compile(code, "<program>", "exec")
    mark = editor.error_mark()
    assert mark is not None and (mark.line, mark.col) == (python.value.lineno, python.value.offset)
    underline = editor.code_edit.extraSelections()[-1]
    cursor = underline.cursor
    block = cursor.document().findBlock(cursor.selectionStart())
    at_end = min(mark.col, len(block.text()))  # past the line's end: its last character
    assert (block.blockNumber() + 1, cursor.selectionStart() - block.position() + 1) == (mark.line, at_end)
    assert underline.format.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert underline.format.underlineColor() == error_colour(editor.code_edit.palette())
    assert editor.code_edit.error_message == editor.error().message  # the line's tooltip
    assert editor.error_label.text().endswith(editor.error().message)


def test_error_colours_follow_the_palette(qtbot: QtBot) -> None:
    edit = CodeEdit()
    qtbot.addWidget(edit)
    edit.setPlainText("a\nb\n")
    for palette in (_palette("#ffffff", "#000000"), _palette("#1e1f22", "#ececec")):
        edit.setPalette(palette)
        edit.mark_error(2, 1, "why")
        assert edit.extraSelections()[-1].format.underlineColor() == error_colour(palette)
    assert error_colour(_palette("#ffffff", "#000000")) != error_colour(_palette("#1e1f22", "#ececec"))


def test_a_pasted_snippet_is_kept_as_it_is(qtbot: QtBot) -> None:
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    snippet = "x = torch.ones(2, requires_grad=True)\r\n\ty = x * 2  # tab\n"
    editor.code_edit.insertPlainText(snippet)
    assert editor.code_edit.text() == snippet.replace("\r\n", "\n")


def test_new_starts_from_an_empty_program(qtbot: QtBot) -> None:
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    editor.set_program(load_builtin("two-losses"))
    program = editor.new_program()
    assert program == Program("") and editor.code_edit.text() == ""
    assert not editor.is_modified() and editor.source_path() is None
    assert len(record(program).timeline) == 1  # an empty program records (one step, nothing in it)


# -- the line that ran ----------------------------------------------------------------------------
def _expected(recording, index: int) -> list[int]:
    step = recording.timeline[index]
    if step.call is not None:
        call = recording.calls[step.call].call
        return list(range(call.line, call.end_line + 1))
    return [] if step.line is None else [step.line]


@pytest.mark.parametrize("name", ["forgot-retain", "rnn-no-detach", "logged-loss"])
def test_every_step_kind_marks_its_line_and_the_one_before_faintly(
    qtbot: QtBot, session: Session, name: str
) -> None:
    recording = record(load_builtin(name))
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(recording, mode="start")
    kinds = set()
    previous_marked: list[int] = []
    for index in range(len(recording.timeline)):
        session.go_to(index)
        kinds.add(recording.timeline[index].kind)
        marked = _expected(recording, index)
        assert panel.marked_line_numbers() == marked, index
        if previous_marked and previous_marked != marked:
            assert panel.previous_line_numbers() == previous_marked, index  # the faint mark
        assert set(panel.previous_line_numbers()).isdisjoint(marked) or not marked
        previous_marked = marked or previous_marked
    assert {"forward", "node", "call_end"} <= kinds


def test_the_current_line_stands_out_more_than_the_previous_one(
    qtbot: QtBot, session: Session, forgot_retain
) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    panel.resize(500, 300)
    panel.show()
    session.apply(forgot_retain, mode="start")
    session.go_to(forgot_retain.calls[0].first_step)
    qtbot.waitExposed(panel)
    image = panel.viewport().grab().toImage()
    current = panel._lines_rect(range(panel.marked_line_numbers()[0] - 1, panel.marked_line_numbers()[0]))
    before = panel._lines_rect(range(panel.previous_line_numbers()[0] - 1, panel.previous_line_numbers()[0]))
    assert current is not None and before is not None
    y_now, y_before = current.center().y(), before.center().y()
    bar_now, bar_before = image.pixelColor(1, y_now), image.pixelColor(1, y_before)
    assert bar_now.lightness() < bar_before.lightness()  # the strong bar is darker than the faint one
    page = image.pixelColor(panel.viewport().width() - 3, 2).lightness()
    assert abs(page - bar_now.lightness()) > abs(page - bar_before.lightness())


# -- a click on a line number --------------------------------------------------------------------
def _line_y(panel: CodePanel, line: int) -> int:
    block = panel.document().findBlockByNumber(line - 1)
    return round(panel.blockBoundingGeometry(block).translated(panel.contentOffset()).center().y())


def _click_line(qtbot: QtBot, panel: CodePanel, line: int) -> None:
    """A click on the line's number, in the margin."""
    qtbot.mouseClick(panel.line_numbers(), Qt.MouseButton.LeftButton, pos=QPoint(10, _line_y(panel, line)))


@pytest.mark.parametrize("name", ["forgot-retain", "rnn-no-detach"])
def test_a_click_on_a_line_jumps_to_its_first_step(qtbot: QtBot, session: Session, name: str) -> None:
    recording = record(load_builtin(name))
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    qtbot.waitExposed(panel)
    session.apply(recording, mode="start")
    session.end()
    ran = sorted({step.line for step in recording.timeline.steps if step.line is not None})
    for line in ran:
        panel.verticalScrollBar().setValue(max(line - 3, 0))
        with qtbot.waitSignal(panel.line_clicked, timeout=1000) as blocker:
            _click_line(qtbot, panel, line)
        assert blocker.args == [line]
        first = next(s.index for s in recording.timeline.steps if s.line == line)
        assert session.index == first == first_step_of_line(recording, line), line
        assert line in panel.marked_line_numbers()


def test_a_click_in_the_text_edits_and_does_not_jump(qtbot: QtBot, session: Session, forgot_retain) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    qtbot.waitExposed(panel)
    session.apply(forgot_retain, mode="start")
    session.home()
    line = forgot_retain.calls[0].call.line
    with qtbot.assertNotEmitted(panel.line_clicked):
        qtbot.mouseClick(panel.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(60, _line_y(panel, line)))
    assert session.index == 0 and panel.textCursor().blockNumber() == line - 1  # the cursor went there
    assert panel.line_numbers().toolTip().startswith("Click a line number")


def test_the_marks_are_off_while_the_text_is_not_the_recorded_one(
    qtbot: QtBot, session: Session, forgot_retain
) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(forgot_retain, mode="start")
    call = forgot_retain.calls[0].call
    session.go_to(forgot_retain.calls[0].first_step)
    assert panel.marked_line_numbers() == [call.line] and panel.keyword_actions(call.line)
    assert panel.note() == ""
    panel.moveCursor(panel.textCursor().MoveOperation.Start)
    panel.insertPlainText("# a new first line\n")  # every line moves down one
    assert panel.note() in (MARKS_OFF, MARKS_OFF_SHORT) and "return once it records again" in MARKS_OFF
    assert panel.marked_line_numbers() == [] and panel.previous_line_numbers() == []
    assert panel.extraSelections() == [] and panel.line_marker(call.line + 1) is None
    assert panel.keyword_actions(call.line) == [] and panel.go_to_line(call.line) is None
    panel.undo()  # the edit taken back: after the typing pause the marks return
    qtbot.waitUntil(lambda: panel.marked_line_numbers() == [call.line], timeout=2000)
    assert panel.note() == ""
    panel.keeps_typing = lambda program: True  # as in the window: the learner's recordings keep the text
    panel.insertPlainText("z = 1\n")
    edited = record(forgot_retain.program.with_code(panel.text()))
    panel.insertPlainText("w = 2\n")  # typed on while it recorded
    session.apply(edited, mode="keep")
    assert not panel.marks_shown and panel.text().startswith("z = 1\nw = 2\n")  # the typing stays
    assert panel.note() in (MARKS_OFF, MARKS_OFF_SHORT)
    typed = record(forgot_retain.program.with_code(panel.text()))
    session.apply(typed, mode="keep")  # the recording of the text as it is now
    assert panel.marks_shown and panel.text() == typed.program.code and panel.marked_line_numbers()
    assert panel.note() == ""


def test_a_line_that_never_ran_stays_put(qtbot: QtBot, session: Session, forgot_retain) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(forgot_retain)
    session.go_to(2)
    assert panel.go_to_line(1) is None and session.index == 2  # "import torch" makes no step


def test_a_node_names_the_line_that_made_it() -> None:
    recording = record(load_builtin("rnn-no-detach"))
    failed = recording.failed
    assert failed is not None and failed.failed_node is not None
    node = recording.graph.node(failed.failed_node)
    assert node_origin(node) == "made by line 12, iteration 1 of 3"
    assert node_tooltip(recording, node.id).splitlines()[-1] == "made by line 12, iteration 1 of 3"
    assert node_tooltip(recording, "no such node") == ""


# -- a call's keywords from its line -------------------------------------------------------------
def test_a_calls_line_offers_its_keywords_and_edits_the_text(
    qtbot: QtBot, session: Session, forgot_retain
) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(forgot_retain)
    first = forgot_retain.calls[0].call
    assert panel.keyword_actions(first.line - 1) == []  # the forward line makes no call
    actions = {a.text(): a for a in panel.keyword_actions(first.line)}
    retain = actions["retain_graph=True on this call"]
    assert not retain.isChecked()
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        retain.trigger()
    fixed = blocker.args[0]
    assert fixed.program.lines[first.line - 1] == "y.sum().backward(retain_graph=True)"
    assert fixed.calls[0].call.retain_graph is True and fixed.failed is None
    assert session.can_undo
    actions = {a.text(): a for a in panel.keyword_actions(first.line)}
    assert actions["retain_graph=True on this call"].isChecked()
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        session.undo()  # what Ctrl+Z does in the window
    assert blocker.args[0].program == forgot_retain.program and blocker.args[0].failed is not None


def test_create_graph_from_a_calls_line(qtbot: QtBot, session: Session, two_losses) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(two_losses)
    second = two_losses.calls[1].call
    create = next(a for a in panel.keyword_actions(second.line) if a.text().startswith("create_graph"))
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        create.trigger()
    assert blocker.args[0].calls[1].call.create_graph is True
    assert "create_graph=True" in blocker.args[0].program.lines[second.line - 1]


# -- in the window: Ctrl+N, Ctrl+Z, P, and the last good recording kept -----------------------------
@pytest.fixture
def window(qtbot: QtBot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from app.ui.runtime.settings import AppSettings
    from app.ui.window import dialogs
    from app.ui.window.main_window import MainWindow

    monkeypatch.setattr(dialogs, "ask", lambda parent, title, text, choices, default: "Discard")
    monkeypatch.setattr(dialogs, "inform", lambda parent, title, text: None)
    made = MainWindow(AppSettings(tmp_path / "settings.ini"), "forgot-retain")
    qtbot.addWidget(made)
    made.show()
    made.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is made, timeout=TIMEOUT)
    with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
        made.start()
    qtbot.waitUntil(lambda: made.editor is not None, timeout=TIMEOUT)
    yield made
    made.session.pause()
    made.session.worker.wait_idle()


def test_window_keys_for_the_program(qtbot: QtBot, window) -> None:
    recording = window.session.recording
    first = recording.calls[0].call
    # P shows the questions for the call ahead, and hides them again.
    qtbot.keyClick(window, Qt.Key.Key_P)
    assert window.predict_panel.active and window.predict_panel.isVisibleTo(window)
    assert window.commands.predict.isChecked() and window.predict_panel.call_index() is not None
    qtbot.keyClick(window, Qt.Key.Key_P)
    assert not window.predict_panel.active and not window.predict_panel.isVisibleTo(window)
    # A call's line edits its keyword and records again; Ctrl+Z takes it back.
    retain = next(a for a in window.code_panel.keyword_actions(first.line) if "=True" in a.text())
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        retain.trigger()
    assert blocker.args[0].failed is None and "retain_graph=True" in blocker.args[0].program.code
    qtbot.waitUntil(lambda: "retain_graph=True" in window.editor.code_edit.text(), timeout=TIMEOUT)
    window.activateWindow()
    window.code_panel.setFocus()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args[0].program.code == recording.program.code
    qtbot.waitUntil(lambda: window.editor.code_edit.text() == recording.program.code, timeout=TIMEOUT)
    # Ctrl+N: an empty program, recorded.
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args[0].program.code == "" and window.editor.code_edit.text() == ""


def test_a_late_recording_of_the_previous_program_does_not_undo_ctrl_n(qtbot: QtBot, window) -> None:
    previous = window.session.recording
    window.commands.new.trigger()  # Ctrl+N: the empty program is asked for, not yet recorded
    assert window.editor.code_edit.text() == "" and window.session.program == Program("")
    window.session.apply(previous, mode="keep")  # the previous program's recording, arriving late
    assert window.editor.code_edit.text() == "" and window.editor.last_program() == Program("")
    assert not window.editor.is_modified()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        pass
    assert blocker.args[0].program.code == "" and window.editor.code_edit.text() == ""
    assert window.code_panel.marks_shown


def test_the_window_keeps_the_last_good_recording_while_the_text_is_wrong(qtbot: QtBot, window) -> None:
    good = window.session.recording
    editor = window.editor
    editor.code_edit.setPlainText(good.program.code + "y = (x\n")
    with qtbot.assertNotEmitted(window.session.recording_applied, wait=800):
        editor.flush()
    assert window.session.recording is good and editor.error() is not None
    assert not window.session.busy
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        editor.code_edit.setPlainText(good.program.code + "z = y * 2\n")
        editor.flush()
    assert blocker.args[0].program.code.endswith("z = y * 2\n") and editor.error() is None


def test_the_note_sits_under_the_code_and_takes_no_line_from_it(
    qtbot: QtBot, session: Session, forgot_retain
) -> None:
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    panel.show()
    session.apply(forgot_retain)
    full = panel.viewport().geometry()
    panel.insertPlainText("# typed\n")
    note = panel.findChild(QLabel, "codeNote")
    assert note is not None and note.isVisible() and note.text() == MARKS_OFF
    view = panel.viewport().geometry()
    assert view.bottom() < full.bottom() and note.geometry().top() > view.bottom()  # below, not over
    assert note.geometry().height() >= note.heightForWidth(note.width())  # wrapped, nothing cut off
    panel.resize(220, 160)  # a narrow, short dock: the short note, the code keeps two thirds
    qtbot.waitUntil(lambda: note.text() == MARKS_OFF_SHORT, timeout=2000)
    assert note.geometry().height() <= panel.contentsRect().height() // 3
    panel.undo()
    qtbot.waitUntil(lambda: not note.isVisible(), timeout=2000)
    panel.resize(900, 400)
    qtbot.waitUntil(lambda: panel.viewport().geometry() == full, timeout=2000)


def test_the_marked_line_is_scrolled_into_view_when_lines_wrap(qtbot: QtBot, session: Session) -> None:
    """A narrow code column wraps long lines: the line that failed (the GAN's last backward) is
    brought into view all the same, at the error step and after a resize."""
    recording = record(load_builtin("gan-no-detach"))
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    panel.set_wrapped(True)
    panel.resize(220, 200)
    panel.show()
    qtbot.waitExposed(panel)
    session.apply(recording)  # at the error step
    failing = recording.failed.call.line - 1
    assert failing in panel.highlighted_lines()

    def shown() -> bool:
        return panel._lines_rect(range(failing, failing + 1), whole=True) is not None

    qtbot.waitUntil(shown, timeout=5000)
    panel.resize(200, 160)
    qtbot.waitUntil(shown, timeout=5000)
