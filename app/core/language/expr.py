"""The scenario language: a small, whitelisted subset of Python over PyTorch.

Source text is parsed with :mod:`ast` and walked by :class:`Evaluator`; it is
never handed to ``eval`` or ``exec``. Parsing checks the shape of the code
(:func:`parse`); evaluation checks what each name and attribute resolves to,
and :class:`SizeGuard` checks what every operation will cost before it runs
(see NOTE [size guard] in ``guard.py``).

>>> from app.core.language.expr import parse, Evaluator
>>> tree = parse("torch.ones(2) * 3", field="demo", mode="eval")
>>> Evaluator({}, field="demo").evaluate(tree).tolist()
[3.0, 3.0]
>>> huge = parse("torch.ones(10**12)", field="demo", mode="eval")
>>> try:
...     Evaluator({}, field="demo").evaluate(huge)
... except ScenarioError as exc:
...     print(exc.where(), "|", exc.message)
demo, line 1, column 1 | this would make a tensor of 1,000,000,000,000 elements; the limit is 10,000,000

The language is spread over a few modules; this one walks checked trees and
gathers the public names the rest of the program imports:
- ``limits.py``: :class:`Limits`, :class:`Budget` and the fixed bounds;
- ``positions.py``: lines and columns in characters;
- ``grammar.py``: allowed syntax, operators, and the words of refusals;
- ``parsing.py``: :func:`parse` and the static checks;
- ``python_values.py``: bounds on lists, text and integers;
- ``guard.py``: :class:`SizeGuard`, with ``op_costs.py``, ``op_bounds.py``
  and ``aten_calls.py`` for what one ATen operation would cost.
"""

from __future__ import annotations

import ast
import difflib
import operator
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from app.core.language.grammar import BINOPS, COMPARE, INPLACE, UNARY, attribute_refusal, missing_member
from app.core.language.limits import (
    MAX_DEPTH,
    MAX_INT_BITS,
    MAX_NESTING,
    MAX_PIECES,
    MAX_SEQUENCE,
    MAX_SOURCE_CHARS,
    MAX_TEXT,
    Budget,
    Limits,
    budget_message,
    timeout_message,
)
from app.core.language.parsing import SOURCE_ATTR, Mode, assigned_names, free_names, parse
from app.core.language.positions import error_at, node_position
from app.core.language.python_values import PySizes, kind, python_arith_refusal
from app.core.language.whitelist import (
    DENIED_TENSOR_ATTRS,
    Namespace,
    SafeBuiltin,
    build_namespaces,
    result_fields,
)
from app.core.model.errors import RecordingTimeout, ScenarioError
from app.core.pacing import pace
from app.core.sizing.guard import SizeGuard, guarded_call, oversized_tensor

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_NESTING",
    "MAX_PIECES",
    "MAX_SEQUENCE",
    "MAX_SOURCE_CHARS",
    "MAX_TEXT",
    "Budget",
    "Evaluator",
    "Limits",
    "Mode",
    "SizeGuard",
    "assigned_names",
    "free_names",
    "node_position",
    "parse",
    "read_public_attribute",
]

ValueHook = Callable[[ast.AST, Any], None]


