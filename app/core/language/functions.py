"""A program's own functions: ``def``, ``lambda``, ``return``, and calling them.

# NOTE [program functions]
A function is a :class:`ProgramFunction`, a checked object that answers no
member: a program can call it, pass it and hold it, never read its code, its
globals or its closure (there are none to read: the function is the checked
tree and a :class:`~app.core.language.scopes.Scope`). Calling one binds the
arguments as Python does (positional, defaults, keywords, ``*args``,
``**kwargs``) and walks the body with the same evaluator, so every statement
inside is counted, timed and recorded like any other, and every tensor made
inside is sized by the guard first. Calls nest at most
:data:`MAX_CALL_DEPTH` deep: a recursion past it is a limit of the language,
which no ``try`` can catch.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Mapping
from typing import Any

import torch

from app.core.language.evaluation import Evaluation
from app.core.language.flow import Return
from app.core.language.generators import drawn
from app.core.language.grammar import RUN_HINT
from app.core.language.instances import ProgramFunction
from app.core.language.raised import raised_error, unwound_scopes
from app.core.language.scopes import Scope
from app.core.model.errors import ProgramRaised
from app.core.sizing.limits import MAX_SEQUENCE, budget_message

__all__ = ["MAX_CALL_DEPTH", "Functions", "ProgramFunction", "bind_arguments"]

# Each program call takes about a dozen of Python's own frames (statement, expression, call),
# and Python's stack holds about a thousand: 60 program calls deep leaves room to spare.
MAX_CALL_DEPTH = 60


class Functions:
    """The functions part of an evaluator: definitions, lambdas, returns and calls."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev
        self.depth = 0
        self.running: list[tuple[ProgramFunction, list[Any]]] = []  # the calls under way, innermost last
        self.callers: list[Scope | None] = []  # the scope each call under way was made from
        self.yielded: list[list[Any]] = []  # what each running generator gave so far

    def define(self, node: ast.FunctionDef) -> ProgramFunction:
        """The function a ``def`` makes: defaults and decorators are evaluated now, as in Python."""
        fn = self.make(node, node.name)
        for decorator in reversed(node.decorator_list):
            if isinstance(decorator, ast.Name):  # @staticmethod (the static checks list no other)
                fn.static = True
            else:
                fn.grad_enabled = _dotted_end(decorator) == "enable_grad"
        return fn

    def make(self, node: ast.FunctionDef | ast.Lambda, name: str) -> ProgramFunction:
        ev = self.ev
        args = node.args
        defaults = [ev.eval(d) for d in args.defaults]
        kw_defaults = {
            a.arg: ev.eval(d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
        }
        closure = ev.scope.function_scope() if ev.scope is not None else None
        fn = ProgramFunction(node, name, defaults, kw_defaults, closure)
        # hvp(f, x), jacobian(f, x): PyTorch calls the function; the evaluator runs its body
        fn.runner = lambda args, kwargs: self.invoke(fn, args, kwargs, node)
        return fn

    def lambda_expression(self, node: ast.Lambda) -> ProgramFunction:
        return self.make(node, "<lambda>")

    def return_statement(self, node: ast.Return) -> None:
        value = None if node.value is None else self.ev.eval(node.value)
        self.ev.statements.done(node)
        raise Return(value)

    def invoke(self, fn: ProgramFunction, args: list[Any], kwargs: Mapping[str, Any], node: ast.AST) -> Any:
        """Call ``fn`` with values already evaluated; its result."""
        ev = self.ev
        if self.depth >= MAX_CALL_DEPTH:
            raise ev.error(recursion_message(), node)
        try:
            values = bind_arguments(fn, args, kwargs)
        except TypeError as exc:
            raise ev.located(raised_error(TypeError, str(exc)), node) from None
        scope = Scope(fn.local, declared_global=fn.declared_global, parent=fn.closure)
        scope.values.update(values)
        outer = ev.scope
        ev.scope = scope
        self.callers.append(outer)
        self.depth += 1
        self.running.append((fn, args))
        if fn.generator:
            self.yielded.append([])
        try:
            with self.grad_mode(fn):
                if isinstance(fn.node, ast.Lambda):
                    return ev.eval(fn.node.body)
                ev.block(fn.node.body)
        except Return as done:
            if not fn.generator:
                return done.value
        except ProgramRaised as exc:
            unwound_scopes(exc).append(scope)  # its traceback keeps this call's names
            raise
        finally:
            self.running.pop()
            self.callers.pop()
            self.depth -= 1
            ev.scope = outer
            ev.let_go = True  # the call's names go now (NOTE [alive nodes])
            made = self.yielded.pop() if fn.generator else None
        return None if made is None else drawn(made, scope, name=fn.name)

    def yield_expression(self, node: ast.Yield | ast.YieldFrom) -> None:
        """``yield value`` (or ``yield from values``): kept for the caller, in order."""
        ev = self.ev
        value = None if node.value is None else ev.eval(node.value)
        if not self.yielded:  # pragma: no cover - the static checks keep yield inside functions
            raise ev.error("yield is used inside a function only", node)
        made = self.yielded[-1]
        new = ev.statements.all_items(value, node, loop=True) if isinstance(node, ast.YieldFrom) else [value]
        if len(made) + len(new) > MAX_SEQUENCE:
            raise ev.error(f"a generator here gives at most {MAX_SEQUENCE:,} items", node)
        if not ev.budget.charge(len(new)):
            raise ev.error(budget_message(ev.budget), node)
        made.extend(new)

    def live_scopes(self) -> list[Scope]:
        """The names of every call under way, innermost first (what the program holds besides its
        own names: NOTE [held is reachable] in ``app/core/recorder/reach.py``)."""
        scopes = [self.ev.scope, *reversed(self.callers)]
        return [scope for scope in scopes if scope is not None]

    def current(self) -> tuple[ProgramFunction, list[Any]] | None:
        """The innermost function call under way, with its positional arguments."""
        return self.running[-1] if self.running else None

    def grad_mode(self, fn: ProgramFunction) -> contextlib.AbstractContextManager[Any]:
        if fn.grad_enabled is None:
            return contextlib.nullcontext()
        return torch.enable_grad() if fn.grad_enabled else torch.no_grad()


def recursion_message() -> str:
    return (
        f"functions here call each other at most {MAX_CALL_DEPTH} deep, and this goes deeper "
        f"(a recursion that does not stop?); {RUN_HINT}"
    )


def bind_arguments(fn: ProgramFunction, args: list[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters' values for a call, as Python binds them; TypeError with Python's words."""
    spec = fn.node.args
    positional = [a.arg for a in (*spec.posonlyargs, *spec.args)]
    name = fn.name
    values: dict[str, Any] = {}
    for parameter, value in zip(positional, args, strict=False):
        values[parameter] = value
    extra = list(args[len(positional) :])
    if extra and spec.vararg is None:
        given = len(args)
        raise TypeError(f"{name}() takes {len(positional)} positional arguments but {given} were given")
    if spec.vararg is not None:
        values[spec.vararg.arg] = tuple(extra)
    keyword_only = [a.arg for a in spec.kwonlyargs]
    rest: dict[str, Any] = {}
    posonly = {a.arg for a in spec.posonlyargs}
    for key, value in kwargs.items():
        if (key in positional and key not in posonly) or key in keyword_only:
            if key in values:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            values[key] = value
        elif spec.kwarg is not None:
            rest[key] = value
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    first_default = len(positional) - len(fn.defaults)
    missing = []
    for index, parameter in enumerate(positional):
        if parameter not in values:
            if index >= first_default:
                values[parameter] = fn.defaults[index - first_default]
            else:
                missing.append(parameter)
    if missing:
        listed = " and ".join(f"'{m}'" for m in missing)
        plural = "s" if len(missing) > 1 else ""
        raise TypeError(f"{name}() missing {len(missing)} required positional argument{plural}: {listed}")
    for parameter in keyword_only:
        if parameter not in values:
            if parameter not in fn.kw_defaults:
                raise TypeError(f"{name}() missing 1 required keyword-only argument: '{parameter}'")
            values[parameter] = fn.kw_defaults[parameter]
    if spec.kwarg is not None:
        values[spec.kwarg.arg] = rest
    return values


def _dotted_end(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
