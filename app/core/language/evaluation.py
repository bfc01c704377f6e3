"""The state of one evaluation, and every call made under the size guard.

:class:`Evaluation` is what the parts of the evaluator share: the program's
names, the limits and the budget, the loops around the running statement, and
the one way to call anything (:meth:`Evaluation.apply`, under a
:class:`~app.core.sizing.guard.SizeGuard`). The parts reach each other
through it, by the protocols below: each part is a class of its own module
(``statements.py``, ``expressions.py``, ``calls.py``, ``members.py``) and
:class:`~app.core.language.evaluator.Evaluator` puts them together.
"""

from __future__ import annotations

import ast
import contextlib
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

import torch

from app.core.language.gaps import evaluator_gap
from app.core.language.hints import with_run_hint
from app.core.language.objects import Checked, PrintedText, ProgramHooks
from app.core.language.positions import error_at, node_position
from app.core.language.python_methods import language_names, percent_text
from app.core.language.python_modules import math_members
from app.core.language.python_values import PySizes, is_lazy
from app.core.language.raised import carry_marks
from app.core.language.scopes import Scope
from app.core.language.whitelist import Namespace, build_namespaces
from app.core.model.errors import ProgramError, ProgramRaised, RecordingTimeout
from app.core.model.graph import LoopMark
from app.core.sizing.guard import guarded_call, oversized_tensor
from app.core.sizing.limits import MAX_SEQUENCE, Budget, Limits, budget_message, timeout_message

__all__ = [
    "META_MESSAGE",
    "CallPart",
    "ClassPart",
    "Evaluation",
    "ExpressionPart",
    "FunctionPart",
    "MemberPart",
    "StatementPart",
    "ValueHook",
]

ValueHook = Callable[[ast.AST, Any], None]

# A tensor on the meta device has a shape and no values: no step could show its numbers, and
# reading its gradient's values fails inside PyTorch. The program stops where it made one.
META_MESSAGE = (
    "this tensor is on the meta device, which keeps shapes but no values, so there is nothing to "
    "show or to differentiate: make it on the CPU (leave out device='meta')"
)


# math's functions of numbers, called directly on plain numbers (NOTE [element by element] in
# ``op_costs.py``): they make no tensor, and their work is bounded by their arguments.
_NUMBER_FUNCTIONS = frozenset(id(fn) for fn in math_members().values() if callable(fn))


class StatementPart(Protocol):
    """What the statements part offers the others."""

    def block(self, statements: list[ast.stmt]) -> None: ...
    def done(self, node: ast.stmt) -> None: ...
    def iterate(self, value: Any, node: ast.expr) -> Iterator[Any]: ...
    def all_items(self, value: Any, node: ast.expr, *, loop: bool = False) -> list[Any]: ...
    def assign(self, target: ast.expr, value: Any, statement: ast.AST) -> None: ...


