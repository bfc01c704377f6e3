"""Calls in a program: functions of torch's modules, builtins, methods, proxies and autograd.

Every call runs under the size guard (:meth:`Evaluator.apply`) except the
autograd calls, which the recorder runs itself (NOTE [program hooks]).
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

import torch

from app.core.language.evaluation import Evaluation
from app.core.language.flow import HAS_MEMBERS, first_line
from app.core.language.members import method_caller
from app.core.language.objects import AutogradEntry, Checked, GradModeEntry
from app.core.language.python_values import NOTHING, kind
from app.core.language.whitelist import LAZY_BUILTINS, Namespace, SafeBuiltin
from app.core.model.errors import ProgramError, ScenarioError
from app.core.sizing.limits import MAX_SEQUENCE, budget_message

__all__ = ["Calls"]

_TENSOR_BACKWARD = AutogradEntry("backward", torch.Tensor.backward)


class Calls:
    """The calls part of an :class:`~app.core.language.evaluator.Evaluator`."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev

    def call(self, node: ast.Call) -> Any:
        """The value of ``f(...)`` or ``owner.name(...)``."""
        ev = self.ev
        func = node.func
        if isinstance(func, ast.Attribute):
            return self.call_attribute(node, func)
        if not isinstance(func, ast.Name):
            raise ev.error("only named functions and methods can be called", func)
        fn = ev.expressions.lookup(func)
        if isinstance(fn, SafeBuiltin):
            return self.call_builtin(fn, node)
        if isinstance(fn, AutogradEntry):
            return self.autograd(fn, [], node)
        if isinstance(fn, GradModeEntry):
            raise ev.error(f"{func.id}() is used only as with {func.id}():", node)
        if isinstance(fn, Checked):
            args, kwargs = self.arguments(node)
            return ev.apply(fn.call, args, kwargs, node)
        raise ev.error(f"'{func.id}' is {kind(fn)}, not a function: it cannot be called", func)

    def call_attribute(self, node: ast.Call, func: ast.Attribute) -> Any:
        ev = self.ev
        owner = ev.eval(func.value)
        if isinstance(owner, Namespace):
            fn = ev.members.member(owner, func)
            if isinstance(fn, AutogradEntry):
                return self.autograd(fn, [], node)
            if isinstance(fn, GradModeEntry):
                raise ev.error(
                    f"{owner.path}.{func.attr}() is used only as with {owner.path}.{func.attr}():", node
                )
            if isinstance(fn, (Namespace, torch.dtype)) or not callable(fn):
                raise ev.error(f"{owner.path}.{func.attr} is not a function", func)
            args, kwargs = self.arguments(node)
            return ev.apply(fn, args, kwargs, node)
        if isinstance(owner, torch.Tensor):
            return self.tensor_method(owner, node, func)
        if isinstance(owner, Checked):
            method = ev.members.checked_method(owner, func)
            args, kwargs = self.arguments(node)
            return ev.apply(method, args, kwargs, node)
        if isinstance(owner, list) and func.attr == "append":
            return self.append(owner, node)
        if isinstance(owner, list):
            raise ev.error("the one list method in programs is append(...)", func)
        raise ev.error(f"methods can only be called on {HAS_MEMBERS}, not on {kind(owner)}", func)

    def tensor_method(self, owner: torch.Tensor, node: ast.Call, func: ast.Attribute) -> Any:
        ev = self.ev
        ev.members.check_tensor_method(func)
        if func.attr == "backward":
            return self.autograd(_TENSOR_BACKWARD, [owner], node)
        if func.attr == "tolist" and owner.numel() > MAX_SEQUENCE:
            raise ev.error(f"tolist() is limited to tensors of {MAX_SEQUENCE:,} elements", node)
        args, kwargs = self.arguments(node)
        return ev.apply(method_caller(func.attr), [owner, *args], kwargs, node)

    def call_builtin(self, fn: SafeBuiltin, node: ast.Call) -> Any:
        ev = self.ev
        args, kwargs = self.arguments(node)
        result = ev.apply(fn.fn, args, kwargs, node, lazy=fn.name in LAZY_BUILTINS)
        if fn.name == "print":  # NOTE [program hooks]: the text goes to the recorder, nowhere else
            if ev.hooks is not None:
                ev.hooks.printed(result)
            return None
        if fn.name == "enumerate":
            ev.sizes.note_lazy(result, ev.sizes.length(args[0]) if args else None)
        elif fn.name == "zip":
            lengths = [ev.sizes.length(a) for a in args]
            known = [n for n in lengths if n is not None]
            ev.sizes.note_lazy(result, min(known, default=0) if len(known) == len(lengths) else None)
        return result

    def append(self, owner: list[Any], node: ast.Call) -> None:
        ev = self.ev
        args, kwargs = self.arguments(node)
        if kwargs or len(args) != 1:
            raise ev.located(ProgramError("Python says: append() takes exactly one argument"), node)
        ev.refuse_growth(owner, args[0], NOTHING, node)
        if not ev.budget.charge(1):
            raise ev.error(budget_message(ev.budget), node)
        owner.append(args[0])
        ev.sizes.changed(owner, args[0])

    def arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        """The values of a call's arguments, positional and by keyword, in the text's order."""
        evaluate = self.ev.eval
        args = [evaluate(a) for a in node.args]
        kwargs = {k.arg: evaluate(k.value) for k in node.keywords if k.arg is not None}
        return args, kwargs

    # -- autograd calls (NOTE [program hooks]) ---------------------------
    def autograd(self, entry: AutogradEntry, leading: list[Any], node: ast.Call) -> Any:
        """``loss.backward(...)``, ``torch.autograd.backward(...)``, ``torch.autograd.grad(...)``.

        Not under the size guard (a backward pass allocates what the forward
        pass already sized); the recorder, when there is one, runs it.
        """
        ev = self.ev
        args, kwargs = self.arguments(node)
        args = [*leading, *args]
        ev.check_arguments(args, kwargs, node, lazy=False)

        def run() -> Any:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = entry.fn(*args, **kwargs)
            ev.note_warnings(caught, node)
            return result

        if ev.hooks is None:
            try:
                return run()
            except ScenarioError as exc:
                raise ev.located(exc, node) from None
            except Exception as exc:
                raise ev.located(ProgramError(f"PyTorch says: {first_line(exc)}"), node) from None
        try:
            return ev.hooks.autograd_call(entry.kind, run, node, dict(kwargs), tuple(ev.loops))
        except ScenarioError as exc:
            raise ev.located(exc, node) from None
