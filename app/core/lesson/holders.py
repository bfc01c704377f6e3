"""Where a loop's graph is held: the statement that stores it in a place the loop carries over.

A place is a name (``total``), an item (``history["loss"]``) or an attribute (``self.total``);
the statement is ``place += v``, ``place = place + v`` or ``place.append(v)``, in the loop's
body or in a function or method the body calls with the value (``tracker.add(loss)`` and
``self.total += v`` in ``add``). See NOTE [kept graphs] in ``advice.py``.

>>> code = "for i in range(2):\\n    loss = f(i)\\n    history['loss'].append(loss)\\n"
>>> holder = holder_of(Source(code), 1, {"loss"})
>>> holder.statement.lineno, Source(code).segment(holder.place), Source(code).segment(holder.origin)
(3, "history['loss']", 'loss')
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.core.lesson.edits import Source, loop_at, names_bound, names_read

__all__ = ["Holder", "holder_of"]

_PLACES = (ast.Name, ast.Attribute, ast.Subscript)


@dataclass(frozen=True)
class Holder:
    """``place += held``, ``place = place + held`` or ``place.append(held)``.

    ``origin`` is the loop's own expression whose graph is held: ``held`` itself, or the
    argument of the loop's call into the function that holds it."""

    statement: ast.stmt
    place: ast.expr
    held: ast.expr
    origin: ast.expr


def _root(place: ast.expr) -> str | None:
    """The name a place starts from: ``history`` for ``history["loss"]``, ``self`` for ``self.total``."""
    while isinstance(place, (ast.Attribute, ast.Subscript)):
        place = place.value
    return place.id if isinstance(place, ast.Name) else None


def _same(a: ast.expr, b: ast.expr) -> bool:
    """The same place, read or written (``ast.dump`` would tell the load from the store)."""
    return ast.unparse(a) == ast.unparse(b)


def _shape(stmt: ast.stmt) -> tuple[ast.expr, ast.expr] | None:
    """The place and the held value of a statement that stores a value in a place, if it is one."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, _PLACES):
        return stmt.target, stmt.value
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], _PLACES):
        place, value = stmt.targets[0], stmt.value
        if isinstance(value, ast.BinOp):
            if _same(value.left, place):
                return place, value.right
            if _same(value.right, place):
                return place, value.left
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call, func = stmt.value, stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "append"
            and isinstance(func.value, _PLACES)
            and len(call.args) == 1
            and not call.keywords
        ):
            return func.value, call.args[0]
    return None


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    return [s for stmt in body for s in ast.walk(stmt) if isinstance(s, ast.stmt)]


def _held_in(
    body: list[ast.stmt], names: set[str], carried: set[str] | None
) -> tuple[ast.stmt, ast.expr, ast.expr] | None:
    """The statement of ``body`` that stores one of ``names`` in a place that outlives an
    iteration: one whose root is not bound in ``body`` (a list made afresh holds only one
    iteration's graph) unless it is updated from itself, or, in a function (``carried`` None),
    any attribute or item, which the function's caller holds."""
    statements = _statements(body)
    bound = set().union(*(names_bound(s) for s in statements))
    for stmt in statements:
        shape = _shape(stmt)
        if shape is None or not names_read(shape[1]) & names:
            continue
        place, held = shape
        root = _root(place)
        if carried is None:
            if isinstance(place, ast.Name):
                continue  # a local of the function: let go when it returns
        elif isinstance(stmt, ast.Expr) and root in bound:
            continue
        return stmt, place, held
    return None


def _functions(tree: ast.AST) -> dict[str, list[tuple[ast.FunctionDef, bool]]]:
    """Each function and method of the program by name, and whether it is a method."""
    found: dict[str, list[tuple[ast.FunctionDef, bool]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found.setdefault(item.name, []).append((item, True))
    methods = {id(fn) for defs in found.values() for fn, _ in defs}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and id(node) not in methods:
            found.setdefault(node.name, []).append((node, False))
    return found


def _through_calls(source: Source, body: list[ast.stmt], names: set[str]) -> Holder | None:
    """A holder in a function the loop calls with one of ``names`` (``tracker.add(loss)``)."""
    functions = _functions(source.tree)
    for stmt in _statements(body):
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            func = call.func
            callee = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            for fn, is_method in functions.get(callee, []):
                params = [a.arg for a in fn.args.args][1 if is_method else 0 :]
                passed = {p: a for p, a in zip(params, call.args, strict=False) if names_read(a) & names}
                passed.update(
                    {k.arg: k.value for k in call.keywords if k.arg and names_read(k.value) & names}
                )
                found = _held_in(fn.body, set(passed), None) if passed else None
                if found is not None:
                    stmt_in, place, held = found
                    origin = next(a for p, a in passed.items() if p in names_read(held))
                    return Holder(stmt_in, place, held, origin)
    return None


def holder_of(source: Source, loop_line: int, names: set[str]) -> Holder | None:
    """The statement that keeps one of ``names``, made in the loop at ``loop_line``, past its
    iteration: in the loop's body, else in a function the body calls with it."""
    loop = loop_at(source, loop_line)
    if loop is None:
        return None
    found = _held_in(loop.body, names, set())
    if found is not None:
        stmt, place, held = found
        return Holder(stmt, place, held, held)
    return _through_calls(source, loop.body, names)
