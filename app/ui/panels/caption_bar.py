"""The current step's caption, in large type: the sentence a teacher reads out."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.ui.runtime.session import Session
from app.ui.style.breakable import breakable, unbroken

__all__ = ["CaptionBar"]


class CaptionBar(QLabel):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Height for width, never the hint: with a Minimum vertical policy (or without word wrap's
        # height-for-width flag) the caption's scrolling room sized it by its size hint, a wrap at
        # a guessed width, and a three-line caption sat cut off in a two-line room.
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setText("Loading…")  # a program recorded or a .lens file read: the first step replaces it
        session.step_applied.connect(self._on_step_applied)

    def _on_step_applied(self, index: int) -> None:
        state = self._session.state()
        self.setText(breakable(state.step.caption) if state else "")  # long names wrap

    def caption(self) -> str:
        """The caption shown, as the recording words it."""
        return unbroken(self.text())