class Evaluator:
    """Walks checked trees over an environment of names.

    ``on_value`` is told of every tensor an expression node produces, so a
    recorder can label graph nodes with the source text that made them.
    ``budget`` counts the elements allocated; pass one :class:`Budget` to all
    the evaluators of a recording so the limit holds for the whole of it.
    Warnings PyTorch gives while evaluating are kept in ``warnings``.
    """

    def __init__(
        self,
        env: dict[str, Any],
        *,
        field: str,
        limits: Limits | None = None,
        deadline: float | None = None,
        on_value: ValueHook | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.env = env  # assignments land here, so the caller sees them
        self.builtins = build_namespaces()
        self.field = field
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_value = on_value
        self.budget = budget or Budget(self.limits.max_total_elements)
        self.warnings: list[str] = []
        self._source: str | None = None
        self._sizes = PySizes()

    # -- entry points -------------------------------------------------
    def evaluate(self, tree: ast.AST) -> Any:
        if not isinstance(tree, ast.Expression):
            raise ScenarioError("expected a single expression", field=self.field)
        self._source = getattr(tree, SOURCE_ATTR, None)
        return self._eval(tree.body)

    def run(self, tree: ast.AST) -> None:
        if not isinstance(tree, ast.Module):
            raise ScenarioError("expected statements", field=self.field)
        self._source = getattr(tree, SOURCE_ATTR, None)
        for statement in tree.body:
            self._exec(statement)

    def _error(self, message: str, node: ast.AST) -> ScenarioError:
        return error_at(message, self.field, node, self._source)

    # -- statements ---------------------------------------------------
    def _exec(self, node: ast.stmt) -> None:
        self._tick(node)
        if isinstance(node, ast.Assign):
            value = self._eval(node.value)
            for target in node.targets:
                self._assign(target, value, node)
        elif isinstance(node, ast.AugAssign):
            self._augassign(node)
        elif isinstance(node, ast.Expr):
            self._eval(node.value)
        else:  # pragma: no cover - the static checks refuse everything else
            raise self._error(f"{type(node).__name__} is not allowed", node)

    def _augassign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):  # pragma: no cover - refused by the static checks
            raise self._error("only a plain name can be updated with an operator like +=", node)
        current = self._lookup(node.target)
        value = self._eval(node.value)
        if isinstance(current, torch.Tensor):  # in place, as in Python: the version counter moves
            result = self._apply(INPLACE[type(node.op)], [current, value], {}, node)
        else:  # numbers, lists, text: a new value, under the same bounds as a plain operator
            result = self._python_binop(node.op, current, value, node)
        self._assign(node.target, result, node)

    def _assign(self, target: ast.expr, value: Any, statement: ast.stmt) -> None:
        if isinstance(target, ast.Tuple):
            values = self._unpack(value, len(target.elts), target)
            for elt, item in zip(target.elts, values, strict=True):
                self._assign(elt, item, statement)
            return
        if not isinstance(target, ast.Name):  # pragma: no cover - refused by the static checks
            raise self._error("only plain names can be assigned", target)
        if target.id in self.builtins:
            raise self._error(f"'{target.id}' is a built-in name and cannot be assigned", target)
        self.env[target.id] = value
        if self.on_value is not None and isinstance(value, torch.Tensor):
            self.on_value(statement, value)

    def _unpack(self, value: Any, count: int, node: ast.AST) -> list[Any]:
        items: list[Any] | None = None
        if isinstance(value, torch.Tensor):
            if value.dim() > 0 and len(value) == count:
                items = list(self._apply(torch.Tensor.unbind, [value, 0], {}, node))
        elif isinstance(value, (list, tuple)) and len(value) == count:
            items = list(value)
        if items is None:
            raise self._error(f"cannot unpack this value into {count} names", node)
        return items

    # -- expressions --------------------------------------------------
    def _eval(self, node: ast.expr) -> Any:
        self._tick(node)
        value = self._eval_node(node)
        if self.on_value is not None and isinstance(value, torch.Tensor):
            self.on_value(node, value)
        return value

    def _eval_node(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self._lookup(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._sequence(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.UnaryOp):
            return self._apply(UNARY[type(node.op)], [self._eval(node.operand)], {}, node)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.IfExp):
            return self._eval(node.body) if self._truth(node.test) else self._eval(node.orelse)
        if isinstance(node, ast.Subscript):
            owner, index = self._eval(node.value), self._index(node.slice)
            return self._apply(operator.getitem, [owner, index], {}, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        raise self._error(f"{type(node).__name__} is not part of the scenario language", node)

    def _constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bytes) or (isinstance(node.value, str) and len(node.value) > MAX_TEXT):
            raise self._error(f"text constants are limited to {MAX_TEXT:,} characters", node)
        return node.value

    def _lookup(self, node: ast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        try:
            return self.builtins[node.id]
        except KeyError:
            raise self._error(f"name '{node.id}' is not defined", node) from None

    def _sequence(self, node: ast.List | ast.Tuple) -> Any:
        items = [self._eval(e) for e in node.elts]
        value = items if isinstance(node, ast.List) else tuple(items)
        self._check_python_value(value, node)
        return value

    def _index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*(None if p is None else self._eval(p) for p in parts))
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e) for e in node.elts)
        return self._eval(node)

    def _truth(self, node: ast.expr) -> bool:
        return self._truth_of(self._eval(node), node)

    def _truth_of(self, value: Any, node: ast.AST) -> bool:
        return bool(self._apply(bool, [value], {}, node))

    def _boolop(self, node: ast.BoolOp) -> Any:
        want = isinstance(node.op, ast.Or)
        value: Any = None
        for operand in node.values:
            value = self._eval(operand)
            if self._truth_of(value, operand) == want:
                return value
        return value

    def _compare(self, node: ast.Compare) -> Any:
        left = self._eval(node.left)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self._eval(right_node)
            result = self._apply(COMPARE[type(op)], [left, right], {}, node)
            if len(node.ops) > 1 and not self._truth_of(result, node):
                return result
            left = right
        return result

    def _binop(self, node: ast.BinOp) -> Any:
        left, right = self._eval(node.left), self._eval(node.right)
        return self._python_binop(node.op, left, right, node)

    def _python_binop(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any:
        refusal = python_arith_refusal(op, left, right, self._sizes)
        if refusal is not None:
            raise self._error(refusal, node)
        result = self._apply(BINOPS[type(op)], [left, right], {}, node)
        return result

    def _attribute(self, node: ast.Attribute) -> Any:
        owner = self._eval(node.value)
        if isinstance(owner, Namespace):
            member = self._member(owner, node)
            if callable(member) and not isinstance(member, (Namespace, torch.dtype)):
                raise self._error(f"{owner.path}.{node.attr} is a function: call it", node)
            return member
        if isinstance(owner, torch.Tensor):
            self._check_tensor_attr(node)
            value = self._apply(_reader(node.attr), [owner], {}, node)
            if callable(value):
                raise self._error(f"'{node.attr}' is a method: call it, as in x.{node.attr}()", node)
            return value
        if node.attr in result_fields(owner):
            return read_public_attribute(owner, node.attr)
        raise self._error(
            f"attributes can only be read from tensors and from torch or F, not from {kind(owner)}", node
        )

    def _member(self, owner: Namespace, node: ast.Attribute) -> Any:
        try:
            return owner.member(node.attr)
        except KeyError:
            raise self._error(missing_member(owner, node.attr), node) from None

    def _check_tensor_attr(self, node: ast.Attribute) -> None:
        refusal = attribute_refusal(node.attr)  # refused statically too; checked again here on purpose
        if refusal is not None:
            raise self._error(refusal, node)
        if not hasattr(torch.Tensor, node.attr):
            close = difflib.get_close_matches(node.attr, _tensor_members(), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self._error(f"tensors have no attribute '{node.attr}'{hint}", node)

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._call_attribute(node, func)
        if isinstance(func, ast.Name):
            fn = self._lookup(func)
            if not isinstance(fn, SafeBuiltin):
                raise self._error(f"'{func.id}' is {kind(fn)}, not a function: it cannot be called", func)
            args, kwargs = self._arguments(node)
            return self._apply(fn.fn, args, kwargs, node)
        raise self._error("only named functions and methods can be called", func)

    def _call_attribute(self, node: ast.Call, func: ast.Attribute) -> Any:
        owner = self._eval(func.value)
        if isinstance(owner, Namespace):
            fn = self._member(owner, func)
            if isinstance(fn, (Namespace, torch.dtype)) or not callable(fn):
                raise self._error(f"{owner.path}.{func.attr} is not a function", func)
            args, kwargs = self._arguments(node)
            return self._apply(fn, args, kwargs, node)
        if isinstance(owner, torch.Tensor):
            self._check_tensor_attr(func)
            if not callable(read_public_attribute(torch.Tensor, func.attr)):
                raise self._error(f"'{func.attr}' is not a method: drop the ()", func)
            if func.attr == "tolist" and owner.numel() > MAX_SEQUENCE:
                raise self._error(f"tolist() is limited to tensors of {MAX_SEQUENCE:,} elements", node)
            args, kwargs = self._arguments(node)
            return self._apply(_method(func.attr), [owner, *args], kwargs, node)
        raise self._error(
            f"methods can only be called on tensors and on torch or F, not on {kind(owner)}", func
        )

    def _arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args = [self._eval(a) for a in node.args]
        kwargs = {k.arg: self._eval(k.value) for k in node.keywords if k.arg is not None}
        return args, kwargs

    # -- guarded application -----------------------------------------
    def _apply(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        """Call ``fn`` under a :class:`SizeGuard`; turn every failure into a :class:`ScenarioError`."""
        self._check_arguments(args, kwargs, node)
        try:
            result, caught = guarded_call(
                fn, args, kwargs, limits=self.limits, budget=self.budget, deadline=self.deadline
            )
        except ScenarioError as exc:
            raise self._located(exc, node) from None
        self._note_warnings(caught, node)
        self._check_result(result, node)
        return result

    def _located(self, exc: ScenarioError, node: ast.AST) -> ScenarioError:
        if exc.field is not None and exc.line is not None:
            return exc
        line, col = node_position(self._source, node)
        return type(exc)(exc.message, field=self.field, line=line, col=col)

    def _note_warnings(self, caught: list[warnings.WarningMessage], node: ast.AST) -> None:
        if not caught:  # locating a node reads the text: only do it when there is something to say
            return
        line, col = node_position(self._source, node)
        for item in caught:
            said = " ".join(str(item.message).split())
            text = f"{self.field}, line {line}, column {col}: PyTorch warns: {said}"
            if text not in self.warnings:
                self.warnings.append(text)

    def _check_arguments(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, (list, tuple)):
                self._check_python_value(value, node)

    def _check_python_value(self, value: Any, node: ast.AST) -> None:
        refusal = self._sizes.refusal(value)
        if refusal is not None:
            raise self._error(refusal, node)

    def _check_result(self, value: Any, node: ast.AST) -> None:
        if isinstance(value, (list, tuple, str)) and not isinstance(value, torch.Size):
            self._check_python_value(value, node)
            if not self.budget.charge(len(value)):
                raise self._error(budget_message(self.budget), node)
        refusal = oversized_tensor(value, self.limits)
        if refusal is not None:
            raise self._error(refusal, node)

    def _tick(self, node: ast.AST) -> None:
        pace()  # NOTE [pacing]
        if self.deadline is not None and time.monotonic() > self.deadline:
            line, col = node_position(self._source, node)
            raise RecordingTimeout(timeout_message(self.limits), field=self.field, line=line, col=col)


def read_public_attribute(owner: Any, name: str) -> Any:
    """The one place the language reads an attribute by name.

    Callers check the name first; this checks again, so that no path can
    reach a private or denied member even if a check above is lost.
    """
    if name.startswith("_") or name in DENIED_TENSOR_ATTRS:
        raise ScenarioError(f"'{name}' is not available in scenarios")
    return getattr(owner, name)


def _reader(name: str) -> Callable[[Any], Any]:
    def read(obj: Any) -> Any:
        return read_public_attribute(obj, name)

    read.__name__ = name
    read.__module__ = "torch"
    return read


def _method(name: str) -> Callable[..., Any]:
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return read_public_attribute(obj, name)(*args, **kwargs)

    call.__name__ = name
    call.__module__ = "torch"
    return call


_TENSOR_MEMBERS: list[str] = []


def _tensor_members() -> list[str]:
    if not _TENSOR_MEMBERS:
        _TENSOR_MEMBERS.extend(
            n for n in dir(torch.Tensor) if not n.startswith("_") and n not in DENIED_TENSOR_ATTRS
        )
    return _TENSOR_MEMBERS
