"""New, Open, Save, Save As, recent files, and the question before edits are dropped.

A program is saved as TOML (:func:`~app.core.toml_writer.to_toml`), or as
its code alone to a ``.py`` file. Opening takes ``.toml`` and ``.py``
programs, and ``.lens`` recordings, which the window reads without running
anything.

Saving is atomic: :func:`write_atomically` writes a temporary file beside the
target through :class:`QSaveFile` and renames it over the old file only when
every byte was written, so a failed save (read-only folder, full disk) leaves
the old file exactly as it was. The editor stays modified after a failure, and
nothing replaces modified edits without :meth:`FileController.maybe_discard`
asking first. Every dialog goes through :mod:`app.ui.window.dialogs`.

:class:`FileMenu` is the window's File menu over a controller, made with the editor after the
first graph is painted (NOTE [fast start] in ``main_window.py``); until then its commands wait.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QIODevice, QObject, QSaveFile, QSettings, Signal
from PySide6.QtWidgets import QMenu, QWidget

from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.resources import resource_path
from app.core.toml_writer import to_toml
from app.ui.editor.editor import ProgramEditor
from app.ui.editor.trusted_script import show_refused_file
from app.ui.window import dialogs
from app.ui.window.actions import WindowActions

__all__ = ["MAX_RECENT", "RECENT_KEY", "FileController", "FileMenu", "write_atomically"]

MAX_RECENT = 8
RECENT_KEY = "files/recent"
LAST_DIR_KEY = "files/last_dir"
CHOICES = ("Save", "Discard", "Cancel")

log = logging.getLogger(__name__)


def write_atomically(path: Path, data: bytes) -> str | None:
    """Write ``data`` to ``path`` all or nothing; returns why it failed, or None."""
    file = QSaveFile(str(path))
    if not file.open(QIODevice.OpenModeFlag.WriteOnly):
        return _reason(file, "the folder does not allow creating a file there")
    written = file.write(QByteArray(data))
    if written != len(data):
        reason = _reason(file, "not every byte could be written (is the disk full?)")
        file.cancelWriting()
        file.commit()  # after cancelWriting this only removes the temporary file
        return reason
    if not file.commit():
        return _reason(file, "the new file could not replace the old one")
    return None


def _reason(file: QSaveFile, fallback: str) -> str:
    text = file.errorString()
    return fallback if not text or text == "Unknown error" else f"{text} ({fallback})"


class FileController(QObject):
    """File menu actions for one :class:`ProgramEditor`.

    ``settings`` keeps the recent files (most recent first, at most
    :data:`MAX_RECENT`) and the last folder used. Built-in programs have no
    ``current_path``: saving one always asks where (Save As).
    """

    program_opened = Signal(object)  # a Program read from a .toml or .py file
    recording_opened = Signal(object)  # the Path of a .lens file: the window reads it, running nothing
    refused_opened = Signal(object)  # the ProgramError of a file whose text is in the editor, unrecorded
    path_changed = Signal(object)  # Path | None: for the window title
    recent_files_changed = Signal()

    def __init__(self, parent_widget: QWidget | None, editor: ProgramEditor, settings: QSettings) -> None:
        super().__init__(parent_widget)
        self._parent = parent_widget
        self._editor = editor
        self._settings = settings

    @property
    def current_path(self) -> Path | None:
        """The file Save writes to: None for a new or built-in program."""
        path = self._editor.source_path()
        if path is None or _is_builtin(path) or path.suffix.lower() not in (".toml", ".py"):
            return None
        return path

    # -- opening

    def new_program(self) -> Program | None:
        """Ask about unsaved edits, then start from an empty program (emitted as opened)."""
        if not self.maybe_discard():
            return None
        program = self._editor.new_program()
        self.path_changed.emit(None)
        self.program_opened.emit(program)
        return program

    def open_dialog(self) -> Program | Path | None:
        """Ask about unsaved edits, then for a file; open it."""
        if not self.maybe_discard():
            return None
        path = dialogs.choose_open_path(self._parent)
        return None if path is None else self._load(Path(path))

    def open_path(self, path: Path | str) -> Program | Path | None:
        """Open a program file into the editor, or a ``.lens`` recording; a bad file is explained,
        never raised. Returns the program, the recording's path, or None."""
        if not self.maybe_discard():
            return None
        return self._load(Path(path))

    def _load(self, path: Path) -> Program | Path | None:
        from app.core.lensfile import is_lens

        if is_lens(path):
            if not path.is_file():
                dialogs.inform(self._parent, "Cannot open recording", f"{path.name} is not a file.")
                return None
            self._remember(path)
            self.recording_opened.emit(path)  # read off the GUI thread; a damaged file is told there
            return path
        try:
            from app.core.loading import load_file  # the language's checks need torch: not at start

            program = load_file(path)
        except ProgramError as err:
            if show_refused_file(self._editor, path, err):  # its refusal at its line, and the offer
                self.path_changed.emit(self.current_path)
                self.refused_opened.emit(err)
                return None
            dialogs.inform(self._parent, "Cannot open program", f"{path.name} cannot be opened.\n\n{err}")
            return None
        except Exception as exc:  # a classroom program explains a bad file, whatever it is
            log.exception("opening %s failed", path)
            dialogs.inform(self._parent, "Cannot open program", f"{path.name} cannot be opened: {exc}")
            return None
        self._editor.set_program(program)
        self._remember(path)
        self.path_changed.emit(self.current_path)
        self.program_opened.emit(program)
        return program

    # -- saving

    def save(self) -> bool:
        """Save to the current file, or ask where (Save As) when there is none."""
        path = self.current_path
        if path is None:
            return self.save_as()
        program = self._program_to_save()
        return program is not None and self._save_to(path, program)

    def save_as(self) -> bool:
        program = self._program_to_save()
        if program is None:
            return False
        path = dialogs.choose_save_path(self._parent, self._suggested_path(program))
        return path is not None and self._save_to(Path(path), program)

    def maybe_discard(self) -> bool:
        """True when the editor's content may be replaced (saved, discarded, or unmodified)."""
        if not self._editor.is_modified():
            return True
        name = self.current_path.name if self.current_path else "this program"
        choice = dialogs.ask(
            self._parent,
            "Unsaved changes",
            f"Save your changes to {name} first? If you discard them, they are lost.",
            CHOICES,
            "Save",
        )
        if choice == "Save":
            return self.save()
        return choice == "Discard"

    def _program_to_save(self) -> Program | None:
        program = self._editor.flush()
        if program is None:
            err = self._editor.error()
            dialogs.inform(
                self._parent,
                "Cannot save yet",
                f"The program has an error, so it was not saved: {err}\n\n"
                "Fix it in the editor and save again. Nothing was written.",
            )
        return program

    def _suggested_path(self, program: Program) -> Path:
        if self.current_path is not None:
            return self.current_path
        folder = self._settings.value(LAST_DIR_KEY)
        base = Path(folder) if isinstance(folder, str) and folder else Path.home()
        return base / f"{program.name}.toml"

    def _save_to(self, path: Path, program: Program) -> bool:
        text = _file_text(path, program)
        if text is None:  # never write a file that would not load back
            log.error("%s does not load back equal as %s", program.name, path.suffix)
            dialogs.inform(self._parent, "Not saved", "This program could not be written faithfully.")
            return False
        reason = write_atomically(path, text.encode("utf-8"))
        if reason is not None:
            dialogs.inform(
                self._parent,
                "Save failed",
                f"{path} could not be saved: {reason}.\n\nThe file on disk was not changed and your "
                "edits are still in the editor. Try Save As to choose another folder.",
            )
            return False
        self._editor.set_source_path(path)
        self._editor.set_modified(False)
        self._remember(path)
        self.path_changed.emit(self.current_path)
        return True

    # -- recent files

    def recent_files(self) -> list[Path]:
        """Most recent first, at most :data:`MAX_RECENT`, only files that still exist."""
        return [path for path in map(Path, self._stored_recent()) if path.is_file()][:MAX_RECENT]

    def _stored_recent(self) -> list[str]:
        raw = self._settings.value(RECENT_KEY)
        if isinstance(raw, str):  # an INI file gives back a one-item list as a string
            return [raw] if raw else []
        if isinstance(raw, (list, tuple)):
            return [str(item) for item in raw if item]
        return []

    def _remember(self, path: Path) -> None:
        text = str(path.resolve())
        paths = [text, *(p for p in self._stored_recent() if p != text and Path(p).is_file())]
        self._settings.setValue(RECENT_KEY, paths[:MAX_RECENT])
        self._settings.setValue(LAST_DIR_KEY, str(path.resolve().parent))
        self._settings.sync()
        self.recent_files_changed.emit()


