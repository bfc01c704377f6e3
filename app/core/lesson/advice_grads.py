"""Advice without an error: gradients that pile up because no ``zero_grad()`` ran between steps.

``loss.backward()`` adds into every leaf's ``.grad``; an optimizer steps with whatever is there.
A loop (or a function called again and again) that runs backward and then ``opt.step()`` but never
clears the gradients steps with the sum of every batch so far. Nothing raises: the recording
shows it. :func:`grown_grads` reads it from the recording: a later run of the same backward
finds its leaves' ``.grad`` still holding what the run before left there (a reset sets them to
None or zero), while the code that runs that backward steps an optimizer after it.
:func:`zero_grad_advice` offers the edit, ``opt.zero_grad()`` before that backward, proven as
every fix is: recorded again, no run finds an old gradient.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.core.lesson.advice import Advice
from app.core.lesson.edits import Source, call_node, edit_text, line_ending, parsed
from app.core.lesson.fix import Claim, Fix
from app.core.lesson.statement_shapes import is_step, step_receiver
from app.core.model.program import CallInfo
from app.core.model.recording import Recording
from app.core.model.values import Values

__all__ = ["GrownGrads", "grown_grads", "zero_grad_advice"]


@dataclass(frozen=True)
class GrownGrads:
    """A backward whose runs found the gradients of the runs before it still in ``.grad``."""

    call: CallInfo  # its first run
    leaf: str  # a leaf whose .grad grew
    sizes: tuple[float, ...]  # that leaf's |.grad| summed, before each run, from the first


def _size(values: Values | None) -> float:
    return 0.0 if values is None else sum(abs(float(v)) for v in values.flat)


def _runs(recording: Recording) -> dict[tuple[int, int], list[CallInfo]]:
    runs: dict[tuple[int, int], list[CallInfo]] = {}
    for info in recording.calls:
        if info.call.kind == "backward" and info.error is None:
            runs.setdefault((info.call.line, info.call.col), []).append(info)
    return runs


def grown_grads(recording: Recording) -> GrownGrads | None:
    """The first backward site whose later runs start from the gradients earlier runs left, and
    whose code steps an optimizer after it (NOTE at the top of this module); None if none."""
    try:
        source = parsed(recording.program.code)
    except SyntaxError:
        return None
    for infos in _runs(recording).values():
        if len(infos) < 2 or _stepper(source, infos[0]) is None:
            continue
        grads = [recording.timeline.state(i.first_step - 1).grads if i.first_step else {} for i in infos]
        ends = recording.grads_at_end(infos[0].index)
        for leaf in sorted(ends):
            sizes = tuple(_size(g.get(leaf)) for g in grads)
            if all(size > 0.0 for size in sizes[1:]):
                return GrownGrads(infos[0], leaf, sizes)
    return None


def _stepper(source: Source, info: CallInfo) -> tuple[ast.stmt, ast.stmt] | None:
    """The backward's statement and the ``opt.step()`` after it in the code that repeats it (its
    loop's body, or the function it runs in), when that code clears no gradient anywhere."""
    node = call_node(source, info.call)
    stmt = source.enclosing_statement(node)
    if stmt is None:
        return None
    scope = _repeating_scope(source, stmt)
    if scope is None:
        return None
    inner = [s for s in ast.walk(scope) if isinstance(s, ast.stmt)]
    if any(
        isinstance(n, ast.Attribute) and n.attr in ("zero_grad", "zero_") for s in inner for n in ast.walk(s)
    ):
        return None
    steps = [s for s in inner if is_step(s) and s.lineno >= stmt.lineno]
    return (stmt, steps[0]) if steps else None


def _repeating_scope(source: Source, stmt: ast.stmt) -> ast.AST | None:
    """The innermost loop or function holding ``stmt``."""
    holders = [
        node
        for node in ast.walk(source.tree)
        if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef))
        and any(s is stmt for s in ast.walk(node))
    ]
    best: ast.AST | None = max(holders, key=lambda node: node.lineno, default=None)
    return best


_NOT_CARRIED = Claim(
    "Recorded again, no backward finds the gradients of the one before.",
    "grads_not_carried",
    mark="each backward starts from clear gradients",
)


def zero_grad_advice(recording: Recording) -> Advice | None:
    """``opt.zero_grad()`` before the backward whose gradients pile up across steps, proven."""
    if recording.failed is not None or recording.error is not None:
        return None
    grown = grown_grads(recording)
    if grown is None:
        return None
    source = parsed(recording.program.code)
    found = _stepper(source, grown.call)
    if found is None:
        return None
    stmt, step = found
    optimizer = step_receiver(step)
    line = stmt.lineno
    if not source.starts_line(stmt):
        return None
    start = source.line_start(line)  # before the line, even when a `;` puts the step beside it
    code = edit_text(
        source.code, start, start, f"{source.indent(line)}{optimizer}.zero_grad(){line_ending(source)}"
    )
    rise = " → ".join(f"{size:.3g}" for size in grown.sizes)
    fix = Fix(
        f"{optimizer}.zero_grad() before line {line}",
        f"backward() adds into .grad, and nothing cleared it between steps, so {source.segment(step)} "
        f"on line {step.lineno} stepped with the sum of every batch so far. Clearing the gradients "
        f"before each backward steps with this batch's alone. {_NOT_CARRIED.text}",
        code,
        claims=(_NOT_CARRIED,),
    )
    return Advice(
        f"No error, but .grad keeps growing: no zero_grad() runs between the steps of line {step.lineno}",
        f"{grown.leaf}.grad before each run of the backward on line {line} (sum of |values|): {rise}; "
        "each backward adds to what the one before left.",
        (fix,),
    )
