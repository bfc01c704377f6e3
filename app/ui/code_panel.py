"""The program, with line numbers, and the line that runs at the current step marked.

At a forward step the mark is on the statement's line; while a call runs, on
every line of that call. The mark is a background colour, a strong bar at the
left edge *and* a text arrow in the margin (``▶`` for what runs now, ``✗`` for
what failed), so it survives a washed-out projector. The lines that ran just
before get a faint background and a thin bar, as Python Tutor marks them.

The text is Python-coloured (:class:`~app.ui.python_highlighter.PythonHighlighter`,
colours from the palette). A click on a line jumps to the first step that ran
it; a right click on a line that makes an autograd call offers its
``retain_graph`` and ``create_graph`` keywords, edited in the program text and
recorded again at once (Ctrl+Z undoes, as for the call list).

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

from PySide6.QtCore import Property, QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QColor,
    QContextMenuEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QMenu, QPlainTextEdit, QTextEdit, QWidget

from app.ui.call_toggles import CallSite, call_sites, edit_call
from app.ui.python_highlighter import PythonHighlighter
from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.core.model.timeline import Step

__all__ = ["CodePanel", "node_tooltip"]

RUNNING, FAILED, IDLE = "▶ ", "✗ ", "  "
MAX_LINES = 12
FILL_LATER_LINES = 500  # a longer text is written one event-loop turn after the recording is applied
HIGHLIGHT_MAX_LINES = 1000  # past this, uncoloured: colouring costs ~18 ms per 1000 lines on the GUI thread
LOOK_BACK = 64  # steps searched for the lines that ran before the current ones
BAR_WIDTH, FAINT_BAR_WIDTH = 5, 2


def node_tooltip(recording: Recording, node_id: str) -> str:
    """What a graph node shows under the pointer: its name and the line (and iteration) that made it."""
    from app.core.lesson.lines import node_tooltip as tooltip

    return tooltip(recording, node_id)


class CodePanel(QPlainTextEdit):
    line_clicked = Signal(int)  # the 1-based program line a click landed on

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._lines: list[str] = []
        self._recording: Recording | None = None
        self._marked: range = range(0)
        self._previous: range = range(0)  # the lines that ran before the marked ones
        self._failed_mark = False
        self._pressed_at: QPoint | None = None
        self.highlighter = PythonHighlighter(self.document(), self.palette())
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
        self._previous = self._previous_now()
        mark, marked = self._mark_text(), self._marked
        width = len(str(len(self._lines)))
        self.highlighter.set_offset(len(IDLE) + width + 2)
        colour = len(self._lines) <= HIGHLIGHT_MAX_LINES
        if (self.highlighter.document() is not None) != colour:
            self.highlighter.setDocument(self.document() if colour else None)  # type: ignore[arg-type]
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
        previous = self._previous_now()
        if previous != self._previous:
            self._previous = previous
            self.viewport().update()
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

    def _previous_now(self) -> range:
        """The 0-based lines of the last earlier step that ran other lines than the current ones.

        A call's steps all mark the call's lines: from inside a call the search skips to the step
        before the call began, so it takes a few steps however long the call is.
        """
        state = self._session.state()
        recording = self._recording
        if state is None or recording is None:
            return range(0)
        steps, count = recording.timeline.steps, len(self._lines)
        current = _step_lines(recording, state.step, count)
        index = state.step.index - 1
        for _ in range(LOOK_BACK):
            if index < 0:
                break
            step = steps[index]
            lines = _step_lines(recording, step, count)
            if lines and lines != current:
                return lines
            call = step.call
            in_call = call is not None and 0 <= call < len(recording.calls) and step.kind != "error"
            index = recording.calls[call].first_step - 1 if in_call and call is not None else index - 1
        return range(0)

    def previous_line_numbers(self) -> list[int]:
        """1-based program lines marked faintly: those that ran just before the current ones."""
        return [i + 1 for i in self._previous]

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

    # -- bars: strong for the current lines, faint for the ones before ------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not (self._marked or self._previous):
            return
        painter = QPainter(self.viewport())
        current = self._failed if self._failed_mark else self._current
        faint = QColor(self._current)
        faint.setAlpha(70)
        rect = self._lines_rect(self._previous)
        if rect is not None:
            painter.fillRect(rect, faint)
            bar = QRect(rect.left(), rect.top(), FAINT_BAR_WIDTH, rect.height())
            painter.fillRect(bar, self._current.darker(160))
        rect = self._lines_rect(self._marked)
        if rect is not None:
            painter.fillRect(QRect(rect.left(), rect.top(), BAR_WIDTH, rect.height()), current.darker(220))
        painter.end()

    def _lines_rect(self, lines: range) -> QRect | None:
        """The viewport rectangle of a run of lines, full width; None when it is not on screen."""
        if not lines:
            return None
        document = self.document()
        first, last = document.findBlockByNumber(lines[0]), document.findBlockByNumber(lines[-1])
        if not (first.isValid() and last.isValid()):
            return None
        offset = self.contentOffset()
        top = self.blockBoundingGeometry(first).translated(offset).top()
        bottom = self.blockBoundingGeometry(last).translated(offset).bottom()
        if bottom < 0 or top > self.viewport().height():
            return None
        return QRect(0, round(top), self.viewport().width(), round(bottom - top))

    # -- a click jumps to the line's first step ---------------------------------------------------
    def line_at(self, position: QPoint) -> int:
        """The 1-based program line under ``position`` (viewport coordinates)."""
        return self.cursorForPosition(position).blockNumber() + 1

    def go_to_line(self, line: int) -> int | None:
        """Show the first step that ran ``line``; returns it (None: the line never ran)."""
        from app.core.lesson.lines import first_step_of_line

        if self._recording is None:
            return None
        step = first_step_of_line(self._recording, line)
        if step is not None:
            self._session.go_to(step)
        return step

    def mousePressEvent(self, event: QMouseEvent) -> None:
        super().mousePressEvent(event)
        self._pressed_at = event.position().toPoint()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        pressed, self._pressed_at = self._pressed_at, None
        at = event.position().toPoint()
        if event.button() != Qt.MouseButton.LeftButton or pressed is None:
            return
        if (at - pressed).manhattanLength() > 4 or self.textCursor().hasSelection():
            return  # a drag selects text to copy; only a click jumps
        line = self.line_at(at)
        self.line_clicked.emit(line)
        self.go_to_line(line)

    # -- a right click on a call's line edits its keywords -----------------------------------------
    def call_sites_at(self, line: int) -> list[CallSite]:
        """The places on ``line`` (or whose call spans it) that make autograd calls."""
        if self._recording is None:
            return []
        return [site for site in call_sites(self._recording) if site.call.line <= line <= site.call.end_line]

    def keyword_actions(self, line: int, parent: QMenu | None = None) -> list[QAction]:
        """One group of actions per call on ``line``: retain_graph True / False / unset, create_graph."""
        actions: list[QAction] = []
        owner = parent or self
        sites = self.call_sites_at(line)
        for site in sites:
            call = site.call
            where = f" ({call.text})" if len(sites) > 1 else ""
            group = QActionGroup(owner)
            for value, text in ((True, "retain_graph=True"), (False, "retain_graph=False"), (None, "")):
                label = text or f"retain_graph unset (follows create_graph: {call.create_graph})"
                action = QAction(f"{label} on this call{where}", owner, checkable=True)
                action.setChecked(call.retain_graph is value)
                keyword_value = None if value is None else str(value)
                action.triggered.connect(
                    lambda checked=False, c=call, v=keyword_value: self._edit(c, "retain_graph", v)
                )
                group.addAction(action)
                actions.append(action)
            create = QAction(f"create_graph=True on this call{where}", owner, checkable=True)
            create.setChecked(call.create_graph)
            create.triggered.connect(
                lambda checked, c=call: self._edit(c, "create_graph", "True" if checked else None)
            )
            actions.append(create)
        return actions

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu()
        actions = self.keyword_actions(self.line_at(event.pos()), menu)
        if actions:
            menu.insertSeparator(menu.actions()[0] if menu.actions() else None)  # type: ignore[arg-type]
            first = menu.actions()[0]
            menu.insertActions(first, actions)
        menu.exec(event.globalPos())
        menu.deleteLater()

    def _edit(self, call: object, keyword: str, value: str | None) -> None:
        from app.core.model.program import Call

        if isinstance(call, Call):
            edit_call(self._session, call, keyword, value)


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
