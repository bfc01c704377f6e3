"""One button beside a refusal: record the refused text as the learner's own trusted script.

# NOTE [trusted script offer]
The checked language refuses what it cannot check; ``python -m app run SCRIPT.py`` records
any script as ordinary Python. When the editor shows a refusal of the language (a message
that ends with how to record a trusted script), :class:`TrustedScriptOffer` shows a button
and one sentence saying what pressing it means. Pressing it asks for consent once per text
(and again for the same text opened from another file); only then is the text written to a
``.py`` file of its own and recorded by ``python -m app run --out FILE.lens SCRIPT.py`` in a
child process (:class:`ScriptRun`), as the command line does, stopped at a wall-clock limit.
The window then opens the recording, which holds what PyTorch itself did. Nothing runs
without a press and a yes: opening a file never presses the button, a program that came from
a ``.toml`` or ``.lens`` file is never offered, and a refusal that is not the language's
(a syntax error, a size limit) is not either. A program read from a ``.lens`` file keeps the
file as its path through every edit (the window's worker sets it), so it stays a data file's.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QPushButton, QVBoxLayout, QWidget

from app.core.model.errors import ProgramError

if TYPE_CHECKING:
    from app.ui.editor.editor import ProgramEditor

__all__ = [
    "BUTTON_TEXT",
    "CONSENT_TEXT",
    "ScriptRun",
    "TrustedScriptOffer",
    "ask_consent",
    "offered_for",
    "show_refused_file",
]

BUTTON_TEXT = "Record as my own trusted script"
CONSENT_TEXT = (
    "This runs the text as ordinary Python with full access to this computer, like python file.py: "
    "record it only if you wrote it or trust it."
)
# Every refusal of the checked language ends with this command (grammar.RUN_HINT, not imported
# here: the language's modules import torch, which the window does not load at start).
RUN_COMMAND = "python -m app run"
NEVER_SCRIPTS = (".toml", ".lens")  # data files: never run as a script, whatever they hold
# A fresh interpreter importing torch, then the script within the recorder's own time limit.
TIME_LIMIT_MS = 10 * 60 * 1000
ERROR_LINES = 3  # of the script's stderr, shown when it records nothing

AskConsent = Callable[[QWidget, str], bool]


def ask_consent(parent: QWidget, text: str) -> bool:
    """The consent dialog (tests replace :attr:`TrustedScriptOffer.ask`); No is the default."""
    answer = QMessageBox.question(
        parent,
        "Run as ordinary Python?",
        text,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def offered_for(error: ProgramError | None, path: Path | None) -> bool:
    """Whether a refusal is offered the button: the language's own, for text not from a data file.

    >>> refusal = ProgramError("while loops are not allowed; run: python -m app run SCRIPT.py", line=2)
    >>> offered_for(refusal, None), offered_for(refusal, Path("lesson.toml"))
    (True, False)
    >>> offered_for(ProgramError("this is not valid Python: invalid syntax", line=1), None)
    False
    """
    if error is None or RUN_COMMAND not in error.message:
        return False
    return path is None or path.suffix.lower() not in NEVER_SCRIPTS


class ScriptRun(QObject):
    """``python -m app run --out FILE.lens SCRIPT.py`` on a text, in a child process.

    ``recorded(Path)`` gives the ``.lens`` file; ``failed(str)`` says why there is none.
    """

    recorded = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process: QProcess | None = None
        self._out: Path | None = None
        self._folder: Path | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._on_time_limit)
        self._timed_out = False
        self.script: Path | None = None  # the script the last run records

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def start(self, code: str, name: str, own: Path | None = None) -> None:
        """Record ``code``: the user's own file ``own`` when it holds that very text (its fixes are
        then edits of that file), else a script of its own (a run under way is stopped first)."""
        from app.child.client import child_env  # no torch: the child imports it

        self.stop()
        if self._folder is not None:  # the last run's recording was read when it was shown
            shutil.rmtree(self._folder, ignore_errors=True)
        stem = re.sub(r"[^A-Za-z0-9_-]", "-", name)[:60].strip("-") or "program"
        # A folder of its own: the script's folder comes first on its sys.path, as with python file.py
        folder = self._folder = Path(tempfile.mkdtemp(prefix="autograd-lens-script-"))
        script = own if own is not None and _holds(own, code) else folder / f"{stem}.py"
        if script.parent == folder:
            script.write_text(code, encoding="utf-8")
        self.script = script
        self._out = folder / f"{stem}.lens"
        process = QProcess(self)
        environment = QProcessEnvironment()
        for key, value in child_env().items():
            environment.insert(key, value)
        process.setProcessEnvironment(environment)
        process.setWorkingDirectory(str(script.parent))
        process.finished.connect(self._on_finished)
        self.process, self._timed_out = process, False
        process.start(
            sys.executable, ["-m", "app", "run", "--no-fixes", "--out", str(self._out), str(script)]
        )
        self._timer.start(TIME_LIMIT_MS)

    def stop(self) -> None:
        """End a run under way (its result is dropped)."""
        process, self.process = self.process, None
        self._timer.stop()
        if process is not None:
            process.finished.disconnect(self._on_finished)
            if process.state() != QProcess.ProcessState.NotRunning:
                process.kill()
                process.waitForFinished(5000)
            process.deleteLater()

    def _on_time_limit(self) -> None:
        if self.process is not None:
            self._timed_out = True
            self.process.kill()

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        process, self.process = self.process, None
        self._timer.stop()
        if process is None:
            return
        errors = bytes(process.readAllStandardError().data()).decode("utf-8", "replace")
        process.deleteLater()
        if self._out is not None and self._out.is_file():
            self.recorded.emit(self._out)  # an exception in the script still leaves what it recorded
        elif self._timed_out:
            self.failed.emit(f"the script ran past {TIME_LIMIT_MS // 60_000} minutes and was stopped")
        else:
            last = [line for line in errors.strip().splitlines() if line.strip()][-ERROR_LINES:]
            said = f": {' / '.join(last)}" if last else ""
            self.failed.emit(f"the script recorded nothing (exit code {code}){said}")


def _holds(path: Path, code: str) -> bool:
    """Whether the ``.py`` file at ``path`` holds exactly ``code`` (the editor's text is saved)."""
    try:
        return path.suffix.lower() == ".py" and path.read_text(encoding="utf-8") == code
    except (OSError, UnicodeError):
        return False


class TrustedScriptOffer(QWidget):
    """The button and its sentence under a refusal (NOTE [trusted script offer]).

    ``recorded(Path)``: the ``.lens`` file of the script's recording; ``failed(str)``.
    """

    recorded = Signal(object)
    failed = Signal(str)

    def __init__(self, editor: ProgramEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.ask: AskConsent = ask_consent  # the seam tests replace
        self.run = ScriptRun(self)
        self._consented: set[tuple[str, str]] = set()
        self.button = QPushButton(BUTTON_TEXT)
        self.button.setToolTip(CONSENT_TEXT)
        self.explanation = QLabel(
            "The checked language cannot take this program. Your own code can still be recorded: "
            "it then runs as ordinary Python with full access to this computer, like python file.py."
        )
        self.explanation.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self._build()
        self.button.clicked.connect(self._on_clicked)
        self.run.recorded.connect(self._on_recorded)
        self.run.failed.connect(self._on_failed)
        editor.error_changed.connect(self._update_shown)
        self._update_shown(editor.error())

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.explanation)
        row = QHBoxLayout()
        row.addWidget(self.button)
        row.addWidget(self.status, 1)
        layout.addLayout(row)

    def _update_shown(self, error: ProgramError | None) -> None:
        shown = offered_for(error, self.editor.source_path())
        self.setVisible(shown)
        if shown and not self.run.running:
            self.status.clear()

    def _on_clicked(self) -> None:
        text = self.editor.code_edit.text()
        path = self.editor.source_path()
        if not offered_for(self.editor.error(), path):
            return  # the refusal went away, or the text came from a data file meanwhile
        key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), str(path))
        if key not in self._consented:
            if not self.ask(self, CONSENT_TEXT):
                return
            self._consented.add(key)
        self.status.setText("Recording your script as ordinary Python…")
        self.button.setEnabled(False)
        self.run.start(text, self.editor.details().name, path)

    def _on_recorded(self, path: Path) -> None:
        from app.child.proofs import trust_script  # no torch

        self.button.setEnabled(True)
        self.status.setText("Recorded as your own script.")
        if self.run.script is not None:
            trust_script(self.run.script, path)  # its fixes: edits of this script, proven as run proves them
        self.recorded.emit(path)

    def _on_failed(self, message: str) -> None:
        self.button.setEnabled(True)
        self.status.setText(message)
        self.failed.emit(message)


def show_refused_file(editor: ProgramEditor, path: Path, error: ProgramError) -> bool:
    """A ``.py`` file the language refuses, opened: its text in the editor with the refusal at its
    line, and so the offer (never pressed). False when it is not such a file (a data file, a
    syntax error, a file too big): the caller explains it as before."""
    from app.core.loading import MAX_FILE_BYTES, stem_name
    from app.core.model.program import Program

    if path.suffix.lower() != ".py" or not offered_for(error, path):
        return False
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return False
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return False
    editor.set_program(Program(text, name=stem_name(path), path=path))
    editor.show_error(error)
    return True
