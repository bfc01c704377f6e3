"""The words the window's panels and the HTML page both show, made once here (Qt-free).

The step counter's line under the number, the marks under the timeline, each finished call's line
in the gradient panel and the error panel's heading: the window's panels (``app.ui.panels``) and
the page's data (``app.render.web.steps``) take them from these functions, so the two never word
the same thing two ways.

>>> from app.core import load_builtin, record
>>> rec = record(load_builtin("forgot-retain"))
>>> step_detail(rec.timeline[rec.failed.last_step], rec)
'call 2 of 2 · FAILED'
>>> [m.label for m in timeline_marks(rec)]
['call 1', 'call 2', '✖']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from app.core.lesson.lines import iteration_text
from app.core.model.recording import Recording
from app.core.model.text import CALL_STEP_WORDS, format_values
from app.core.model.timeline import Step
from app.core.model.values import Values

__all__ = [
    "MAX_HISTORY",
    "Mark",
    "MarkKind",
    "call_line",
    "error_title",
    "finished_calls",
    "grad_history",
    "grad_text",
    "step_detail",
    "timeline_marks",
]

MarkKind = Literal["call", "iteration", "fail"]
MAX_HISTORY = 6  # lines of per-call history per leaf; a long loop shows its latest calls


def step_detail(step: Step, recording: Recording) -> str:
    """The step counter's line: the loop iteration (``epoch 1 of 2, batch 3`` when nested) and
    what runs (``call 1 of 2 · running``, ``line 4``, ``forward pass``)."""
    where = iteration_text(step.loops, recording.program)
    return " · ".join(part for part in (where, _call_text(step, len(recording.calls))) if part)


def _call_text(step: Step, calls: int) -> str:
    if step.call is None:
        if step.kind == "error":
            return "the program FAILED" if step.line is None else f"line {step.line} FAILED"
        return "forward pass" if step.line is None else f"line {step.line}"
    return f"call {step.call + 1} of {calls} · {CALL_STEP_WORDS.get(step.kind, step.kind)}"


@dataclass(frozen=True)
class Mark:
    """One mark under the timeline: where a loop iteration or a call begins, or the failing
    call's warning (no spoilers: the error itself shows at the error step)."""

    step: int
    kind: MarkKind
    label: str  # drawn when there is room ("call 2", "iteration 2")
    tip: str  # the hover text
    short: str = ""  # drawn when the label has no room ("2")


def timeline_marks(recording: Recording) -> list[Mark]:
    """Every mark of ``recording``, by step: iterations, calls, then the failing call's warning."""
    steps = recording.timeline.steps
    marks = []
    for i in recording.timeline.iteration_starts():
        mark = recording.timeline.head(i).loops[-1]
        number = str(mark.index + 1)
        total = f" of {mark.count}" if mark.count is not None else ""
        tip = f"iteration {number}{total} of the loop on line {mark.line} begins (Ctrl+Right)"
        marks.append(Mark(i, "iteration", f"iteration {number}", tip, number))
    for i in recording.timeline.call_starts():
        call = (recording.timeline.head(i).call or 0) + 1
        marks.append(Mark(i, "call", f"call {call}", f"call {call} begins (Shift+Right)"))
    failed = recording.failed
    if failed is not None:
        marks.append(Mark(failed.first_step, "fail", "✖", "this call will fail"))
    elif recording.error is not None and steps:
        marks.append(Mark(len(steps) - 1, "fail", "✖", "the program stops with an error here"))
    order: dict[MarkKind, int] = {"iteration": 0, "call": 1, "fail": 2}
    return sorted(marks, key=lambda m: (m.step, order[m.kind]))


