"""Recipes for a value carried from one iteration (or call) into the next with its graph: detach
it, in whatever shape it is kept (a tensor, a tuple, a list, a dict, a module attribute); reset a
loss accumulated across iterations; compute inside the loop a value made once before it."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from app.core.lesson.edits import (
    Source,
    assigned_names,
    carried_names,
    edit_text,
    insert_after,
    insert_before,
    line_ending,
    loop_at,
    names_bound,
    names_read,
    set_call_keyword,
    statement_lines,
)
from app.core.lesson.failure import Failure, site
from app.core.lesson.fix import Fix
from app.core.lesson.statement_shapes import (
    backward_receiver,
    target_text,
)
from app.core.model.program import CallInfo

__all__ = [
    "detach_carried_fix",
    "detach_forms",
    "detach_kept_fix",
    "recompute_inside_fix",
    "reset_accumulated_fix",
]


# The shapes a carried value takes in real code, tried in this order: a tensor (h), an LSTM's
# (h, c) tuple, a list of per-layer states, a dict of them, a list of (h, c) tuples, and a value
# that starts as None (the first batch has no state yet). The proof tries the next one when an
# edit raises, starting from the shape its error names ("'tuple' object has no attribute").
_DETACH_FORMS: tuple[tuple[str, str], ...] = (
    ("tensor", "{v}.detach()"),
    ("each tensor of its tuple", "tuple(t.detach() for t in {v})"),
    ("each tensor of its list", "[t.detach() for t in {v}]"),
    ("each tensor of its dict", "{{k: t.detach() for k, t in {v}.items()}}"),
    ("each tensor of its list of tuples", "[tuple(t.detach() for t in s) for s in {v}]"),
)


def _what(shape: str) -> str:
    return "it" if shape == "tensor" else shape


def detach_forms(target: str) -> list[tuple[str, str]]:
    """``(shape, statement)`` that detaches ``target`` for each shape it may hold.

    >>> [s for _, s in detach_forms("hidden")][:2]
    ['hidden = hidden.detach()', 'hidden = tuple(t.detach() for t in hidden)']
    """
    return [(shape, f"{target} = {form.format(v=target)}") for shape, form in _DETACH_FORMS]


def _with_forms(make: Callable[[str, str], Fix], target: str, *, maybe_none: bool) -> Fix:
    """The fix for a tensor, with the other shapes as its alternatives (None-guarded when the value
    starts as None)."""
    fixes = []
    for shape, plain in detach_forms(target):
        value = plain.split(" = ", 1)[1]
        fixes.append(
            make(shape, f"{target} = None if {target} is None else {value}" if maybe_none else plain)
        )
    return Fix(**{**fixes[0].__dict__, "alternatives": tuple(fixes[1:])})


def _carried_targets(source: Source, stmt: ast.stmt) -> list[str]:
    """Targets that ``stmt`` both reads and binds: ``self.hidden = self.rnn(x, self.hidden)``,
    ``out, state["h"] = cell(x, state["h"])``."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign)):
        return []
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    flat = [e for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
    read = {
        source.segment(n)
        for n in ast.walk(stmt.value)
        if isinstance(n, (ast.Attribute, ast.Subscript, ast.Name))
    }
    found = []
    for element in flat:
        text = target_text(source, element)
        if (
            text is not None
            and not isinstance(element, ast.Name)
            and (text in read or isinstance(stmt, ast.AugAssign))
        ):
            found.append(text)
    return found


def _starts_as_none(source: Source, target: str) -> bool:
    """Whether the program anywhere sets ``target`` to None (a state made on the first call)."""
    return any(
        isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Constant)
        and n.value.value is None
        and any(
            source.segment(t) == target or (isinstance(t, ast.Attribute) and target.endswith("." + t.attr))
            for t in n.targets
        )
        for n in ast.walk(source.tree)
    )


def detach_kept_fix(failure: Failure) -> Fix | None:
    """``self.hidden = self.hidden.detach()`` before the statement that carries a value kept on a
    module (or in a dict) from one call into the next, where the failing node was made."""
    node = failure.node
    if node is None or node.line is None or failure.earlier_iteration_loop() is None:
        return None
    source = failure.source
    made = source.statement_at(node.line)
    targets = _carried_targets(source, made) if made is not None else []
    if len(targets) != 1:
        return None
    target, stmt = targets[0], made
    assert stmt is not None

    def make(shape: str, statement: str) -> Fix:
        return Fix(
            f"{target}: detach it before line {stmt.lineno} uses it",
            f"{target} is kept from one iteration to the next and still points into the graph of the "
            f"one before, which its backward already freed. Detaching {_what(shape)} before line "
            f"{stmt.lineno} keeps its values and lets each backward walk only its own iteration.",
            insert_before(source, stmt, statement),
        )

    return _with_forms(make, target, maybe_none=_starts_as_none(source, target))


def _accumulated(loop: ast.For | ast.While, name: str) -> ast.stmt | None:
    """The statement of ``loop``'s body that adds to ``name`` from itself (``acc += x``,
    ``acc = acc + x``)."""
    for stmt in loop.body:
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return stmt
        if (
            isinstance(stmt, ast.Assign)
            and [getattr(t, "id", None) for t in stmt.targets] == [name]
            and isinstance(stmt.value, ast.BinOp)
            and name in names_read(stmt.value)
        ):
            return stmt
    return None


