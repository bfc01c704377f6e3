"""A large step counter, readable from the back row: "Step 5 / 9", the loop iteration and which call runs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.core.lesson.panel_words import step_detail
from app.ui.runtime.session import Session
from app.ui.style.plain_text import plain

__all__ = ["StepCounter"]


class StepCounter(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.number = QLabel("Step – / –")
        self.number.setObjectName("stepNumber")
        self.detail = plain(QLabel(""))
        self.detail.setObjectName("stepDetail")
        self.detail.setWordWrap(True)  # at text scale 1.5 a narrow dock wraps the line, never cuts it
        for label in (self.number, self.detail):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(0)
        layout.addWidget(self.number)
        layout.addWidget(self.detail)
        session.step_applied.connect(self._on_step_applied)
        session.cleared.connect(lambda: self._on_step_applied(0))

    def set_tight(self, on: bool) -> None:
        """On a small screen the number is a size smaller: the caption beside it takes the width
        (caption_bar.py's NOTE [a whole caption on a small screen])."""
        self.number.setProperty("tight", on)
        self.number.style().unpolish(self.number)
        self.number.style().polish(self.number)

    def _on_step_applied(self, index: int) -> None:
        self.number.setText(f"Step {index} / {self._session.last_index}")
        self.detail.setText(self._detail_text())

    def _detail_text(self) -> str:
        state, recording = self._session.state(), self._session.recording
        if state is None or recording is None:
            return ""
        return step_detail(state.step, recording)  # "epoch 1 of 2, batch 3 · call 1 of 2 · running"
