"""Recipes for "element 0 of tensors does not require grad": the statement that cut the graph.

The loss reached ``backward()`` without a ``grad_fn``: somewhere between the weights and the loss
a statement let go of the graph. The usual ones, each with its edit at that statement:

* ``x.data`` or ``x.detach()``: the same values without their graph; read ``x`` itself;
* ``torch.tensor(loss.item() + ...)``, ``torch.tensor([q.item() for ...])``: numbers copied into a
  new tensor that remembers nothing; keep the tensors (``loss + ...``, ``torch.stack([q ...])``);
* ``torch.set_grad_enabled(False)`` left on, or a ``with torch.no_grad()`` / ``inference_mode()``
  around the code that calls the function holding the backward: remove it;
* a tensor made from nothing (``torch.rand(...)``) that the loss is computed from, when it is the
  one to learn: ``requires_grad=True`` where it is made.

``argmax``, comparisons and ``.round()`` cut it too, but have no gradient to give back: no edit
helps there, and none is offered. Which candidate is the cause is settled by the proof
(:mod:`app.core.lesson.prove`): the edit that removes the error and raises nothing else.
Candidates on the loss's own chain of names come first.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from app.core.lesson.edits import Source, edit_text, names_read, statement_lines, unwrap_block
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix

__all__ = ["CUT_MAKERS"]

_CUT_ERRORS = ("does not require grad", "does not have a grad_fn")
_NUMBERS = ("item", "tolist")
_NEW_TENSOR = ("tensor", "Tensor", "as_tensor", "FloatTensor")
_FACTORIES = ("rand", "randn", "zeros", "ones", "empty", "full", "randint", "rand_like", "randn_like")


def _applies(failure: Failure) -> bool:
    return any(text in (failure.info.error or "") for text in _CUT_ERRORS)


def _chain(failure: Failure) -> list[ast.stmt]:
    """The statements that bound the names the failing call reads, and theirs, back to the start."""
    source = failure.source
    stmt = failure.call_statement(failure.info)
    wanted, seen = set(names_read(stmt)), set[str]()
    chain: list[ast.stmt] = []
    while wanted - seen:
        name = (wanted - seen).pop()
        seen.add(name)
        for node in ast.walk(source.tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for n in targets for t in ast.walk(n)):
                    chain.append(node)
                    wanted |= names_read(node.value)
    return chain


def _in_order(failure: Failure) -> Iterator[ast.AST]:
    """Every node of the program, those of the loss's chain first (latest statement first)."""
    chain = sorted(_chain(failure), key=lambda s: s.lineno, reverse=True)
    seen: set[int] = set()
    for holder in [*chain, failure.source.tree]:
        for node in ast.walk(holder):
            if id(node) not in seen:
                seen.add(id(node))
                yield node


def _method_name(node: ast.AST | None) -> str:
    if isinstance(node, ast.Call):
        func = node.func
        return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return ""


def _first(failure: Failure, match: Callable[[ast.AST], bool]) -> ast.AST | None:
    return next((n for n in _in_order(failure) if match(n)), None)


def _cut_by(node: ast.AST) -> tuple[ast.expr, str] | None:
    """``(x, ".data")`` for ``x.data``, ``(x, ".detach()")`` for ``x.detach()``."""
    if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
        return node.value, ".data"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
        return (node.func.value, ".detach()") if not node.args else None
    return None


def without_data_fix(failure: Failure) -> Fix | None:
    """``x`` where the loss's chain read ``x.data`` (or ``x.detach()``)."""
    if not _applies(failure):
        return None
    node = _first(failure, lambda n: _cut_by(n) is not None)
    found = _cut_by(node) if node is not None else None
    if node is None or found is None:
        return None
    inner, what = found
    source, line = failure.source, getattr(node, "lineno", 0)
    return Fix(
        f"without {what} on line {line}",
        f"{what} on line {line} gives the values without their graph, so the loss computed from "
        "them has no grad_fn and backward has nothing to walk back to the weights. Reading the "
        "tensor itself keeps the graph.",
        edit_text(source.code, source.start(node), source.end(node), source.segment(inner)),  # type: ignore[arg-type]
    )


def _strip_numbers(source: Source, expr: ast.expr) -> str:
    """``expr``'s text with each ``.item()`` / ``.tolist()`` call replaced by its tensor."""
    text, base = source.segment(expr), source.start(expr)
    calls = [
        n
        for n in ast.walk(expr)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _NUMBERS
    ]
    for call in sorted(calls, key=source.start, reverse=True):
        assert isinstance(call.func, ast.Attribute)
        tensor = call.func.value
        start, end = source.start(call) - base, source.end(call) - base
        text = text[:start] + source.segment(tensor) + text[end:]
    return text