def reset_accumulated_fix(failure: Failure) -> Fix | None:
    """``total = 0`` at the start of each iteration, when the failing backward is called on a loss
    the loop adds to across iterations: each backward then sees only its iteration's loss."""
    loop = failure.earlier_iteration_loop()
    if loop is None:
        return None
    source = failure.source
    stmt = failure.call_statement(failure.info)
    receiver = backward_receiver(source, stmt)
    if not isinstance(receiver, ast.Name):
        return None
    name = receiver.id
    adding = _accumulated(loop, name)
    if adding is None:
        return None
    first = loop.body[0]
    start = _initial_value(source, loop, name)
    code = insert_before(source, first, f"{name} = {start}")
    return Fix(
        f"{name} = {start} at the start of each iteration",
        f"Line {adding.lineno} adds each iteration's loss to {name}, which is never reset, so "
        f"{name}.backward() walks every earlier iteration's graph again, and those were freed. "
        f"Resetting {name} at the start of each iteration backpropagates only this iteration's loss.",
        code,
    )


def _initial_value(source: Source, loop: ast.For | ast.While, name: str) -> str:
    """The value ``name`` was set to before ``loop`` (``0``, ``0.0``, ``torch.zeros(1)``), else ``0``."""
    _, block = source.block_of(loop)
    for stmt in reversed(block[: block.index(loop)] if loop in block else []):
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [name]:
            text = source.segment(stmt.value)
            if "\n" not in text and len(text) <= 60:
                return text
    return "0"


def detach_carried_fix(failure: Failure) -> Fix | None:
    """``h = h.detach()`` at the end of the loop whose carried value reaches an old graph (for a
    tuple, list or dict of tensors, its alternatives detach each one)."""
    loop = failure.earlier_iteration_loop()
    if loop is None or failure.node is None or failure.node.line is None:
        return None
    source = failure.source
    carried = carried_names(loop.body)
    made_there = source.statement_at(failure.node.line)
    names = [n for n in (assigned_names(made_there) if made_there else []) if n in carried]
    if not names and len(carried) == 1:
        names = carried
    if not names:
        return None
    indent = source.indent(loop.body[0].lineno)
    newline = line_ending(source)
    shown = ", ".join(names)
    maybe_none = any(_starts_as_none(source, name) for name in names)

    def make(shape: str, statement: str) -> Fix:
        lines = (newline + indent).join(statement.replace(names[0], name) for name in names)
        detached = insert_after(source, loop.body[-1], lines, indent)
        code = _drop_band_aids(detached, failure.recording.calls, loop)
        return Fix(
            f"{shown}.detach() at the end of each iteration"
            if len(names) == 1 and shape == "tensor"
            else f"detach {shown} at the end of each iteration",
            f"{shown} is carried into the next iteration and still points into the graph of the one "
            f"before, which its backward already freed. Detaching {_what(shape)} keeps the values and "
            "drops that old graph, so each iteration's backward walks only its own."
            + (" The retain_graph=True that hid this is no longer needed." if code != detached else ""),
            code,
        )

    return _with_forms(make, names[0], maybe_none=maybe_none)


def _drop_band_aids(code: str, calls: Sequence[CallInfo], loop: ast.For | ast.While) -> str:
    """Remove ``retain_graph=True`` from the calls inside ``loop`` (sites once, later ones first)."""
    end = loop.end_lineno or loop.lineno
    sites = {
        site(i.call): i.call
        for i in calls
        if loop.lineno < i.call.line <= end and i.call.keywords.get("retain_graph") == "True"
    }
    for place in sorted(sites, reverse=True):
        code = set_call_keyword(code, sites[place], "retain_graph", None)
    return code


def recompute_inside_fix(failure: Failure) -> Fix | None:
    """Compute, inside the loop, a value made once before it whose graph each iteration walks."""
    node = failure.node
    if node is None or node.line is None or not failure.info.call.loops:
        return None
    loop = loop_at(failure.source, failure.info.call.loops[-1].line)
    if loop is None or any(mark.line == loop.lineno for mark in node.loops):
        return None
    if not any(site(i.call) == site(failure.info.call) for i in failure.freeing_calls()):
        return None  # freed by this same line in an earlier iteration
    source = failure.source
    made = source.statement_at(node.line)
    if not isinstance(made, ast.Assign) or made.end_lineno != made.lineno:
        return None
    names = assigned_names(made)
    _, block = source.block_of(made)
    if len(names) != 1 or loop not in block or block.index(made) > block.index(loop):
        return None
    name = names[0]
    if name in names_bound(loop) or name not in names_read(loop):
        return None
    text = source.segment(made)
    between = block[block.index(made) + 1 : block.index(loop)]
    code = insert_before(source, loop.body[0], text)
    if not any(name in names_read(s) for s in between):
        start, end = statement_lines(source, made)  # the loop's edit is later in the text: offsets hold
        code = edit_text(code, start, end, "")
    return Fix(
        f"compute {name} inside the loop",
        f"{name} was computed once, before the loop, so every iteration's backward walks the same "
        "graph, which the first backward freed. Computed inside the loop, each iteration has its own.",
        code,
    )
