"""Recipes for an in-place write into a tensor autograd saved: write a new value instead (a
tensor in a list, a dict or a module attribute: rebinding is all it takes), ``inplace=False`` on
the layer that wrote, or write into a clone."""

from __future__ import annotations

import ast

from app.core.lesson.edits import (
    Source,
    edit_text,
    insert_before,
    wrapped,
)
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix
from app.core.lesson.statement_shapes import (
    is_simple_stmt,
    is_step,
    target_text,
)

__all__ = ["clone_fix", "out_of_place", "out_of_place_fix"]


def out_of_place(source: Source, stmt: ast.stmt) -> tuple[str, str] | None:
    """(the new program, what was written in place) with ``stmt``'s in-place write made out of place:
    ``a[i] += b`` -> ``a[i] = a[i] + b``, ``x.add_(y)`` -> ``x = x.add(y)``, ``inplace=True`` ->
    ``inplace=False``."""
    if isinstance(stmt, ast.AugAssign) and target_text(source, stmt.target) is not None:
        target = source.segment(stmt.target)
        op = _OPERATORS.get(type(stmt.op))
        if op is None:
            return None
        value = source.segment(stmt.value)
        value = value if wrapped(source, stmt.value) == value else f"({value})"
        return edit_text(
            source.code, source.start(stmt), source.end(stmt), f"{target} = {target} {op} {value}"
        ), target
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr.endswith("_")
            and not func.attr.startswith("_")
            and target_text(source, func.value) is not None
        ):
            target = source.segment(func.value)
            call = source.segment(stmt.value)
            name_end = source.end(func) - source.start(stmt.value)
            new_call = call[: name_end - 1] + call[name_end:]  # the method without its trailing _
            return edit_text(
                source.code, source.start(stmt), source.end(stmt), f"{target} = {new_call}"
            ), target
    for node in ast.walk(stmt):
        if isinstance(node, ast.keyword) and node.arg == "inplace" and source.segment(node.value) == "True":
            return edit_text(
                source.code, source.start(node.value), source.end(node.value), "False"
            ), "inplace=True"
    return None


_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
}


def out_of_place_fix(failure: Failure) -> Fix | None:
    """Write a new value where the statement that changed a saved tensor wrote into it in place:
    into a tensor held in a list, a dict or a module attribute, rebinding is all it takes."""
    source = failure.source
    for line in failure.modifying_lines():
        stmt = source.statement_at(line)
        if stmt is None or is_step(stmt):
            continue
        site_stmt = _definition_site(source, stmt)
        made = out_of_place(source, site_stmt)
        if made is None:
            continue
        code, written = made
        if written == "inplace=True":
            return Fix(
                f"inplace=False on line {site_stmt.lineno}",
                f"The layer made on line {site_stmt.lineno} with inplace=True wrote its result into its "
                f"input when line {stmt.lineno} ran it, and autograd had saved that input for the "
                "backward. With inplace=False it writes a new tensor and the saved one stays as it was.",
                code,
            )
        return Fix(
            f"out of place on line {stmt.lineno}",
            f"Line {stmt.lineno} wrote into {written} in place, whose memory autograd saved for the "
            "backward. Computing a new value instead leaves the saved values as they were.",
            code,
        )
    return None


def _definition_site(source: Source, stmt: ast.stmt) -> ast.stmt:
    """``stmt``, or the ``nn.ReLU(inplace=True)`` it calls through when it is defined elsewhere
    (the step's line is where the module ran, not where its inplace flag is written)."""
    if any(isinstance(n, ast.keyword) and n.arg == "inplace" for n in ast.walk(stmt)):
        return stmt
    for node in ast.walk(source.tree):
        if isinstance(node, ast.keyword) and node.arg == "inplace" and source.segment(node.value) == "True":
            holder = source.enclosing_statement(node)
            if holder is not None and holder is not stmt and is_simple_stmt(holder):
                return holder
    return stmt


def _in_place_target(stmt: ast.stmt) -> str | None:
    """``b`` of ``b[1] = 2.0``, ``b += 1``, ``b[0] += 1`` or ``b.zero_()``: a tensor written in place."""
    target: ast.expr | None = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0].value
    elif isinstance(stmt, ast.AugAssign):
        target = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
            target = func.value
    return target.id if isinstance(target, ast.Name) else None


def clone_fix(failure: Failure) -> Fix | None:
    """``b = b.clone()`` before the statement that wrote into a saved tensor in place."""
    source = failure.source
    for line in failure.modifying_lines():
        stmt = source.statement_at(line)
        name = _in_place_target(stmt) if stmt is not None else None
        if stmt is None or name is None:
            continue
        return Fix(
            f"{name}.clone() before the in-place write on line {line}",
            f"Line {line} writes into {name}, whose memory autograd saved for the backward. "
            f"Writing into a copy (clone) leaves the saved values as they were.",
            insert_before(source, stmt, f"{name} = {name}.clone()"),
        )
    return None