class ExpressionPart(Protocol):
    """What the expressions part offers the others."""

    def eval(self, node: ast.expr) -> Any: ...
    def lookup(self, node: ast.Name) -> Any: ...
    def index(self, node: ast.expr) -> Any: ...
    def truth(self, node: ast.expr) -> bool: ...
    def python_binop(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any: ...
    def items(self, nodes: list[ast.expr]) -> list[Any]: ...


class CallPart(Protocol):
    """What the calls part offers the others."""

    def call(self, node: ast.Call) -> Any: ...
    def arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]: ...
    def checked_call(self, owner: Checked, node: ast.Call, func: ast.Attribute) -> Any: ...
    def call_value_with(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any: ...


class FunctionPart(Protocol):
    """What the functions part offers the others (NOTE [program functions])."""

    depth: int  # calls of program functions under way

    def invoke(self, fn: Any, args: list[Any], kwargs: Mapping[str, Any], node: ast.AST) -> Any: ...
    def define(self, node: ast.FunctionDef) -> Any: ...
    def lambda_expression(self, node: ast.Lambda) -> Any: ...
    def return_statement(self, node: ast.Return) -> None: ...
    def current(self) -> tuple[Any, list[Any]] | None: ...
    def live_scopes(self) -> list[Any]: ...
    def yield_expression(self, node: ast.Yield | ast.YieldFrom) -> None: ...


class ClassPart(Protocol):
    """What the classes part offers the others (NOTE [program classes])."""

    def define(self, node: ast.ClassDef) -> Any: ...
    def call(self, value: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any: ...
    def call_method(self, owner: Any, func: ast.Attribute, node: ast.Call) -> Any: ...
    def defines(self, owner: Any, name: str) -> bool: ...
    def special(self, owner: Any, name: str, args: list[Any], node: ast.AST) -> Any: ...


class MemberPart(Protocol):
    """What the attribute part offers the others."""

    def attribute(self, node: ast.Attribute) -> Any: ...
    def read(self, owner: Any, node: ast.Attribute) -> Any: ...
    def assign(self, owner: Any, node: ast.Attribute, value: Any) -> None: ...
    def delete(self, owner: Any, node: ast.Attribute) -> None: ...
    def member(self, owner: Namespace, node: ast.Attribute) -> Any: ...
    def checked_method(self, owner: Checked, func: ast.Attribute) -> Callable[..., Any]: ...
    def check_tensor_method(self, func: ast.Attribute) -> None: ...
    def is_tensor_value(self, func: ast.Attribute) -> bool: ...
    def refuse_private(self, node: ast.Attribute, owner: Checked) -> None: ...


class Evaluation:
    """The state of one evaluation and its guarded calls; the parts are set by the evaluator."""

    statements: StatementPart
    expressions: ExpressionPart
    calls: CallPart
    members: MemberPart
    functions: FunctionPart
    classes: ClassPart
    eval: Callable[[ast.expr], Any]  # the parts' busiest paths, bound once
    block: Callable[[list[ast.stmt]], None]

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
        self.builtins = {**build_namespaces(), **language_names()}
        self.field = field
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_value = on_value
        self.budget = budget or Budget(self.limits.max_total_elements)
        self.hooks = hooks
        self.warnings: list[str] = []
        self.source: str | None = None
        self.sizes = PySizes()
        self.loops: list[LoopMark] = []  # the loops around the running statement, outermost first
        self.statement_count = 0
        self.let_go = False  # a call of the running statement may have let go of a value (NOTE [alive nodes])
        self.quiet = 0  # > 0 while a custom backward runs inside an autograd call: no steps of its own
        self.scope: Scope | None = (
            None  # the running function's names; None at the top (NOTE [program scopes])
        )

    # -- errors at a place in the text ----------------------------------
    def error(self, message: str, node: ast.AST) -> ProgramError:
        """A refusal at ``node``, pointing to ``run`` (NOTE [own scripts] in ``hints.py``)."""
        return error_at(with_run_hint(message), self.field, node, self.source)

    def located(self, exc: ProgramError, node: ast.AST) -> ProgramError:
        """``exc`` at ``node``, unless it already names a place."""
        if exc.field is not None and exc.line is not None:
            return exc
        line, col = node_position(self.source, node)
        return carry_marks(exc, type(exc)(exc.message, field=self.field, line=line, col=col))

    def tick(self, node: ast.AST) -> None:
        """Stop the program at ``node`` once its time is up."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            line, col = node_position(self.source, node)
            raise RecordingTimeout(timeout_message(self.limits), field=self.field, line=line, col=col)

    # -- guarded application -----------------------------------------
    def apply(
        self,
        fn: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.AST,
        *,
        lazy: bool = False,
    ) -> Any:
        """Call ``fn`` under a :class:`SizeGuard`; turn every failure into a :class:`ProgramError`.

        ``lazy``: ``fn`` takes a range, zip or enumerate one item at a time (or not at
        all); otherwise it would make all their items at once, so their length is checked.
        """
        if not kwargs and id(fn) in _NUMBER_FUNCTIONS and all(type(a) in (int, float) for a in args):
            with contextlib.suppress(Exception):  # math.sin(pos / 10000): no tensor can come of it
                return fn(*args)
            # the guarded call below raises Python's own error, at its place
        self.check_arguments(args, kwargs, node, lazy=lazy)
        try:
            result, caught = guarded_call(
                fn, args, kwargs, limits=self.limits, budget=self.budget, deadline=self.deadline
            )
        except ProgramError as exc:
            gap = evaluator_gap(exc.__context__, fn)  # NOTE [evaluator gaps]
            if gap is not None:
                raise self.error(gap, node) from None
            raise self.located(exc, node) from None
        self.note_warnings(caught, node)
        self.check_result(result, node)
        if isinstance(result, PrintedText):  # logger.info(...): text for the printed output, as print's
            text = (
                str(result)
                if result.values is None
                else self.apply(percent_text, [str(result), result.values], {}, node)
            )
            if self.hooks is not None:
                self.hooks.printed(text)
            return None
        return result

    def note_warnings(self, caught: list[warnings.WarningMessage], node: ast.AST) -> None:
        """Keep PyTorch's warnings, each once, at the place that gave them."""
        if not caught:  # locating a node reads the text: only do it when there is something to say
            return
        line, col = node_position(self.source, node)
        for item in caught:
            said = " ".join(str(item.message).split())
            text = f"{self.field}, line {line}, column {col}: PyTorch warns: {said}"
            if text not in self.warnings:
                self.warnings.append(text)

    def check_arguments(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST, *, lazy: bool) -> None:
        """Refuse arguments whose Python values are too big, before the call makes more of them."""
        for value in (*args, *kwargs.values()):
            if isinstance(value, (list, tuple)):
                self.check_python_value(value, node)
            elif not lazy and (isinstance(value, range) or is_lazy(value)):
                self.check_lazy(value, node)

    def check_lazy(self, value: Any, node: ast.AST) -> None:
        """``list(range(10**9))``, ``sum(range(10**12))``: refused before Python makes the items."""
        length = self.sizes.length(value)
        if length is None:
            raise self.error(
                "this zip(...) or enumerate(...) cannot be sized before it runs: loop over it with for", node
            )
        if length > MAX_SEQUENCE:
            raise self.error(
                f"this would go through {length:,} items at once; the limit is {MAX_SEQUENCE:,}", node
            )

    def check_python_value(self, value: Any, node: ast.AST) -> None:
        """Refuse a list, tuple or text nested too deeply or holding too many items."""
        refusal = self.sizes.refusal(value)
        if refusal is not None:
            raise self.error(refusal, node)

    def check_result(self, value: Any, node: ast.AST) -> None:
        """Refuse a result over the limits; charge the budget for the items it made."""
        if isinstance(value, (list, tuple, str)) and not isinstance(value, torch.Size):
            self.check_python_value(value, node)
            if not self.budget.charge(len(value)):
                raise self.error(budget_message(self.budget), node)
        refusal = oversized_tensor(value, self.limits)
        if refusal is not None:
            raise self.error(refusal, node)
        if isinstance(value, torch.Tensor) and value.is_meta:  # a program error, not a refusal: it ran
            raise self.located(ProgramRaised(META_MESSAGE), node)

    def refuse_growth(self, owner: list[Any], item: Any, removed: Any, node: ast.AST) -> None:
        """Refuse putting ``item`` into ``owner`` (in place of ``removed``) past the limits."""
        refusal = self.sizes.refusal_to_add(owner, item, removed)
        if refusal is not None:
            raise self.error(refusal, node)