class FileMenu(QObject):
    """New, Open, Save, Save As and Open Recent of ``commands``, run by the :class:`FileController`
    that :meth:`attach` makes; ``opened`` hands on what was opened (a Program, or a ``.lens`` Path)."""

    opened = Signal(object)
    refused = Signal(object)  # a file's text opened into the editor, refused by the language

    def __init__(self, window: QWidget, commands: WindowActions, settings: QSettings) -> None:
        super().__init__(window)
        self._window, self._commands, self._settings = window, commands, settings
        self.controller: FileController | None = None
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.aboutToShow.connect(self._update_recent_menu)
        for action, run in (
            (commands.new, FileController.new_program),
            (commands.open, FileController.open_dialog),
            (commands.save, FileController.save),
            (commands.save_as, FileController.save_as),
        ):
            action.triggered.connect(lambda checked=False, run=run: self.controller and run(self.controller))

    def attach(self, editor: ProgramEditor) -> FileController:
        """The controller for ``editor``; the file commands work from now on."""
        controller = self.controller = FileController(self._window, editor, self._settings)
        controller.program_opened.connect(self.opened)
        controller.recording_opened.connect(self.opened)
        controller.refused_opened.connect(self.refused)
        c = self._commands
        for action in (c.new, c.open, c.save, c.save_as, c.details):
            action.setEnabled(True)
        return controller

    def maybe_discard(self) -> bool:
        """True when the program on screen may be replaced (nothing to lose, saved, or discarded)."""
        return self.controller is None or self.controller.maybe_discard()

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        controller = self.controller
        paths = controller.recent_files() if controller is not None else []
        for path in paths:
            action = self.recent_menu.addAction(str(path))
            action.triggered.connect(lambda checked=False, p=path: controller and controller.open_path(p))
        if not paths:
            self.recent_menu.addAction("(no recent files)").setEnabled(False)


def _file_text(path: Path, program: Program) -> str | None:
    """The file's text for ``program``: its code for a ``.py`` file, else TOML; None if it would not
    load back to the same program (the name follows the file, as loading names it)."""
    if path.suffix.lower() == ".py":
        try:
            from app.core.loading import parse_python

            return program.code if parse_python(program.code).code == program.code else None
        except ProgramError:
            return None
    try:
        text = to_toml(program)
    except ValueError:  # text a UTF-8 file cannot hold
        return None
    from app.core.loading import parse_program

    return text if parse_program(text, name=program.name) == program else None


def _is_builtin(path: Path) -> bool:
    try:
        return path.resolve().parent == resource_path("programs").resolve()
    except OSError:
        return False
