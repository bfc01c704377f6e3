"""What the player page's panels show at each step, read from the recording (Qt-free).

The step counter, the marks under the timeline, the gradients per call and the
error panel say what the window's panels say, in the same words: the texts are
made here, once per step or per call, from the recording and the lesson code
(``iteration_text``, ``format_values``, the proven fixes it is given), and the page only picks
the ones of the step shown. Repeated texts (a caption, "call 1 of 2 · running")
are stored once and named by their index in ``strings``.

>>> from app.core import load_builtin, record
>>> rec = record(load_builtin("forgot-retain"))
>>> data = step_data(rec)
>>> data["count"] == len(rec.timeline), data["error_panel"]["step"] == rec.failed.last_step
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.lesson.lines import iteration_text
from app.core.lesson.prove import ProvenFix
from app.core.model.recording import Recording
from app.core.model.text import CALL_STEP_WORDS, format_values
from app.core.model.timeline import Step
from app.core.model.values import Values

__all__ = ["GRAD_NUMBERS", "step_data", "values_json"]

GRAD_NUMBERS = 64  # of a gradient's elements kept in the page: the panel shows 6, a test reads them


class _Strings:
    """Texts stored once, named by their index."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self._index:
            self._index[text] = len(self.table)
            self.table.append(text)
        return self._index[text]


def _number(v: float | int | bool) -> float | int | bool | str:
    """A number as strict JSON has it (as ``trace --json`` writes NaN and the infinities)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


def values_json(values: Values | None) -> dict[str, Any] | None:
    """A gradient as the page keeps it: its shape, element count and first :data:`GRAD_NUMBERS`."""
    if values is None:
        return None
    flat = values.flat[:GRAD_NUMBERS]
    return {"shape": list(values.shape), "numel": values.numel(), "flat": [_number(v) for v in flat]}


def _call_text(step: Step, calls: int) -> str:
    """The step counter's second half, as the window's step counter says it."""
    if step.call is None:
        if step.kind == "error":
            return "the program FAILED" if step.line is None else f"line {step.line} FAILED"
        return "forward pass" if step.line is None else f"line {step.line}"
    return f"call {step.call + 1} of {calls} · {CALL_STEP_WORDS.get(step.kind, step.kind)}"


def _marks(recording: Recording) -> list[list[Any]]:
    """Where each loop iteration and each call begins, and the failing call's warning (as the
    window's timeline marks): ``[step, kind, label, tip]``."""
    steps = recording.timeline.steps
    marks: list[list[Any]] = []
    for i in recording.timeline.iteration_starts():
        mark = steps[i].loops[-1]
        total = f" of {mark.count}" if mark.count is not None else ""
        tip = f"iteration {mark.index + 1}{total} of the loop on line {mark.line} begins (Ctrl+Right)"
        marks.append([i, "iteration", f"iteration {mark.index + 1}", tip])
    for i in recording.timeline.call_starts():
        call = (steps[i].call or 0) + 1
        marks.append([i, "call", f"call {call}", f"call {call} begins (Shift+Right)"])
    failed = recording.failed
    if failed is not None:
        marks.append([failed.first_step, "fail", "✖", "this call will fail"])
    elif recording.error is not None and steps:
        marks.append([len(steps) - 1, "fail", "✖", "the program stops with an error here"])
    order = {"iteration": 0, "call": 1, "fail": 2}
    return sorted(marks, key=lambda m: (m[0], order[m[1]]))


def _call_line(recording: Recording, call: int, name: str, after: Values | None) -> str:
    """What one finished call did to ``name``'s ``.grad``, as the window's gradient panel says it."""
    end = recording.timeline[recording.calls[call].last_step]
    if end.contribution is not None:
        return f"call {call + 1}: +{format_values(end.contribution.get(name))} → {format_values(after)}"
    returned = ", ".join(f"{k} = {format_values(v)}" for k, v in (end.result or {}).items())
    return f"call {call + 1}: returned {returned}; {name}.grad stays {format_values(after)}"


