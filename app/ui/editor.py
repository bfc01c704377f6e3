"""The scenario editor: inputs, forward code and calls, checked as you type.

Every edit is checked (after a short pause) by the same parser that loads
files, :func:`app.core.loading.scenario_from_dict`, so the editor can never
produce a scenario the rest of the program would refuse. An error is shown
where it is: the line and column in the inputs or forward code (wavy
underline, marked line number), or the cell of the calls table, plus one
sentence under the editor. While the text is wrong nothing is emitted, so the
window keeps showing the last valid recording.

The small code editor with line numbers (:class:`CodeEdit`) lives here too:
it exists only to serve this widget.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.loading import Call, Scenario, scenario_from_dict
from app.core.model.errors import ScenarioError

__all__ = [
    "CALL_COLUMNS",
    "DEBOUNCE_MS",
    "RETAIN_CHOICES",
    "CodeEdit",
    "ErrorMark",
    "InputsError",
    "ScenarioEditor",
    "format_inputs",
    "parse_inputs",
    "plain_text",
]

DEBOUNCE_MS = 400
CALL_COLUMNS = ("kind", "loss", "retain_graph", "create_graph", "inputs", "bind")
CALL_HEADERS = ("Kind", "Loss", "retain_graph", "create_graph", "Inputs", "Bind")
KINDS = ("backward", "grad")
RETAIN_CHOICES = ("unset", "true", "false")  # unset: PyTorch's default (follows create_graph)
TEXT_FIELDS = ("name", "title", "summary", "notes")
CONTINUATION_INDENT = "    "
ERROR_COLOUR = QColor(211, 47, 47)
ERROR_BACKGROUND = QColor(211, 47, 47, 60)  # translucent: readable on light and dark themes
ERROR_STYLE = "border: 2px solid rgb(211, 47, 47);"

_INPUT_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*=(?!=)[ \t]?")
_CALL_FIELD = re.compile(r"^calls\[(\d+)\](?:\.(\w+))?$")


# -- the inputs text: one ``name = expression`` per line ---------------------------


class InputsError(ScenarioError):
    """A line of the inputs box that is not ``name = expression``.

    Unlike other errors, ``line`` and ``col`` count in the inputs box itself.
    """


@dataclass(frozen=True)
class InputLines:
    """Where each input's expression sits in the inputs box.

    ``starts[name][k]`` is (box line, characters before the expression) for
    line ``k + 1`` of that expression.
    """

    inputs: tuple[tuple[str, str], ...]
    starts: dict[str, list[tuple[int, int]]]


def format_inputs(inputs: Sequence[tuple[str, str]]) -> str:
    """``name = expression`` per input; later lines of an expression are indented.

    >>> print(format_inputs([("x", "torch.ones(2)"), ("w", "torch.tensor([1.,\\n2.])")]))
    x = torch.ones(2)
    w = torch.tensor([1.,
        2.])
    """
    lines = []
    for name, expr in inputs:
        first, *rest = expr.split("\n")
        lines.append(f"{name} = {first}")
        lines += [CONTINUATION_INDENT + line for line in rest]
    return "\n".join(lines)


def parse_inputs(text: str) -> InputLines:
    """The inverse of :func:`format_inputs`; raises :class:`InputsError`.

    >>> parse_inputs("x = torch.ones(2)\\n\\nw = x").inputs
    (('x', 'torch.ones(2)'), ('w', 'x'))
    """
    found: dict[str, list[str]] = {}
    starts: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if current is not None and line[:1] in (" ", "\t"):
            body = _strip_indent(line)
            found[current].append(body)
            starts[current].append((number, len(line) - len(body)))
            continue
        current = None
        if not line.strip() or line.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        match = _INPUT_LINE.match(line, indent)
        if match is None:
            raise InputsError(
                "write one input per line as name = expression, e.g. x = torch.ones(2, requires_grad=True)",
                field="inputs",
                line=number,
                col=indent + 1,
            )
        current = match[1]
        if current in found:
            first = starts[current][0][0]
            raise InputsError(
                f"input '{current}' is given twice (first on line {first})",
                field="inputs",
                line=number,
                col=1,
            )
        found[current] = [line[match.end() :]]
        starts[current] = [(number, match.end())]
    inputs = tuple((name, "\n".join(lines)) for name, lines in found.items())
    return InputLines(inputs, starts)


def _strip_indent(line: str) -> str:
    if line.startswith("\t"):
        return line[1:]
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, len(CONTINUATION_INDENT)) :]


# -- where an error goes ----------------------------------------------------------


@dataclass(frozen=True)
class ErrorMark:
    """Where the editor shows an error.

    ``part``: "name", "title", "summary", "notes", "inputs", "forward", "calls"
    or "general". ``line``/``col`` (1-based) count in that part's box;
    ``row`` (0-based) and ``column`` (a name from :data:`CALL_COLUMNS`) locate a
    cell of the calls table.
    """

    part: str
    line: int | None = None
    col: int | None = None
    row: int | None = None
    column: str | None = None

    def describe(self) -> str:
        if self.part == "calls":
            if self.row is None:
                return "Calls"
            place = f"Call {self.row + 1}" + (f", {self.column}" if self.column else "")
            return place + (f", column {self.col}" if self.column and self.col is not None else "")
        names = {"forward": "Forward code", "inputs": "Inputs", "general": "Scenario"}
        parts = [names.get(self.part, self.part.capitalize())]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.col is not None:
            parts.append(f"column {self.col}")
        return ", ".join(parts)


def locate_error(err: ScenarioError, inputs: InputLines | None) -> ErrorMark:
    """Map a :class:`ScenarioError`'s field to a place in the editor."""
    if (err.line is not None and err.line < 1) or (err.col is not None and err.col < 1):
        # Python reports a syntax error in empty text at line 0, column 0.
        err = ScenarioError(
            err.message, field=err.field, line=max(err.line or 1, 1), col=max(err.col or 1, 1)
        )
    field = err.field or ""
    if isinstance(err, InputsError):
        return ErrorMark("inputs", err.line, err.col)
    if field in TEXT_FIELDS:
        return ErrorMark(field)
    if field == "inputs":
        return ErrorMark("inputs", 1, 1)
    if field.startswith("inputs."):
        return _input_mark(err, field.removeprefix("inputs."), inputs)
    if field in ("forward", "forward.code"):
        return ErrorMark("forward", err.line or 1, err.col or 1)
    if field == "calls":
        return ErrorMark("calls")
    match = _CALL_FIELD.match(field)
    if match:
        column = match[2] if match[2] in CALL_COLUMNS else None
        return ErrorMark("calls", err.line, err.col, int(match[1]), column)
    return ErrorMark("general")


