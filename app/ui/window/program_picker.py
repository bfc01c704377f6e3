"""The toolbar's program picker: the built-in programs, then the one on screen when it is not one.

It also knows where the program on screen came from: a built-in as shipped, a built-in with an
edit or a fix applied, a file, or a ``.lens`` recording. That decides the picker's entry, the
summary's words and what the next start opens (``AppSettings.last_program``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.core.resources import program_files, resource_path
from app.ui.runtime.session import Session
from app.ui.runtime.settings import AppSettings
from app.ui.window.program_list import ProgramList

if TYPE_CHECKING:
    from app.core.model.program import Program
    from app.core.model.recording import Recording

__all__ = ["ProgramPicker", "builtin_names"]


@functools.cache  # the shipped programs do not change while the window runs
def builtin_names() -> list[str]:
    return [path.stem for path in program_files()]


class ProgramPicker(QObject):
    """``combo`` lists the programs; ``chosen`` asks for one to be loaded (a built-in's name or a
    file's path), once ``may_replace`` agreed that the program on screen may go."""

    chosen = Signal(object)  # str | Path

    def __init__(self, session: Session, settings: AppSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._settings = settings
        self._shipped: dict[str, str] = {}  # each built-in's text as the window loaded it
        self._fresh = True  # the next recording is a program opened afresh, not an edit
        self.lens_path: Path | None = None  # the .lens file on screen, when one was opened
        self.may_replace: Callable[[], bool] = lambda: True
        combo = self.combo = ProgramList()  # by title, the seed first, twins together
        combo.activated.connect(self._on_activated)
        session.recording_applied.connect(self._on_recording_applied)

    def opening(self, lens_path: Path | None) -> None:
        """A program (or the ``.lens`` file at ``lens_path``) is being opened afresh."""
        self._fresh = True
        self.lens_path = lens_path

    def _on_recording_applied(self, recording: Recording) -> None:
        program = recording.program
        if not self._fresh:
            self.lens_path = None  # an edit of a read recording is recorded: no longer the file's
        if self._fresh and self.lens_path is None and self._from_builtin(program):
            self._shipped.setdefault(program.name, program.code)  # as loaded: the built-in's own text
        self._fresh = False
        self.select(recording)
        self._remember(program)

    def summary(self, program: Program) -> str:
        """The program's summary; an edited built-in's says whose story it began as."""
        summary = program.summary
        if self._is_edited_builtin(program) and summary:  # a fix applied: its summary tells the old story
            summary = f"Your edit of the built-in {program.name}, which began as: {summary}"
        return summary

    def select(self, recording: Recording | None) -> None:
        """Show the program on screen in the picker; a file gets one entry after the built-ins."""
        if recording is None:
            return
        program = recording.program
        if self.lens_path is None and self._from_builtin(program) and not self._is_edited_builtin(program):
            self.combo.show_builtin(program.name)
            return
        path = self.lens_path or program.path
        label = f"{program.name} ({path.name})" if path else f"{program.name} (edited)"
        self.combo.show_file(label, str(path) if path else None)

    @staticmethod
    def _from_builtin(program: Program) -> bool:
        path = program.path
        in_resources = path is None or path.parent == resource_path("programs")
        return program.name in builtin_names() and in_resources

    def _is_edited_builtin(self, program: Program) -> bool:
        """A built-in whose text differs from the one the window loaded (a fix, an edit). Compared
        with what was loaded, not read again: reading a program imports torch, which the window
        leaves for after its first paint (NOTE [fast start])."""
        shipped = self._shipped.get(program.name)
        return self._from_builtin(program) and shipped is not None and shipped != program.code

    def _remember(self, program: Program) -> None:
        if self.lens_path is not None:
            self._settings.last_program = str(self.lens_path)
        elif self._from_builtin(program):  # edited or not: the next start opens the built-in
            self._settings.last_program = program.name
        elif program.path is not None:
            self._settings.last_program = str(program.path)

    def _on_activated(self, position: int) -> None:
        source = self.combo.source_at(position)
        if source is None:
            return  # the edited program already on screen
        if not self.may_replace():
            self.select(self._session.recording)
            return
        self.chosen.emit(source)
