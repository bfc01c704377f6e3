"""At the error step: PyTorch's exact message, why it happened, and the fixes that apply.

The panel shows only at the step where the program failed, never before (the
learner may want to predict it). The explanation names the freed slot and the
call that freed it (``recording.freed_by``), or the tensor changed in place;
a program error outside any autograd call shows its message and line. The
fixes come from :func:`app.core.lesson.fixes.fixes_for`: each is an edit of
the program text, shown as the lines it changes, and recorded again at once
when chosen (the session can undo it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.core.lesson.fixes import Fix, changed_lines, fixes_for
from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.model.program import CallInfo
    from app.core.model.recording import Recording

__all__ = ["ErrorPanel"]


def _freed_slots(recording: Recording, info: CallInfo) -> list[tuple[str, int]]:
    """(slot name, call that freed it) for each freed slot of the failing node."""
    if info.failed_node is None or info.failed_node not in recording.graph:
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
        self._fixes: list[Fix] = []
        self.title = _label(name="errorTitle")
        self.message = _label(name="errorMessage")
        self.explanation = _label(name="errorExplanation")
        self.fix_buttons: list[QPushButton] = []
        self.fix_codes: list[QLabel] = []  # per fix: the lines it removes (-) and adds (+)
        self._fix_layout = QVBoxLayout()
        body = QWidget()
        body.setObjectName("errorBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.message)
        layout.addWidget(self.explanation)
        layout.addLayout(self._fix_layout)
        self._scroll = QScrollArea()  # the window may cap the panel's height: it scrolls then
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self._scroll)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)  # all of it, if room
        self.hide()
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    # -- its height: the whole text at its width, unless the window caps it (then it scrolls) ----
    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        body = self._scroll.widget()
        if self.width() <= 0 or body.heightForWidth(self.width()) < 0:
            return hint
        return QSize(hint.width(), body.heightForWidth(self.width()) + 2 * self.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the text wraps anew: another height

    # -- what tests and people read ----------------------------------------------------
    @property
    def fixes(self) -> list[Fix]:
        """The fixes offered for the recording on screen (shown at its error step)."""
        return list(self._fixes)

    def apply_fix(self, index: int) -> None:
        """Replace the program with fix ``index``'s text and record it again."""
        recording = self._recording
        if recording is None or not 0 <= index < len(self._fixes):
            return
        self._session.change_program(recording.program.with_code(self._fixes[index].code))

    # -- updates ---------------------------------------------------------------------------
    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        info = recording.failed
        if info is None and recording.error is None:
            self._fixes = []
            self.hide()
            return
        if info is not None:
            self.title.setText(self._title(recording, info))
            self.message.setText(info.error or "")
            self.explanation.setText(self._explanation(recording, info))
        else:
            where = "The program" if recording.error_line is None else f"Line {recording.error_line}"
            self.title.setText(f"✗ {where} raised an error, outside any backward call:")
            self.message.setText(recording.error or "")
            self.explanation.setText("The program stopped there, as Python would.")
        self._fixes = fixes_for(recording)
        self._update_fixes()

    def _on_step_applied(self, index: int) -> None:
        self.setVisible(self._at_error(index))

    def _at_error(self, index: int) -> bool:
        recording = self._recording
        if recording is None or not len(recording.timeline):
            return False
        info = recording.failed
        if info is not None:
            return index == info.last_step
        return recording.error is not None and recording.timeline[index].kind == "error"

    def _title(self, recording: Recording, info: CallInfo) -> str:
        node = info.failed_node
        where = recording.graph.node(node).name if node and node in recording.graph else "the call itself"
        return f"✗ Call {info.index + 1} (line {info.call.line}) failed at {where}. PyTorch says:"

    def _explanation(self, recording: Recording, info: CallInfo) -> str:
        from app.core.lesson.captions import node_title

        freed = _freed_slots(recording, info)
        if info.failed_node is None or info.failed_node not in recording.graph:
            return "PyTorch refused this call; its message above says why."
        node = recording.graph.node(info.failed_node)
        if freed:
            slot, by = freed[0]
            line = recording.calls[by].call.line
            return (
                f"Why: {node_title(node)} needs its saved {slot} to compute its gradient, but call "
                f"{by + 1} (line {line}) freed it: that call ran without retain_graph=True."
            )
        state = recording.timeline.state(info.last_step)
        modified = [s.name for s in node.tensor_slots if state.slots.get((node.id, s.name)) == "modified"]
        if modified:
            return (
                f"Why: {node_title(node)} saved {modified[0]} for its gradient, and the program changed "
                "that tensor in place afterwards; PyTorch's version counter caught it."
            )
        return "PyTorch refused this call; its message above says why."

    def _update_fixes(self) -> None:
        """One button per fix (reused across recordings), each with the lines it changes below it."""
        while len(self.fix_buttons) < len(self._fixes):
            i = len(self.fix_buttons)
            button = QPushButton()
            button.setObjectName(f"fix{i + 1}")
            button.clicked.connect(lambda checked=False, i=i: self.apply_fix(i))
            code = _label(name=f"fixCode{i + 1}")
            code.setProperty("role", "hint")
            self._fix_layout.addWidget(button)
            self._fix_layout.addWidget(code)
            self.fix_buttons.append(button)
            self.fix_codes.append(code)
        old = self._recording.program.code if self._recording else ""
        for i, (button, code) in enumerate(zip(self.fix_buttons, self.fix_codes, strict=True)):
            fix = self._fixes[i] if i < len(self._fixes) else None
            button.setVisible(fix is not None)
            code.setVisible(fix is not None)
            if fix is not None:
                button.setText(f"Fix {i + 1}: {fix.title}")
                button.setToolTip(fix.explanation)
                code.setText("\n".join(changed_lines(old, fix.code)))
