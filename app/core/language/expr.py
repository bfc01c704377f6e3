"""The scenario language: a small, whitelisted subset of Python over PyTorch.

A program is statements (assignment, ``for``, ``if``, ``with torch.no_grad():``,
``del``, imports of torch's modules, ``print``) over tensors, numbers, lists and
checked objects (NOTE [checked objects] in ``objects.py``). Source text is
parsed with :mod:`ast` and walked by :class:`Evaluator`; it is never handed to
``eval`` or ``exec``. Parsing checks the shape of the code (:func:`parse`);
evaluation checks what each name and attribute resolves to, and
:class:`SizeGuard` checks what every operation will cost before it runs (see
NOTE [size guard] in ``guard.py``). Autograd calls, finished statements and
printed text go to the recorder (NOTE [program hooks]).

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
- ``parsing.py``: :func:`parse` and the static checks, imports included;
- ``python_values.py``: bounds on lists, text, integers and ranges;
- ``whitelist.py``: what names and attributes reach, and the builtins;
- ``objects.py``: the proxies' base and the hooks' protocol;
- ``guard.py``: :class:`SizeGuard`, with ``op_costs.py``, ``op_bounds.py``
  and ``aten_calls.py`` for what one ATen operation would cost.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import operator
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from app.core.language.grammar import BINOPS, COMPARE, INPLACE, UNARY, attribute_refusal, missing_member
from app.core.language.hints import with_run_hint
from app.core.language.objects import AutogradEntry, Checked, GradModeEntry, ProgramHooks
from app.core.language.parsing import (
    DATA_ASSIGNMENT,
    SOURCE_ATTR,
    WITH_REFUSAL,
    Mode,
    assigned_names,
    free_names,
    import_bindings,
    parse,
)
from app.core.language.positions import error_at, node_position
from app.core.language.python_values import NOTHING, PySizes, is_iterable, is_lazy, kind, python_arith_refusal
from app.core.language.whitelist import (
    LAZY_BUILTINS,
    Namespace,
    SafeBuiltin,
    build_namespaces,
    denied_attribute,
    format_field,
    result_fields,
    without_addresses,
)
from app.core.model.errors import ProgramError, RecordingTimeout, ScenarioError
from app.core.model.graph import LoopMark
from app.core.sizing.guard import SizeGuard, guarded_call, oversized_tensor
from app.core.sizing.limits import (
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
    loop_message,
    statements_message,
    timeout_message,
)

__all__ = [
    "ASSIGNABLE_TENSOR_ATTRS",
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
    "ProgramHooks",
    "SizeGuard",
    "assigned_names",
    "free_names",
    "node_position",
    "parse",
    "read_public_attribute",
]

ValueHook = Callable[[ast.AST, Any], None]


class _Break(Exception):
    """``break``: leaves the innermost loop."""


class _Continue(Exception):
    """``continue``: goes on with the next item of the innermost loop."""


class _NotListed(ScenarioError):
    """A proxy answered KeyError: the member is not listed (NOTE [checked objects])."""


# A tensor on the meta device has a shape and no values: no step could show its numbers, and
# reading its gradient's values fails inside PyTorch. The program stops where it made one.
META_MESSAGE = (
    "this tensor is on the meta device, which keeps shapes but no values, so there is nothing to "
    "show or to differentiate: make it on the CPU (leave out device='meta')"
)


class Evaluator:
    """Walks checked trees over an environment of names.

    ``on_value`` is told of every tensor an expression node produces, so a
    recorder can label graph nodes with the source text that made them.
    ``budget`` counts the elements allocated; pass one :class:`Budget` to all
    the evaluators of a recording so the limit holds for the whole of it.
    ``hooks`` hears of every autograd call, finished statement and printed
    line (NOTE [program hooks]). Warnings PyTorch gives while evaluating are
    kept in ``warnings``.

    >>> env = {}
    >>> program = "w = torch.ones(2, requires_grad=True)\\nfor i in range(3):\\n    (w * i).sum().backward()"
    >>> Evaluator(env, field="program").run(parse(program, field="program", mode="exec"))
    >>> env["w"].grad.tolist()
    [3.0, 3.0]
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
        hooks: ProgramHooks | None = None,
    ) -> None:
        self.env = env  # assignments land here, so the caller sees them
        self.builtins = build_namespaces()
        self.field = field
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_value = on_value
        self.budget = budget or Budget(self.limits.max_total_elements)
        self.hooks = hooks
        self.warnings: list[str] = []
        self._source: str | None = None
        self._sizes = PySizes()
        self._loops: list[LoopMark] = []  # the loops around the running statement, outermost first
        self._statements = 0

    # -- entry points -------------------------------------------------
    def evaluate(self, tree: ast.AST) -> Any:
        """The value of a single expression (``parse(..., mode="eval")``)."""
        if not isinstance(tree, ast.Expression):
            raise ScenarioError("expected a single expression", field=self.field)
        self._source = getattr(tree, SOURCE_ATTR, None)
        return self._eval(tree.body)

    def run(self, tree: ast.AST) -> None:
        """Run a program (``parse(..., mode="exec")``); the statement count starts again at 0."""
        if not isinstance(tree, ast.Module):
            raise ScenarioError("expected statements", field=self.field)
        self._source = getattr(tree, SOURCE_ATTR, None)
        self._statements = 0
        self._loops = []
        self._block(tree.body)

    def _error(self, message: str, node: ast.AST) -> ScenarioError:
        return error_at(message, self.field, node, self._source)

    # -- statements ---------------------------------------------------
    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self._exec(statement)

    def _exec(self, node: ast.stmt) -> None:
        self._tick(node)
        self._statements += 1
        if self._statements > self.limits.max_statements:
            raise self._error(statements_message(self.limits), node)
        if isinstance(node, ast.For):
            self._for(node)
        elif isinstance(node, ast.If):
            self._block(node.body if self._truth(node.test) else node.orelse)
        elif isinstance(node, ast.With):
            self._with(node)
        elif isinstance(node, (ast.Break, ast.Continue)):
            self._done(node)
            raise _Break if isinstance(node, ast.Break) else _Continue
        else:
            self._simple(node)
            self._done(node)

    def _done(self, node: ast.stmt) -> None:
        if self.hooks is not None:
            self.hooks.statement_done(node, tuple(self._loops))

    def _simple(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            value = self._eval(node.value)
            for target in node.targets:
                self._assign(target, value, node)
        elif isinstance(node, ast.AugAssign):
            self._augassign(node)
        elif isinstance(node, ast.Expr):
            self._eval(node.value)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._delete(target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, value in import_bindings(node, field=self.field, source=self._source):
                if name not in self.builtins:  # the built-in names are bound to these very objects
                    self.env[name] = value
        elif not isinstance(node, ast.Pass):  # pragma: no cover - the static checks refuse everything else
            raise self._error(f"{type(node).__name__} is not allowed", node)

    def _for(self, node: ast.For) -> None:
        iterable = self._eval(node.iter)
        count = self._sizes.length(iterable)
        items = self._iterate(iterable, node.iter)
        line = node.lineno
        self._loops.append(LoopMark(line, 0, count))
        finished = True
        try:
            for index, item in enumerate(items):
                if index >= self.limits.max_iterations:
                    raise self._error(loop_message(self.limits), node)
                self._loops[-1] = LoopMark(line, index, count)
                self._assign(node.target, item, node)
                try:
                    self._block(node.body)
                except _Continue:
                    continue
                except _Break:
                    finished = False
                    break
        finally:
            self._loops.pop()
        if finished:
            self._block(node.orelse)

    def _iterate(self, value: Any, node: ast.expr) -> Iterator[Any]:
        """The items a for loop goes through; a tensor's rows are made at once, under the guard."""
        if isinstance(value, (Namespace, SafeBuiltin)) or (
            isinstance(value, Checked) and not is_iterable(value)
        ):
            raise self._error(f"a for loop cannot go over {kind(value)}", node)
        iterator = self._apply(iter, [value], {}, node, lazy=True)
        self._sizes.forget_lazy(value)
        return self._items(iterator, node)

    def _items(self, iterator: Iterator[Any], node: ast.expr) -> Iterator[Any]:
        while True:
            try:
                item = next(iterator)
            except StopIteration:
                return
            except Exception as exc:  # zip(a, b, strict=True) on lists of different lengths
                raise self._located(ProgramError(f"Python says: {_first_line(exc)}"), node) from None
            yield item

    def _with(self, node: ast.With) -> None:
        with contextlib.ExitStack() as stack:
            for item in node.items:
                mode = self._grad_mode(item.context_expr)
                stack.enter_context(torch.enable_grad() if mode.enabled else torch.no_grad())
            self._block(node.body)

    def _grad_mode(self, node: ast.expr) -> GradModeEntry:
        func = node.func if isinstance(node, ast.Call) else node
        value: Any = None
        if isinstance(func, ast.Name):
            value = self._lookup(func)
        elif isinstance(func, ast.Attribute):
            owner = self._eval(func.value)
            value = self._member(owner, func) if isinstance(owner, Namespace) else None
        if not isinstance(value, GradModeEntry):
            raise self._error(WITH_REFUSAL, node)
        return value

    def _augassign(self, node: ast.AugAssign) -> None:
        """``a op= v`` in Python's order: read the target, update (in place for tensors), store back."""
        target = node.target
        if isinstance(target, ast.Name):
            current = self._lookup(target)
            self._assign(target, self._update(node, current), node)
        elif isinstance(target, ast.Subscript):
            owner, index = self._eval(target.value), self._index(target.slice)
            current = self._apply(operator.getitem, [owner, index], {}, target)
            self._set_item(owner, index, self._update(node, current), target)
        elif isinstance(target, ast.Attribute):
            owner = self._eval(target.value)
            current = self._read_attribute(owner, target)
            result = self._update(node, current)
            if not (isinstance(owner, Checked) and result is current):  # w -= ... on lin.weight: in place
                self._set_attribute(owner, target, result)
        else:  # pragma: no cover - refused by the static checks
            raise self._error("this cannot be updated with an operator like +=", node)

    def _update(self, node: ast.AugAssign, current: Any) -> Any:
        value = self._eval(node.value)
        if isinstance(current, torch.Tensor):  # in place, as in Python: the version counter moves
            return self._apply(INPLACE[type(node.op)], [current, value], {}, node)
        return self._python_binop(node.op, current, value, node)  # numbers, lists, text: a new value

    def _assign(self, target: ast.expr, value: Any, statement: ast.stmt) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            values = self._unpack(value, len(target.elts), target)
            for elt, item in zip(target.elts, values, strict=True):
                self._assign(elt, item, statement)
        elif isinstance(target, ast.Subscript):
            owner, index = self._eval(target.value), self._index(target.slice)
            self._set_item(owner, index, value, target)
        elif isinstance(target, ast.Attribute):
            self._set_attribute(self._eval(target.value), target, value)
        elif isinstance(target, ast.Name):
            if target.id in self.builtins:
                raise self._error(f"'{target.id}' is a built-in name and cannot be assigned", target)
            self.env[target.id] = value
            if self.on_value is not None and isinstance(value, torch.Tensor):
                self.on_value(statement, value)
        else:  # pragma: no cover - refused by the static checks
            raise self._error("this cannot be assigned", target)

    def _set_item(self, owner: Any, index: Any, value: Any, node: ast.AST) -> None:
        if isinstance(owner, torch.Tensor):
            self._apply(operator.setitem, [owner, index, value], {}, node)
        elif isinstance(owner, list):
            if not isinstance(index, int) or isinstance(index, bool):
                raise self._error("list items are assigned one at a time: a[0] = value", node)
            removed = self._apply(operator.getitem, [owner, index], {}, node)
            self._refuse_growth(owner, value, removed, node)
            owner[index] = value
            self._sizes.changed(owner, value, removed)
        else:
            raise self._error(f"items can be assigned in tensors and lists, not in {kind(owner)}", node)

    def _set_attribute(self, owner: Any, node: ast.Attribute, value: Any) -> None:
        name = node.attr
        refusal = attribute_refusal(name)
        if refusal is not None:
            raise self._error(refusal, node)
        if isinstance(owner, Checked):
            try:
                self._ask(owner.set_attribute, [name, value], node)
            except _NotListed:
                raise self._error(f"'{name}' cannot be assigned on {owner.kind}", node) from None
        elif isinstance(owner, torch.Tensor):
            if name not in ASSIGNABLE_TENSOR_ATTRS:
                message = DATA_ASSIGNMENT if name == "data" else _TENSOR_ASSIGNMENT.format(name=name)
                raise self._error(message, node)
            self._apply(_writer(name), [owner, value], {}, node)
        else:
            raise self._error(f"attributes cannot be assigned on {kind(owner)}", node)

    def _delete(self, target: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._delete(element)
        elif isinstance(target, ast.Name):
            if target.id in self.env:
                del self.env[target.id]
            elif target.id in self.builtins:
                raise self._error(f"'{target.id}' is a built-in name and cannot be deleted", target)
            else:
                raise self._error(f"name '{target.id}' is not defined", target)
        elif isinstance(target, ast.Subscript):
            owner, index = self._eval(target.value), self._index(target.slice)
            if not isinstance(owner, list):
                raise self._error(f"items can be deleted from lists only, not from {kind(owner)}", target)
            removed = self._apply(operator.getitem, [owner, index], {}, target)
            self._apply(operator.delitem, [owner, index], {}, target)
            self._sizes.changed(owner, removed=removed)
        else:  # pragma: no cover - refused by the static checks
            raise self._error("this cannot be deleted", target)

    def _unpack(self, value: Any, count: int, node: ast.AST) -> list[Any]:
        items: list[Any] | None = None
        if isinstance(value, torch.Tensor):
            if value.dim() > 0 and len(value) == count:
                items = list(self._apply(torch.Tensor.unbind, [value, 0], {}, node))
        elif isinstance(value, (list, tuple, range)) and self._sizes.length(value) == count:
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
            return self._value_of_name(node)
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
            if isinstance(owner, _OBJECTS):
                raise self._error(f"{kind(owner)} has no items to take with [...]", node)
            return self._apply(operator.getitem, [owner, index], {}, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        raise self._error(f"{type(node).__name__} is not part of the checked language", node)

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

    def _fstring(self, node: ast.JoinedStr) -> str:
        pieces: list[str] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = self._eval(part.value)
                spec = _written_text(part.format_spec) if part.format_spec is not None else ""
                pieces.append(self._apply(format_field, [value, part.conversion, spec], {}, part))
            else:
                pieces.append(_written_text(part))
        text = "".join(pieces)
        self._check_python_value(text, node)
        return text

    def _value_of_name(self, node: ast.Name) -> Any:
        value = self._lookup(node)
        if isinstance(value, AutogradEntry):
            raise self._error(f"'{node.id}' is a function: call it", node)
        if isinstance(value, GradModeEntry):
            raise self._error(f"'{node.id}' is used as with {node.id}():", node)
        return value

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
        for value in (left, right):
            if isinstance(value, _OBJECTS):
                raise self._error(f"{kind(value)} cannot be used with an operator", node)
        return self._apply(BINOPS[type(op)], [left, right], {}, node)

    def _attribute(self, node: ast.Attribute) -> Any:
        return self._read_attribute(self._eval(node.value), node)

    def _read_attribute(self, owner: Any, node: ast.Attribute) -> Any:
        if isinstance(owner, Namespace):
            member = self._member(owner, node)
            if isinstance(member, GradModeEntry):
                raise self._error(
                    f"{owner.path}.{node.attr} is used as with {owner.path}.{node.attr}():", node
                )
            if isinstance(member, AutogradEntry) or (
                callable(member) and not isinstance(member, (Namespace, torch.dtype))
            ):
                raise self._error(f"{owner.path}.{node.attr} is a function: call it", node)
            return member
        if isinstance(owner, torch.Tensor):
            self._check_tensor_attr(node)
            value = self._apply(_reader(node.attr), [owner], {}, node)
            if callable(value):
                raise self._error(f"'{node.attr}' is a method: call it, as in x.{node.attr}()", node)
            return value
        if isinstance(owner, Checked):
            return self._checked_attribute(owner, node)
        if node.attr in result_fields(owner):
            return read_public_attribute(owner, node.attr)
        if isinstance(owner, list) and node.attr == "append":
            raise self._error("'append' is a method: call it, as in losses.append(loss)", node)
        raise self._error(f"attributes can only be read from {_HAS_MEMBERS}, not from {kind(owner)}", node)

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

    # -- checked objects (NOTE [checked objects]) ----------------------
    def _checked_attribute(self, owner: Checked, node: ast.Attribute) -> Any:
        self._refuse_private(node)
        try:
            value = self._ask(owner.get_attribute, [node.attr], node)
        except _NotListed:
            if self._lists_method(owner, node.attr):
                raise self._error(f"'{node.attr}' is a method: call it, as in {node.attr}()", node) from None
            raise self._error(_not_listed(owner, node.attr), node) from None
        if callable(value) and not isinstance(value, Checked):
            raise self._error(f"'{node.attr}' is a method: call it, as in {node.attr}()", node)
        return value

    def _checked_call(self, owner: Checked, node: ast.Call, func: ast.Attribute) -> Any:
        self._refuse_private(func)
        try:
            method = self._ask(owner.method, [func.attr], func)
        except _NotListed:
            method = self._listed_callable_attribute(owner, func)
        args, kwargs = self._arguments(node)
        return self._apply(method, args, kwargs, node)

    def _listed_callable_attribute(self, owner: Checked, func: ast.Attribute) -> Callable[..., Any]:
        """``model.fc(x)``: an attribute that is itself a module, called."""
        try:
            value = self._ask(owner.get_attribute, [func.attr], func)
        except _NotListed:
            raise self._error(_not_listed(owner, func.attr), func) from None
        if not isinstance(value, Checked):
            raise self._error(f"'{func.attr}' is not a method: drop the ()", func)
        return value.call

    def _lists_method(self, owner: Checked, name: str) -> bool:
        try:
            owner.method(name)
        except KeyError:
            return False
        return True

    def _ask(self, fn: Callable[..., Any], args: list[Any], node: ast.AST) -> Any:
        """Ask a proxy under the guard; its KeyError (not listed) becomes :class:`_NotListed`."""

        def ask(*values: Any) -> Any:
            try:
                return fn(*values)
            except KeyError:
                raise _NotListed("not listed") from None

        ask.__module__ = "torch"  # its errors are PyTorch's: the proxies hold torch objects
        return self._apply(ask, args, {}, node)

    def _refuse_private(self, node: ast.Attribute) -> None:
        """Private names never reach a proxy (refused statically too; checked again on purpose)."""
        refusal = attribute_refusal(node.attr)
        if refusal is not None:
            raise self._error(refusal, node)

    # -- calls ----------------------------------------------------------
    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._call_attribute(node, func)
        if not isinstance(func, ast.Name):
            raise self._error("only named functions and methods can be called", func)
        fn = self._lookup(func)
        if isinstance(fn, SafeBuiltin):
            return self._call_builtin(fn, node)
        if isinstance(fn, AutogradEntry):
            return self._autograd(fn, [], node)
        if isinstance(fn, GradModeEntry):
            raise self._error(f"{func.id}() is used only as with {func.id}():", node)
        if isinstance(fn, Checked):
            args, kwargs = self._arguments(node)
            return self._apply(fn.call, args, kwargs, node)
        raise self._error(f"'{func.id}' is {kind(fn)}, not a function: it cannot be called", func)

    def _call_attribute(self, node: ast.Call, func: ast.Attribute) -> Any:
        owner = self._eval(func.value)
        if isinstance(owner, Namespace):
            fn = self._member(owner, func)
            if isinstance(fn, AutogradEntry):
                return self._autograd(fn, [], node)
            if isinstance(fn, GradModeEntry):
                raise self._error(
                    f"{owner.path}.{func.attr}() is used only as with {owner.path}.{func.attr}():", node
                )
            if isinstance(fn, (Namespace, torch.dtype)) or not callable(fn):
                raise self._error(f"{owner.path}.{func.attr} is not a function", func)
            args, kwargs = self._arguments(node)
            return self._apply(fn, args, kwargs, node)
        if isinstance(owner, torch.Tensor):
            return self._tensor_method(owner, node, func)
        if isinstance(owner, Checked):
            return self._checked_call(owner, node, func)
        if isinstance(owner, list) and func.attr == "append":
            return self._append(owner, node)
        if isinstance(owner, list):
            raise self._error("the one list method in programs is append(...)", func)
        raise self._error(f"methods can only be called on {_HAS_MEMBERS}, not on {kind(owner)}", func)

    def _tensor_method(self, owner: torch.Tensor, node: ast.Call, func: ast.Attribute) -> Any:
        self._check_tensor_attr(func)
        if not callable(read_public_attribute(torch.Tensor, func.attr)):
            raise self._error(f"'{func.attr}' is not a method: drop the ()", func)
        if func.attr == "backward":
            return self._autograd(_TENSOR_BACKWARD, [owner], node)
        if func.attr == "tolist" and owner.numel() > MAX_SEQUENCE:
            raise self._error(f"tolist() is limited to tensors of {MAX_SEQUENCE:,} elements", node)
        args, kwargs = self._arguments(node)
        return self._apply(_method(func.attr), [owner, *args], kwargs, node)

    def _call_builtin(self, fn: SafeBuiltin, node: ast.Call) -> Any:
        args, kwargs = self._arguments(node)
        result = self._apply(fn.fn, args, kwargs, node, lazy=fn.name in LAZY_BUILTINS)
        if fn.name == "print":  # NOTE [program hooks]: the text goes to the recorder, nowhere else
            if self.hooks is not None:
                self.hooks.printed(result)
            return None
        if fn.name == "enumerate":
            self._sizes.note_lazy(result, self._sizes.length(args[0]) if args else None)
        elif fn.name == "zip":
            lengths = [self._sizes.length(a) for a in args]
            known = [n for n in lengths if n is not None]
            self._sizes.note_lazy(result, min(known, default=0) if len(known) == len(lengths) else None)
        return result

    def _append(self, owner: list[Any], node: ast.Call) -> None:
        args, kwargs = self._arguments(node)
        if kwargs or len(args) != 1:
            raise self._located(ProgramError("Python says: append() takes exactly one argument"), node)
        self._refuse_growth(owner, args[0], NOTHING, node)
        if not self.budget.charge(1):
            raise self._error(budget_message(self.budget), node)
        owner.append(args[0])
        self._sizes.changed(owner, args[0])

    def _refuse_growth(self, owner: list[Any], item: Any, removed: Any, node: ast.AST) -> None:
        refusal = self._sizes.refusal_to_add(owner, item, removed)
        if refusal is not None:
            raise self._error(refusal, node)

    def _arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args = [self._eval(a) for a in node.args]
        kwargs = {k.arg: self._eval(k.value) for k in node.keywords if k.arg is not None}
        return args, kwargs

    # -- autograd calls (NOTE [program hooks]) ---------------------------
    def _autograd(self, entry: AutogradEntry, leading: list[Any], node: ast.Call) -> Any:
        """``loss.backward(...)``, ``torch.autograd.backward(...)``, ``torch.autograd.grad(...)``.

        Not under the size guard (a backward pass allocates what the forward
        pass already sized); the recorder, when there is one, runs it.
        """
        args, kwargs = self._arguments(node)
        args = [*leading, *args]
        self._check_arguments(args, kwargs, node, lazy=False)

        def run() -> Any:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = entry.fn(*args, **kwargs)
            self._note_warnings(caught, node)
            return result

        if self.hooks is None:
            try:
                return run()
            except ScenarioError as exc:
                raise self._located(exc, node) from None
            except Exception as exc:
                raise self._located(ProgramError(f"PyTorch says: {_first_line(exc)}"), node) from None
        try:
            return self.hooks.autograd_call(entry.kind, run, node, dict(kwargs), tuple(self._loops))
        except ScenarioError as exc:
            raise self._located(exc, node) from None

    # -- guarded application -----------------------------------------
    def _apply(
        self,
        fn: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.AST,
        *,
        lazy: bool = False,
    ) -> Any:
        """Call ``fn`` under a :class:`SizeGuard`; turn every failure into a :class:`ScenarioError`.

        ``lazy``: ``fn`` takes a range, zip or enumerate one item at a time (or not at
        all); otherwise it would make all their items at once, so their length is checked.
        """
        self._check_arguments(args, kwargs, node, lazy=lazy)
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

    def _check_arguments(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST, *, lazy: bool) -> None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, (list, tuple)):
                self._check_python_value(value, node)
            elif not lazy and (isinstance(value, range) or is_lazy(value)):
                self._check_lazy(value, node)

    def _check_lazy(self, value: Any, node: ast.AST) -> None:
        """``list(range(10**9))``, ``sum(range(10**12))``: refused before Python makes the items."""
        length = self._sizes.length(value)
        if length is None:
            raise self._error(
                "this zip(...) or enumerate(...) cannot be sized before it runs: loop over it with for", node
            )
        if length > MAX_SEQUENCE:
            raise self._error(
                f"this would go through {length:,} items at once; the limit is {MAX_SEQUENCE:,}", node
            )

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
        if isinstance(value, torch.Tensor) and value.is_meta:  # a program error, not a refusal: it ran
            raise self._located(ProgramError(META_MESSAGE), node)

    def _tick(self, node: ast.AST) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            line, col = node_position(self._source, node)
            raise RecordingTimeout(timeout_message(self.limits), field=self.field, line=line, col=col)


def read_public_attribute(owner: Any, name: str) -> Any:
    """The one place the language reads an attribute by name.

    Callers check the name first; this checks again, so that no path can
    reach a private or denied member even if a check above is lost.
    """
    if name.startswith("_") or denied_attribute(name) is not None:
        raise ScenarioError(f"'{name}' is not available in programs")
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


def _writer(name: str) -> Callable[[Any, Any], None]:
    def write(obj: Any, value: Any) -> None:
        if name not in ASSIGNABLE_TENSOR_ATTRS:  # checked by the caller; checked again on purpose
            raise ScenarioError(_TENSOR_ASSIGNMENT.format(name=name))
        setattr(obj, name, value)

    write.__name__ = name
    write.__module__ = "torch"
    return write


def _written_text(node: ast.expr) -> str:
    """The text of an f-string's constant part or format spec (parsing allows nothing else there)."""
    parts = node.values if isinstance(node, ast.JoinedStr) else [node]
    return "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))


def _not_listed(owner: Checked, name: str) -> str:
    close = difflib.get_close_matches(name, owner.members(), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return with_run_hint(f"'{name}' is not available on {owner.kind}{hint}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return without_addresses(text.splitlines()[0])  # NOTE [no addresses in a recording]


ASSIGNABLE_TENSOR_ATTRS = frozenset(["grad", "requires_grad"])
_TENSOR_ASSIGNMENT = "on a tensor only .grad and .requires_grad can be assigned, not .{name}"
_HAS_MEMBERS = "tensors, nn modules, optimizers, torch and F"
_OBJECTS = (Checked, Namespace, SafeBuiltin)  # values that stand for something: no items, no arithmetic
_TENSOR_BACKWARD = AutogradEntry("backward", torch.Tensor.backward)
_TENSOR_MEMBERS: list[str] = []


def _tensor_members() -> list[str]:
    if not _TENSOR_MEMBERS:
        _TENSOR_MEMBERS.extend(
            n for n in dir(torch.Tensor) if not n.startswith("_") and denied_attribute(n) is None
        )
    return _TENSOR_MEMBERS
