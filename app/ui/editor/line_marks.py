"""Which lines of the program a step marks, and the selection that colours them.

The code panel's marks (NOTE [marks cost what changed] in :mod:`~app.ui.editor.code_panel`):
the lines of the step shown now, strong, and the lines that ran just before them, faint. Lines
are 0-based here, as the document's blocks count them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QTextEdit

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.core.model.timeline import Step, StepState

__all__ = ["LOOK_BACK", "marks_at", "previous_lines", "step_lines", "step_selection"]

LOOK_BACK = 64  # steps searched for the lines that ran before the current ones


def step_lines(recording: Recording, step: Step, count: int) -> range:
    """The lines of the running call (all of them), else the statement's line (0-based)."""
    if step.call is not None and 0 <= step.call < len(recording.calls):
        call = recording.calls[step.call].call
        first, last = call.line, call.end_line
    elif step.line is not None:
        first = last = step.line
    else:
        return range(0)
    return range(max(first - 1, 0), min(last, count))


def marks_at(recording: Recording | None, state: StepState | None, count: int) -> tuple[range, bool]:
    """The lines to mark at ``state`` in a text of ``count`` lines, and whether they failed."""
    if state is None or recording is None:
        return range(0), False
    step = state.step
    return step_lines(recording, step, count), step.kind == "error"


def previous_lines(recording: Recording | None, state: StepState | None, count: int) -> range:
    """The lines of the last earlier step that ran other lines than the current ones.

    A call's steps all mark the call's lines: from inside a call the search skips to the step
    before the call began, so it takes a few steps however long the call is.
    """
    if state is None or recording is None:
        return range(0)
    steps = recording.timeline.steps
    current = step_lines(recording, state.step, count)
    index = state.step.index - 1
    for _ in range(LOOK_BACK):
        if index < 0:
            break
        step = steps[index]
        lines = step_lines(recording, step, count)
        if lines and lines != current:
            return lines
        call = step.call
        in_call = call is not None and 0 <= call < len(recording.calls) and step.kind != "error"
        index = recording.calls[call].first_step - 1 if in_call and call is not None else index - 1
    return range(0)


def step_selection(
    document: QTextDocument, marked: list[int], colour: QColor
) -> list[QTextEdit.ExtraSelection]:
    """One full-width selection spanning the ``marked`` block of lines (their number does not
    matter); none when there are no marked lines in ``document``."""
    first = document.findBlockByNumber(marked[0]) if marked else None
    last = document.findBlockByNumber(marked[-1]) if marked else None
    if first is None or last is None or not (first.isValid() and last.isValid()):
        return []
    fmt = QTextCharFormat()
    fmt.setBackground(colour)
    fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
    cursor = QTextCursor(first)
    if last != first:  # up to the start of the next line, so the last line is full width too
        end = last.position() + last.length() - (0 if last.next().isValid() else 1)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    selection = QTextEdit.ExtraSelection()
    selection.format = fmt
    selection.cursor = cursor
    return [selection]
