"""Per call site: ``retain_graph`` and ``create_graph`` boxes that edit the program's text.

One row per place in the program that makes an autograd call (a call in a
loop runs several times: one row, marked ``×3``). A box edits the call's
keyword in the program text (:func:`~app.core.lesson.edits.set_call_keyword`)
and the program is recorded again at once.

``retain_graph`` has three values in PyTorch: True, False and unset (None: the
keyword is left out), which follows ``create_graph``. A learner means one of
two things, the graph kept or not, so the box has two states: it is ticked
when the call keeps its graph (the value in effect, unset included) and a
click writes the other value, one click from either to the other. The box's
text says when the value is unset and what it is then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.ui.runtime.session import Session

if TYPE_CHECKING:
    from app.core.model.program import Call
    from app.core.model.recording import Recording

__all__ = ["UNSET_TIP", "CallSite", "CallToggles", "call_sites", "edit_call"]

UNSET_TIP = "unset: follows create_graph"


class CallSite(NamedTuple):
    """One place in the program that made autograd calls: the first call there and how many."""

    call: Call
    calls: int

    @property
    def label(self) -> str:
        times = f"  ×{self.calls}" if self.calls > 1 else ""
        return f"Line {self.call.line}: {self.call.text}{times}"


def call_sites(recording: Recording) -> list[CallSite]:
    """The recording's calls grouped by where they stand in the text (line, column), in text order."""
    first: dict[tuple[int, int], Call] = {}
    counts: dict[tuple[int, int], int] = {}
    for info in recording.calls:
        key = (info.call.line, info.call.col)
        first.setdefault(key, info.call)
        counts[key] = counts.get(key, 0) + 1
    return [CallSite(first[key], counts[key]) for key in sorted(first)]


def retain_text(call: Call) -> str:
    if call.retain_graph is None:
        return f"retain_graph unset → {call.effective_retain}"
    return f"retain_graph={call.retain_graph}"


class CallToggles(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.sites: list[CallSite] = []
        self.retain_boxes: list[QCheckBox] = []
        self.create_boxes: list[QCheckBox] = []
        self._rows: list[tuple[QLabel, QCheckBox, QCheckBox]] = []  # per site: its code, retain, create
        self._grid = QGridLayout()
        self._grid.setColumnStretch(1, 1)
        title = QLabel("Calls (a change edits the program and records again)")
        title.setProperty("role", "title")
        title.setWordWrap(True)
        hint = QLabel("retain_graph unset is PyTorch's default, which follows create_graph.")
        hint.setProperty("role", "hint")
        hint.setWordWrap(True)
        self._empty = QLabel("This program makes no backward or autograd.grad call.")
        self._empty.setProperty("role", "hint")
        self._empty.setWordWrap(True)
        self._empty.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(title)
        layout.addLayout(self._grid)
        layout.addWidget(self._empty)
        layout.addWidget(hint)
        layout.addStretch(1)
        session.recording_applied.connect(self._on_recording_applied)
        session.failed.connect(self._on_failed)

    def call_texts(self) -> list[str]:
        """Each call site's label, as shown above its boxes."""
        return [name.text() for name, _, _ in self._rows]

    def _on_recording_applied(self, recording: Recording) -> None:
        self._rebuild(recording)

    def _on_failed(self, message: str) -> None:
        recording = self._session.recording
        if recording is not None:
            self._rebuild(recording)  # back to what is on screen

    def _rebuild(self, recording: Recording) -> None:
        """One row per call site: its line of code, then its two boxes.

        Rows are reused (a new styled widget costs ~1 ms to polish and show, in the turn of the apply);
        their boxes are set with signals blocked, so showing a recording never records again.
        """
        self.sites = call_sites(recording)
        count = len(self.sites)
        for row in self._rows[count:]:
            for widget in row:
                self._grid.removeWidget(widget)
                widget.deleteLater()
        del self._rows[count:]
        while len(self._rows) < count:
            self._rows.append(self._new_row(len(self._rows)))
        for site, (name, retain, create) in zip(self.sites, self._rows, strict=True):
            name.setText(site.label)
            with QSignalBlocker(retain), QSignalBlocker(create):
                retain.setText(retain_text(site.call))
                retain.setChecked(site.call.effective_retain)
                create.setChecked(site.call.create_graph)
        self.retain_boxes = [retain for _, retain, _ in self._rows]
        self.create_boxes = [create for _, _, create in self._rows]
        self._empty.setVisible(not self.sites)

    def _new_row(self, i: int) -> tuple[QLabel, QCheckBox, QCheckBox]:
        name = QLabel()
        name.setWordWrap(True)
        name.setTextFormat(Qt.TextFormat.PlainText)
        retain = QCheckBox()
        retain.setToolTip(
            "retain_graph of this call: ticked when it keeps its graph (its value in effect; "
            f"{UNSET_TIP}); a click writes the other value"
        )
        create = QCheckBox("create_graph")
        create.setToolTip("create_graph of this call: record the backward pass as a graph too")
        retain.toggled.connect(lambda on, i=i: self._on_retain_toggled(i, on))
        create.toggled.connect(lambda on, i=i: self._on_create_toggled(i, on))
        self._grid.addWidget(name, 2 * i, 0, 1, 2)
        self._grid.addWidget(retain, 2 * i + 1, 0)
        self._grid.addWidget(create, 2 * i + 1, 1)
        return name, retain, create

    def _on_retain_toggled(self, index: int, on: bool) -> None:
        self._change(index, "retain_graph", "True" if on else "False")

    def _on_create_toggled(self, index: int, on: bool) -> None:
        self._change(index, "create_graph", "True" if on else None)

    def _change(self, index: int, keyword: str, value: str | None) -> None:
        """Edit the keyword in the newest program text and record it again."""
        recording = self._session.recording
        if recording is None or index >= len(self.sites):
            return
        if not edit_call(self._session, self.sites[index].call, keyword, value):
            self._rebuild(recording)
            return
        if keyword == "retain_graph":
            self.retain_boxes[index].setText(f"retain_graph={value}")


def edit_call(session: Session, call: Call, keyword: str, value: str | None) -> bool:
    """Set ``keyword`` of ``call`` in the newest program text and record it again (undoable).

    False when the text moved on so the call is no longer where the recording saw it.
    """
    from app.core.lesson.edits import set_call_keyword

    program = session.program
    if program is None:
        return False
    try:
        code = set_call_keyword(program.code, call, keyword, value)
    except (ValueError, SyntaxError):  # the text moved on (an edit not yet recorded)
        return False
    if code != program.code:
        session.change_program(program.with_code(code))
    return True
