"""A large step counter, readable from the back row: "Step 5 / 9", the loop iteration and which call runs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.core.lesson.panel_words import step_detail
from app.ui.runtime.session import Session
from app.ui.style.steady_label import SteadyLabel

__all__ = ["StepCounter"]


class StepCounter(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        # both change at every step: NOTE [steady heights] (a new text lays nothing out)
        centre = Qt.AlignmentFlag.AlignCenter
        self.number = SteadyLabel("Step – / –", name="stepNumber", wrap=False, align=centre)
        # at text scale 1.5 a narrow dock wraps the line, never cuts it
        self.detail = SteadyLabel("", name="stepDetail", align=centre)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(0)
        layout.addWidget(self.number)
        layout.addWidget(self.detail)
        session.step_applied.connect(self._on_step_applied)
        session.cleared.connect(lambda: self._on_step_applied(0))
        session.recording_applied.connect(lambda _recording: self._release())

    def set_tight(self, on: bool) -> None:
        """On a small screen the number is a size smaller: the caption beside it takes the width
        (caption_bar.py's NOTE [a whole caption on a small screen])."""
        label = self.number.label
        label.setProperty("tight", on)
        label.style().unpolish(label)
        label.style().polish(label)

    def _release(self) -> None:
        """A new recording: other numbers, other lines (measured afresh)."""
        self.number.release()
        self.detail.release()

    def _on_step_applied(self, index: int) -> None:
        self.number.show_text(f"Step {index} / {self._session.last_index}")
        self.detail.show_text(self._detail_text())

    def _detail_text(self) -> str:
        state, recording = self._session.state(), self._session.recording
        if state is None or recording is None:
            return ""
        return step_detail(state.step, recording)  # "epoch 1 of 2, batch 3 · call 1 of 2 · running"
