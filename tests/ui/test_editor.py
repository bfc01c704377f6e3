"""The program editor: filling, inline errors at their line and column, signals, modified flag."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTextEdit
from pytestqt.qtbot import QtBot

from app.core.loading import builtin_names, load_builtin, program_from_dict
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.recorder import record
from app.ui.editor.details_dialog import DetailsDialog
from app.ui.editor.editor import ErrorMark, ProgramDetails, ProgramEditor, locate_error

HEAD = "import torch\n\nx = torch.tensor([1., 2.], requires_grad=True)\n"
DEBOUNCE_WAIT = 600


@pytest.fixture
def editor(qtbot: QtBot) -> ProgramEditor:
    widget = ProgramEditor()
    qtbot.addWidget(widget)
    widget.set_program(load_builtin("two-losses"))
    return widget


def _underline(widget: QTextEdit | object) -> tuple[int, int, str]:
    """(line, column, underlined text) of the wavy underline in a CodeEdit, 1-based."""
    selections = widget.extraSelections()  # type: ignore[attr-defined]
    cursor = selections[-1].cursor
    block = cursor.document().findBlock(cursor.selectionStart())
    return block.blockNumber() + 1, cursor.selectionStart() - block.position() + 1, cursor.selectedText()


# -- filling ----------------------------------------------------------------------


@pytest.mark.parametrize("name", builtin_names())
def test_fills_from_every_builtin_and_reads_back_equal(qtbot: QtBot, name: str) -> None:
    program = load_builtin(name)
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    editor.set_program(program)
    assert editor.current_program() == program
    assert editor.code_edit.text() == program.code
    assert editor.details() == ProgramDetails(program.name, program.title, program.summary, program.notes)
    assert editor.heading.text() == (program.title or program.name)
    assert not editor.is_modified()
    assert editor.error() is None


def test_the_twin_is_kept_though_it_is_not_edited_here(editor: ProgramEditor) -> None:
    program = load_builtin("rnn-no-detach")
    editor.set_program(program)
    editor.set_details(editor.details()._replace(title="Mine"))
    edited = editor.flush()
    assert edited is not None and edited.twin == "rnn-detach" and edited.title == "Mine"


# -- inline errors ----------------------------------------------------------------

BAD = [
    ("y = x.__class__\n", "x.__class__"),
    ("y = x.square()\n\nz = (lambda t: t.__class__)(y)\n", "t.__class__"),
    ("y = x.square()\nz = torch.save(x)\n", "torch.save(x)"),
    ("import string\n", "import string"),
    ("for i in range(3):\n    def __f(): pass\n", "def __f(): pass"),
]


@pytest.mark.parametrize(("tail", "bad"), BAD)
def test_bad_code_is_marked_at_its_line_and_column(
    editor: ProgramEditor, qtbot: QtBot, tail: str, bad: str
) -> None:
    code = HEAD + tail
    editor.code_edit.setPlainText(code)
    with qtbot.assertNotEmitted(editor.program_edited):
        assert editor.flush() is None
    line = next(n for n, text in enumerate(code.splitlines(), 1) if bad in text)
    text = code.splitlines()[line - 1]
    col = text.index(bad) + 1
    assert editor.error_mark() == ErrorMark("code", line, col)
    assert _underline(editor.code_edit) == (line, col, text[col - 1 :])  # to the end of the line
    assert editor.code_edit.error_line == line
    assert editor.error_label.isVisibleTo(editor)
    assert f"Program, line {line}, column {col}" in editor.error_label.text()
    assert editor.current_program() is None


def test_a_syntax_error_is_marked_where_python_finds_it(editor: ProgramEditor) -> None:
    code = HEAD + "y = (x.square(\n"
    editor.code_edit.setPlainText(code)
    assert editor.flush() is None
    with pytest.raises(SyntaxError) as python:
        compile(code, "<program>", "exec")
    mark = editor.error_mark()
    assert mark is not None and mark.part == "code" and mark.line == python.value.lineno
    assert "never closed" in editor.error_label.text()


@pytest.mark.parametrize(("tail", "bad"), BAD)
def test_the_mark_agrees_with_the_core_loader(editor: ProgramEditor, tail: str, bad: str) -> None:
    code = HEAD + tail
    editor.code_edit.setPlainText(code)
    editor.flush()
    with pytest.raises(ProgramError) as core:
        program_from_dict({"program": {"code": code}})
    err = editor.error()
    assert err is not None
    assert (err.field, err.line, err.col) == (core.value.field, core.value.line, core.value.col)
    assert (
        editor.error_mark() == locate_error(core.value) == ErrorMark("code", core.value.line, core.value.col)
    )


def test_a_bad_name_is_refused_in_the_details_dialog(qtbot: QtBot) -> None:
    dialog = DetailsDialog(ProgramDetails("fine", "", "", ""))
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("no spaces allowed")
    dialog.accept()
    assert dialog.result() != dialog.DialogCode.Accepted and dialog.error_label.isVisibleTo(dialog)
    assert dialog.error_label.text().startswith("Name:")
    dialog.name_edit.setText("fine-name")
    dialog.accept()
    assert dialog.result() == dialog.DialogCode.Accepted
    assert dialog.details() == ProgramDetails("fine-name", "", "", "")


def test_details_come_from_the_dialog_and_are_an_edit(editor: ProgramEditor, qtbot: QtBot) -> None:
    asked: list[ProgramDetails] = []

    def ask(details: ProgramDetails, parent: object) -> ProgramDetails:
        asked.append(details)
        return details._replace(title="Mine", notes="read me")

    editor.ask_details = ask
    with qtbot.waitSignal(editor.program_edited, timeout=1000) as blocker:
        editor.details_button.click()
    assert asked == [ProgramDetails.of(load_builtin("two-losses"))]
    assert (blocker.args[0].title, blocker.args[0].notes) == ("Mine", "read me")
    assert editor.is_modified() and editor.heading.text() == "Mine"
    editor.ask_details = lambda details, parent: None  # cancelled: nothing changes
    with qtbot.assertNotEmitted(editor.program_edited):
        editor.edit_details()


def test_the_code_is_the_whole_editor(editor: ProgramEditor) -> None:
    """Title, summary and notes are not fields beside the code any more."""
    from PySide6.QtWidgets import QLineEdit, QPlainTextEdit

    assert editor.findChildren(QLineEdit) == []
    assert editor.findChildren(QPlainTextEdit) == [editor.code_edit]


def test_an_error_found_when_recording_is_shown_by_show_error(editor: ProgramEditor) -> None:
    # The size cap is checked when the expression runs: the static check passes it.
    line = "x = torch.ones(10**12, requires_grad=True)"
    editor.code_edit.setPlainText(f"import torch\n\nw = torch.ones(2)\n{line}\n")
    program = editor.flush()
    assert program is not None and editor.error() is None
    with pytest.raises(ProgramError) as refused:
        record(program)
    assert (refused.value.field, refused.value.line) == ("program", 4)
    editor.show_error(refused.value)
    col = refused.value.col or 1
    assert editor.error_mark() == ErrorMark("code", 4, col)
    assert _underline(editor.code_edit)[:2] == (4, col)
    assert editor.error_label.text().startswith(f"Program, line 4, column {col}:")


# -- signals and the modified flag -----------------------------------------------------


def test_fixing_an_error_emits_the_valid_program_after_the_typing_pause(
    editor: ProgramEditor, qtbot: QtBot
) -> None:
    good = load_builtin("two-losses")
    editor.code_edit.setPlainText(good.code.replace("x.square()", "x.__class__"))
    editor.flush()
    errors: list[object] = []
    editor.error_changed.connect(errors.append)
    with qtbot.waitSignal(editor.program_edited, timeout=3000) as blocker:
        editor.code_edit.setPlainText(good.code)  # the debounce timer fires the check
    assert blocker.args == [good]
    assert errors == [None]
    assert editor.error() is None and editor.error_mark() is None
    assert editor.code_edit.extraSelections() == []
    assert not editor.error_label.isVisibleTo(editor)


def test_a_burst_of_typing_is_checked_once(editor: ProgramEditor, qtbot: QtBot) -> None:
    emitted: list[Program] = []
    editor.program_edited.connect(emitted.append)
    editor.code_edit.setFocus()
    editor.code_edit.moveCursor(editor.code_edit.textCursor().MoveOperation.End)
    with qtbot.waitSignal(editor.program_edited, timeout=3000):
        qtbot.keyClicks(editor.code_edit, "z = y * 2")
    qtbot.wait(50)
    assert len(emitted) == 1
    assert emitted[0].code == load_builtin("two-losses").code + "z = y * 2"


def test_tab_inserts_spaces(editor: ProgramEditor, qtbot: QtBot) -> None:
    editor.code_edit.setPlainText("")
    editor.code_edit.setFocus()
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Tab)
    assert editor.code_edit.text() == "    "


def test_an_edit_equal_to_the_current_program_is_not_emitted_twice(
    editor: ProgramEditor, qtbot: QtBot
) -> None:
    editor.code_edit.appendPlainText("z = 1")
    with qtbot.waitSignal(editor.program_edited, timeout=1000):
        editor.flush()
    with qtbot.assertNotEmitted(editor.program_edited):
        editor.flush()


def test_modified_flag_transitions(qtbot: QtBot) -> None:
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    seen: list[bool] = []
    editor.modified_changed.connect(seen.append)
    editor.set_program(load_builtin("two-losses"))
    assert not editor.is_modified() and seen == []
    qtbot.keyClicks(editor.code_edit, "#")
    assert editor.is_modified() and seen == [True]
    qtbot.keyClicks(editor.code_edit, "?")
    assert seen == [True]  # only transitions are signalled
    editor.set_modified(False)
    assert not editor.is_modified() and seen == [True, False]
    editor.code_edit.appendPlainText("z = y * 2")
    assert seen == [True, False, True]
    editor.set_program(load_builtin("forgot-retain"))
    assert not editor.is_modified() and seen == [True, False, True, False]
    edited = load_builtin("two-losses")
    editor.set_program(edited.with_code(edited.code.replace("retain_graph=True", "")), modified=True)
    assert editor.is_modified() and seen[-1] is True


def test_set_program_is_not_an_edit(editor: ProgramEditor, qtbot: QtBot) -> None:
    with qtbot.assertNotEmitted(editor.program_edited, wait=DEBOUNCE_WAIT):
        editor.set_program(load_builtin("forgot-retain"))
    assert not editor.is_modified()


def test_text_is_kept_exactly(editor: ProgramEditor) -> None:
    base = load_builtin("two-losses")
    odd = replace(
        base,
        summary="non\u00a0breaking\tspace\nand a new line",
        notes="",
        code=base.code + "# a\u00a0comment with a non-breaking space\n",
    )
    editor.set_program(odd)
    assert editor.current_program() == odd


def _type_at_end(editor: ProgramEditor, qtbot: QtBot, code: str) -> None:
    editor.code_edit.setPlainText(code)
    editor.code_edit.setFocus()
    editor.code_edit.moveCursor(editor.code_edit.textCursor().MoveOperation.End)


def test_return_keeps_the_indent_so_a_line_typed_in_a_loop_stays_in_it(
    editor: ProgramEditor, qtbot: QtBot
) -> None:
    import ast

    code = "h = x\nfor i in range(3):\n    h = h * w"
    _type_at_end(editor, qtbot, code)
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.code_edit, "h = h.detach()")
    assert editor.code_edit.text() == code + "\n    h = h.detach()"
    loop = ast.parse(editor.code_edit.text()).body[1]
    assert isinstance(loop, ast.For) and len(loop.body) == 2  # in the loop, where it was meant
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Return)
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Backspace)  # one level back: after the loop
    qtbot.keyClicks(editor.code_edit, "h.sum().backward()")
    tree = ast.parse(editor.code_edit.text())
    assert len(tree.body) == 3 and tree.body[2].col_offset == 0


def test_return_after_a_colon_opens_the_block(editor: ProgramEditor, qtbot: QtBot) -> None:
    _type_at_end(editor, qtbot, "for i in range(3):  # three steps")
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.code_edit, "y = x")
    assert editor.code_edit.text() == "for i in range(3):  # three steps\n    y = x"
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Return)
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Backspace)
    qtbot.keyClick(editor.code_edit, Qt.Key.Key_Backspace)  # the level gone: a plain backspace
    assert editor.code_edit.text() == "for i in range(3):  # three steps\n    y = x"
