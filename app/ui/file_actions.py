"""Open, Save, Save As, recent files, and the question before edits are dropped.

Saving is atomic: :func:`write_atomically` writes a temporary file beside the
target through :class:`QSaveFile` and renames it over the old file only when
every byte was written, so a failed save (read-only folder, full disk) leaves
the old file exactly as it was. The editor stays modified after a failure, and
nothing replaces modified edits without :meth:`FileController.maybe_discard`
asking first. Every dialog goes through :mod:`app.ui.dialogs`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QIODevice, QObject, QSaveFile, QSettings, Signal
from PySide6.QtWidgets import QWidget

from app.core.loading import Scenario, load_file, parse_scenario
from app.core.model.errors import ScenarioError
from app.core.resources import resource_path
from app.core.toml_writer import to_toml
from app.ui import dialogs
from app.ui.editor import ScenarioEditor

__all__ = ["MAX_RECENT", "RECENT_KEY", "FileController", "write_atomically"]

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
    """File menu actions for one :class:`ScenarioEditor`.

    ``settings`` keeps the recent files (most recent first, at most
    :data:`MAX_RECENT`) and the last folder used. Built-in scenarios have no
    ``current_path``: saving one always asks where (Save As).
    """

    scenario_opened = Signal(object)
    path_changed = Signal(object)  # Path | None: for the window title
    recent_files_changed = Signal()

    def __init__(self, parent_widget: QWidget | None, editor: ScenarioEditor, settings: QSettings) -> None:
        super().__init__(parent_widget)
        self._parent = parent_widget
        self._editor = editor
        self._settings = settings

    @property
    def current_path(self) -> Path | None:
        """The file Save writes to: None for a new or built-in scenario."""
        path = self._editor.source_path()
        if path is None or _is_builtin(path):
            return None
        return path

    # -- opening

    def open_dialog(self) -> Scenario | None:
        """Ask about unsaved edits, then for a file; open it."""
        if not self.maybe_discard():
            return None
        path = dialogs.choose_open_path(self._parent)
        return None if path is None else self._load(Path(path))

    def open_path(self, path: Path | str) -> Scenario | None:
        """Open a scenario file into the editor; a bad file is explained, never raised."""
        if not self.maybe_discard():
            return None
        return self._load(Path(path))

    def _load(self, path: Path) -> Scenario | None:
        try:
            scenario = load_file(path)
        except ScenarioError as err:
            dialogs.inform(self._parent, "Cannot open scenario", f"{path.name} cannot be opened.\n\n{err}")
            return None
        except Exception as exc:  # a classroom program explains a bad file, whatever it is
            log.exception("opening %s failed", path)
            dialogs.inform(self._parent, "Cannot open scenario", f"{path.name} cannot be opened: {exc}")
            return None
        self._editor.set_scenario(scenario)
        self._remember(path)
        self.path_changed.emit(self.current_path)
        self.scenario_opened.emit(scenario)
        return scenario

    # -- saving

    def save(self) -> bool:
        """Save to the current file, or ask where (Save As) when there is none."""
        path = self.current_path
        if path is None:
            return self.save_as()
        scenario = self._scenario_to_save()
        return scenario is not None and self._save_to(path, scenario)

    def save_as(self) -> bool:
        scenario = self._scenario_to_save()
        if scenario is None:
            return False
        path = dialogs.choose_save_path(self._parent, self._suggested_path(scenario))
        return path is not None and self._save_to(Path(path), scenario)

    def maybe_discard(self) -> bool:
        """True when the editor's content may be replaced (saved, discarded, or unmodified)."""
        if not self._editor.is_modified():
            return True
        name = self.current_path.name if self.current_path else "this scenario"
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

    def _scenario_to_save(self) -> Scenario | None:
        scenario = self._editor.flush()
        if scenario is None:
            err = self._editor.error()
            dialogs.inform(
                self._parent,
                "Cannot save yet",
                f"The scenario has an error, so it was not saved: {err}\n\n"
                "Fix it in the editor and save again. Nothing was written.",
            )
        return scenario

    def _suggested_path(self, scenario: Scenario) -> Path:
        if self.current_path is not None:
            return self.current_path
        folder = self._settings.value(LAST_DIR_KEY)
        base = Path(folder) if isinstance(folder, str) and folder else Path.home()
        return base / f"{scenario.name}.toml"

    def _save_to(self, path: Path, scenario: Scenario) -> bool:
        text = to_toml(scenario)
        if parse_scenario(text) != scenario:  # never write a file that would not load back
            log.error("TOML for %s does not load back equal:\n%s", scenario.name, text)
            dialogs.inform(self._parent, "Not saved", "This scenario could not be written faithfully.")
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


def _is_builtin(path: Path) -> bool:
    try:
        return path.resolve().parent == resource_path("scenarios").resolve()
    except OSError:
        return False
