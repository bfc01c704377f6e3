"""At the error step: PyTorch's exact message, why it happened, and the fixes that apply.

The panel shows only at the step where the program failed, never before (the
learner may want to predict it). The "Why" line adds to the caption shown
above it at the same step rather than saying it again (NOTE [why adds to the
caption]): where the failing node was made and which calls reach it, and
when its saved tensor was freed (``recording.freed_by``); or the version the
tensor was saved at and the line that wrote into it. A program error outside
any autograd call shows its message and line. The fixes come from
:func:`app.core.lesson.recipes.fixes_for`: each is an edit of the program text,
shown as the lines it changes, and recorded again at once when chosen (the
session can undo it).

# NOTE [the first fix above the fold]
At 1280x720 the stage gives the panel ~175 px (NOTE [the graph keeps the stage] in
``app/ui/window/stage.py``). PyTorch's whole message (three to five lines) and the "Why" line
(two or three) took all of it, so the first fix needed scrolling at every built-in's
error. The panel shows the heading, the first sentence of PyTorch's message (where it
says what went wrong) and the fixes; the whole message and the "Why" line are a click
away, folded again for each new error, which opens at the panel's top.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSizePolicy, QToolButton, QWidget

from app.core.lesson.lines import iteration_text, node_origin
from app.core.lesson.panel_words import error_title
from app.ui.panels.fixes_panel import FixesPanel, Lesson, wrapped_label
from app.ui.panels.proof_marks import PROOF_DEADLINE_S, show_script_bars, shown_change
from app.ui.runtime.session import Session
from app.ui.style.plain_text import plain_tip

if TYPE_CHECKING:
    from app.core.lesson.fix import Fix
    from app.core.model.graph import GraphNode, SavedSlot
    from app.core.model.program import CallInfo
    from app.core.model.recording import Recording
    from app.core.model.timeline import Step

__all__ = ["NO_FIX_TEXT", "ErrorPanel", "first_sentence"]

_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def first_sentence(message: str) -> str:
    """The message up to its first sentence's end, or its first line: what went wrong, in PyTorch's
    words ("Trying to backward through the graph a second time (...).", "one of the variables
    needed for gradient computation has been modified by an inplace operation: [...]").

    >>> first_sentence("Trying to do x (or y). Saved values are freed. Specify z.")
    'Trying to do x (or y).'
    >>> first_sentence("element 0 of tensors does not require grad")
    'element 0 of tensors does not require grad'
    """
    text = message.strip()
    end = _SENTENCE_END.search(text)
    return text if end is None else text[: end.end()].strip()


def _fold_button(name: str) -> QToolButton:
    """A flat checkable button that shows or hides a part of the panel (its text says which)."""
    button = QToolButton()
    button.setObjectName(name)
    button.setCheckable(True)
    button.setAutoRaise(True)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    button.setArrowType(Qt.ArrowType.RightArrow)
    return button


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


# A fix is shown only once its edit was recorded and held: when none held, the panel says so in
# one line (the heading, PyTorch's message and "Why?" still explain the error).
NO_FIX_TEXT = "No fix could be proven for this error: no edit tried removed it when recorded."


class ErrorPanel(FixesPanel):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        labels = [
            wrapped_label("errorTitle"),
            wrapped_label("errorMessage"),  # its first sentence (NOTE [the first fix above the fold])
            wrapped_label("errorMessage"),  # all of it, on demand
            wrapped_label("errorExplanation"),
            wrapped_label("errorNoFix", "hint"),  # one line when no edit held (NOTE below)
        ]
        super().__init__(
            session,
            labels,
            ("errorBody", "fix", "fixCode"),
            margins=(10, 8),
            vertical=QSizePolicy.Policy.Minimum,  # all of it, if there is room
            parent=parent,
        )
        self.title, self.message_start, self.message, self.explanation, self.no_fix = labels
        self._titles = ("", "")  # the heading in full, and short for a small screen (set_compact)
        self._compact = False
        self.no_fix.setText(NO_FIX_TEXT)
        self.no_fix.hide()
        self.more_button = _fold_button("errorMore")
        self.more_button.setText("PyTorch's whole message")
        self.more_button.setToolTip("Show all that PyTorch said, not only its first sentence")
        self.why_button = _fold_button("errorWhy")
        self.why_button.setText("Why?")
        self.why_button.setToolTip("Why PyTorch refused: what the caption above leaves out")
        self.more_button.toggled.connect(self._show_folded)
        self.why_button.toggled.connect(self._show_folded)
        # the folds share the heading's line: a line of their own pushed the first fix below the fold
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        self._layout.removeWidget(self.title)
        row.addWidget(self.title, 1)
        row.addWidget(self.why_button, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.more_button, 0, Qt.AlignmentFlag.AlignTop)
        self._layout.insertLayout(0, row)
        self._show_folded()

    # -- the folded parts: PyTorch's whole message and the "Why" line ----------------------
    def _show_folded(self) -> None:
        more = self.message.text() != self.message_start.text()
        self.more_button.setVisible(more)
        whole = more and self.more_button.isChecked()
        self.message.setVisible(whole)
        self.message_start.setVisible(not whole)
        self.explanation.setVisible(self.why_button.isChecked())
        for button in (self.more_button, self.why_button):
            down = button.isChecked()
            button.setArrowType(Qt.ArrowType.DownArrow if down else Qt.ArrowType.RightArrow)

    def _set_message(self, message: str) -> None:
        """PyTorch's message: its first sentence shown, the whole of it folded (a new error: folded)."""
        start = first_sentence(message)
        self.message.setText(message)
        self.message_start.setText(start if start == message.strip() else f"{start} …")
        for button in (self.more_button, self.why_button):
            button.blockSignals(True)
            button.setChecked(False)
            button.blockSignals(False)
        self._show_folded()

    def scroll_to_top(self) -> None:
        self._scroll.verticalScrollBar().setValue(0)

    def first_fix_visible(self) -> bool:
        """Whether the first fix's button lies wholly inside the panel's viewport (no scrolling)."""
        if not self.fix_buttons or not self.fix_buttons[0].isVisible():
            return False
        button, viewport = self.fix_buttons[0], self._scroll.viewport()
        rect = button.rect().translated(button.mapTo(viewport, button.rect().topLeft()))
        return viewport.rect().contains(rect)

    # -- updates ---------------------------------------------------------------------------
    def set_compact(self, on: bool) -> None:
        """A short heading on a small screen: the caption over the panel names the call's node and
        line already, and a four-line heading left no room for the first fix."""
        self._compact = on
        self._show_title()
        self.more_button.setText("Whole message" if on else "PyTorch's whole message")

    def _show_title(self) -> None:
        self.title.setText(self._titles[1] if self._compact else self._titles[0])

    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        self.no_fix.hide()
        info = recording.failed
        if info is None and recording.error is None:
            self._fixes = []
            self.hide()
            return
        full = error_title(recording) or ""
        if info is not None:
            self._titles = (full, "✗ PyTorch says:")
            self._show_title()
            self.explanation.setText(self._explanation(recording, info))
            self._set_message(info.error or "")
        else:
            where = "The program" if recording.error_line is None else f"Line {recording.error_line}"
            self._titles = (full, f"✗ {where} raised:")
            self._show_title()
            self.explanation.setText("The program stopped there, as Python would.")
            self._set_message(recording.error or "")
        self.scroll_to_top()  # a new error opens at its heading, not at the last one's scroll
        self._ask_lesson(recording)

    def _on_step_applied(self, index: int) -> None:
        at_error = self._at_error(index)
        if at_error and self.isHidden():
            self.scroll_to_top()
        self.setVisible(at_error)

    def _at_error(self, index: int) -> bool:
        recording = self._recording
        if recording is None or not len(recording.timeline):
            return False
        info = recording.failed
        if info is not None:
            return index == info.last_step
        return recording.error is not None and recording.timeline[index].kind == "error"

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

    DEADLINE_S = PROOF_DEADLINE_S

    @staticmethod
    def find_lesson(recording: Recording, deadline: float) -> Lesson:
        """The fixes that hold when recorded (NOTE [proving a script] for a script's)."""
        from app.child.proofs import script_of, window_recorder
        from app.core.lesson.candidates import found_for
        from app.core.lesson.prove import proven_fixes
        from app.core.lesson.recipes import fixes_for

        old = recording.program.code
        found = found_for(recording)  # NOTE [the lesson found in the child]
        candidates = fixes_for(recording, deadline) if found is None else list(found.fixes)
        proven = proven_fixes(recording, candidates, record=window_recorder(recording), deadline=deadline)
        return Lesson([p.fix for p in proven], [shown_change(old, p) for p in proven], script_of(recording))

    def _show_lesson(self, lesson: Lesson) -> None:
        """A script's fixes are edits of the user's file: a patch to copy or apply, never a re-record
        in the checked language (NOTE in ``app/ui/script_fixes.py``)."""
        from app.core.lesson.prove import ScriptSource

        script = lesson.said if isinstance(lesson.said, ScriptSource) else None
        self.script_bars = show_script_bars(self, script, self._fixes, self._session)
        self.no_fix.setVisible(not self._fixes)

    def _show_fix(self, i: int, fix: Fix, button: QPushButton) -> None:
        button.setText(f"Fix {i + 1}: {fix.title}")
        button.setToolTip(plain_tip(fix.explanation))