def call_line(recording: Recording, call: int, name: str, after: Values | None) -> str:
    """What finished call ``call`` did to ``name``'s ``.grad`` (``after``: the gradient it left):
    ``call 1: +[2.0] → [2.0]``, or what a ``torch.autograd.grad`` call returned instead."""
    end = recording.timeline[recording.calls[call].last_step]
    if end.contribution is not None:
        return f"call {call + 1}: +{format_values(end.contribution.get(name))} → {format_values(after)}"
    returned = ", ".join(f"{k} = {format_values(v)}" for k, v in (end.result or {}).items())
    return f"call {call + 1}: returned {returned}; {name}.grad stays {format_values(after)}"


def grad_text(name: str, values: Values | None) -> str:
    """A leaf's gradient now: ``x.grad = [2.0, 4.0]``."""
    return f"{name}.grad = {format_values(values)}"


def finished_calls(recording: Recording, index: int) -> list[int]:
    """The calls that ended without an error by step ``index``."""
    return [info.index for info in recording.calls if info.last_step <= index and info.error is None]


def grad_history(
    recording: Recording,
    step: Step,
    name: str,
    now: Values | None,
    ends: Mapping[int, Mapping[str, Values | None]],
    *,
    lines_of: dict[tuple[int, str], str] | None = None,
    finished: list[int] | None = None,
) -> list[str]:
    """The gradient panel's history of ``name``'s ``.grad`` at ``step`` (``now``: its gradient
    there; ``ends``: the gradients each finished call left): a line per finished call, the line
    that set it since (``opt.zero_grad()``), the running call's, the latest :data:`MAX_HISTORY`.
    ``lines_of`` keeps each finished call's line, written once (it never changes); ``finished``:
    :func:`finished_calls` at ``step``, when the caller has it (a panel shows several leaves)."""
    lines_of = {} if lines_of is None else lines_of
    finished = finished_calls(recording, step.index) if finished is None else finished
    lines = []
    hidden = max(len(finished) - MAX_HISTORY, 0)  # only the lines shown are written: a long loop
    for call in finished[hidden:]:  # made hundreds of calls, and this runs at every step
        line = lines_of.get((call, name))
        if line is None:
            line = lines_of[(call, name)] = call_line(recording, call, name, ends[call].get(name))
        lines.append(line)
    if finished:
        since = _set_since(recording, step, name, recording.calls[finished[-1]].last_step)
        if since is not None:
            lines.append(since)
    if step.call is not None and step.kind in ("node", "error"):
        status = "FAILED" if step.kind == "error" else "running"
        lines.append(f"call {step.call + 1}: {status}; {name}.grad now {format_values(now)}")
    if hidden or len(lines) > MAX_HISTORY:
        hidden += len(lines) - MAX_HISTORY + 1
        lines = [f"… {hidden} earlier calls", *lines[-(MAX_HISTORY - 1) :]]
    return lines or ["no backward call has run yet"]


def _set_since(recording: Recording, step: Step, name: str, after: int) -> str | None:
    """The line that last set ``name``'s ``.grad`` outside a backward since step ``after``
    (``opt.zero_grad()``): without it, ``None`` right under a call's gradient read as if the
    call had left nothing."""
    for index in reversed(recording.timeline.grads_set_between(after, step.index)):
        earlier = recording.timeline[index]
        if name in earlier.grad_changes and earlier.line is not None:
            code = recording.program.line(earlier.line).strip()
            said = f" ({code})" if code else ""
            return f"line {earlier.line}{said} set it to {format_values(earlier.grad_changes[name])}"
    return None


def error_title(recording: Recording) -> str | None:
    """The error panel's heading: which call failed at which node, or where the program raised
    outside any call; None when nothing failed."""
    info = recording.failed
    if info is not None:
        node = info.failed_node
        where = recording.graph.node(node).name if node and node in recording.graph else "the call itself"
        return f"✗ Call {info.index + 1} (line {info.call.line}) failed at {where}. PyTorch says:"
    if recording.error is not None:
        where = "The program" if recording.error_line is None else f"Line {recording.error_line}"
        return f"✗ {where} raised an error, outside any backward call:"
    return None
