"""Recipes for a call that had no graph to walk: ``autograd.grad`` without ``create_graph``, a
loss computed under ``torch.no_grad()``, and a leaf updated by hand outside ``torch.no_grad()``."""

from __future__ import annotations

import ast

from app.core.lesson.edits import (
    Source,
    assigned_names,
    names_read,
    set_call_keyword,
    unwrap_block,
    wrap_in_block,
)
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix
from app.core.lesson.statements import (
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


def program_error_fixes(recording: Recording) -> list[Fix]:
    """Fixes for an error raised outside any autograd call (a leaf written in place)."""
    message, line = recording.error or "", recording.error_line
    if line is None or "leaf Variable that requires grad" not in message:
        return []
    try:
        source = Source(recording.program.code)
    except SyntaxError:
        return []
    stmt = source.statement_at(line)
    if stmt is None or not writes_in_place(stmt):
        return []
    _, block = source.block_of(stmt)
    first = last = block.index(stmt)
    while first > 0 and writes_in_place(block[first - 1]):  # the whole manual update, not one line
        first -= 1
    while last + 1 < len(block) and writes_in_place(block[last + 1]):
        last += 1
    try:
        code = wrap_in_block(source, block[first], "with torch.no_grad()", block[last])
    except ValueError:
        return []
    return [
        Fix(
            f"with torch.no_grad(): around line {line}"
            if first == last
            else f"with torch.no_grad(): around lines {block[first].lineno}-{block[last].lineno}",
            f"Line {line} writes into a leaf that requires grad; autograd cannot record a change made "
            "to its own input. A manual update is not part of the graph: under torch.no_grad() it "
            "changes the values and records nothing.",
            code,
        )
    ]
