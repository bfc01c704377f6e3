"""A recording as JSON (for tools and tests: :mod:`app.core.trace_json`) or as a readable table
(for people).

Torch-free: a recording read from a ``.lens`` file is reported without loading torch.
Steps are replayed once, in order, from their changes (not rebuilt step by step).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from app.core.lesson.copies import copied_names, copy_grad_text
from app.core.model.graph import LoopMark
from app.core.model.recording import Recording
from app.core.model.text import format_bytes, format_values
from app.core.model.timeline import SlotKey, SlotState, Step
from app.core.model.values import Values
from app.core.terminal import terminal_text
from app.core.trace_json import to_json

__all__ = ["to_json", "to_table"]


class _Replay:
    """The full state after each step, built by applying each step's changes in turn."""

    def __init__(self) -> None:
        self.slots: dict[SlotKey, SlotState] = {}
        self.grads: dict[str, Values | None] = {}
        self.versions: dict[SlotKey, int] = {}

    def apply(self, step: Step) -> None:
        self.slots.update(step.slot_changes)
        self.grads.update(step.grad_changes)
        self.versions.update(step.version_changes)


def _replayed(rec: Recording) -> Iterator[tuple[Step, _Replay, Mapping[SlotKey, SlotState]]]:
    """Each step with the state after it and, for the slots it changed, their states before it."""
    state = _Replay()
    for step in rec.timeline.steps:
        before = {key: state.slots[key] for key in step.slot_changes if key in state.slots}
        state.apply(step)
        yield step, state, before


def _slot_changes(rec: Recording, before: Mapping[SlotKey, str], step: Step) -> list[str]:
    out = []
    for (node_id, slot), state in step.slot_changes.items():
        old = before.get((node_id, slot))
        change = state if old is None else f"{old} -> {state}"
        out.append(f"{node_id} {rec.graph.node(node_id).name}.{slot}: {change}")
    return out


def _wrapped(prefix: str, items: list[str], width: int = 100) -> list[str]:
    """``prefix`` then ``items`` joined by ``; ``, wrapped under the prefix."""
    lines, line = [], prefix
    for item in items:
        if line != prefix and len(line) + len(item) + 2 > width:
            lines.append(line.rstrip())
            line = " " * len(prefix)
        line += item + ("; " if item is not items[-1] else "")
    return [*lines, line]


def _iteration(loops: Sequence[LoopMark]) -> str:
    """``2/5`` for the third of five iterations (1-based, as people count); nested loops joined by ``,``."""
    return ",".join(f"{m.index + 1}/{m.count}" if m.count is not None else str(m.index + 1) for m in loops)


_INDENT = " " * 12


def _first_line(text: str) -> str:
    return next(iter(text.splitlines()), "")


# A program with more leaves than this (a model's parameters) lists, per row, only the gradients
# that step changed: fourteen parameters' .grad on every row made rows of a thousand characters.
EVERY_GRAD_UP_TO = 3


def _grads_column(rec: Recording, step: Step, state: _Replay) -> str:
    shown = rec.leaves if len(rec.leaves) <= EVERY_GRAD_UP_TO else step.grad_changes
    return "  ".join(f"{k}.grad={format_values(state.grads.get(k))}" for k in shown)


def _step_lines(rec: Recording, step: Step, state: _Replay, before: Mapping[SlotKey, str]) -> list[str]:
    node = f"{step.node} {rec.graph.node(step.node).name}" if step.node else ""
    grads = _grads_column(rec, step, state)
    call = "" if step.call is None else str(step.call + 1)
    line = "" if step.line is None else f"L{step.line}"
    lines = [
        f"{step.index:>4}  {line:>5}  {_iteration(step.loops):<7}  {call:>4}  {step.kind:<8}  {node:<30}  "
        f"{format_bytes(step.saved_bytes):>11}  {grads}".rstrip()
    ]
    changes = _slot_changes(rec, before, step)
    if changes:
        lines += _wrapped(f"{_INDENT}saved: ", changes)
    for text in step.printed:  # print(model) writes lines: each is a row's, under the first
        lines += [
            f"{_INDENT}{'printed: ' if i == 0 else ' ' * 9}{part}" for i, part in enumerate(text.split("\n"))
        ]
    if step.caption:
        lines.append(f"{_INDENT}{step.caption}")
    if step.error:
        lines.append(f"{_INDENT}PyTorch: {_first_line(step.error)}")
    return lines


def to_table(rec: Recording) -> str:
    """One line per step (step, program line, iteration, call, kind, node, saved bytes, grads),
    then what changed, what the program printed, and why. The grads column holds every leaf's
    ``.grad`` for up to :data:`EVERY_GRAD_UP_TO` leaves, else the ones the step changed.

    Slot lines list only the slots whose state changed at that step, as
    ``n1 PowBackward0.self: alive -> retained``; node ids tell apart nodes of the same name.
    The iteration reads ``2/5`` for the second of five; nested loops are joined by ``,``.
    Every line is made safe for a terminal (:func:`~app.core.terminal.terminal_text`): the
    printed text, titles, names and PyTorch's messages are a stranger's.
    """
    lines = [f"{rec.program.name} on {rec.device} (torch {rec.torch_version})"]
    lines += [rec.program.title, ""] if rec.program.title else [""]
    header = f"{'step':>4}  {'line':>5}  {'iter':<7}  {'call':>4}  {'kind':<8}  {'node':<30}  "
    header += f"{'saved bytes':>11}  grads"
    if len(rec.leaves) > EVERY_GRAD_UP_TO:
        lines.append(f"grads: the .grad of each of the {len(rec.leaves)} leaves that a step changed")
    lines += [copy_grad_text(name, leaf) for name, leaf in copied_names(rec.leaves).items()]
    lines += [header, "-" * len(header)]
    for step, state, before in _replayed(rec):
        lines += _step_lines(rec, step, state, before)
    if rec.error:
        where = f" (line {rec.error_line})" if rec.error_line is not None else ""
        lines += ["", f"The program stopped{where}: {_first_line(rec.error)}"]
    return "\n".join(map(terminal_text, lines))
