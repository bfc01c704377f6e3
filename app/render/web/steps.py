"""What the player page's panels show at each step, read from the recording (Qt-free).

The step counter, the marks under the timeline, the gradients per call and the
error panel say what the window's panels say, in the same words: both take them from
``app.core.lesson.panel_words``; here they are made once per step or per call (with the proven
fixes it is given), and the page only picks the ones of the step shown. Repeated texts (a
caption, "call 1 of 2 · running") are stored once and named by their index in ``strings``.

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

from app.core.lesson.panel_words import (
    error_title,
    finished_calls,
    grad_history,
    grad_text,
    step_detail,
    timeline_marks,
)
from app.core.lesson.prove import ProvenFix
from app.core.model.recording import Recording
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


def _marks(recording: Recording) -> list[list[Any]]:
    """The window's timeline marks as the page keeps them: ``[step, kind, label, tip]``."""
    return [[m.step, m.kind, m.label, m.tip] for m in timeline_marks(recording)]


def _runs(column: list[list[Any]], value: Any, step: int) -> None:
    """Add ``[step, value]`` to ``column`` unless the run it ends already holds ``value``.

    >>> runs: list[list[Any]] = []
    >>> for step, text in enumerate([4, 4, 7, 7, 4]):
    ...     _runs(runs, text, step)
    >>> runs
    [[0, 4], [2, 7], [4, 4]]
    """
    if not column or column[-1][1] != value:
        column.append([step, value])


def _grads(recording: Recording, strings: _Strings) -> dict[str, Any]:
    """Each leaf's ``.grad`` changes ``[step, values]`` (what the page's tests read), and the
    gradient panel's two texts as runs ``[first step, texts]`` (the page shows, at step ``i``, the
    run it falls in: a text stays for the steps between two calls): its value line and its
    history as a list of lines, as indexes into ``strings`` (a call's line is one string,
    whichever steps show it). Stored per step, they were a fifth of the 200-iteration page."""
    leaves = list(recording.leaves)
    changes: dict[str, list[list[Any]]] = {name: [] for name in leaves}
    now: dict[str, Values | None] = dict.fromkeys(leaves)
    texts: dict[str, list[list[Any]]] = {name: [] for name in leaves}
    histories: dict[str, list[list[Any]]] = {name: [] for name in leaves}
    ends: dict[int, Mapping[str, Values | None]] = {}
    lines_of: dict[tuple[int, str], str] = {}
    for step in recording.timeline.steps:
        for name, values in step.grad_changes.items():
            if name in changes:
                now[name] = values
                changes[name].append([step.index, values_json(values)])
        for call in finished_calls(recording, step.index):
            if call not in ends:
                ends[call] = recording.grads_at_end(call)
        for name in leaves:
            _runs(texts[name], strings(grad_text(name, now[name])), step.index)
            history = grad_history(recording, step, name, now[name], ends, lines_of=lines_of)
            _runs(histories[name], [strings(line) for line in history], step.index)  # lines stored once
    return {"leaves": leaves, "changes": changes, "text": texts, "history": histories}


def _error_panel(recording: Recording, fixes: Sequence[ProvenFix]) -> dict[str, Any] | None:
    """The error panel's heading, PyTorch's message and the fixes with their diffs, and the one
    step it shows at (the failed call's end, or the program's error step)."""
    info = recording.failed
    steps = recording.timeline.steps
    title = error_title(recording)
    if info is not None:
        panel = {"step": info.last_step, "title": title, "message": info.error or ""}
    elif recording.error is not None and steps:
        last = next((s.index for s in reversed(steps) if s.kind == "error"), None)
        if last is None:
            return None
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
        "detail": [strings(step_detail(s, recording)) for s in steps],
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
        "grads": _grads(recording, strings),
        "error_panel": _error_panel(recording, fixes),
        "strings": strings.table,
    }


def _shown_code(code: str, lines: tuple[int, int] | None) -> str:
    """Lines ``first``..``last`` (from 1) of ``code``, or all of it."""
    if lines is None:
        return code
    return "".join(code.splitlines(keepends=True)[lines[0] - 1 : lines[1]])
