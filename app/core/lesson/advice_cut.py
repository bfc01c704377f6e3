"""Advice without an error: a loss made a leaf by hand (``loss.requires_grad = True``,
``Variable(loss, requires_grad=True)``) so that ``backward()`` stops complaining, and learns nothing.

PyTorch said "element 0 of tensors does not require grad": a statement had cut the graph between the
weights and the loss. Making the loss require grad silences that, and its backward walks no node at
all: the recording shows the call giving a gradient to the loss alone and to none of the weights.
The edit takes the line that made the loss a leaf away and fixes the statement that cut the graph,
found as at the error (:mod:`app.core.lesson.recipes_cut`); the proof settles which one it is,
since with that line gone every wrong guess raises PyTorch's error again.
"""

from __future__ import annotations

import ast
import dataclasses

from app.core.lesson.advice import Advice
from app.core.lesson.edits import Source, call_node, edit_text, parsed, statement_lines
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix
from app.core.lesson.recipes_cut import CUT_MAKERS
from app.core.lesson.statement_shapes import backward_receiver
from app.core.model.program import CallInfo
from app.core.model.recording import Recording

__all__ = ["leaf_loss_advice"]

_CUT = "element 0 of tensors does not require grad and does not have a grad_fn"


def _walked_nothing(recording: Recording, info: CallInfo) -> bool:
    """The backward gave a gradient to the tensor it started at and to no other leaf."""
    steps = recording.timeline.steps[info.first_step : info.last_step + 1]
    end = steps[-1].contribution or {}
    given = [name for name, value in end.items() if value is not None]
    return all(s.kind == "call_end" for s in steps) and len(given) < len(end)


def _made_leaf(stmt: ast.stmt, name: str) -> bool:
    """``name.requires_grad = True``, ``name.requires_grad_()``, or
    ``name = Variable(name, requires_grad=True)``: a statement that makes ``name`` a leaf."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
            return isinstance(target.value, ast.Name) and target.value.id == name
        if isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Call):
            flagged = any(k.arg == "requires_grad" for k in value.keywords)
            return flagged and any(isinstance(a, ast.Name) and a.id == name for a in value.args)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "requires_grad_"
            and isinstance(func.value, ast.Name)
            and func.value.id == name
        )
    return False


def leaf_loss_advice(recording: Recording) -> Advice | None:
    """Take away the line that made the loss a leaf, and fix the statement that cut the graph."""
    if recording.failed is not None or recording.error is not None:
        return None
    try:
        source = parsed(recording.program.code)
    except SyntaxError:
        return None
    for info in recording.calls:
        if info.call.kind != "backward" or not _walked_nothing(recording, info):
            continue
        stmt = source.enclosing_statement(call_node(source, info.call))
        receiver = backward_receiver(source, stmt) if stmt is not None else None
        if not isinstance(receiver, ast.Name):
            continue
        hacks = [s for s in ast.walk(source.tree) if isinstance(s, ast.stmt) and _made_leaf(s, receiver.id)]
        if len(hacks) == 1:
            return _advice(recording, info, source, hacks[0], receiver.id)
    return None


def _advice(recording: Recording, info: CallInfo, source: Source, hack: ast.stmt, name: str) -> Advice | None:
    try:
        start, end = statement_lines(source, hack)
    except ValueError:
        return None
    without = Source(edit_text(source.code, start, end, ""))
    failure = Failure(recording, without, dataclasses.replace(info, error=_CUT), None)
    fixes: list[Fix] = []
    shown = source.segment(hack)
    for make in CUT_MAKERS:
        try:
            fix = make(failure)
        except ValueError:
            continue
        if fix is not None and all(f.code != fix.code for f in fixes):
            fixes.append(
                Fix(
                    f"{fix.title}, without line {hack.lineno}",
                    f"Line {hack.lineno} ({shown}) made {name} a leaf so that backward would run, and "
                    f"it walks nothing: no weight gets a gradient. {fix.explanation} Line "
                    f"{hack.lineno} is then not needed.",
                    fix.code,
                )
            )
    if not fixes:
        return None
    return Advice(
        f"No error, but nothing learns: line {hack.lineno} made {name} a leaf and its graph was cut",
        f"The backward on line {info.call.line} walked no node: {name}.grad became 1 and every weight's "
        ".grad stayed None.",
        tuple(fixes),
    )
