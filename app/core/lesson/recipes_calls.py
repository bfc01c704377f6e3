"""Recipes for a call that had no graph to walk: ``autograd.grad`` without ``create_graph``, a
loss computed under ``torch.no_grad()``, and a leaf updated by hand outside ``torch.no_grad()``."""

from __future__ import annotations

import ast

from app.core.lesson.edits import (
    Source,
    assigned_names,
    names_read,
    parsed,
    set_call_keyword,
    unwrap_block,
    wrap_in_block,
)
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix
from app.core.lesson.recipes_writes import out_of_place
from app.core.lesson.statement_shapes import (
    writes_in_place,
)
from app.core.model.recording import Recording

__all__ = ["create_graph_fix", "outside_no_grad_fix", "program_error_fixes"]


def create_graph_fix(failure: Failure) -> Fix | None:
    """``create_graph=True`` on an earlier ``autograd.grad`` whose result a later backward needs."""
    error = failure.info.error or ""
    if "does not require grad" not in error and "does not have a grad_fn" not in error:
        return None
    earlier = [
        i
        for i in failure.recording.calls[: failure.info.index]
        if i.call.kind == "grad" and not i.call.create_graph
    ]
    if not earlier:
        return None
    call = earlier[-1].call
    return Fix(
        f"create_graph=True on line {call.line}",
        f"autograd.grad on line {call.line} returned gradients without a graph of their own, so the "
        "later backward has nothing to walk through them. With create_graph=True the gradients are "
        "differentiable.",
        set_call_keyword(failure.source.code, call, "create_graph", "True"),
    )


def _is_no_grad(item: ast.withitem) -> bool:
    expr = item.context_expr
    func = expr.func if isinstance(expr, ast.Call) else expr
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
        return isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False
    return name in ("no_grad", "inference_mode")


def outside_no_grad_fix(failure: Failure) -> Fix | None:
    """The ``with torch.no_grad():`` that computed the loss (or holds the backward) taken away."""
    error = failure.info.error or ""
    if "does not require grad" not in error and "does not have a grad_fn" not in error:
        return None
    source = failure.source
    stmt = failure.call_statement(failure.info)
    wanted = names_read(stmt)
    for block in ast.walk(source.tree):
        if not isinstance(block, ast.With) or len(block.items) != 1 or not _is_no_grad(block.items[0]):
            continue
        holds_call = any(child is stmt for child in ast.walk(block))
        computes = any(set(assigned_names(s)) & wanted for s in ast.walk(block) if isinstance(s, ast.stmt))
        if holds_call or computes:
            header = source.segment(block.items[0].context_expr)
            return Fix(
                f"compute the loss outside {header}",
                f"Line {block.lineno} runs its block under {header}, so nothing in it records a graph "
                "and the loss has no grad_fn to backpropagate through. Without that block the "
                "graph is recorded.",
                unwrap_block(source, block),
            )
    return None


def _writes_into(stmt: ast.stmt) -> bool:
    """A manual update's statement, or ``w[i] = v``: a write into a tensor's memory."""
    if writes_in_place(stmt):
        return True
    return (
        isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript)
    )


def _reads_grad(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(stmt))


def program_error_fixes(recording: Recording) -> list[Fix]:
    """Fixes for an error raised outside any autograd call: a leaf (or a view of one) written in
    place, or a view that autograd cannot rebase written in place."""
    message, line = recording.error or "", recording.error_line
    if line is None:
        return []
    try:
        source = parsed(recording.program.code)
    except SyntaxError:
        return []
    stmt = source.statement_at(line)
    if stmt is None or not _writes_into(stmt):
        return []
    if "is a view and" in message and "modified inplace" in message:
        return [f for f in [_view_out_of_place(source, stmt)] if f is not None]
    if "leaf Variable that requires grad" not in message:
        return []
    fixes = [f for f in (_under_no_grad(source, stmt), _leaf_out_of_place(source, stmt)) if f is not None]
    if _reads_grad(stmt) or isinstance(stmt, ast.Assign):
        return fixes  # an update by hand, or a value set into place: not part of the graph
    return fixes[::-1]  # a step of the computation: it belongs in the graph, written out of place


def _view_out_of_place(source: Source, stmt: ast.stmt) -> Fix | None:
    made = out_of_place(source, stmt)
    if made is None:
        return None
    code, written = made
    return Fix(
        f"out of place on line {stmt.lineno}",
        f"{written} on line {stmt.lineno} is one of several views a single call (split, chunk, "
        "unbind) returned, and autograd cannot rewrite their history when one is written in place. "
        f"A new tensor instead ({written} = ...) leaves the views as they were.",
        code,
    )


def _leaf_out_of_place(source: Source, stmt: ast.stmt) -> Fix | None:
    made = out_of_place(source, stmt) if not _reads_grad(stmt) else None
    if made is None:
        return None
    code, written = made
    return Fix(
        f"out of place on line {stmt.lineno}",
        f"Line {stmt.lineno} writes into {written}, a leaf that requires grad: autograd cannot "
        f"record a change made to its own input. Computing a new value ({written} = ...) leaves the "
        f"leaf as it was and records the step in the graph; the leaf's .grad is then its gradient.",
        code,
    )


def _under_no_grad(source: Source, stmt: ast.stmt) -> Fix | None:
    line = stmt.lineno
    _, block = source.block_of(stmt)
    first = last = block.index(stmt)
    while first > 0 and _writes_into(block[first - 1]):  # the whole manual update, not one line
        first -= 1
    while last + 1 < len(block) and _writes_into(block[last + 1]):
        last += 1
    try:
        code = wrap_in_block(source, block[first], "with torch.no_grad()", block[last])
    except ValueError:
        return None
    return Fix(
        f"with torch.no_grad(): around line {line}"
        if first == last
        else f"with torch.no_grad(): around lines {block[first].lineno}-{block[last].lineno}",
        f"Line {line} writes into a leaf that requires grad; autograd cannot record a change made "
        "to its own input. A manual update (or setting its values) is not part of the graph: under "
        "torch.no_grad() it changes the values and records nothing.",
        code,
    )