def _grads(recording: Recording) -> dict[str, Any]:
    """Each leaf's ``.grad`` changes ``[step, text, values]``, and each finished call's line."""
    leaves = list(recording.leaves)
    changes: dict[str, list[list[Any]]] = {name: [] for name in leaves}
    for step in recording.timeline.steps:
        for name, values in step.grad_changes.items():
            if name in changes:
                changes[name].append([step.index, format_values(values), values_json(values)])
    calls = []
    for info in recording.calls:
        if info.error is not None:
            continue
        ends: Mapping[str, Values | None] = recording.grads_at_end(info.index)
        lines = {name: _call_line(recording, info.index, name, ends.get(name)) for name in leaves}
        calls.append({"call": info.index, "last_step": info.last_step, "lines": lines})
    return {"leaves": leaves, "changes": changes, "calls": calls}


def _error_panel(recording: Recording, fixes: Sequence[ProvenFix]) -> dict[str, Any] | None:
    """The error panel's heading, PyTorch's message and the fixes with their diffs, and the one
    step it shows at (the failed call's end, or the program's error step)."""
    info = recording.failed
    steps = recording.timeline.steps
    if info is not None:
        node = info.failed_node
        where = recording.graph.node(node).name if node and node in recording.graph else "the call itself"
        title = f"✗ Call {info.index + 1} (line {info.call.line}) failed at {where}. PyTorch says:"
        panel = {"step": info.last_step, "title": title, "message": info.error or ""}
    elif recording.error is not None and steps:
        last = next((s.index for s in reversed(steps) if s.kind == "error"), None)
        if last is None:
            return None
        where = "The program" if recording.error_line is None else f"Line {recording.error_line}"
        title = f"✗ {where} raised an error, outside any backward call:"
        panel = {"step": last, "title": title, "message": recording.error}
    else:
        return None
    return {**panel, "fixes": _fixes(recording, fixes)}


def _fixes(recording: Recording, proven: Sequence[ProvenFix]) -> list[dict[str, Any]]:
    """Only fixes that were recorded and held (``app.core.lesson.prove``), each with its mark."""
    from app.core.lesson.edits import changed_lines

    old = recording.program.code
    return [
        {
            "title": p.fix.title,
            "explanation": f"{p.fix.explanation} ({p.checked.mark()})",
            "diff": changed_lines(old, p.fix.code, p.fix.moved),
        }
        for p in proven
    ]


def step_data(
    recording: Recording, *, fixes: Sequence[ProvenFix] = (), lines: tuple[int, int] | None = None
) -> dict[str, Any]:
    """Everything the page's panels need, as JSON-ready data (columns of one entry per step).

    ``lines``: the first and last line of the program the page shows (a ``with lens.record()``
    block of a longer file), numbered as in the file; all of it when None."""
    strings = _Strings()
    steps = recording.timeline.steps
    program = recording.program
    calls = len(recording.calls)

    def detail(step: Step) -> int:
        where = iteration_text(step.loops, program)
        return strings(" · ".join(part for part in (where, _call_text(step, calls)) if part))

    return {
        "name": program.name,
        "title": program.title,
        "device": recording.device,
        "torch_version": recording.torch_version,
        "program": _shown_code(program.code, lines),
        "first_line": lines[0] if lines else 1,
        "count": len(steps),
        "opening": recording.opening_step if steps else 0,
        "line": [s.line for s in steps],
        "kind": [strings(s.kind) for s in steps],
        "call": [s.call for s in steps],
        "caption": [strings(s.caption) for s in steps],
        "detail": [detail(s) for s in steps],
        "saved_bytes": [s.saved_bytes for s in steps],
        "alive_nodes": [s.alive_nodes for s in steps],
        "printed": {str(s.index): list(s.printed) for s in steps if s.printed},
        "calls": [
            {
                "index": c.index,
                "line": c.call.line,
                "text": c.call.text,
                "first_step": c.first_step,
                "last_step": c.last_step,
                "failed": c.error is not None,
            }
            for c in recording.calls
        ],
        "call_stops": sorted({0, *(c.last_step for c in recording.calls)}),
        "iteration_starts": list(recording.timeline.iteration_starts()),
        "marks": _marks(recording),
        "grads": _grads(recording),
        "error_panel": _error_panel(recording, fixes),
        "strings": strings.table,
    }


def _shown_code(code: str, lines: tuple[int, int] | None) -> str:
    """Lines ``first``..``last`` (from 1) of ``code``, or all of it."""
    if lines is None:
        return code
    return "".join(code.splitlines(keepends=True)[lines[0] - 1 : lines[1]])
