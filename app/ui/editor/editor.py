"""The program editor: the program's code, with its name, title, summary and notes a click away.

Every edit is checked (after a short pause) by the same code that loads files,
:func:`app.core.loading.program_from_dict` (the language's static checks
included), so the editor can never produce a program the rest of the window
would refuse. An error is shown where it is: a wavy underline at its line and
column in the code (:class:`~app.ui.editor.code_edit.CodeEdit`), with the message
under the editor and as that line's tooltip. While the text is wrong nothing
is emitted, so the window keeps showing the last good recording.

The code is the whole editor; the details live in a small dialog
(:mod:`app.ui.editor.details_dialog`) behind the "Details…" button. The code box may
be given (the window's :class:`~app.ui.editor.code_panel.CodePanel`, which also shows
where the run is): then there is one code editor, not a second copy of the text.

In the window the editor follows the :class:`~app.ui.runtime.session.Session`, which owns the
program (:meth:`ProgramEditor.follow`): each valid edit goes to the session to be recorded, and a
recording the editor did not ask for (a fix, a toggle, Undo, a file) brings the editor its
name, path and details. Its text is written once, by the code panel, which shows the session's
program itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.ui.editor.code_edit import CodeEdit, plain_text
from app.ui.editor.details_dialog import DetailsDialog, ProgramDetails
from app.ui.style.plain_text import plain, plain_tip

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.ui.runtime.session import Session

__all__ = [
    "DEBOUNCE_MS",
    "CodeEdit",
    "ErrorMark",
    "ProgramDetails",
    "ProgramEditor",
    "locate_error",
    "plain_text",
]

DEBOUNCE_MS = 400
PLACEHOLDER = (
    "import torch\n\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.square()\ny.sum().backward()"
)
TEXT_FIELDS = ("name", "title", "summary", "notes")
AskDetails = Callable[[ProgramDetails, QWidget], ProgramDetails | None]


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


def locate_error(err: ProgramError) -> ErrorMark:
    """Map a :class:`ProgramError`'s field to a place in the editor.

    >>> locate_error(ProgramError("x", field="program", line=2, col=5))
    ErrorMark(part='code', line=2, col=5)
    >>> locate_error(ProgramError("x", field="name")).part
    'name'
    """
    field = err.field or ""
    if field in TEXT_FIELDS:
        return ErrorMark(field)
    if field.startswith("program") or err.line is not None:
        # Python reports a syntax error in empty text at line 0, column 0.
        return ErrorMark("code", max(err.line or 1, 1), max(err.col or 1, 1))
    return ErrorMark("general")


# -- the editor ------------------------------------------------------------------


class ProgramEditor(QWidget):
    """Edit a program; emits ``program_edited(Program)`` for each valid edit.

    ``set_program`` fills it (not modified); typing sets ``is_modified`` and,
    :data:`DEBOUNCE_MS` after the last key, checks the text: a valid program
    is emitted, an error is shown inline (:meth:`show_error`) and nothing is
    emitted. :meth:`flush` checks at once. :meth:`set_details` changes the
    name, title, summary and notes as the "Details…" dialog does.
    """

    program_edited = Signal(object)
    modified_changed = Signal(bool)
    error_changed = Signal(object)  # the ProgramError shown, or None once it is fixed

    def __init__(self, parent: QWidget | None = None, *, code_edit: CodeEdit | None = None) -> None:
        super().__init__(parent)
        self.code_edit = code_edit or CodeEdit()
        self._modified = False
        self._saved: tuple[str, ProgramDetails] | None = None  # the text and details as opened or saved
        self._path: Path | None = None
        self._twin = ""  # kept as it came: not edited here
        self._details = ProgramDetails("program", "", "", "")
        self._last_emitted: Program | None = None
        self._error: ProgramError | None = None
        self._error_mark: ErrorMark | None = None
        self._session: Session | None = None
        self.ask_details: AskDetails = DetailsDialog.ask  # the seam tests replace
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.flush)
        self._build()

    # -- public API

    def set_program(self, program: Program, *, modified: bool = False) -> None:
        """Show ``program``; it becomes the unmodified state (unless ``modified``)."""
        self._timer.stop()
        self.code_edit.write(program.code)  # not an edit (and nothing is written when it is there)
        self._take(program, modified=modified)

    def _take(self, program: Program, *, modified: bool) -> None:
        """Everything of ``program`` but its text: details, path, the last program, no error."""
        self._details = ProgramDetails.of(program)
        self._path = program.path
        self._twin = program.twin
        self._last_emitted = program
        self._update_heading()
        self.clear_error()
        shown = (program.code, self._details)  # the code box may not have written it yet
        if not modified or shown == self._saved:
            self._saved = shown
        self._flag(shown != self._saved)

    def follow(self, session: Session) -> None:
        """Edit ``session``'s program: valid edits are recorded by it, and its recordings of other
        programs are taken in (their text is the code box's to write, a ``CodePanel``)."""
        self._session = session
        self.program_edited.connect(session.rerecord)
        session.recording_applied.connect(self._on_recording_applied)
        session.failed.connect(self._on_failed)
        if session.recording is not None:
            self.set_program(session.recording.program)

    def _on_recording_applied(self, recording: Recording) -> None:
        session, program = self._session, recording.program
        if session is None or session.program is not program:
            return  # a newer program was asked for meanwhile (Ctrl+N, an edit)
        if program == self._last_emitted:
            return  # this editor made it (the learner may have typed on since)
        self._timer.stop()
        self._take(program, modified=not session.opened)  # a fix or a toggle counts as unsaved

    def _on_failed(self, message: str) -> None:
        error = None if self._session is None else self._session.last_error
        if isinstance(error, ProgramError):
            self.show_error(error)

    def new_program(self) -> Program:
        """Start from an empty program (nothing to save yet); returns it."""
        program = Program("")
        self.set_program(program)
        return program

    def current_program(self) -> Program | None:
        """The program in the editor now, or None while it has an error."""
        try:
            return self._read()
        except ProgramError:
            return None

    def flush(self) -> Program | None:
        """Check the editor now (skipping the typing pause); emits as an edit would."""
        self._timer.stop()
        had_error = self._error is not None
        try:
            program = self._read()
        except ProgramError as err:
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

    def details(self) -> ProgramDetails:
        return self._details

    def set_details(self, details: ProgramDetails) -> None:
        """Change the name, title, summary and notes: an edit, checked and emitted at once."""
        if details == self._details:
            return
        self._details = details
        self._update_heading()
        self._flag((self.code_edit.text(), details) != self._saved)
        self.flush()

    def edit_details(self) -> None:
        """Ask for the details in the dialog (:attr:`ask_details`); apply them unless cancelled."""
        details = self.ask_details(self._details, self)
        if details is not None:
            self.set_details(details)

    def is_modified(self) -> bool:
        return self._modified

    def set_modified(self, modified: bool) -> None:
        """Unmodified: the text and details now are the saved ones, which a change taken back (a
        fix then Ctrl+Z, a line typed then deleted) returns to, with nothing to save."""
        if not modified:
            self._saved = (self.code_edit.text(), self._details)
        self._flag(modified)

    def _flag(self, modified: bool) -> None:
        if modified != self._modified:
            self._modified = modified
            self.modified_changed.emit(modified)

    def source_path(self) -> Path | None:
        """The file the program came from (or was last saved to)."""
        return self._path

    def set_source_path(self, path: Path | None) -> None:
        self._path = path

    def error(self) -> ProgramError | None:
        return self._error

    def error_mark(self) -> ErrorMark | None:
        return self._error_mark

    def show_error(self, err: ProgramError) -> None:
        """Show ``err`` at its line and column (or on the Details button), and as a sentence below."""
        mark = locate_error(err)
        self._clear_marks()
        if mark.part == "code":
            self.code_edit.mark_error(mark.line or 1, mark.col or 1, err.message)
        elif mark.part in TEXT_FIELDS:
            self.details_button.setToolTip(plain_tip(f"{mark.describe()}: {err.message}"))
        self._error, self._error_mark = err, mark
        self.error_label.setText(f"{mark.describe()}: {err.message}")
        colour = self.code_edit.error_colour().name()
        self.error_label.setStyleSheet(f"color: {colour}; font-weight: bold;")
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

    def _build(self) -> None:
        self.heading = QLabel()
        self.heading.setProperty("role", "heading")  # bold at text size: the code keeps the column's height
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setWordWrap(True)  # a long title wraps: it never widens the code's column
        self.details_button = QToolButton()
        self.details_button.setText("Details…")
        self.details_button.setToolTip("Name, title, summary and notes of the program")
        self.details_button.clicked.connect(self.edit_details)
        self.code_edit.setPlaceholderText(PLACEHOLDER)
        self.code_edit.text_edited.connect(self._on_edited)
        self.code_edit.text_written.connect(self._timer.stop)  # another program's text: no edit pending
        self.error_label = plain(QLabel())
        self.error_label.setObjectName("editorError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setVisible(False)
        header = QHBoxLayout()
        header.addWidget(self.heading, 1)
        header.addWidget(self.details_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.code_edit, 1)
        layout.addWidget(self.error_label)

    def set_compact(self, on: bool) -> None:
        """Without the title line over the code (a small screen): the Details button names it."""
        self.heading.setVisible(not on)
        self._update_heading()

    def _update_heading(self) -> None:
        self.heading.setText(self._details.title or self._details.name)
        folded = self.heading.isHidden()
        self.details_button.setText(f"Details: {self._details.name}…" if folded else "Details…")

    # -- reading

    def _read(self) -> Program:
        from app.core.loading import program_from_dict  # the language's checks need torch: not at start

        data = {**self._details._asdict(), "twin": self._twin, "program": {"code": self.code_edit.text()}}
        return replace(program_from_dict(data), path=self._path)

    def _clear_marks(self) -> None:
        self.code_edit.clear_error()
        self.details_button.setToolTip("Name, title, summary and notes of the program")

    # -- events

    def _on_edited(self) -> None:
        self._flag((self.code_edit.text(), self._details) != self._saved)
        self._timer.start()
