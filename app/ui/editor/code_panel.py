"""The program: one code editor that also shows where the run is.

The recording's lines laid over the text: the marks, the jump from a line number and the
keyword menu of a call's line all read the same mapping, and all turn off together while the
text is not the recorded one. Which lines a step marks is worked out in
:mod:`~app.ui.editor.line_marks`, the keyword menu is built in :mod:`~app.ui.editor.call_menu`.

The text is the program's code, as the learner typed or pasted it, and editable
(:class:`~app.ui.editor.code_edit.CodeEdit`: line numbers, Python colours from the
palette, errors underlined). At a forward step the mark is on the statement's
line; while a call runs, on every line of that call. The mark is a background
colour, a strong bar at the left edge *and* a glyph in the margin (``▶`` for
what runs now, ``✗`` for what failed), so it survives a washed-out projector.
The lines that ran just before get a faint background and a thin bar, as
Python Tutor marks them.

A click on a line *number* jumps to the first step that ran the line; a click
in the text only places the cursor, for editing. A right click on a line that
makes an autograd call offers its ``retain_graph`` and ``create_graph``
keywords, edited in the program text and recorded again at once (Ctrl+Z undoes,
as for the call list).

# NOTE [marks follow the recorded text]
The marks are the recording's, and the recording's line numbers are those of
the text it was made from. Once the learner types, the lines may no longer be
those, so the marks, the jump and the keyword menu are off until the text is
the recorded one again: a new recording of it is applied, or the edit is taken
back (checked after a typing pause). Meanwhile a note under the code says so
(``MARKS_OFF``), so the marks do not seem lost. ``keeps_typing`` says which recordings
leave the learner's text alone (the window's: the ones the editor asked for);
any other recording (a fix, a toggle, a file) writes its program's text.

# NOTE [marks cost what changed]
A long program is thousands of lines. The text is written once per recording
(and not at all when it is already the recording's); a step changes one
full-width selection spanning the marked lines, however many there are, and
repaints the margin.

Writing the text of such a model costs ~10-15 ms on the GUI thread. So a
long one (over ``FILL_LATER_LINES``) is written in an event-loop turn of its
own, never beside the window's own updates and their paint (the heartbeat in
``benchmarks/bench.py`` measures such turns). Qt runs every timer that is due
in one go, so a text whose timer is due at the same moment as other work joins
it: armed by the recording, its timer came due before the window had painted
and ran straight after the paint; armed by that paint, it ran in the turn that
put a big graph's scene on screen (its first frame repaints the whole window).
Either way one stall of 45-50 ms (the 5,000-node chain). So the paint starts its
timer, and while the window's ``fill_wait()`` says its graph is not drawn yet,
the text looks again every ``FILL_WAIT_MS``, and is written one look after the
graph was seen drawn. A panel that does not paint (hidden) writes it after
``FILL_UNPAINTED_MS``. Steps shown before it is written only move the marks it
will be written with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QEvent, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QMenu, QPlainTextEdit, QTextEdit, QWidget

from app.ui.editor.call_menu import call_sites_at, keyword_actions
from app.ui.editor.code_edit import CodeEdit
from app.ui.editor.line_marks import marks_at, previous_lines, step_selection
from app.ui.runtime.session import Session
from app.ui.style.theme import tint_colour

if TYPE_CHECKING:
    from app.core.model.program import Program
    from app.core.model.recording import Recording

__all__ = ["FAILED", "RUNNING", "CodePanel", "node_tooltip"]

RUNNING, FAILED = "▶", "✗"
MAX_LINES = 12
MIN_LINES = 4
STATEMENT_SHOWN = 12  # characters of a marked statement the code column shows, at least
# NOTE [marks cost what changed]: a longer text is written in a turn of its own, after the panel's
# paint (or FILL_UNPAINTED_MS after the recording when it does not paint), looking again every
# FILL_WAIT_MS, at most FILL_WAITS times, while ``fill_wait()`` says the graph is not drawn yet
FILL_LATER_LINES = 500
FILL_UNPAINTED_MS = 100
FILL_WAIT_MS, FILL_WAITS = 20, 50
HIGHLIGHT_MAX_LINES = 1000  # past this, uncoloured: colouring costs ~18 ms per 1000 lines on the GUI thread
BAR_WIDTH, FAINT_BAR_WIDTH = 5, 2
RECHECK_MS = 400  # after a typing pause: is the text the recorded one again?
CURRENT_HUE, FAILED_HUE = 0.13, 0.0  # amber and red tints, without a stylesheet
CHANGED_HUE = 0.33  # green: the lines a fix or a toggle just wrote
FLASH_MS = 2000  # long enough to be seen from the back of a room, short enough not to read as a mark
MARKS_OFF = (
    "✎ The step marks are off while the text differs from the recording; they return once it records again."
)
MARKS_OFF_SHORT = "✎ Marks return once it records again."
GUTTER_TIP = "Click a line number to go to the first step that ran that line"


def node_tooltip(recording: Recording, node_id: str) -> str:
    """What a graph node shows under the pointer: its name and the line (and iteration) that made it."""
    from app.core.lesson.lines import node_tooltip as tooltip

    return tooltip(recording, node_id)


class CodePanel(CodeEdit):
    line_clicked = Signal(int)  # the 1-based program line whose number was clicked

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._lines: list[str] = []
        self._recording: Recording | None = None
        self._marked: range = range(0)
        self._previous: range = range(0)  # the lines that ran before the marked ones
        self._failed_mark = False
        self._in_sync = False  # the text is the recorded program's (NOTE [marks follow the recorded text])
        self._typed = False  # the learner changed the text since it was last the recorded one
        self.keeps_typing: Callable[[Program], bool] = lambda program: False
        self._current: QColor | None = None  # None: a tint from the palette (NOTE [palette colours])
        self._failed: QColor | None = None
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # arrow keys stay with stepping until clicked
        # NOTE [code wraps by default]: at 1280x720 and text 1.5 the column holds ~16 characters.
        # Unwrapped, each line keeps its row but loses its end: the seed's line 5 read
        # "y.sum().backward(re", the keyword the lesson is about cut off, even at 1920x1080. So
        # lines wrap between tokens (code_edit.py's NOTE [code wraps between tokens]) and every
        # character of the program is on screen. View ▸ Wrap code lines, unchecked, gives each
        # line one row, the marked line's statement scrolled into view from its indentation.
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.document().setDocumentMargin(BAR_WIDTH + 3)  # the bars are drawn left of the text
        self.setPlaceholderText("# recording…")
        self.line_numbers().setToolTip(GUTTER_TIP)
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.timeout.connect(self._fill_later)
        self._fill_after_paint = False  # NOTE [marks cost what changed]: the next paint starts the fill
        self._fill_waits, self._fill_quiet = 0, False
        self.fill_wait: Callable[[], bool] = lambda: False  # the window's: is its graph still to be drawn?
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.setInterval(FLASH_MS)
        self._flash_timer.timeout.connect(lambda: self.flash_lines([]))
        self._flashed: list[int] = []
        self._flash_next: list[int] = []  # the lines to flash once this recording's text is written
        self._change_seen: tuple[str, str] | None = None
        self._recheck = QTimer(self)
        self._recheck.setSingleShot(True)
        self._recheck.setInterval(RECHECK_MS)
        self._recheck.timeout.connect(self._on_typing_paused)
        self.text_edited.connect(self._on_typed)
        self.text_written.connect(self._on_written)
        self.gutter_clicked.connect(self._on_gutter_clicked)
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    # Colours come from the stylesheet: CodePanel { qproperty-currentLineColor: ... }
    def _get_current(self) -> QColor:
        return QColor(self._current or tint_colour(self.palette(), CURRENT_HUE))

    def _set_current(self, color: QColor) -> None:
        self._current = QColor(color)
        self._highlight()

    def _get_failed(self) -> QColor:
        return QColor(self._failed or tint_colour(self.palette(), FAILED_HUE))

    def _set_failed(self, color: QColor) -> None:
        self._failed = QColor(color)
        self._highlight()

    currentLineColor = Property(QColor, _get_current, _set_current)
    failedLineColor = Property(QColor, _get_failed, _set_failed)

    @property
    def marks_shown(self) -> bool:
        """Whether the step marks are on: the text is the recorded program's."""
        return self._in_sync and self._recording is not None

    def highlighted_lines(self) -> list[int]:
        """0-based numbers of the marked lines (what a learner sees highlighted)."""
        return list(self._marked) if self.marks_shown else []

    def marked_line_numbers(self) -> list[int]:
        """1-based program line numbers of the marked lines, as the program counts them."""
        return [i + 1 for i in self.highlighted_lines()]

    def previous_line_numbers(self) -> list[int]:
        """1-based program lines marked faintly: those that ran just before the current ones."""
        return [i + 1 for i in self._previous] if self.marks_shown else []

    def marker(self, line: int) -> str:
        """The glyph in the margin before 0-based ``line``: RUNNING, FAILED or ""."""
        if not self.marks_shown or line not in self._marked:
            return ""
        return FAILED if self._failed_mark else RUNNING

    # -- the text: the recording's, unless the learner is typing past it -------------------------
    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        self._lines = recording.program.lines
        self._fill_timer.stop()
        self._fill_after_paint, self._fill_waits, self._fill_quiet = False, 0, False
        change = self._session.last_change  # a fix or a toggle: its lines flash once written
        self._flash_next = []
        if change is not None and change is not self._change_seen and change[1] == recording.program.code:
            self._change_seen = change
            from app.core.lesson.edits import new_line_numbers  # the lesson's, not needed at start-up

            self._flash_next = new_line_numbers(*change)
        if self._typed and self.keeps_typing(recording.program):
            self._on_typing_paused()  # the learner's text stays; marked if it is this recording's
            return
        if len(self._lines) > FILL_LATER_LINES:
            self._in_sync = False
            self._update_marks()
            self._fill_after_paint = True
            self._fill_timer.start(FILL_UNPAINTED_MS)
        else:
            self._fill()

    @property
    def filled(self) -> bool:
        """Whether the text of the recording applied last is written (see FILL_LATER_LINES)."""
        return not self._fill_timer.isActive()

    def _fill_later(self) -> None:
        """The timer of a long text (NOTE [marks cost what changed]): write it, or look again."""
        self._fill_after_paint = False
        busy = self.fill_wait()
        if self._fill_waits < FILL_WAITS and (busy or not self._fill_quiet):
            self._fill_quiet = not busy  # a look that finds the graph drawn, then the text at the next
            self._fill_waits += 1
            self._fill_timer.start(FILL_WAIT_MS)
        else:
            self._fill()

    def _fill(self) -> None:
        """Write the recording's text (unless it is there already), marked for the step shown now."""
        recording = self._recording
        if recording is None or self._session.program not in (None, recording.program):
            return  # a newer program was asked for meanwhile (Ctrl+N, a file): its recording fills
        colour = len(self._lines) <= HIGHLIGHT_MAX_LINES
        if (self.highlighter.document() is not None) != colour:
            self.highlighter.setDocument(self.document() if colour else None)
        self.write(recording.program.code)
        self._typed, self._in_sync = False, True
        self._update_marks()
        self.updateGeometry()  # the size hint follows the number of lines
        if self._flash_next:
            self.flash_lines(self._flash_next)
            self._flash_next = []
        self._scroll_to_marks()

    # -- the lines a change just wrote, flashed -------------------------------------------------
    def flashed_lines(self) -> list[int]:
        """1-based lines flashing now: those the last fix or toggle added or changed."""
        return list(self._flashed)

    def flash_lines(self, lines: list[int]) -> None:
        """Tint 1-based ``lines`` for ``FLASH_MS`` (none: end the flash)."""
        document = self.document()
        fmt = QTextCharFormat()
        fmt.setBackground(tint_colour(self.palette(), CHANGED_HUE))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
        selections = []
        for line in lines:
            block = document.findBlockByNumber(line - 1)
            if block.isValid():
                selection = QTextEdit.ExtraSelection()
                selection.format = fmt
                selection.cursor = QTextCursor(block)
                selections.append(selection)
        self._flashed = [line for line in lines if document.findBlockByNumber(line - 1).isValid()]
        self.set_selections("flash", selections)
        if selections:
            self._flash_timer.start()
        else:
            self._flash_timer.stop()

    def _on_written(self) -> None:
        recording = self._recording
        self._typed = False
        self._in_sync = recording is not None and self.known_text() == recording.program.code
        self._update_marks()

    def _on_typed(self) -> None:
        self._typed = True
        self._recheck.start()
        if self._in_sync:
            self._in_sync = False
            self._update_marks()
        else:
            self._update_note()

    def _on_typing_paused(self) -> None:
        """The text may be the recorded one again (an edit taken back, or this recording's)."""
        self._recheck.stop()
        recording = self._recording
        in_sync = recording is not None and self.known_text() == recording.program.code
        self._typed = not in_sync
        if in_sync != self._in_sync:
            self._in_sync = in_sync
            self._update_marks()

    # -- size -------------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        """Tall enough for the whole program (up to MAX_LINES), so the failing line shows."""
        shown = max(self.blockCount(), int(self.document().size().height()))  # wrapped lines count too
        return QSize(super().sizeHint().width(), _height_of(self, min(max(shown, 1), MAX_LINES)))

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), _height_of(self, MIN_LINES))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._scroll_to_marks()  # the marked line stays in view as the panel changes size

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.updateGeometry()

    # -- Ctrl+Z: the text's own undo while there is one, else the window's (a fix, a toggle) -------
    def event(self, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Undo)
            and not self.document().isUndoAvailable()
        ):
            event.ignore()  # not taken here: the window's Undo action gets it
            return False
        return super().event(event)

    # -- marks --------------------------------------------------------------------------------------
    def _on_step_applied(self, index: int) -> None:
        if not (self.filled and self._in_sync):
            return  # the marks are worked out when the text is the recording's
        marked, failed = marks_at(self._recording, self._session.state(), len(self._lines))
        previous = previous_lines(self._recording, self._session.state(), len(self._lines))
        if (marked, failed, previous) == (self._marked, self._failed_mark, self._previous):
            return
        # only the rows whose marks changed (the faint bar of the lines before spans a loop's body
        # and mostly stays): the whole editor and its gutter were repainted at every step that
        # moved a mark, every visible line's text laid out and drawn again (~1.4 ms a step)
        moved = []  # (lines before, lines now) of each mark that changed
        if (marked, failed) != (self._marked, self._failed_mark):
            moved.append((self._marked, marked))
        if previous != self._previous:
            moved.append((self._previous, previous))
        before = [self._lines_rect(old) for old, _ in moved]
        self._marked, self._failed_mark, self._previous = marked, failed, previous
        self._highlight()
        gutter = self.line_numbers()
        for rect in [*before, *(self._lines_rect(now) for _, now in moved)]:
            if rect is not None:
                self.viewport().update(rect)
                gutter.update(QRect(0, rect.top(), gutter.width(), rect.height()))
        self._scroll_to_marks()

    def _update_marks(self) -> None:
        """Work out the marks for the step shown now (none while the text is not the recording's)."""
        if self.marks_shown:
            self._marked, self._failed_mark = marks_at(
                self._recording, self._session.state(), len(self._lines)
            )
            self._previous = previous_lines(self._recording, self._session.state(), len(self._lines))
        self._update_note()
        self._highlight()
        self.line_numbers().update()
        self.viewport().update()

    def _update_note(self) -> None:
        """The note under the code while typing keeps the marks off (NOTE [marks follow the recorded text])"""
        off = self._typed and not self._in_sync and self._recording is not None
        self.set_note(MARKS_OFF if off else "", MARKS_OFF_SHORT)

    def line_marker(self, number: int) -> tuple[str, QColor] | None:
        glyph = self.marker(number - 1)
        if not glyph:
            return None
        colour = self._get_failed() if self._failed_mark else self._get_current()
        return glyph, colour.darker(220)

    def _scroll_to_marks(self) -> None:
        """Bring the marked lines into view without moving the learner's cursor; while the lines a
        fix or a toggle wrote flash, those (the graph shows the nodes they made: graph_area.py)."""
        lines = [line - 1 for line in self._flashed] or self.highlighted_lines()
        if lines:
            self._scroll_across_to(lines[0])
        if not lines or self._lines_rect(range(lines[0], lines[0] + 1), whole=True) is not None:
            return
        # The scroll bar counts the lines on screen, not the program's: a wrapped line is two or
        # three (a narrow column scrolled to line 19 for line 27).
        document, above = self.document(), 0
        block = document.firstBlock()
        while block.isValid() and block.blockNumber() < lines[0]:
            self.blockBoundingRect(block)  # laid out, so that its count of lines is known
            above += max(block.lineCount(), 1)
            block = block.next()
        self.verticalScrollBar().setValue(max(above - 2, 0))

    def set_wrapped(self, on: bool) -> None:
        """Wrap long lines at the column's width (between tokens), or give each line one row."""
        mode = QPlainTextEdit.LineWrapMode.WidgetWidth if on else QPlainTextEdit.LineWrapMode.NoWrap
        self.setLineWrapMode(mode)
        self._scroll_to_marks()

    def _scroll_across_to(self, line: int) -> None:
        """Unwrapped, the view is scrolled across only when it would not show the marked line's
        statement from its indentation, :data:`STATEMENT_SHOWN` characters of it (NOTE [code wraps
        by default]): scrolled further, every other line lost its first characters."""
        block = self.document().findBlockByNumber(line)
        if self.lineWrapMode() != QPlainTextEdit.LineWrapMode.NoWrap or not block.isValid():
            return
        text, metrics = block.text(), self.fontMetrics()
        indent = len(text) - len(text.lstrip())
        start = metrics.horizontalAdvance(text[:indent])
        needed = self.document().documentMargin() + metrics.horizontalAdvance(
            text[: indent + STATEMENT_SHOWN]
        )
        self.horizontalScrollBar().setValue(0 if needed <= self.viewport().width() else round(start))

    def _highlight(self) -> None:
        """One full-width selection spanning the marked block of lines (their number does not matter)."""
        colour = self._get_failed() if self._failed_mark else self._get_current()
        self.set_selections("step", step_selection(self.document(), self.highlighted_lines(), colour))

    # -- bars: strong for the current lines, faint for the ones before ------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._fill_after_paint:  # NOTE [marks cost what changed]: the text in a later turn
            self._fill_after_paint = False
            self._fill_timer.start(1)
        if not self.marks_shown or not (self._marked or self._previous):
            return
        painter = QPainter(self.viewport())
        current = self._get_failed() if self._failed_mark else self._get_current()
        faint = self._get_current()
        faint.setAlpha(70)
        rect = self._lines_rect(self._previous)
        if rect is not None:
            painter.fillRect(rect, faint)
            bar = QRect(rect.left(), rect.top(), FAINT_BAR_WIDTH, rect.height())
            painter.fillRect(bar, self._get_current().darker(160))
        rect = self._lines_rect(self._marked)
        if rect is not None:
            painter.fillRect(QRect(rect.left(), rect.top(), BAR_WIDTH, rect.height()), current.darker(220))
        painter.end()

    def _lines_rect(self, lines: range, *, whole: bool = False) -> QRect | None:
        """The viewport rectangle of a run of lines, full width; None when it is not on screen
        (``whole``: unless all of it is)."""
        if not lines:
            return None
        document = self.document()
        first, last = document.findBlockByNumber(lines[0]), document.findBlockByNumber(lines[-1])
        if not (first.isValid() and last.isValid()):
            return None
        offset = self.contentOffset()
        top = self.blockBoundingGeometry(first).translated(offset).top()
        bottom = self.blockBoundingGeometry(last).translated(offset).bottom()
        height = self.viewport().height()
        if (top < 0 or bottom > height) if whole else (bottom < 0 or top > height):
            return None
        return QRect(0, round(top), self.viewport().width(), round(bottom - top))

    # -- a click on a line number jumps to the line's first step ------------------------------------
    def go_to_line(self, line: int) -> int | None:
        """Show the first step that ran ``line``; returns it (None: the line never ran, or the text
        is not the recorded one)."""
        from app.core.lesson.lines import first_step_of_line

        if self._recording is None or not self.marks_shown:
            return None
        step = first_step_of_line(self._recording, line)
        if step is not None:
            self._session.go_to(step)
        return step

    def _on_gutter_clicked(self, line: int) -> None:
        self.line_clicked.emit(line)
        self.go_to_line(line)
        if self.hasFocus():
            self.clearFocus()  # a click to navigate: the arrow keys step on from there

    # -- a right click on a call's line edits its keywords -----------------------------------------
    def keyword_actions(self, line: int, parent: QMenu | None = None) -> list[QAction]:
        """One group of actions per call on ``line``: retain_graph True / False / unset, create_graph."""
        if self._recording is None or not self.marks_shown:
            return []  # the recording's lines are not the text's (NOTE [marks follow the recorded text])
        return keyword_actions(self._session, call_sites_at(self._recording, line), parent or self)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu()
        actions = self.keyword_actions(self.cursorForPosition(event.pos()).blockNumber() + 1, menu)
        if actions:
            menu.insertSeparator(menu.actions()[0] if menu.actions() else None)  # type: ignore[arg-type]
            first = menu.actions()[0]
            menu.insertActions(first, actions)
        menu.exec(event.globalPos())
        menu.deleteLater()


def _height_of(edit: QPlainTextEdit, lines: int) -> int:
    """The height that shows ``lines`` lines of text, with the frame and a horizontal scroll bar."""
    margins = edit.contentsMargins().top() + edit.contentsMargins().bottom()
    bar = edit.horizontalScrollBar().sizeHint().height()
    return lines * edit.fontMetrics().lineSpacing() + margins + bar + 12
