"""The scenario as the Python a learner would write, with the current call's line marked.

The mark is a background colour *and* a text arrow in the margin (``▶`` for the
call running now, ``✗`` for the call that failed), so it survives a washed-out
projector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QEvent, QSize, Qt
from PySide6.QtGui import QColor, QResizeEvent, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from .session import Session

if TYPE_CHECKING:
    from app.core.recorder import Recording

__all__ = ["CodePanel"]

RUNNING, FAILED, IDLE = "▶ ", "✗ ", "  "
MAX_LINES = 12


class CodePanel(QPlainTextEdit):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._lines: list[str] = []
        self._call_lines: dict[int, int] = {}
        self._forward_lines: range = range(0)
        self._marked: list[int] = []
        self._failed_mark = False
        self._current = QColor("#ffe58a")
        self._failed = QColor("#ffc9c9")
        self.setReadOnly(True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # arrow keys stay with the window's step actions
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # no line hides its end
        self.setPlainText("# recording…")
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    # Colours come from the stylesheet: CodePanel { qproperty-currentLineColor: ... }
    def _get_current(self) -> QColor:
        return self._current

    def _set_current(self, color: QColor) -> None:
        self._current = QColor(color)
        self._highlight()

    def _get_failed(self) -> QColor:
        return self._failed

    def _set_failed(self, color: QColor) -> None:
        self._failed = QColor(color)
        self._highlight()

    currentLineColor = Property(QColor, _get_current, _set_current)
    failedLineColor = Property(QColor, _get_failed, _set_failed)

    def highlighted_lines(self) -> list[int]:
        """0-based numbers of the marked lines (what a learner sees highlighted)."""
        return [i for i, line in enumerate(self.toPlainText().splitlines()) if not line.startswith(IDLE)]

    def _on_recording_applied(self, recording: Recording) -> None:
        scenario = recording.scenario
        self._lines, self._call_lines = scenario.to_python()
        first_call = min(self._call_lines.values(), default=len(self._lines))
        self._forward_lines = range(2 + len(scenario.inputs), first_call)  # after "import torch", inputs
        self._update_height()

    def _update_height(self) -> None:
        self.updateGeometry()  # the size hint follows the number of lines

    def sizeHint(self) -> QSize:
        """Tall enough for the whole scenario (up to MAX_LINES), so the failing line shows."""
        shown = max(len(self._lines), int(self.document().size().height()))  # wrapped lines count too
        lines = min(max(shown, 1), MAX_LINES)
        margins = self.contentsMargins().top() + self.contentsMargins().bottom()
        bar = self.horizontalScrollBar().sizeHint().height()
        return QSize(
            super().sizeHint().width(), lines * self.fontMetrics().lineSpacing() + margins + bar + 12
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._marked:
            self.ensureCursorVisible()  # the marked line stays in view as the panel changes size

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._update_height()

    def _on_step_applied(self, index: int) -> None:
        state = self._session.state()
        if state is None:
            return
        step = state.step
        marked = (
            set(self._forward_lines)
            if step.call is None
            else {self._call_lines[step.call]}
            if step.call in self._call_lines
            else set()
        )
        mark = FAILED if step.kind == "error" else RUNNING
        text = "\n".join((mark if i in marked else IDLE) + line for i, line in enumerate(self._lines))
        if text != self.toPlainText():
            self.setPlainText(text)
        self._marked, self._failed_mark = sorted(marked), step.kind == "error"
        self._highlight()
        if self._marked:
            self.setTextCursor(QTextCursor(self.document().findBlockByNumber(self._marked[0])))
            self.ensureCursorVisible()

    def _highlight(self) -> None:
        color = self._failed if self._failed_mark else self._current
        selections = []
        for number in self._marked:
            block = self.document().findBlockByNumber(number)
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(color)
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.format = fmt
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        self.setExtraSelections(selections)
