"""At the error step: PyTorch's exact message, why it happened, and the fixes that apply.

The panel shows only at the step where the program failed, never before (the
learner may want to predict it). The "Why" line adds to the caption shown
above it at the same step rather than saying it again (NOTE [why adds to the
caption]): where the failing node was made and which calls reach it, and
when its saved tensor was freed (``recording.freed_by``); or the version the
tensor was saved at and the line that wrote into it. A program error outside
any autograd call shows its message and line. The fixes come from
:func:`app.core.lesson.fixes.fixes_for`: each is an edit of the program text,
shown as the lines it changes, and recorded again at once when chosen (the
session can undo it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QPushButton, QSizePolicy, QWidget

from app.core.lesson.fixes import Fix, changed_lines, fixes_for
from app.core.lesson.lines import iteration_text, node_origin
from app.ui.fixes_panel import FixesPanel, Lesson, wrapped_label
from app.ui.plain_text import plain_tip
from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.model.graph import GraphNode, SavedSlot
    from app.core.model.program import CallInfo
    from app.core.model.recording import Recording
    from app.core.model.timeline import Step

__all__ = ["ErrorPanel"]


def _freed_slots(recording: Recording, info: CallInfo) -> list[tuple[str, int]]:
    """(slot name, call that freed it) for each freed slot of the failing node."""
    if info.failed_node is None or info.failed_node not in recording.graph:
        return []
    node = recording.graph.node(info.failed_node)
    keys = [(node.id, slot.name) for slot in node.tensor_slots]
    return [(key[1], recording.freed_by[key]) for key in keys if key in recording.freed_by]


# NOTE [why adds to the caption]
# The caption above the panel already says, for the same step, which call failed at which node,
# which saved tensor was freed by which call (run without retain_graph=True) or changed in place,
# and that the version counter caught it. The "Why" line does not say it again: it tells what the
# caption leaves out, from the recording: where the node was made and that both calls reach it,
# when a backward frees what a node saved and at which step this one was freed; or
# the version the tensor was saved at, the line (and step) that wrote into it, and its version now.
def _why_freed(recording: Recording, info: CallInfo, node: GraphNode, slot: str, by: int) -> str:
    freeing = recording.calls[by]
    step = recording.timeline.last_set((node.id, slot), "freed", freeing.first_step, freeing.last_step + 1)
    calls = f"calls {by + 1} and {info.index + 1} both reach"
    if node.line is None:  # made by PyTorch itself: no line to name
        shared = f"{calls.capitalize()} {node.name}"
    else:
        shared = f"{node.name} was {node_origin(node, recording.program)}, and {calls} it"
    where = f"line {freeing.call.line}" + ("" if step is None else f", step {step.index}")
    return (
        f"Why: {shared}. A backward frees what a node saved once it has run: call {by + 1} "
        f"({where}) freed the saved {slot}; call {info.index + 1} needs it again."
    )


def _why_modified(recording: Recording, info: CallInfo, node: GraphNode, slot: SavedSlot) -> str:
    key = (node.id, slot.name)
    step = recording.timeline.last_set(key, "modified", 0, info.last_step)
    now = recording.timeline.state(info.last_step).versions.get(key)
    saved = "" if slot.saved_version is None else f", as it was at version {slot.saved_version}"
    line = None if step is None else step.line
    writer = "A later line" if line is None else f"Line {line} ({', '.join(_when(step, recording))})"
    version = "" if now is None else f", making it version {now}"
    return (
        f"Why: {node.name} computes its gradient from the saved {slot.name}{saved}. {writer} wrote into "
        f"it{version}; a gradient from it would be silently wrong."
    )


def _when(step: Step | None, recording: Recording) -> list[str]:
    """``["iteration 1 of 3", "step 12"]``: when ``step`` ran, for the learner to go and see."""
    if step is None:
        return []
    return [*filter(None, [iteration_text(step.loops, recording.program)]), f"step {step.index}"]


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
        self._ask_lesson(recording)

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
        """What the caption above does not say (NOTE [why adds to the caption])."""
        if info.failed_node is None or info.failed_node not in recording.graph:
            return "PyTorch refused this call; its message above says why."
        node = recording.graph.node(info.failed_node)
        freed = _freed_slots(recording, info)
        if freed:
            return _why_freed(recording, info, node, *freed[0])
        state = recording.timeline.state(info.last_step)
        modified = [s for s in node.tensor_slots if state.slots.get((node.id, s.name)) == "modified"]
        if modified:
            return _why_modified(recording, info, node, modified[0])
        return "PyTorch refused this call; its message above says why."

    @staticmethod
    def find(recording: Recording, deadline: float) -> Lesson:
        old = recording.program.code
        fixes = fixes_for(recording, deadline)
        return Lesson(fixes, ["\n".join(changed_lines(old, fix.code, fix.moved)) for fix in fixes])

    def _show_fix(self, i: int, fix: Fix, button: QPushButton) -> None:
        button.setText(f"Fix {i + 1}: {fix.title}")
        button.setToolTip(plain_tip(fix.explanation))
