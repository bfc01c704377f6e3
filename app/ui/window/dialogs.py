"""The one seam for modal dialogs: questions, notices and file choosers.

Everything that would block on a person goes through these four functions,
so tests replace them (``monkeypatch.setattr(dialogs, "ask", ...)``) and
callers must look them up as ``dialogs.ask(...)`` at call time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.ui.style.plain_text import plain

__all__ = ["OPEN_FILTER", "SAVE_FILTER", "ask", "choose_open_path", "choose_save_path", "inform"]

OPEN_FILTER = "Programs and recordings (*.toml *.py *.lens);;All files (*)"
SAVE_FILTER = "Programs (*.toml);;Plain Python, code only (*.py)"
_ROLES = {
    "Cancel": QMessageBox.ButtonRole.RejectRole,
    "Discard": QMessageBox.ButtonRole.DestructiveRole,
}


def ask(parent: QWidget | None, title: str, text: str, choices: Sequence[str], default: str) -> str:
    """Ask a question; returns the chosen text (Escape or closing picks "Cancel" if offered)."""
    box = plain(QMessageBox(parent))
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(text)
    buttons = {
        choice: box.addButton(choice, _ROLES.get(choice, QMessageBox.ButtonRole.AcceptRole))
        for choice in choices
    }
    if default in buttons:
        box.setDefaultButton(buttons[default])
    if "Cancel" in buttons:
        box.setEscapeButton(buttons["Cancel"])
    box.exec()
    clicked = box.clickedButton()
    for choice, button in buttons.items():
        if button is clicked:
            return choice
    return "Cancel" if "Cancel" in buttons else default


def inform(parent: QWidget | None, title: str, text: str) -> None:
    """Tell the person something they must read (a failed save, a file that cannot open)."""
    box = plain(QMessageBox(parent))
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(text)
    box.exec()


def choose_open_path(parent: QWidget | None) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Open a program or a recording", "", OPEN_FILTER)
    return Path(path) if path else None


def choose_save_path(parent: QWidget | None, suggested: Path) -> Path | None:
    """A path to save to; ``.toml`` is added when the name has no suffix."""
    path, _ = QFileDialog.getSaveFileName(parent, "Save program", str(suggested), SAVE_FILTER)
    if not path:
        return None
    chosen = Path(path)
    return chosen if chosen.suffix else chosen.with_suffix(".toml")
