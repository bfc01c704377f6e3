"""The program, with line numbers, and the line that runs at the current step marked.

At a forward step the mark is on the statement's line; while a call runs, on
every line of that call. The mark is a background colour *and* a text arrow in
the margin (``▶`` for what runs now, ``✗`` for what failed), so it survives a
washed-out projector.

# NOTE [marks cost what changed]
A long program is thousands of lines. The text is written once per recording (already marked for the first
step shown); a step rewrites only the two marker characters of lines whose
mark changes, and the background is one full-width selection spanning the
marked lines, however many there are.

Writing the text of such a model costs ~10-15 ms on the GUI thread. So a
long one (over ``FILL_LATER_LINES``) is written on a 1 ms timer after the
recording is applied: the window's own updates and their paint run in one
event-loop turn, this text in a later one, never both in the same turn
(the heartbeat in ``benchmarks/bench.py`` measures such turns). Steps shown
before it is written only move the marks it will be written with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QResizeEvent, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.core.model.timeline import Step

__all__ = ["CodePanel"]

RUNNING, FAILED, IDLE = "▶ ", "✗ ", "  "
MAX_LINES = 12
FILL_LATER_LINES = 500  # a longer text is written one event-loop turn after the recording is applied


class CodePanel(QPlainTextEdit):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._lines: list[str] = []
        self._recording: Recording | None = None
        self._marked: range = range(0)
        self._failed_mark = False
        self._current = QColor("#ffe58a")
        self._failed = QColor("#ffc9c9")
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)  # marker edits are not the learner's: nothing to undo
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # arrow keys stay with the window's step actions
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # no line hides its end
        self.setPlainText("# recording…")
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(1)
        self._fill_timer.timeout.connect(self._fill)
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

    def marked_line_numbers(self) -> list[int]:
        """1-based program line numbers of the marked lines, as the program counts them."""
        return [i + 1 for i in self.highlighted_lines()]

    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        self._lines = recording.program.lines
        if len(self._lines) > FILL_LATER_LINES:
            self._fill_timer.start()
        else:
            self._fill_timer.stop()
            self._fill()

    @property
    def filled(self) -> bool:
        """Whether the text of the recording applied last is written (see FILL_LATER_LINES)."""
        return not self._fill_timer.isActive()

    def _fill(self) -> None:
        """Write the text once per recording, already marked for the step shown now."""
        self._marked, self._failed_mark = self._marks_now()
        mark, marked = self._mark_text(), self._marked
        width = len(str(len(self._lines)))
        self.setPlainText(
            "\n".join(
                f"{mark if i in marked else IDLE}{i + 1:>{width}}  {line}"
                for i, line in enumerate(self._lines)
            )
        )
        self._show_marks()
        self._update_height()

    def _update_height(self) -> None:
        self.updateGeometry()  # the size hint follows the number of lines

    def sizeHint(self) -> QSize:
        """Tall enough for the whole program (up to MAX_LINES), so the failing line shows."""
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
        if not self.filled:
            return  # the text is written marked for the step shown then
        marked, failed = self._marks_now()
        if (marked, failed) == (self._marked, self._failed_mark):
            return
        self._remark(marked, failed)
        self._show_marks()

    def _marks_now(self) -> tuple[range, bool]:
        """The 0-based lines to mark at the current step and whether they failed."""
        state = self._session.state()
        if state is None or self._recording is None:
            return range(0), False
        step = state.step
        return _step_lines(self._recording, step, len(self._lines)), step.kind == "error"

    def _mark_text(self) -> str:
        return FAILED if self._failed_mark else RUNNING

    def _remark(self, marked: range, failed: bool) -> None:
        """Rewrite the marker of each line whose mark changes; every other line is left alone."""
        before = {i: self._mark_text() for i in self._marked}
        self._marked, self._failed_mark = marked, failed
        after = dict.fromkeys(marked, self._mark_text())
        changed = sorted(i for i in before.keys() | after.keys() if before.get(i) != after.get(i))
        document, cursor = self.document(), QTextCursor(self.document())
        cursor.beginEditBlock()  # one layout pass for all the edits
        for number in changed:
            block = document.findBlockByNumber(number)
            cursor.setPosition(block.position())
            cursor.setPosition(block.position() + len(IDLE), QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(after.get(number, IDLE))
        cursor.endEditBlock()

    def _show_marks(self) -> None:
        self._highlight()
        if self._marked:
            self.setTextCursor(QTextCursor(self.document().findBlockByNumber(self._marked[0])))
            self.ensureCursorVisible()

    def _highlight(self) -> None:
        """One full-width selection spanning the marked block of lines (their number does not matter)."""
        if not self._marked:
            self.setExtraSelections([])
            return
        document = self.document()
        first = document.findBlockByNumber(self._marked[0])
        last = document.findBlockByNumber(self._marked[-1])
        if not (first.isValid() and last.isValid()):
            self.setExtraSelections([])
            return
        fmt = QTextCharFormat()
        fmt.setBackground(self._failed if self._failed_mark else self._current)
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
        cursor = QTextCursor(first)
        if last != first:  # up to the start of the next line, so the last line is full width too
            end = last.position() + last.length() - (0 if last.next().isValid() else 1)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.format = fmt
        selection.cursor = cursor
        self.setExtraSelections([selection])


def _step_lines(recording: Recording, step: Step, count: int) -> range:
    """The lines of the running call (all of them), else the statement's line (0-based)."""
    if step.call is not None and 0 <= step.call < len(recording.calls):
        call = recording.calls[step.call].call
        first, last = call.line, call.end_line
    elif step.line is not None:
        first = last = step.line
    else:
        return range(0)
    return range(max(first - 1, 0), min(last, count))
