"""What each expression of a program is worth: one method per kind of expression.

Every value an expression gives that is a tensor is reported to ``on_value``
(the recorder labels graph nodes with the text that made them). Operators go
through the size guard like any call; plain-Python arithmetic is sized first
(``python_values.py``), since the guard never sees it.
"""

from __future__ import annotations

import ast
import contextlib
import operator
from collections.abc import Callable
from typing import Any

import torch

from app.core.language.evaluation import Evaluation
from app.core.language.generators import drawn
from app.core.language.grammar import BINOPS, COMPARE, UNARY
from app.core.language.instances import ContainerProxy, ProgramModuleProxy, ProgramObject
from app.core.language.objects import AutogradEntry, Checked, GradModeEntry
from app.core.language.optimizer_proxies import ParamGroupProxy
from app.core.language.python_identity import IDENTITY
from app.core.language.python_methods import percent_text
from app.core.language.python_values import kind, python_arith_refusal
from app.core.language.raised import raised_error
from app.core.language.safe_builtins import SafeBuiltin, format_field
from app.core.language.scopes import MISSING, Scope, UnboundName
from app.core.language.whitelist import Namespace
from app.core.sizing.limits import MAX_SEQUENCE, MAX_TEXT, budget_message, loop_message, statements_message

__all__ = ["OBJECTS", "Expressions"]

_NUMBERS = (int, float)  # exactly: a subclass could carry an operator of its own
OBJECTS = (Checked, Namespace, SafeBuiltin)  # values that stand for something: no items, no arithmetic
PROGRAM_OBJECTS = (ProgramObject, ProgramModuleProxy)  # ... except through the methods they define


