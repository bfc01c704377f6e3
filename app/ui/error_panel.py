"""When a call fails: PyTorch's exact message, why it happened, and two one-click fixes.

The explanation names the freed slot and the call that freed it
(``recording.freed_by``); the fixes are scenario changes that are recorded
again at once: retain the graph on the earlier call(s), or add the losses and
call backward once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.loading import Scenario
    from app.core.recording.recorder import CallInfo, Recording

__all__ = ["ErrorPanel"]


def _freed_slots(recording: Recording, info: CallInfo) -> list[tuple[str, int]]:
    """(slot name, call that freed it) for each freed slot of the failing node."""
    if info.failed_node is None:
        return []
    node = recording.graph.node(info.failed_node)
    keys = [(node.id, slot.name) for slot in node.tensor_slots]
    return [(key[1], recording.freed_by[key]) for key in keys if key in recording.freed_by]


def _label(text: str = "", name: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ErrorPanel(QFrame):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._recording: Recording | None = None
        self.title = _label(name="errorTitle")
        self.message = _label(name="errorMessage")
        self.explanation = _label(name="errorExplanation")
        self.retain_button = QPushButton()
        self.retain_button.setObjectName("fixRetain")
        self.sum_button = QPushButton("Fix 2: sum the losses, one backward")
        self.sum_button.setObjectName("fixSum")
        self.retain_code = _label(name="fixRetainCode")
        self.sum_code = _label(name="fixSumCode")
        for widget in (self.retain_code, self.sum_code):
            widget.setProperty("role", "hint")
        self.retain_button.clicked.connect(self._on_retain_clicked)
        self.sum_button.clicked.connect(self._on_sum_clicked)
        self._lay_out()
        self.hide()
        session.recording_applied.connect(self._on_recording_applied)

    def _lay_out(self) -> None:
        fixes = QGridLayout()  # the two fixes side by side, each with the code it changes to
        fixes.addWidget(self.retain_button, 0, 0)
        fixes.addWidget(self.sum_button, 0, 1)
        fixes.addWidget(self.retain_code, 1, 0)
        fixes.addWidget(self.sum_code, 1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.message)
        layout.addWidget(self.explanation)
        layout.addLayout(fixes)

    # -- the fixes, as scenarios --------------------------------------------------------
    def retain_calls(self) -> list[int]:
        """The earlier call(s) whose freeing broke the failing one."""
        recording = self._recording
        info = recording.failed if recording else None
        if recording is None or info is None:
            return []
        freed_by = sorted({call for _, call in _freed_slots(recording, info)})
        return [c for c in freed_by if c < info.index]

    def retain_fix(self) -> Scenario | None:
        calls = self.retain_calls()
        if self._recording is None or not calls:
            return None
        scenario = self._recording.scenario
        for call in calls:
            scenario = scenario.with_call(call, retain_graph=True)
        return scenario

    def sum_fix(self) -> Scenario | None:
        recording = self._recording
        if recording is None or not self.retain_calls():
            return None
        calls = recording.scenario.calls
        if len(calls) < 2 or any(c.kind != "backward" for c in calls):
            return None  # summing only replaces a run of plain backward calls
        return recording.scenario.summed()

    # -- updates ---------------------------------------------------------------------------
    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        info = recording.failed
        if info is None:
            self.hide()
            return
        self.title.setText(self._title(recording, info))
        self.message.setText(info.error or "")
        self.explanation.setText(self._explanation(recording, info))
        self._update_fixes()
        self.show()

    def _title(self, recording: Recording, info: CallInfo) -> str:
        where = recording.graph.node(info.failed_node).name if info.failed_node else "the call itself"
        return f"✗ Call {info.index + 1} failed at {where}. PyTorch says:"

    def _explanation(self, recording: Recording, info: CallInfo) -> str:
        from app.core.lesson.captions import node_title

        freed = _freed_slots(recording, info)
        if info.failed_node is None or not freed:
            return "PyTorch refused this call; its message above says why."
        node = recording.graph.node(info.failed_node)
        slot, by = freed[0]
        return (
            f"Why: {node_title(node)} needs its saved {slot} to compute its gradient, but call {by + 1} "
            f"freed it: call {by + 1} ran without retain_graph=True."
        )

    def _update_fixes(self) -> None:
        retain, summed = self.retain_fix(), self.sum_fix()
        calls = self.retain_calls()
        names = ", ".join(str(c + 1) for c in calls)
        self.retain_button.setText(f"Fix 1: retain_graph=True on call {names}")
        self.retain_code.setText(self._changed_lines(retain, calls))
        self.sum_code.setText(self._changed_lines(summed, [0]))
        for button, code, fix in (
            (self.retain_button, self.retain_code, retain),
            (self.sum_button, self.sum_code, summed),
        ):
            button.setVisible(fix is not None)
            code.setVisible(fix is not None)

    @staticmethod
    def _changed_lines(scenario: Scenario | None, calls: list[int]) -> str:
        if scenario is None:
            return ""
        lines, call_lines = scenario.to_python()
        return "\n".join(lines[call_lines[c]] for c in calls if c in call_lines)

    def _on_retain_clicked(self) -> None:
        fix = self.retain_fix()
        if fix is not None:
            self._session.rerecord(fix)

    def _on_sum_clicked(self) -> None:
        fix = self.sum_fix()
        if fix is not None:
            self._session.rerecord(fix)
