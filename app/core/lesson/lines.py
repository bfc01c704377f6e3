"""Where the recording meets the program text: the line a node was made by, a line's first step.

The window uses these to name a node's line when the pointer rests on it and
to jump to the step a clicked line first ran. Both read only the recording.

>>> from app.core.model.graph import GraphNode, LoopMark
>>> node_origin(GraphNode("n0", "TanhBackward0", "h", line=12, loops=(LoopMark(10, 1, 3),)))
'made by line 12, iteration 2 of 3'
"""

from __future__ import annotations

from app.core.model.graph import GraphNode, LoopMark
from app.core.model.program import Program
from app.core.model.recording import Recording

__all__ = ["first_step_of_line", "iteration_text", "node_origin", "node_tooltip"]


def iteration_text(loops: tuple[LoopMark, ...], program: Program | None = None) -> str:
    """``iteration 2 of 3`` (1-based), or ``""`` outside loops. Nested loops, outermost first, are
    told apart by their loop variable in ``program`` (``epoch 1 of 2, batch 3``), else by line.

    >>> nested = (LoopMark(1, 0, 2), LoopMark(2, 4, None))
    >>> iteration_text(nested, Program("for epoch in range(2):\\n    for x, y in data:\\n"))
    'epoch 1 of 2, iteration 5 (line 2)'
    >>> iteration_text(nested[:1], Program("for epoch in range(2):\\n"))
    'iteration 1 of 2'
    """
    return ", ".join(_iteration(mark, program if len(loops) > 1 else None) for mark in loops)


def _iteration(mark: LoopMark, program: Program | None) -> str:
    """One loop's counter; named by its variable when ``program`` is given and its line reads
    ``for NAME in``, else placed by its line (no ``program``: alone, it needs neither)."""
    count = f"{mark.index + 1}" + (f" of {mark.count}" if mark.count else "")
    if program is None:
        return f"iteration {count}"
    words = program.line(mark.line).split(maxsplit=3)
    if len(words) >= 3 and words[0] == "for" and words[1].isidentifier() and words[2] == "in":
        return f"{words[1]} {count}"
    return f"iteration {count} (line {mark.line})"


def node_origin(node: GraphNode, program: Program | None = None) -> str:
    """``made by line 12, iteration 2``; a node without a line (made by PyTorch itself) says so."""
    if node.line is None:
        return "not made by a line of the program"
    where = iteration_text(node.loops, program)
    return f"made by line {node.line}" + (f", {where}" if where else "")


def node_tooltip(recording: Recording, node_id: str) -> str:
    """The text shown when the pointer rests on a node: its name, label and the line that made it.

    An unknown id (a graph drawn from an older recording) gives ``""``.
    """
    if node_id not in recording.graph:
        return ""
    node = recording.graph.node(node_id)
    name = f"{node.name} ({node.label})" if node.label and node.label != node.name else node.name
    return f"{name}\n{node_origin(node)}"


def first_step_of_line(recording: Recording, line: int) -> int | None:
    """The first step that ran ``line`` (1-based): its statement, or a call written over it.

    A line that never ran (a comment, an import, a branch not taken) gives None.
    """
    calls = [info for info in recording.calls if info.call.line <= line <= info.call.end_line]
    first_call = min((info.first_step for info in calls), default=None)
    for step in recording.timeline.steps:
        if first_call is not None and step.index >= first_call:
            return first_call
        if step.line == line:
            return step.index
    return first_call
