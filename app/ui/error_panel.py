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

from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QWidget

from app.core.lesson.fixes import Fix, changed_lines, fixes_for
from app.ui.fixes_panel import FixesPanel, wrapped_label
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


class ErrorPanel(FixesPanel):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        labels = [
            wrapped_label("errorTitle"),
            wrapped_label("errorMessage"),
            wrapped_label("errorExplanation"),
        ]
        super().__init__(
            session,
            labels,
            ("errorBody", "fix", "fixCode"),
            margins=(10, 8),
            vertical=QSizePolicy.Policy.Minimum,  # all of it, if there is room
            parent=parent,
        )
        self.title, self.message, self.explanation = labels

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

    def _show_fix(self, i: int, fix: Fix, button: QPushButton, code: QLabel, old: str) -> None:
        button.setText(f"Fix {i + 1}: {fix.title}")
        button.setToolTip(fix.explanation)
        code.setText("\n".join(changed_lines(old, fix.code, fix.moved)))
