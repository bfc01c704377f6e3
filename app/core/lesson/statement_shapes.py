"""Shapes of statements the recipes look for: an optimizer step, a backward call, an in-place
write, a target that names where a value is kept.

>>> import ast
>>> is_step(ast.parse("opt.step()").body[0]), writes_in_place(ast.parse("w.grad.zero_()").body[0])
(True, True)
"""

from __future__ import annotations

import ast

from app.core.lesson.edits import Source

__all__ = [
    "backward_receiver",
    "calls_backward",
    "is_simple_stmt",
    "is_step",
    "step_receiver",
    "target_text",
    "writes_in_place",
]


def target_text(source: Source, node: ast.expr) -> str | None:
    """``h``, ``self.hidden``, ``state["h"]``: a target that names where a value is kept."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, (ast.Attribute, ast.Subscript)) and target_text(source, node.value) is not None:
        return source.segment(node)
    return None


def backward_receiver(source: Source, stmt: ast.stmt) -> ast.expr | None:
    """``A`` of a statement that is exactly ``A.backward()`` (retain_graph alone allowed)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "backward" or call.args:
        return None
    if any(k.arg != "retain_graph" for k in call.keywords):
        return None
    return call.func.value


def is_step(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "step"
    )


def step_receiver(stmt: ast.stmt) -> str:
    assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
    assert isinstance(stmt.value.func, ast.Attribute)
    return ast.unparse(stmt.value.func.value)


def calls_backward(stmt: ast.stmt) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "grad")
        for n in ast.walk(stmt)
    )


def writes_in_place(stmt: ast.stmt) -> bool:
    """``w -= lr * w.grad``, ``w.grad.zero_()``, ``w.data.add_(...)``: a manual update's statement."""
    if isinstance(stmt, ast.AugAssign):
        return True
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr.endswith("_")
        and not stmt.value.func.attr.startswith("_")
    )


def is_simple_stmt(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Assign, ast.Expr, ast.AugAssign, ast.AnnAssign))