def tensors_kept_fix(failure: Failure) -> Fix | None:
    """``loss + c`` for ``torch.tensor(loss.item() + c)``, ``torch.stack([...])`` for a list of them."""
    if not _applies(failure):
        return None

    def rebuilt(node: ast.AST) -> bool:
        return (
            _method_name(node) in _NEW_TENSOR
            and bool(node.args)  # type: ignore[attr-defined]
            and any(_method_name(n) in _NUMBERS for n in ast.walk(node.args[0]))  # type: ignore[attr-defined]
        )

    node = _first(failure, rebuilt)
    if node is None:
        return None
    assert isinstance(node, ast.Call)
    source, value = failure.source, node.args[0]
    kept = _strip_numbers(source, value)
    new = f"torch.stack({kept})" if isinstance(value, (ast.List, ast.ListComp, ast.Tuple)) else kept
    if not isinstance(value, (ast.List, ast.ListComp, ast.Tuple, ast.Name, ast.Call, ast.Attribute)):
        new = f"({new})"
    return Fix(
        f"keep the tensors on line {node.lineno}",
        f"Line {node.lineno} copies numbers (.item()) into a new tensor, which remembers nothing of "
        "how they were computed: the loss has no grad_fn. Computing with the tensors themselves "
        f"({new}) keeps the graph back to the weights.",
        edit_text(source.code, source.start(node), source.end(node), new),
    )


def grad_mode_fix(failure: Failure) -> Fix | None:
    """The ``torch.set_grad_enabled(False)`` left on before the backward, removed."""
    if not _applies(failure):
        return None
    source = failure.source
    for stmt in ast.walk(source.tree):
        if (
            isinstance(stmt, ast.Expr)
            and _method_name(stmt.value) == "set_grad_enabled"
            and stmt.lineno < failure.info.call.line
            and stmt.value.args  # type: ignore[attr-defined]
            and source.segment(stmt.value.args[0]) == "False"  # type: ignore[attr-defined]
        ):
            start, end = statement_lines(source, stmt)
            return Fix(
                f"without set_grad_enabled(False) on line {stmt.lineno}",
                f"Line {stmt.lineno} switches gradient recording off for everything after it, so the "
                "loss is computed without a graph. Without that line the graph is recorded.",
                edit_text(source.code, start, end, ""),
            )
    return None


def _is_no_grad(item: ast.withitem) -> bool:
    return _method_name(item.context_expr) in ("no_grad", "inference_mode") or (
        isinstance(item.context_expr, ast.Attribute) and item.context_expr.attr == "no_grad"
    )


def no_grad_caller_fix(failure: Failure) -> Fix | None:
    """The ``with torch.no_grad():`` (or ``inference_mode()``) around a call of the function that
    runs the backward, taken away."""
    if not _applies(failure):
        return None
    source = failure.source
    stmt = failure.call_statement(failure.info)
    functions = {
        f.name
        for f in ast.walk(source.tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(s is stmt for s in ast.walk(f))
    }
    for block in ast.walk(source.tree):
        if not isinstance(block, ast.With) or len(block.items) != 1 or not _is_no_grad(block.items[0]):
            continue
        if any(_method_name(n) in functions for n in ast.walk(block)):
            header = source.segment(block.items[0].context_expr)
            return Fix(
                f"call it outside {header}",
                f"Line {block.lineno} runs its block under {header}, and the backward on line "
                f"{stmt.lineno} runs inside it (through {', '.join(sorted(functions))}): nothing there "
                "records a graph. Without that block the graph is recorded.",
                unwrap_block(source, block),
            )
    return None


def requires_grad_fix(failure: Failure) -> Fix | None:
    """``requires_grad=True`` on the tensor made from nothing that the loss is computed from."""
    if not _applies(failure):
        return None
    source = failure.source
    for stmt in sorted(_chain(failure), key=lambda s: s.lineno):
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if (
            isinstance(stmt, ast.Assign)
            and _method_name(value) in _FACTORIES
            and isinstance(value, ast.Call)
            and not any(k.arg == "requires_grad" for k in value.keywords)
        ):
            close = source.end(value) - 1
            inside = source.code[source.start(value) : close].rstrip()
            comma = "" if inside.endswith("(") else ", "
            name = source.segment(stmt.targets[0])
            return Fix(
                f"requires_grad=True where {name} is made (line {stmt.lineno})",
                f"{name} (line {stmt.lineno}) is made without requires_grad, so nothing computed from "
                f"it has a graph. If {name} is what should learn, it must require grad from the start.",
                edit_text(source.code, close, close, f"{comma}requires_grad=True"),
            )
    return None


CUT_MAKERS: tuple[Callable[[Failure], Fix | None], ...] = (
    without_data_fix,
    tensors_kept_fix,
    grad_mode_fix,
    no_grad_caller_fix,
    requires_grad_fix,
)