class Expressions:
    """The expressions part of an :class:`~app.core.language.evaluator.Evaluator`."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev
        self.forms: dict[type[ast.expr], Callable[[Any], Any]] = {
            ast.Constant: self.constant,
            ast.Name: self.value_of_name,
            ast.List: self.sequence,
            ast.Tuple: self.sequence,
            ast.BinOp: self.binop,
            ast.UnaryOp: self.unary,
            ast.BoolOp: self.boolop,
            ast.Compare: self.compare,
            ast.IfExp: self.if_expression,
            ast.Subscript: self.subscript,
            ast.Call: ev.calls.call,
            ast.Attribute: ev.members.attribute,
            ast.JoinedStr: self.fstring,
            ast.Lambda: ev.functions.lambda_expression,
            ast.Yield: ev.functions.yield_expression,
            ast.YieldFrom: ev.functions.yield_expression,
            ast.Dict: self.dictionary,
            ast.Set: self.set_display,
            ast.ListComp: self.comprehension,
            ast.SetComp: self.comprehension,
            ast.DictComp: self.comprehension,
            ast.GeneratorExp: self.comprehension,
        }

    def eval(self, node: ast.expr) -> Any:
        """The value of ``node``, under the deadline; a tensor is reported to ``on_value``."""
        ev = self.ev
        ev.tick(node)
        form = self.forms.get(type(node))
        if form is None:
            raise ev.error(f"{type(node).__name__} is not part of the checked language", node)
        value = form(node)
        if ev.on_value is not None and isinstance(value, torch.Tensor):
            ev.on_value(node, value)
        return value

    # -- names and literals --------------------------------------------------
    def constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bytes) or (isinstance(node.value, str) and len(node.value) > MAX_TEXT):
            raise self.ev.error(f"text constants are limited to {MAX_TEXT:,} characters", node)
        return node.value

    def lookup(self, node: ast.Name) -> Any:
        """What a name holds: the function's, the program's own names, then the built-in ones."""
        ev = self.ev
        if ev.scope is not None:  # NOTE [program scopes]
            try:
                value = ev.scope.find(node.id)
            except UnboundName:
                text = f"cannot access local variable '{node.id}' where it is not associated with a value"
                raise ev.located(raised_error(UnboundLocalError, text), node) from None
            if value is not MISSING:
                return value
        if node.id in ev.env:
            return ev.env[node.id]
        try:
            return ev.builtins[node.id]
        except KeyError:
            raise ev.error(f"name '{node.id}' is not defined", node) from None

    def value_of_name(self, node: ast.Name) -> Any:
        value = self.lookup(node)
        if isinstance(value, AutogradEntry):
            raise self.ev.error(f"'{node.id}' is a function: call it", node)
        if isinstance(value, GradModeEntry):
            raise self.ev.error(f"'{node.id}' is used as with {node.id}():", node)
        return value

    def sequence(self, node: ast.List | ast.Tuple) -> Any:
        items = self.items(node.elts)
        value = items if isinstance(node, ast.List) else tuple(items)
        self.ev.check_python_value(value, node)
        return value

    def items(self, nodes: list[ast.expr]) -> list[Any]:
        """The values of a display's items; ``*xs`` gives each item of ``xs``, sized first."""
        items: list[Any] = []
        for node in nodes:
            if isinstance(node, ast.Starred):
                items.extend(self.ev.statements.all_items(self.eval(node.value), node.value))
                self.ev.check_python_value(items, node)
            else:
                items.append(self.eval(node))
        return items

    def dictionary(self, node: ast.Dict) -> dict[Any, Any]:
        ev = self.ev
        value: dict[Any, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:  # {**other}
                other = self.eval(item)
                if not isinstance(other, dict):
                    raise ev.error(f"** unpacks a dict here, not {kind(other)}", item)
                value.update(other)
            else:
                found = self.eval(key)
                value[ev.apply(_hashable, [found], {}, key)] = self.eval(item)
        ev.check_python_value(list(value.values()), node)
        return value

    def set_display(self, node: ast.Set) -> set[Any]:
        items = self.items(node.elts)
        return set(self.ev.apply(_hashable_items, [items], {}, node))

    def comprehension(self, node: Comprehended) -> Any:
        """A comprehension, run at once in a scope of its own; each item is an iteration of a loop."""
        comprehension = Comprehension(self.ev, node)
        made = comprehension.run()
        if isinstance(node, ast.DictComp):
            return dict(made)
        if isinstance(node, ast.SetComp):
            return set(self.ev.apply(_hashable_items, [made], {}, node))
        return (
            made if isinstance(node, ast.ListComp) else drawn(made, comprehension.scope, comprehension.first)
        )

    def fstring(self, node: ast.JoinedStr) -> str:
        pieces: list[str] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = self.eval(part.value)
                spec = written_text(part.format_spec) if part.format_spec is not None else ""
                pieces.append(self.ev.apply(format_field, [value, part.conversion, spec], {}, part))
            else:
                pieces.append(written_text(part))
        text = "".join(pieces)
        self.ev.check_python_value(text, node)
        return text

    # -- items -----------------------------------------------------------------
    def subscript(self, node: ast.Subscript) -> Any:
        owner, index = self.eval(node.value), self.index(node.slice)
        if isinstance(owner, (ContainerProxy, ParamGroupProxy)):  # self.layers[0], group["lr"]
            return self.ev.apply(owner.item, [index], {}, node)
        if isinstance(owner, PROGRAM_OBJECTS):  # dataset[i]: its own __getitem__
            return self.ev.classes.special(owner, "__getitem__", [index], node)
        if isinstance(owner, OBJECTS):
            raise self.ev.error(f"{kind(owner)} has no items to take with [...]", node)
        return self.ev.apply(operator.getitem, [owner, index], {}, node)

    def index(self, node: ast.expr) -> Any:
        """What goes between ``[...]``: a value, a slice, or a tuple of them."""
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*(None if p is None else self.eval(p) for p in parts))
        if isinstance(node, ast.Tuple):
            return tuple(self.index(e) for e in node.elts)
        return self.eval(node)

    # -- truth and comparison ----------------------------------------------------
    def truth(self, node: ast.expr) -> bool:
        """Whether ``node``'s value is true (a one-element tensor too, as Python says)."""
        return self.truth_of(self.eval(node), node)

    def truth_of(self, value: Any, node: ast.AST) -> bool:
        return bool(self.ev.apply(bool, [value], {}, node))

    def if_expression(self, node: ast.IfExp) -> Any:
        return self.eval(node.body) if self.truth(node.test) else self.eval(node.orelse)

    def boolop(self, node: ast.BoolOp) -> Any:
        want = isinstance(node.op, ast.Or)
        value: Any = None
        for operand in node.values:
            value = self.eval(operand)
            if self.truth_of(value, operand) == want:
                return value
        return value

    def compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node)
            compare = IDENTITY.get(type(op), COMPARE[type(op)])  # `is`: python_identity.py
            result = self.ev.apply(compare, [left, right], {}, node)
            if len(node.ops) > 1 and not self.truth_of(result, node):
                return result
            left = right
        return result

    # -- arithmetic ----------------------------------------------------------------
    def unary(self, node: ast.UnaryOp) -> Any:
        return self.ev.apply(UNARY[type(node.op)], [self.eval(node.operand)], {}, node)

    def binop(self, node: ast.BinOp) -> Any:
        left, right = self.eval(node.left), self.eval(node.right)
        return self.python_binop(node.op, left, right, node)

    def python_binop(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any:
        """``left op right``, refused first when plain Python would build something too big."""
        refusal = python_arith_refusal(op, left, right, self.ev.sizes)
        if refusal is not None:
            raise self.ev.error(refusal, node)
        for value in (left, right):
            if isinstance(value, OBJECTS):
                raise self.ev.error(f"{kind(value)} cannot be used with an operator", node)
        if isinstance(op, ast.Mod) and isinstance(left, str):  # "%.3f" % loss (NOTE [python methods])
            return self.ev.apply(percent_text, [left, right], {}, node)
        if type(left) in _NUMBERS and type(right) in _NUMBERS:  # NOTE [element by element] in op_costs.py
            with contextlib.suppress(Exception):  # sized above, and no tensor can come of it
                return BINOPS[type(op)](left, right)
            # the guarded call below raises Python's own error, at its place
        return self.ev.apply(BINOPS[type(op)], [left, right], {}, node)


Comprehended = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp


class Comprehension:
    """One run of a comprehension (NOTE [program scopes]): its loops, counted like for loops."""

    def __init__(
        self, ev: Evaluation, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> None:
        self.ev = ev
        self.node = node
        targets = [n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)]
        outer = ev.scope.function_scope() if ev.scope is not None else None
        self.scope = Scope(frozenset(targets), parent=outer)
        self.made: list[Any] = []
        self.first: Any = None  # what its first loop goes over
        self.iterations = 0

    def run(self) -> list[Any]:
        ev = self.ev
        first = self.first = ev.eval(self.node.generators[0].iter)  # in the enclosing scope, as in Python
        outer = ev.scope
        ev.scope = self.scope
        try:
            self.loop(0, first)
        finally:
            ev.scope = outer
        return self.made

    def loop(self, level: int, iterable: Any) -> None:
        ev = self.ev
        generator = self.node.generators[level]
        for item in ev.statements.iterate(iterable, generator.iter):
            self.iterations += 1
            if self.iterations > ev.limits.max_iterations:
                raise ev.error(loop_message(ev.limits), self.node)
            ev.statement_count += 1  # each item counts as a statement would in a for loop
            if ev.statement_count > ev.limits.max_statements:
                raise ev.error(statements_message(ev.limits), self.node)
            ev.statements.assign(generator.target, item, self.node)
            if not all(ev.expressions.truth(test) for test in generator.ifs):
                continue
            if level + 1 < len(self.node.generators):
                self.loop(level + 1, ev.eval(self.node.generators[level + 1].iter))
            else:
                self.add()

    def add(self) -> None:
        ev = self.ev
        node = self.node
        if isinstance(node, ast.DictComp):
            item: Any = (ev.eval(node.key), ev.eval(node.value))
        else:
            item = ev.eval(node.elt)
        if len(self.made) >= MAX_SEQUENCE:
            raise ev.error(f"a comprehension here makes at most {MAX_SEQUENCE:,} items", node)
        if not ev.budget.charge(1):
            raise ev.error(budget_message(ev.budget), node)
        self.made.append(item)


def _hashable(value: Any) -> Any:
    hash(value)  # a list as a key: Python's own TypeError
    return value


def _hashable_items(values: list[Any]) -> list[Any]:
    for value in values:
        hash(value)
    return values


def written_text(node: ast.expr) -> str:
    """The text of an f-string's constant part or format spec (parsing allows nothing else there)."""
    parts = node.values if isinstance(node, ast.JoinedStr) else [node]
    return "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
