"""The program editor: the program's code, plus its name, title, summary and notes.

Every edit is checked (after a short pause) by the same code that loads files,
:func:`app.core.loading.program_from_dict` (the language's static checks
included), so the editor can never produce a program the rest of the window
would refuse. An error is shown where it is: the line and column in the code
(wavy underline, marked line number) or the field, plus one sentence under
the editor. While the text is wrong nothing is emitted, so the window keeps
showing the last good recording.

The small code editor with line numbers (:class:`CodeEdit`) lives here too:
it exists only to serve this widget.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

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
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.loading import program_from_dict
from app.core.model.errors import ScenarioError
from app.core.model.program import Program

__all__ = [
    "DEBOUNCE_MS",
    "CodeEdit",
    "ErrorMark",
    "ProgramEditor",
    "locate_error",
    "plain_text",
]

DEBOUNCE_MS = 400
PLACEHOLDER = (
    "import torch\n\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.square()\ny.sum().backward()"
)
TEXT_FIELDS = ("name", "title", "summary", "notes")
INDENT = "    "
ERROR_COLOUR = QColor(211, 47, 47)
ERROR_BACKGROUND = QColor(211, 47, 47, 60)  # translucent: readable on light and dark themes
ERROR_STYLE = "border: 2px solid rgb(211, 47, 47);"


# -- where an error goes ----------------------------------------------------------


@dataclass(frozen=True)
class ErrorMark:
    """Where the editor shows an error.

    ``part``: "name", "title", "summary", "notes", "code" or "general";
    ``line``/``col`` (1-based) count in the code.
    """

    part: str
    line: int | None = None
    col: int | None = None

    def describe(self) -> str:
        names = {"code": "Program", "general": "Program"}
        parts = [names.get(self.part, self.part.capitalize())]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.col is not None:
            parts.append(f"column {self.col}")
        return ", ".join(parts)


def locate_error(err: ScenarioError) -> ErrorMark:
    """Map a :class:`ScenarioError`'s field to a place in the editor.

    >>> locate_error(ScenarioError("x", field="program", line=2, col=5))
    ErrorMark(part='code', line=2, col=5)
    >>> locate_error(ScenarioError("x", field="name")).part
    'name'
    """
    field = err.field or ""
    if field in TEXT_FIELDS:
        return ErrorMark(field)
    if field.startswith("program") or err.line is not None:
        # Python reports a syntax error in empty text at line 0, column 0.
        return ErrorMark("code", max(err.line or 1, 1), max(err.col or 1, 1))
    return ErrorMark("general")


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
        # Program code is Python: Tab inserts spaces, never a tab character.
        if event.key() == Qt.Key.Key_Tab and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            self.insertPlainText(INDENT)
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


class ProgramEditor(QWidget):
    """Edit a program; emits ``program_edited(Program)`` for each valid edit.

    ``set_program`` fills it (not modified); typing sets ``is_modified`` and,
    :data:`DEBOUNCE_MS` after the last key, checks the text: a valid program
    is emitted, an error is shown inline (:meth:`show_error`) and nothing is
    emitted. :meth:`flush` checks at once.
    """

    program_edited = Signal(object)
    modified_changed = Signal(bool)
    error_changed = Signal(object)  # the ScenarioError shown, or None once it is fixed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._filling = False
        self._modified = False
        self._path: Path | None = None
        self._twin = ""  # kept as it came: not edited here
        self._last_emitted: Program | None = None
        self._error: ScenarioError | None = None
        self._error_mark: ErrorMark | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.flush)
        self._build_fields()
        self._build_layout()

    # -- public API

    def set_program(self, program: Program, *, modified: bool = False) -> None:
        """Show ``program``; it becomes the unmodified state (unless ``modified``)."""
        self._timer.stop()
        with self._quietly():
            self._fill(program)
        self._path = program.path
        self._twin = program.twin
        self._last_emitted = program
        self.clear_error()
        self.set_modified(modified)

    def current_program(self) -> Program | None:
        """The program in the editor now, or None while it has an error."""
        try:
            return self._read()
        except ScenarioError:
            return None

    def flush(self) -> Program | None:
        """Check the editor now (skipping the typing pause); emits as an edit would."""
        self._timer.stop()
        had_error = self._error is not None
        try:
            program = self._read()
        except ScenarioError as err:
            self.show_error(err)
            return None
        self.clear_error()
        if had_error or program != self._last_emitted:
            self._last_emitted = program
            self.program_edited.emit(program)
        return program

    def last_program(self) -> Program | None:
        """The program last given to :meth:`set_program` or emitted by an edit.

        A recording of this program is already in the editor (or the learner has
        typed past it), so a window should not push it back with ``set_program``.
        """
        return self._last_emitted

    def is_modified(self) -> bool:
        return self._modified

    def set_modified(self, modified: bool) -> None:
        if modified != self._modified:
            self._modified = modified
            self.modified_changed.emit(modified)

    def source_path(self) -> Path | None:
        """The file the program came from (or was last saved to)."""
        return self._path

    def set_source_path(self, path: Path | None) -> None:
        self._path = path

    def error(self) -> ScenarioError | None:
        return self._error

    def error_mark(self) -> ErrorMark | None:
        return self._error_mark

    def show_error(self, err: ScenarioError) -> None:
        """Show ``err`` at its field, line and column, and as a sentence below."""
        mark = locate_error(err)
        self._clear_marks()
        self._apply_mark(mark, err.message)
        self._error, self._error_mark = err, mark
        self.error_label.setText(f"{mark.describe()}: {err.message}")
        self.error_label.setVisible(True)
        self.error_changed.emit(err)

    def clear_error(self) -> None:
        had_error = self._error is not None
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
        self.code_edit = CodeEdit()
        self.code_edit.setPlaceholderText(PLACEHOLDER)
        self.code_edit.setMinimumHeight(220)
        for line_edit in (self.name_edit, self.title_edit):
            line_edit.textEdited.connect(self._on_edited)
        for box in (self.summary_edit, self.notes_edit, self.code_edit):
            box.textChanged.connect(self._on_edited)
        self.error_label = QLabel()
        self.error_label.setObjectName("editorError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet("color: rgb(211, 47, 47); font-weight: bold;")
        self.error_label.setVisible(False)

    def _build_layout(self) -> None:
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Title", self.title_edit)
        form.addRow("Summary", self.summary_edit)
        form.addRow("Notes", self.notes_edit)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Program"))
        layout.addWidget(self.code_edit, 3)
        layout.addWidget(self.error_label)
        layout.addLayout(form, 1)

    # -- filling and reading

    def _fill(self, program: Program) -> None:
        self.name_edit.setText(program.name)
        self.title_edit.setText(program.title)
        self.summary_edit.setPlainText(program.summary)
        self.notes_edit.setPlainText(program.notes)
        self.code_edit.setPlainText(program.code)

    def _read(self) -> Program:
        data = {
            "name": self.name_edit.text(),
            "title": self.title_edit.text(),
            "summary": plain_text(self.summary_edit),
            "notes": plain_text(self.notes_edit),
            "twin": self._twin,
            "program": {"code": self.code_edit.text()},
        }
        return replace(program_from_dict(data), path=self._path)

    # -- showing an error

    def _apply_mark(self, mark: ErrorMark, message: str) -> None:
        if mark.part == "code":
            self.code_edit.mark_error(mark.line or 1, mark.col or 1)
        elif mark.part in TEXT_FIELDS:
            widget = self._text_widget(mark.part)
            widget.setStyleSheet(ERROR_STYLE)
            widget.setToolTip(message)

    def _text_widget(self, part: str) -> QWidget:
        widgets: dict[str, QWidget] = {
            "name": self.name_edit,
            "title": self.title_edit,
            "summary": self.summary_edit,
            "notes": self.notes_edit,
        }
        return widgets[part]

    def _clear_marks(self) -> None:
        self.code_edit.clear_error()
        for part in TEXT_FIELDS:
            widget = self._text_widget(part)
            widget.setStyleSheet("")
            widget.setToolTip("")

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