def _input_mark(err: ScenarioError, name: str, inputs: InputLines | None) -> ErrorMark:
    lines = inputs.starts.get(name) if inputs else None
    if not lines:
        return ErrorMark("inputs", 1, 1)
    index = min(max((err.line or 1) - 1, 0), len(lines) - 1)
    box_line, before = lines[index]
    return ErrorMark("inputs", box_line, before + (err.col or 1))


def plain_text(edit: QPlainTextEdit) -> str:
    """The exact text: unlike ``toPlainText`` this keeps non-breaking spaces."""
    return edit.document().toRawText().replace("\u2029", "\n")


# -- a plain-text code box with line numbers and one error mark ---------------------


class _LineNumbers(QWidget):
    def __init__(self, editor: CodeEdit) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.line_number_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_line_numbers(self, event)


class CodeEdit(QPlainTextEdit):
    """Monospace, no wrapping, line numbers, and :meth:`mark_error`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._numbers = _LineNumbers(self)
        self._error_line: int | None = None
        self.blockCountChanged.connect(self._update_margin)
        self.updateRequest.connect(self._update_numbers)
        self._update_margin()

    @property
    def error_line(self) -> int | None:
        return self._error_line

    def text(self) -> str:
        return plain_text(self)

    def mark_error(self, line: int, col: int) -> None:
        """Shade ``line`` and underline from ``col`` to the end of that line (1-based)."""
        block = self.document().findBlockByNumber(max(0, min(line, self.blockCount()) - 1))
        self._error_line = block.blockNumber() + 1
        length = len(block.text())
        start = min(max(col - 1, 0), max(length - 1, 0))
        shade = QTextEdit.ExtraSelection()
        shade_format = QTextCharFormat()
        shade_format.setBackground(ERROR_BACKGROUND)
        shade_format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        shade.format = shade_format
        shade.cursor = QTextCursor(block)
        underline = QTextEdit.ExtraSelection()
        underline_format = QTextCharFormat()
        underline_format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        underline_format.setUnderlineColor(ERROR_COLOUR)
        underline.format = underline_format
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + start)
        cursor.setPosition(block.position() + max(length, start + 1), QTextCursor.MoveMode.KeepAnchor)
        underline.cursor = cursor
        self.setExtraSelections([shade, underline])
        self._numbers.update()

    def clear_error(self) -> None:
        self._error_line = None
        self.setExtraSelections([])
        self._numbers.update()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Scenario code is Python: Tab inserts spaces, never a tab character.
        if event.key() == Qt.Key.Key_Tab and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            self.insertPlainText(CONTINUATION_INDENT)
            return
        super().keyPressEvent(event)

    def line_number_width(self) -> int:
        digits = len(str(max(1, self.blockCount()))) + 1  # one more for the error marker
        return 8 + self.fontMetrics().horizontalAdvance("9") * (digits + 1)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._numbers.setGeometry(QRect(rect.left(), rect.top(), self.line_number_width(), rect.height()))

    def paint_line_numbers(self, area: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(area)
        painter.fillRect(event.rect(), self.palette().alternateBase())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            is_error = number == self._error_line
            # The "!" makes the error line findable without colour.
            text = f"!{number}" if is_error else str(number)
            painter.setPen(ERROR_COLOUR if is_error else self.palette().placeholderText().color())
            painter.drawText(0, top, area.width() - 4, height, Qt.AlignmentFlag.AlignRight, text)
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    def _update_margin(self) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _update_numbers(self, rect: QRect, dy: int) -> None:
        if dy:
            self._numbers.scroll(0, dy)
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())


# -- the editor ------------------------------------------------------------------


class ScenarioEditor(QWidget):
    """Edit a scenario; emits ``scenario_edited(Scenario)`` for each valid edit.

    ``set_scenario`` fills it (not modified); typing sets ``is_modified`` and,
    :data:`DEBOUNCE_MS` after the last key, checks the text: a valid scenario
    is emitted, an error is shown inline (:meth:`show_error`) and nothing is
    emitted. :meth:`flush` checks at once.
    """

    scenario_edited = Signal(object)
    modified_changed = Signal(bool)
    error_changed = Signal(object)  # the ScenarioError shown, or None once it is fixed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._filling = False
        self._modified = False
        self._path: Path | None = None
        self._last_emitted: Scenario | None = None
        self._error: ScenarioError | None = None
        self._error_mark: ErrorMark | None = None
        self._input_lines: InputLines | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.flush)
        self._build_fields()
        self._build_calls()
        self._build_layout()

    # -- public API

    def set_scenario(self, scenario: Scenario, *, modified: bool = False) -> None:
        """Show ``scenario``; it becomes the unmodified state (unless ``modified``)."""
        self._timer.stop()
        with self._quietly():
            self._fill(scenario)
        self._path = scenario.path
        self._last_emitted = scenario
        self.clear_error()
        self._input_lines = parse_inputs(self.inputs_edit.text())
        self.set_modified(modified)

    def current_scenario(self) -> Scenario | None:
        """The scenario in the editor now, or None while it has an error."""
        try:
            return self._read()
        except ScenarioError:
            return None

    def flush(self) -> Scenario | None:
        """Check the editor now (skipping the typing pause); emits as an edit would."""
        self._timer.stop()
        had_error = self._error is not None
        try:
            scenario = self._read()
        except ScenarioError as err:
            self.show_error(err)
            return None
        self.clear_error()
        if had_error or scenario != self._last_emitted:
            self._last_emitted = scenario
            self.scenario_edited.emit(scenario)
        return scenario

    def last_scenario(self) -> Scenario | None:
        """The scenario last given to :meth:`set_scenario` or emitted by an edit.

        A recording of this scenario is already in the editor (or the learner has
        typed past it), so a window should not push it back with ``set_scenario``.
        """
        return self._last_emitted

    def is_modified(self) -> bool:
        return self._modified

    def set_modified(self, modified: bool) -> None:
        if modified != self._modified:
            self._modified = modified
            self.modified_changed.emit(modified)

    def source_path(self) -> Path | None:
        """The file the scenario came from (or was last saved to)."""
        return self._path

    def set_source_path(self, path: Path | None) -> None:
        self._path = path

    def error(self) -> ScenarioError | None:
        return self._error

    def error_mark(self) -> ErrorMark | None:
        return self._error_mark

    def show_error(self, err: ScenarioError) -> None:
        """Show ``err`` at its field, line and column, and as a sentence below."""
        mark = locate_error(err, self._input_lines)
        with self._quietly():  # restyling table items fires itemChanged
            self._clear_marks()
            self._apply_mark(mark, err.message)
        self._error, self._error_mark = err, mark
        self.error_label.setText(f"{mark.describe()}: {err.message}")
        self.error_label.setVisible(True)
        self.error_changed.emit(err)

    def clear_error(self) -> None:
        had_error = self._error is not None
        with self._quietly():
            self._clear_marks()
        self._error = self._error_mark = None
        self.error_label.clear()
        self.error_label.setVisible(False)
        if had_error:
            self.error_changed.emit(None)

    # -- building the widgets

    def _build_fields(self) -> None:
        self.name_edit = QLineEdit()
        self.title_edit = QLineEdit()
        self.summary_edit = QPlainTextEdit()
        self.notes_edit = QPlainTextEdit()
        for prose in (self.summary_edit, self.notes_edit):
            prose.setMaximumHeight(90)
        self.inputs_edit = CodeEdit()
        self.inputs_edit.setPlaceholderText("x = torch.tensor([1., 2.], requires_grad=True)")
        self.inputs_edit.setMaximumHeight(110)
        self.forward_edit = CodeEdit()
        self.forward_edit.setPlaceholderText("y = x.square()")
        for line_edit in (self.name_edit, self.title_edit):
            line_edit.textEdited.connect(self._on_edited)
        for box in (self.summary_edit, self.notes_edit, self.inputs_edit, self.forward_edit):
            box.textChanged.connect(self._on_edited)
        self.error_label = QLabel()
        self.error_label.setObjectName("editorError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet("color: rgb(211, 47, 47); font-weight: bold;")
        self.error_label.setVisible(False)

    def _build_calls(self) -> None:
        table = QTableWidget(0, len(CALL_COLUMNS))
        table.setHorizontalHeaderLabels(CALL_HEADERS)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setSectionResizeMode(
            CALL_COLUMNS.index("loss"), QHeaderView.ResizeMode.Stretch
        )
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        table.itemChanged.connect(self._on_edited)
        self.calls_table = table
        self.add_call_button = QPushButton("Add call")
        self.add_call_button.clicked.connect(self._on_add_call)
        self.remove_call_button = QPushButton("Remove call")
        self.remove_call_button.clicked.connect(self._on_remove_call)

    def _build_layout(self) -> None:
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Title", self.title_edit)
        form.addRow("Summary", self.summary_edit)
        form.addRow("Notes", self.notes_edit)
        form.addRow("Inputs", self.inputs_edit)
        form.addRow("Forward code", self.forward_edit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_call_button)
        buttons.addWidget(self.remove_call_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(form, 3)
        layout.addWidget(QLabel("Calls, in order"))
        layout.addWidget(self.calls_table, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.error_label)

    # -- filling and reading

    def _fill(self, scenario: Scenario) -> None:
        self.name_edit.setText(scenario.name)
        self.title_edit.setText(scenario.title)
        self.summary_edit.setPlainText(scenario.summary)
        self.notes_edit.setPlainText(scenario.notes)
        self.inputs_edit.setPlainText(format_inputs(scenario.inputs))
        self.forward_edit.setPlainText(scenario.forward)
        self.calls_table.setRowCount(0)
        for call in scenario.calls:
            self._append_call(call)

    def _append_call(self, call: Call) -> None:
        table = self.calls_table
        row = table.rowCount()
        table.insertRow(row)
        kind = QComboBox()
        kind.addItems(KINDS)
        kind.setCurrentText(call.kind)
        kind.currentIndexChanged.connect(self._on_edited)
        table.setCellWidget(row, CALL_COLUMNS.index("kind"), kind)
        retain = QComboBox()
        retain.addItems(RETAIN_CHOICES)
        retain.setCurrentIndex(_retain_index(call.retain_graph))
        retain.setToolTip("unset: PyTorch's default, which follows create_graph")
        retain.currentIndexChanged.connect(self._on_edited)
        table.setCellWidget(row, CALL_COLUMNS.index("retain_graph"), retain)
        create = QTableWidgetItem()
        create.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        create.setCheckState(Qt.CheckState.Checked if call.create_graph else Qt.CheckState.Unchecked)
        table.setItem(row, CALL_COLUMNS.index("create_graph"), create)
        table.setItem(row, CALL_COLUMNS.index("loss"), QTableWidgetItem(call.loss))
        table.setItem(row, CALL_COLUMNS.index("inputs"), QTableWidgetItem(", ".join(call.inputs)))
        table.setItem(row, CALL_COLUMNS.index("bind"), QTableWidgetItem(call.bind or ""))
        table.setVerticalHeaderItem(row, QTableWidgetItem(str(row + 1)))

    def _read(self) -> Scenario:
        self._input_lines = parse_inputs(self.inputs_edit.text())
        data: dict[str, Any] = {
            "name": self.name_edit.text(),
            "title": self.title_edit.text(),
            "summary": plain_text(self.summary_edit),
            "notes": plain_text(self.notes_edit),
            "inputs": dict(self._input_lines.inputs),
            "forward": {"code": self.forward_edit.text()},
            "calls": [self._read_call(row) for row in range(self.calls_table.rowCount())],
        }
        return replace(scenario_from_dict(data), path=self._path)

    def _read_call(self, row: int) -> dict[str, Any]:
        call: dict[str, Any] = {
            "kind": self._combo(row, "kind").currentText(),
            "loss": self._cell_text(row, "loss"),
            "create_graph": self._cell(row, "create_graph").checkState() == Qt.CheckState.Checked,
            "inputs": [name.strip() for name in self._cell_text(row, "inputs").split(",") if name.strip()],
        }
        retain = self._combo(row, "retain_graph").currentText()
        if retain != "unset":
            call["retain_graph"] = retain == "true"
        bind = self._cell_text(row, "bind").strip()
        if bind:
            call["bind"] = bind
        return call

    def _cell(self, row: int, column: str) -> QTableWidgetItem:
        item = self.calls_table.item(row, CALL_COLUMNS.index(column))
        if item is None:  # a row added by hand before its cells were set
            item = QTableWidgetItem("")
            self.calls_table.setItem(row, CALL_COLUMNS.index(column), item)
        return item

    def _cell_text(self, row: int, column: str) -> str:
        return self._cell(row, column).text()

    def _combo(self, row: int, column: str) -> QComboBox:
        widget = self.calls_table.cellWidget(row, CALL_COLUMNS.index(column))
        assert isinstance(widget, QComboBox)
        return widget

    # -- showing an error

    def _apply_mark(self, mark: ErrorMark, message: str) -> None:
        boxes = {"inputs": self.inputs_edit, "forward": self.forward_edit}
        if mark.part in boxes:
            boxes[mark.part].mark_error(mark.line or 1, mark.col or 1)
        elif mark.part in TEXT_FIELDS:
            widget = self._text_widget(mark.part)
            widget.setStyleSheet(ERROR_STYLE)
            widget.setToolTip(message)
        elif mark.part == "calls":
            self._mark_call(mark, message)

    def _text_widget(self, part: str) -> QWidget:
        widgets: dict[str, QWidget] = {
            "name": self.name_edit,
            "title": self.title_edit,
            "summary": self.summary_edit,
            "notes": self.notes_edit,
        }
        return widgets[part]

    def _mark_call(self, mark: ErrorMark, message: str) -> None:
        table = self.calls_table
        if mark.row is None or mark.row >= table.rowCount():
            table.setStyleSheet(ERROR_STYLE)
            return
        # The "!" in the row header marks the row without relying on colour.
        table.setVerticalHeaderItem(mark.row, QTableWidgetItem(f"! {mark.row + 1}"))
        columns = [mark.column] if mark.column else list(CALL_COLUMNS)
        for column in columns:
            widget = table.cellWidget(mark.row, CALL_COLUMNS.index(column))
            if widget is not None:
                widget.setStyleSheet(ERROR_STYLE)
                widget.setToolTip(message)
            else:
                item = self._cell(mark.row, column)
                item.setBackground(ERROR_BACKGROUND)
                item.setToolTip(message)

    def _clear_marks(self) -> None:
        self.inputs_edit.clear_error()
        self.forward_edit.clear_error()
        for part in TEXT_FIELDS:
            widget = self._text_widget(part)
            widget.setStyleSheet("")
            widget.setToolTip("")
        self._clear_call_marks()

    def _clear_call_marks(self) -> None:
        table = self.calls_table
        table.setStyleSheet("")
        for row in range(table.rowCount()):
            table.setVerticalHeaderItem(row, QTableWidgetItem(str(row + 1)))
            for index, column in enumerate(CALL_COLUMNS):
                widget = table.cellWidget(row, index)
                if widget is not None:
                    widget.setStyleSheet("")
                    widget.setToolTip("")
                elif table.item(row, index) is not None:
                    item = self._cell(row, column)
                    item.setData(Qt.ItemDataRole.BackgroundRole, None)
                    item.setToolTip("")

    # -- events

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        """Changes made by the editor itself are not edits."""
        was = self._filling
        self._filling = True
        try:
            yield
        finally:
            self._filling = was

    def _on_edited(self, *_: object) -> None:
        if self._filling:
            return
        self.set_modified(True)
        self._timer.start()

    def _on_add_call(self) -> None:
        with self._quietly():
            self._append_call(Call("backward", ""))
        self.calls_table.setCurrentCell(self.calls_table.rowCount() - 1, CALL_COLUMNS.index("loss"))
        self._on_edited()

    def _on_remove_call(self) -> None:
        row = self.calls_table.currentRow()
        if row < 0:
            row = self.calls_table.rowCount() - 1
        if row < 0:
            return
        self.calls_table.removeRow(row)
        with self._quietly():
            self._clear_call_marks()
        self._on_edited()


def _retain_index(value: bool | None) -> int:
    return RETAIN_CHOICES.index("unset" if value is None else "true" if value else "false")
