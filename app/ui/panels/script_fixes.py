"""A fix of the user's own script (a ``run`` recording): its unified diff, "Copy patch" and
"Apply to file".

A script's fix is an edit of the user's file, proven by running the edited
script in a fresh process (NOTE [proving a script] in ``app/child/proofs.py``).
The window never re-records a script in the checked language: "Apply to file"
keeps a backup beside the file (``SCRIPT.py.bak``), writes the edit with
:class:`QSaveFile` (all or nothing), then records the script again with
``python -m app run`` in a process of its own and loads that recording.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QProcess, QSaveFile, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from app.core.lesson.edits import unified_diff
from app.core.lesson.prove import ScriptSource

__all__ = ["ScriptFixBar", "apply_to_file"]


def apply_to_file(path: Path, old: str, new: str) -> Path:
    """Write ``new`` over ``path`` (whose text must still be ``old``), keeping ``old`` beside it as
    ``path.bak``; returns the backup. Raises ``OSError`` when either write fails (nothing half
    written: QSaveFile commits the whole file or nothing)."""
    if path.read_text(encoding="utf-8") != old:
        raise OSError(f"{path} changed since it was recorded; nothing was written")
    backup = path.with_name(path.name + ".bak")
    for target, text in ((backup, old), (path, new)):
        file = QSaveFile(str(target))
        if not file.open(QSaveFile.OpenModeFlag.WriteOnly):
            raise OSError(f"cannot write {target}: {file.errorString()}")
        file.write(text.encode("utf-8"))
        if not file.commit():
            raise OSError(f"cannot write {target}: {file.errorString()}")
    return backup


class ScriptFixBar(QWidget):
    """The two actions of one proven fix of a script."""

    recorded = Signal(str)  # the .lens file of the script recorded again after "Apply to file"
    failed = Signal(str)  # why applying or recording again did not work, in a sentence

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._script: ScriptSource | None = None
        self._old = self._new = ""
        self.copy_button = QPushButton("Copy patch")
        self.copy_button.setObjectName("copyPatch")
        self.apply_button = QPushButton("Apply to file")
        self.apply_button.setObjectName("applyToFile")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.copy_button)
        row.addWidget(self.apply_button)
        row.addStretch(1)
        self.copy_button.clicked.connect(self.copy_patch)
        self.apply_button.clicked.connect(self.apply)
        self._process: QProcess | None = None

    def set_fix(self, script: ScriptSource, old: str, new: str) -> None:
        self._script, self._old, self._new = script, old, new
        self.apply_button.setToolTip(f"Write this edit to {script.path} (a backup beside it), then record it")

    def patch(self) -> str:
        assert self._script is not None
        return unified_diff(self._old, self._new, str(self._script.path))

    def copy_patch(self) -> None:
        QGuiApplication.clipboard().setText(self.patch())

    def apply(self) -> None:
        script = self._script
        if script is None:
            return
        try:
            apply_to_file(script.path, self._old, self._new)
        except OSError as exc:
            self.failed.emit(str(exc))
            return
        out = Path(tempfile.mkdtemp(prefix="autograd-lens-")) / f"{script.path.stem}.lens"
        process = QProcess(self)
        process.setWorkingDirectory(str(Path.cwd()))
        args = ["-m", "app", "run", "--no-fixes", "--out", str(out), str(script.path), *script.args]
        process.finished.connect(lambda *_: self._on_recorded(out))
        self._process = process
        process.start(sys.executable, args)

    def _on_recorded(self, out: Path) -> None:
        from app.child.proofs import own_recording  # no torch

        if out.exists():
            own_recording(out)  # the user's own script, recorded again: not a stranger's file
            self.recorded.emit(str(out))
        else:
            self.failed.emit("the edited script was written, but recording it again failed")
