"""Per call: ``retain_graph`` and ``create_graph`` boxes; a change records again at once.

``retain_graph`` has three states, as in PyTorch: ticked (True), unticked
(False) and unset (None, drawn partly ticked), which follows ``create_graph``.
The box's text says what unset means right now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.loading import Call, Scenario
    from app.core.recording.recorder import Recording

__all__ = ["UNSET_TIP", "CallToggles"]

UNSET_TIP = "unset: follows create_graph"
_STATE_OF = {
    True: Qt.CheckState.Checked,
    False: Qt.CheckState.Unchecked,
    None: Qt.CheckState.PartiallyChecked,
}


def retain_text(call: Call) -> str:
    if call.retain_graph is None:
        return f"retain_graph unset → {call.effective_retain}"
    return f"retain_graph={call.retain_graph}"


class CallToggles(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.retain_boxes: list[QCheckBox] = []
        self.create_boxes: list[QCheckBox] = []
        self._rows: list[tuple[QLabel, QCheckBox, QCheckBox]] = []  # per call: its code, retain, create
        self._grid = QGridLayout()
        self._grid.setColumnStretch(1, 1)
        title = QLabel("Calls (a change records again)")
        title.setProperty("role", "title")
        title.setWordWrap(True)
        hint = QLabel(
            "A partly ticked retain_graph box is unset: PyTorch's default, which follows create_graph."
        )
        hint.setProperty("role", "hint")
        hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(title)
        layout.addLayout(self._grid)
        layout.addWidget(hint)
        layout.addStretch(1)
        session.recording_applied.connect(self._on_recording_applied)
        session.failed.connect(self._on_failed)

    def call_texts(self) -> list[str]:
        """Each call's line, as shown above its boxes."""
        return [name.text() for name, _, _ in self._rows]

    def _on_recording_applied(self, recording: Recording) -> None:
        self._rebuild(recording.scenario)

    def _on_failed(self, message: str) -> None:
        recording = self._session.recording
        if recording is not None:
            self._rebuild(recording.scenario)  # back to what is on screen

    def _rebuild(self, scenario: Scenario) -> None:
        """One row per call: its line of code, then its two boxes.

        Rows are reused (a new styled widget costs ~1 ms to polish and show, in the turn of the apply);
        their boxes are set with signals blocked, so showing a recording never records again.
        """
        count = len(scenario.calls)
        for row in self._rows[count:]:
            for widget in row:
                self._grid.removeWidget(widget)
                widget.deleteLater()
        del self._rows[count:]
        while len(self._rows) < count:
            self._rows.append(self._new_row(len(self._rows)))
        lines, call_lines = scenario.to_python()
        for i, (call, (name, retain, create)) in enumerate(zip(scenario.calls, self._rows, strict=True)):
            name.setText(f"Call {i + 1}: {lines[call_lines[i]]}")
            with QSignalBlocker(retain), QSignalBlocker(create):
                retain.setText(retain_text(call))
                retain.setCheckState(_STATE_OF[call.retain_graph])
                create.setChecked(call.create_graph)
        self.retain_boxes = [retain for _, retain, _ in self._rows]
        self.create_boxes = [create for _, _, create in self._rows]

    def _new_row(self, i: int) -> tuple[QLabel, QCheckBox, QCheckBox]:
        name = QLabel()
        name.setWordWrap(True)
        name.setTextFormat(Qt.TextFormat.PlainText)
        retain = QCheckBox()
        retain.setTristate(True)
        retain.setToolTip(f"retain_graph for call {i + 1}: ticked True, unticked False, {UNSET_TIP}")
        create = QCheckBox("create_graph")
        create.setToolTip(f"create_graph for call {i + 1}: record the backward pass as a graph too")
        retain.checkStateChanged.connect(lambda state, i=i: self._on_retain_toggled(i, state))
        create.toggled.connect(lambda on, i=i: self._on_create_toggled(i, on))
        self._grid.addWidget(name, 2 * i, 0, 1, 2)
        self._grid.addWidget(retain, 2 * i + 1, 0)
        self._grid.addWidget(create, 2 * i + 1, 1)
        return name, retain, create

    def _on_retain_toggled(self, index: int, state: Qt.CheckState) -> None:
        value = {Qt.CheckState.Checked: True, Qt.CheckState.Unchecked: False}.get(state)
        self._change(index, retain_graph=value)

    def _on_create_toggled(self, index: int, on: bool) -> None:
        self._change(index, create_graph=on)

    def _change(self, index: int, **changes: object) -> None:
        scenario = self._session.scenario
        if scenario is None:
            return
        changed = scenario.with_call(index, **changes)
        self.retain_boxes[index].setText(retain_text(changed.calls[index]))
        self._session.rerecord(changed)
