"""The scenario editor: filling, inline errors at their line and column, signals, modified flag."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QTextEdit
from pytestqt.qtbot import QtBot

from app.core.loading import Call, Scenario, builtin_names, load_builtin, scenario_from_dict
from app.core.model.errors import ScenarioError
from app.core.recording.recorder import record
from app.ui.editor import (
    CALL_COLUMNS,
    ErrorMark,
    InputsError,
    ScenarioEditor,
    format_inputs,
    parse_inputs,
)

LOSS = CALL_COLUMNS.index("loss")


@pytest.fixture
def editor(qtbot: QtBot) -> ScenarioEditor:
    widget = ScenarioEditor()
    qtbot.addWidget(widget)
    widget.set_scenario(load_builtin("two-losses"))
    return widget


def _underline(widget: QTextEdit | object) -> tuple[int, int, str]:
    """(line, column, underlined text) of the wavy underline in a CodeEdit, 1-based."""
    selections = widget.extraSelections()  # type: ignore[attr-defined]
    cursor = selections[-1].cursor
    block = cursor.document().findBlock(cursor.selectionStart())
    return block.blockNumber() + 1, cursor.selectionStart() - block.position() + 1, cursor.selectedText()


def _combo(editor: ScenarioEditor, row: int, column: str) -> QComboBox:
    widget = editor.calls_table.cellWidget(row, CALL_COLUMNS.index(column))
    assert isinstance(widget, QComboBox)
    return widget


# -- filling ----------------------------------------------------------------------


@pytest.mark.parametrize("name", builtin_names())
def test_fills_from_every_builtin_and_reads_back_equal(qtbot: QtBot, name: str) -> None:
    scenario = load_builtin(name)
    editor = ScenarioEditor()
    qtbot.addWidget(editor)
    editor.set_scenario(scenario)
    assert editor.current_scenario() == scenario
    assert editor.forward_edit.text() == scenario.forward
    assert editor.title_edit.text() == scenario.title
    assert editor.calls_table.rowCount() == len(scenario.calls)
    for row, call in enumerate(scenario.calls):
        assert editor.calls_table.item(row, LOSS).text() == call.loss
        assert _combo(editor, row, "kind").currentText() == call.kind
        expected_retain = {None: "unset", True: "true", False: "false"}[call.retain_graph]
        assert _combo(editor, row, "retain_graph").currentText() == expected_retain
    assert not editor.is_modified()
    assert editor.error() is None


def test_inputs_text_round_trips_multi_line_expressions() -> None:
    inputs = (("x", "torch.tensor([1.,\n 2.],\n\nrequires_grad=True)"), ("w", " torch.ones(2)"))
    text = format_inputs(inputs)
    assert text.splitlines()[0] == "x = torch.tensor([1.,"
    assert parse_inputs(text).inputs == inputs


def test_inputs_text_refuses_a_line_without_equals_and_duplicates() -> None:
    with pytest.raises(InputsError) as bad_line:
        parse_inputs("x = torch.ones(2)\ntorch.ones(3)")
    assert (bad_line.value.line, bad_line.value.col) == (2, 1)
    with pytest.raises(InputsError, match="given twice") as twice:
        parse_inputs("x = torch.ones(2)\n\nx = torch.ones(3)")
    assert twice.value.line == 3


# -- inline errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "bad"),
    [
        ("y = x.__class__\n", "x.__class__"),
        ("y = x.square()\nz = undefined_name + 1\n", "undefined_name + 1"),
        ("y = x.square()\n\nz = (lambda t: t)(y)\n", "lambda t: t"),
        ("y = x.square()\nz = torch.save(x)\n", "torch.save(x)"),
    ],
)
def test_bad_forward_code_is_marked_at_its_line_and_column(
    editor: ScenarioEditor, qtbot: QtBot, code: str, bad: str
) -> None:
    editor.forward_edit.setPlainText(code)
    with qtbot.assertNotEmitted(editor.scenario_edited):
        assert editor.flush() is None
    line = next(n for n, text in enumerate(code.splitlines(), 1) if bad in text)
    text = code.splitlines()[line - 1]
    col = text.index(bad) + 1
    assert editor.error_mark() == ErrorMark("forward", line, col)
    assert _underline(editor.forward_edit) == (line, col, text[col - 1 :])  # to the end of the line
    assert editor.forward_edit.error_line == line
    assert editor.error_label.isVisibleTo(editor)
    assert f"Forward code, line {line}, column {col}" in editor.error_label.text()
    assert editor.current_scenario() is None


def test_the_mark_agrees_with_the_core_parser(editor: ScenarioEditor) -> None:
    code = "y = x.square()\nz = y._version\n"
    editor.forward_edit.setPlainText(code)
    editor.flush()
    data = {"name": "t", "title": "", "summary": "", "inputs": {"x": "torch.ones(2)"}}
    with pytest.raises(ScenarioError) as core:
        scenario_from_dict({**data, "forward": {"code": code}, "calls": [{"loss": "y.sum()"}]})
    err = editor.error()
    assert err is not None
    assert (err.field, err.line, err.col) == (core.value.field, core.value.line, core.value.col)
    assert editor.error_mark() == ErrorMark("forward", core.value.line, core.value.col)


def test_undefined_name_in_a_loss_marks_that_cell(editor: ScenarioEditor, qtbot: QtBot) -> None:
    editor.calls_table.item(1, LOSS).setText("(y * 3).sum() + q")
    with qtbot.assertNotEmitted(editor.scenario_edited):
        editor.flush()
    assert editor.error_mark() == ErrorMark("calls", 1, len("(y * 3).sum() + ") + 1, 1, "loss")
    cell = editor.calls_table.item(1, LOSS)
    assert cell.background().color().alpha() > 0
    assert "name 'q' is not defined" in cell.toolTip()
    assert editor.calls_table.verticalHeaderItem(1).text().startswith("!")
    assert editor.calls_table.verticalHeaderItem(0).text() == "1"
    assert editor.error_label.text().startswith("Call 2, loss, column 17:")


def test_an_input_error_is_marked_on_that_inputs_line(editor: ScenarioEditor) -> None:
    line2 = "w = torch.ones(2) * zz"
    editor.inputs_edit.setPlainText(f"x = torch.tensor([1., 2.], requires_grad=True)\n{line2}")
    assert editor.flush() is None
    col = line2.index("zz") + 1
    assert editor.error_mark() == ErrorMark("inputs", 2, col)
    assert _underline(editor.inputs_edit)[:2] == (2, col)


def test_a_malformed_inputs_line_is_marked(editor: ScenarioEditor) -> None:
    editor.inputs_edit.setPlainText("x = torch.ones(2, requires_grad=True)\n  \ny == 3")
    assert editor.flush() is None
    assert editor.error_mark() == ErrorMark("inputs", 3, 1)


def test_bind_on_a_backward_call_marks_the_bind_cell(editor: ScenarioEditor) -> None:
    editor.calls_table.item(0, CALL_COLUMNS.index("bind")).setText("g")
    assert editor.flush() is None
    mark = editor.error_mark()
    assert mark is not None and (mark.part, mark.row, mark.column) == ("calls", 0, "bind")


def test_a_bad_name_marks_the_name_field(editor: ScenarioEditor) -> None:
    editor.name_edit.setText("no spaces allowed")
    editor.name_edit.textEdited.emit("no spaces allowed")
    assert editor.flush() is None
    assert editor.error_mark() == ErrorMark("name")
    assert "border" in editor.name_edit.styleSheet()


def test_an_error_found_when_recording_is_shown_by_show_error(editor: ScenarioEditor) -> None:
    # The size cap is checked when the expression runs: the static check passes it.
    line = "x = torch.ones(10**12, requires_grad=True)"
    editor.inputs_edit.setPlainText(f"w = torch.ones(2)\n{line}")
    scenario = editor.flush()
    assert scenario is not None and editor.error() is None
    with pytest.raises(ScenarioError) as refused:
        record(scenario)
    assert refused.value.field == "inputs.x"
    editor.show_error(refused.value)
    col = len("x = ") + (refused.value.col or 1)
    assert editor.error_mark() == ErrorMark("inputs", 2, col)
    assert _underline(editor.inputs_edit)[:2] == (2, col)
    assert editor.error_label.text().startswith(f"Inputs, line 2, column {col}:")


# -- signals and the modified flag -----------------------------------------------------


def test_fixing_an_error_emits_the_valid_scenario_after_the_typing_pause(
    editor: ScenarioEditor, qtbot: QtBot
) -> None:
    editor.forward_edit.setPlainText("y = x.__class__\n")
    editor.flush()
    errors: list[object] = []
    editor.error_changed.connect(errors.append)
    with qtbot.waitSignal(editor.scenario_edited, timeout=3000) as blocker:
        editor.forward_edit.setPlainText("y = x.square()\n")  # the debounce timer fires the check
    assert blocker.args == [load_builtin("two-losses")]
    assert errors == [None]
    assert editor.error() is None and editor.error_mark() is None
    assert editor.forward_edit.extraSelections() == []
    assert not editor.error_label.isVisibleTo(editor)


def test_a_burst_of_typing_is_checked_once(editor: ScenarioEditor, qtbot: QtBot) -> None:
    emitted: list[Scenario] = []
    editor.scenario_edited.connect(emitted.append)
    editor.forward_edit.setFocus()
    editor.forward_edit.moveCursor(editor.forward_edit.textCursor().MoveOperation.End)
    with qtbot.waitSignal(editor.scenario_edited, timeout=3000):
        qtbot.keyClicks(editor.forward_edit, "z = y * 2")
    qtbot.wait(50)
    assert len(emitted) == 1
    assert emitted[0].forward == "y = x.square()\nz = y * 2"


def test_an_edit_equal_to_the_current_scenario_is_not_emitted_twice(
    editor: ScenarioEditor, qtbot: QtBot
) -> None:
    editor.title_edit.setText("New title")
    with qtbot.waitSignal(editor.scenario_edited, timeout=1000):
        editor.flush()
    with qtbot.assertNotEmitted(editor.scenario_edited):
        editor.flush()


def test_modified_flag_transitions(qtbot: QtBot) -> None:
    editor = ScenarioEditor()
    qtbot.addWidget(editor)
    seen: list[bool] = []
    editor.modified_changed.connect(seen.append)
    editor.set_scenario(load_builtin("two-losses"))
    assert not editor.is_modified() and seen == []
    qtbot.keyClicks(editor.title_edit, "!")
    assert editor.is_modified() and seen == [True]
    qtbot.keyClicks(editor.title_edit, "?")
    assert seen == [True]  # only transitions are signalled
    editor.set_modified(False)
    assert not editor.is_modified() and seen == [True, False]
    _combo(editor, 0, "retain_graph").setCurrentText("false")
    assert seen == [True, False, True]
    editor.set_scenario(load_builtin("forgot-retain"))
    assert not editor.is_modified() and seen == [True, False, True, False]
    editor.set_scenario(load_builtin("two-losses").with_call(0, retain_graph=None), modified=True)
    assert editor.is_modified() and seen[-1] is True


def test_set_scenario_is_not_an_edit(editor: ScenarioEditor, qtbot: QtBot) -> None:
    with qtbot.assertNotEmitted(editor.scenario_edited, wait=DEBOUNCE_WAIT):
        editor.set_scenario(load_builtin("forgot-retain"))
    assert not editor.is_modified()


DEBOUNCE_WAIT = 600


# -- the calls table in both directions -------------------------------------------------


def test_call_options_edit_the_scenario(editor: ScenarioEditor) -> None:
    _combo(editor, 0, "retain_graph").setCurrentText("unset")
    create = editor.calls_table.item(1, CALL_COLUMNS.index("create_graph"))
    create.setCheckState(Qt.CheckState.Checked)
    scenario = editor.flush()
    expected = load_builtin("two-losses").with_call(0, retain_graph=None).with_call(1, create_graph=True)
    assert scenario == expected
    assert scenario.calls[1].effective_retain is True


def test_a_grad_call_with_inputs_and_bind(editor: ScenarioEditor) -> None:
    _combo(editor, 1, "kind").setCurrentText("grad")
    editor.calls_table.item(1, CALL_COLUMNS.index("inputs")).setText(" x , ")
    editor.calls_table.item(1, CALL_COLUMNS.index("bind")).setText("g")
    scenario = editor.flush()
    assert scenario is not None
    assert scenario.calls[1] == Call("grad", "(y * 3).sum()", None, False, ("x",), "g")


def test_add_and_remove_calls(editor: ScenarioEditor, qtbot: QtBot) -> None:
    editor.add_call_button.click()
    assert editor.calls_table.rowCount() == 3 and editor.is_modified()
    assert editor.flush() is None  # a new call has no loss yet
    assert editor.error_mark() == ErrorMark("calls", 1, 1, 2, "loss")
    editor.calls_table.item(2, LOSS).setText("y.mean()")
    scenario = editor.flush()
    assert scenario is not None and scenario.calls[2] == Call("backward", "y.mean()")
    editor.calls_table.setCurrentCell(0, LOSS)
    editor.remove_call_button.click()
    scenario = editor.flush()
    assert scenario is not None
    assert [c.loss for c in scenario.calls] == ["(y * 3).sum()", "y.mean()"]


def test_text_is_kept_exactly(editor: ScenarioEditor) -> None:
    base = load_builtin("two-losses")
    odd = replace(base, summary="non\u00a0breaking\tspace\nand a new line", notes="")
    editor.set_scenario(odd)
    assert editor.current_scenario() == odd
