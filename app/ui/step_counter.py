"""A large step counter, readable from the back row: "Step 5 / 9" and which call runs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.ui.session import Session

__all__ = ["StepCounter"]


class StepCounter(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.number = QLabel("Step – / –")
        self.number.setObjectName("stepNumber")
        self.detail = QLabel("")
        self.detail.setObjectName("stepDetail")
        for label in (self.number, self.detail):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(0)
        layout.addWidget(self.number)
        layout.addWidget(self.detail)
        session.step_applied.connect(self._on_step_applied)

    def _on_step_applied(self, index: int) -> None:
        self.number.setText(f"Step {index} / {self._session.last_index}")
        self.detail.setText(self._detail_text())

    def _detail_text(self) -> str:
        state, recording = self._session.state(), self._session.recording
        if state is None or recording is None:
            return ""
        step = state.step
        if step.call is None:
            return "forward pass"
        calls = len(recording.scenario.calls)
        kinds = {"node": "running", "call_end": "finished", "error": "FAILED"}
        return f"call {step.call + 1} of {calls} · {kinds.get(step.kind, step.kind)}"
