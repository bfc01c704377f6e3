"""Calls in a program: functions of torch's modules, builtins, methods, proxies and autograd.

Every call runs under the size guard (:meth:`Evaluator.apply`) except the
autograd calls, which the recorder runs itself (NOTE [program hooks]).
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

import torch

from app.core.language.checkpoints import run_checkpoint
from app.core.language.data import ProgramLoader
from app.core.language.evaluation import Evaluation
from app.core.language.flow import HAS_MEMBERS, first_line
from app.core.language.generators import GENERATOR
from app.core.language.gradchecks import GRADCHECK_SETTINGS, MAX_CHECKED_ELEMENTS, GradCheck
from app.core.language.grammar import attribute_refusal
from app.core.language.hints import with_run_hint
from app.core.language.instances import ProgramFunction, ProgramModuleProxy, ProgramObject
from app.core.language.kinds import is_instance, type_of
from app.core.language.members import listed_callables, method_caller
from app.core.language.module_hooks import MODULE_HOOKS, register_module_hook
from app.core.language.module_proxies import ModuleProxy
from app.core.language.objects import AutogradEntry, Checked, GradModeEntry
from app.core.language.optimizer_proxies import OptimizerProxy
from app.core.language.program_data import loader_length
from app.core.language.python_errors import call_member, lacks_member, read_missing
from app.core.language.python_methods import (
    GROWING_LIST_METHODS,
    PYTHON_METHOD_OWNERS,
    lacks_attribute,
    python_method,
    python_method_refusal,
)
from app.core.language.python_values import NOTHING, kind
from app.core.language.raised import ExceptionKind, RaisedValue
from app.core.language.safe_builtins import LAZY_BUILTINS, SafeBuiltin
from app.core.language.stand_ins import Partial, Reduce
from app.core.language.tensor_hooks import register_hook
from app.core.language.torch_wrappers import GENERATOR_METHODS, PassThrough
from app.core.language.whitelist import ZEROED_METHODS, Namespace
from app.core.model.errors import ProgramError, ProgramRaised
from app.core.sizing.limits import MAX_SEQUENCE, budget_message

__all__ = ["CALLING_BUILTINS", "KEYED_BUILTINS", "Calls"]

CALLING_BUILTINS = frozenset(["isinstance", "map", "filter", "iter", "next", "type"])
KEYED_BUILTINS = frozenset(["sorted", "min", "max"])
_LIST_ITERATOR: type[Any] = type(iter([]))


def _ranked(keys: list[Any], reverse: bool = False) -> list[int]:
    """The places of ``keys`` in sorted order (stable, as ``sorted(..., key=...)`` is)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def _best(keys: list[Any], smallest: bool) -> int:
    """The place of the first smallest (or largest) key, as ``min``/``max`` with ``key=`` pick."""
    return (min if smallest else max)(range(len(keys)), key=keys.__getitem__)


_TENSOR_BACKWARD = AutogradEntry("backward", torch.Tensor.backward)


# Calls that can let go of a value the program holds without calling program code
# (NOTE [calls that let go]); a call of program code lets go of its own names when it returns.
LETTING_GO_METHODS = frozenset(
    {"pop", "popitem", "clear", "remove", "discard", "update"}
    | {"difference_update", "intersection_update", "symmetric_difference_update"}
)
# A proxy's methods that drop no reference: they step, read or switch modes in place.
KEEPING_PROXY_METHODS = frozenset(
    {"step", "parameters", "named_parameters", "buffers", "named_buffers", "state_dict", "get_last_lr"}
    | {"modules", "named_modules", "children", "named_children", "train", "eval", "extra_repr"}
)
LETTING_GO_TENSOR_METHODS = frozenset(["detach_", "requires_grad_", "resize_", "resize_as_", "set_"])


def _zeroes_plain_grads(owner: Checked, method: str) -> bool:
    """Whether ``owner.zero_grad()`` lets go of no graph: it drops its parameters' ``.grad`` and
    nothing else, and a gradient made without ``create_graph`` has no ``grad_fn``, so it reaches no
    node (NOTE [calls that let go])."""
    if method != "zero_grad" or not isinstance(owner, (ModuleProxy, OptimizerProxy)):
        return False
    return all(_plain_tensor(p.grad) for p in owner.parameters())


def _plain_tensor(grad: torch.Tensor | None) -> bool:
    """No graph, and no attributes that could hold one (a tensor subclass's ``__dict__``)."""
    return grad is None or (grad.grad_fn is None and type(grad) is torch.Tensor)


def _starred(nodes: list[ast.expr]) -> bool:
    return any(isinstance(n, ast.Starred) for n in nodes)


def _exception(kind: ExceptionKind, *args: Any) -> RaisedValue:
    """``ValueError("bad shape")``: an exception value, text made as Python makes it."""
    text = str(args[0]) if len(args) == 1 else (str(args) if args else "")
    return RaisedValue(kind.cls, args, text)


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
        if not isinstance(func, ast.Name):  # fns[0](x), (lambda x: x)(1), make()(x)
            return self.call_value(ev.eval(func), node)
        fn = ev.expressions.lookup(func)
        if isinstance(fn, ProgramFunction):
            args, kwargs = self.arguments(node)
            return ev.functions.invoke(fn, args, kwargs, node)
        if isinstance(fn, SafeBuiltin):
            return self.call_builtin(fn, node)
        if isinstance(fn, AutogradEntry):
            return self.autograd(fn, [], node)
        if isinstance(fn, GradModeEntry):
            raise ev.error(f"{func.id}() is used only as with {func.id}():", node)
        if isinstance(fn, Checked):
            return self.call_value(fn, node)
        if callable(fn) and id(fn) in listed_callables():
            return self.call_value(fn, node)
        raise ev.error(f"'{func.id}' is {kind(fn)}, not a function: it cannot be called", func)

    def call_value(self, fn: Any, node: ast.Call) -> Any:
        """Call a value the program holds: its function, class, object, module or exception class."""
        args, kwargs = self.arguments(node)
        return self.call_value_with(fn, args, kwargs, node)

    def call_value_with(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """Call a value the program holds with arguments already evaluated."""
        ev = self.ev
        if isinstance(fn, ProgramFunction):
            return ev.functions.invoke(fn, args, kwargs, node)
        if isinstance(fn, SafeBuiltin):  # model.apply(print), map(float, xs)
            return self.call_builtin_with(fn, args, kwargs, node)
        if isinstance(fn, ExceptionKind):
            return ev.apply(_exception, [fn, *args], kwargs, node)
        if isinstance(fn, PassThrough):  # NOTE [torch wrappers]
            return self.pass_through(fn, args, kwargs, node)
        if isinstance(fn, Partial):  # functools.partial(init_weights, std=0.02)
            return self.call_value_with(fn.fn, [*fn.args, *args], {**fn.kwargs, **kwargs}, node)
        if isinstance(fn, Reduce):
            return self.reduce(args, kwargs, node)
        if isinstance(fn, GradCheck):
            return self.gradcheck(fn, args, kwargs, node)
        if isinstance(fn, Checked):
            return ev.classes.call(fn, args, kwargs, node)
        if callable(fn) and id(fn) in listed_callables():  # act = nn.ReLU ... act()
            return ev.apply(fn, args, kwargs, node)
        raise ev.error(f"this is {kind(fn)}, not a function: it cannot be called", node.func)

    def pass_through(self, fn: PassThrough, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """``checkpoint(f, x)`` and ``checkpoint_sequential(fs, n, x)``: PyTorch's own around the
        program's functions (NOTE [checkpoint frames])."""
        return run_checkpoint(self.ev, fn, args, kwargs, node)

    def gradcheck(self, check: GradCheck, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """``gradcheck(MyFn.apply, inputs)``: PyTorch's check, calling the program's function
        through the evaluator (NOTE [gradchecks])."""
        ev = self.ev
        if len(args) != 2:
            raise ev.error(with_run_hint(f"{check.name}(function, inputs) takes these two first here"), node)
        unknown = sorted(set(kwargs) - GRADCHECK_SETTINGS)
        if unknown or not all(isinstance(v, (int, float, bool)) for v in kwargs.values()):
            listed = ", ".join(sorted(GRADCHECK_SETTINGS))
            raise ev.error(with_run_hint(f"{check.name} takes only the numbers {listed} here"), node)
        target, inputs = args
        values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        count = sum(v.numel() for v in values if isinstance(v, torch.Tensor))
        if count > MAX_CHECKED_ELEMENTS:
            raise ev.error(
                with_run_hint(f"{check.name} here checks up to {MAX_CHECKED_ELEMENTS:,} input elements"), node
            )

        def function(*given: Any) -> Any:
            return self.call_value_with(target, list(given), {}, node)

        function.__module__ = "torch"  # the check's own errors are PyTorch's
        return ev.apply(check.check, [function, inputs], kwargs, node)

    def reduce(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """``functools.reduce(fn, items[, initial])``, each step a call of ``fn`` by the evaluator."""
        ev = self.ev
        if kwargs or not 2 <= len(args) <= 3:
            raise ev.error("functools.reduce(function, items[, initial]) takes these here", node)
        items = ev.statements.all_items(args[1], node, loop=True)
        if len(args) == 2 and not items:
            raise ev.located(
                ProgramRaised("Python says: reduce() of empty iterable with no initial value"), node
            )
        value, rest = (args[2], items) if len(args) == 3 else (items[0], items[1:])
        for item in rest:
            value = self.call_value_with(args[0], [value, item], {}, node)
        return value

    def generator_method(self, owner: torch.Generator, node: ast.Call, func: ast.Attribute) -> Any:
        """``g.manual_seed(0)``, ``g.initial_seed()`` (NOTE [torch wrappers])."""
        ev = self.ev
        if func.attr not in GENERATOR_METHODS:
            raise ev.error(
                f"'{func.attr}' is not available on a Generator: manual_seed and initial_seed are", func
            )
        args, kwargs = self.arguments(node)
        return ev.apply(getattr(owner, func.attr), args, kwargs, node)

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
            if isinstance(fn, Checked):  # nn.Module(), torch.autograd.Function()
                return self.call_value(fn, node)
            if isinstance(fn, (Namespace, torch.dtype)) or not callable(fn):
                raise ev.error(f"{owner.path}.{func.attr} is not a function", func)
            args, kwargs = self.arguments(node)
            return ev.apply(fn, args, kwargs, node)
        if isinstance(owner, torch.Tensor):
            return self.tensor_method(owner, node, func)
        if isinstance(owner, ModuleProxy) and func.attr in MODULE_HOOKS:  # module_hooks.py
            return register_module_hook(ev, owner, func.attr, node)
        if isinstance(owner, Checked):
            return ev.classes.call_method(owner, func, node)
        if isinstance(owner, PYTHON_METHOD_OWNERS):
            return self.python_method(owner, node, func)
        if isinstance(owner, torch.Generator):
            return self.generator_method(owner, node, func)
        if lacks_attribute(owner, func.attr):  # NOTE [missing attributes]: Python's AttributeError
            return ev.apply(getattr, [owner, func.attr], {}, func)
        raise ev.error(f"methods can only be called on {HAS_MEMBERS}, not on {kind(owner)}", func)

    def checked_call(self, owner: Checked, node: ast.Call, func: ast.Attribute) -> Any:
        """``owner.name(...)`` on a proxy: a listed method, or a module it holds."""
        ev = self.ev
        method = ev.members.checked_method(owner, func)
        args, kwargs = self.arguments(node)
        if func.attr not in KEEPING_PROXY_METHODS and not _zeroes_plain_grads(owner, func.attr):
            ev.let_go = True  # model.add_module(...) drops the old one (NOTE [calls that let go])
        return ev.apply(method, args, kwargs, node)

    def python_method(self, owner: Any, node: ast.Call, func: ast.Attribute) -> Any:
        """A listed method of a list, dict, set or text (NOTE [python methods])."""
        ev = self.ev
        if isinstance(owner, list) and func.attr == "append":
            return self.append(owner, node)
        method = python_method(owner, func.attr)
        if method is None and lacks_attribute(owner, func.attr):  # NOTE [missing attributes]
            return ev.apply(getattr, [owner, func.attr], {}, func)
        if method is None:
            raise ev.error(python_method_refusal(owner, func.attr), func)
        args, kwargs = self.arguments(node)
        if isinstance(owner, list) and func.attr in GROWING_LIST_METHODS:
            for value in args:
                self.check_growth(owner, value, func.attr, node)
        if func.attr in LETTING_GO_METHODS:
            ev.let_go = True  # held.pop(), box.clear() (NOTE [calls that let go])
        result = ev.apply(method, [owner, *args], kwargs, node)
        if isinstance(owner, list):
            ev.sizes.changed(owner)
        return result

    def check_growth(self, owner: list[Any], value: Any, method: str, node: ast.Call) -> None:
        ev = self.ev
        if method == "extend":
            if not isinstance(value, (list, tuple)):
                ev.check_lazy(value, node)
            ev.check_python_value([*owner, *value], node)
        elif method == "insert":
            ev.refuse_growth(owner, value, NOTHING, node)

    def tensor_method(self, owner: torch.Tensor, node: ast.Call, func: ast.Attribute) -> Any:
        ev = self.ev
        if func.attr == "register_hook":  # with a function of the program's (tensor_hooks.py)
            return register_hook(ev, owner, node)
        if lacks_member(owner, func.attr) and attribute_refusal(func.attr) is None:
            return ev.apply(read_missing, [owner, func.attr], {}, func)  # python_errors.py
        if ev.members.is_tensor_value(func):  # x.requires_grad(): Python's TypeError
            args, kwargs = self.arguments(node)
            return ev.apply(call_member, [owner, func.attr, *args], kwargs, node)
        ev.members.check_tensor_method(func)
        if func.attr in LETTING_GO_TENSOR_METHODS:
            ev.let_go = True  # y.detach_() lets go of y's graph (NOTE [calls that let go])
        if func.attr in ZEROED_METHODS:  # NOTE [zeroed memory]: x.new_empty(3) is x.new_zeros(3)
            args, kwargs = self.arguments(node)
            return ev.apply(method_caller(ZEROED_METHODS[func.attr]), [owner, *args], kwargs, node)
        if func.attr == "backward":
            return self.autograd(_TENSOR_BACKWARD, [owner], node)
        if func.attr == "tolist" and owner.numel() > MAX_SEQUENCE:
            raise ev.error(f"tolist() is limited to tensors of {MAX_SEQUENCE:,} elements", node)
        args, kwargs = self.arguments(node)
        return ev.apply(method_caller(func.attr), [owner, *args], kwargs, node)

    def call_builtin(self, fn: SafeBuiltin, node: ast.Call) -> Any:
        args, kwargs = self.arguments(node)
        return self.call_builtin_with(fn, args, kwargs, node)

    def call_builtin_with(
        self, fn: SafeBuiltin, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        ev = self.ev
        if fn.name == "next":
            ev.let_go = True  # a generator lets go of what it gave (NOTE [calls that let go])
        if fn.name in CALLING_BUILTINS or (fn.name in KEYED_BUILTINS and "key" in kwargs):
            return self.calling_builtin(fn.name, args, kwargs, node)
        if fn.name == "len" and len(args) == 1 and isinstance(args[0], (ProgramObject, ProgramModuleProxy)):
            return ev.classes.special(args[0], "__len__", [], node)
        if fn.name == "len" and len(args) == 1 and isinstance(args[0], ProgramLoader):
            return loader_length(ev, args[0], node)
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

    def calling_builtin(self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """``isinstance``, ``map``, ``filter``, ``iter``, ``next`` and ``sorted``/``min``/``max`` with
        ``key=``: run here, as they call the program's functions (NOTE [program types]).

        ``map`` and ``filter`` make their list at once (their items counted like a loop's), which
        ``list(...)`` and ``for`` see as Python's lazy ones.
        """
        ev = self.ev
        if name == "isinstance":
            if kwargs or len(args) != 2:
                raise ev.located(ProgramRaised("Python says: isinstance expected 2 arguments"), node)
            try:
                return is_instance(args[0], args[1])
            except ProgramError as exc:
                raise ev.error(str(exc), node) from None
        if name == "type":
            if kwargs or len(args) != 1:
                raise ev.error("type(...) takes one value here: a class is made with class", node)
            try:
                return type_of(args[0], ev.builtins)
            except ProgramError as exc:
                raise ev.error(str(exc), node) from None
        if name == "iter":
            if kwargs or len(args) != 1:
                raise ev.error("iter(...) takes one list, range or DataLoader here", node)
            return iter(ev.statements.all_items(args[0], node, loop=True))
        if name == "next":
            if kwargs or not 1 <= len(args) <= 2 or not isinstance(args[0], (_LIST_ITERATOR, GENERATOR)):
                raise ev.error("next(...) takes what iter(...) gave, as in next(iter(loader))", node)
            return ev.apply(next, args, {}, node)
        if name in ("map", "filter"):
            if kwargs or len(args) < 2 or (name == "filter" and len(args) != 2):
                raise ev.located(ProgramRaised(f"Python says: {name}() takes a function and items"), node)
            columns = [ev.statements.all_items(a, node, loop=True) for a in args[1:]]
            rows = list(zip(*columns, strict=False))
            if name == "map":
                return [self.call_value_with(args[0], list(row), {}, node) for row in rows]
            keep = (
                (lambda v: v) if args[0] is None else (lambda v: self.call_value_with(args[0], [v], {}, node))
            )
            return [row[0] for row in rows if ev.apply(bool, [keep(row[0])], {}, node)]
        key = kwargs.pop("key")
        if len(args) != 1:
            raise ev.error(f"{name}(..., key=...) takes one list of items here", node)
        items = ev.statements.all_items(args[0], node, loop=True)
        keys = items if key is None else [self.call_value_with(key, [v], {}, node) for v in items]
        if name == "sorted":
            reverse = kwargs.pop("reverse", False)
            if kwargs or not isinstance(reverse, bool):
                raise ev.error("sorted(...) takes key= and reverse=True or False", node)
            return [items[i] for i in ev.apply(_ranked, [keys, reverse], {}, node)]
        if kwargs:
            raise ev.error(f"{name}(..., key=...) takes no other keyword here", node)
        if not items:
            raise ev.located(ProgramRaised(f"Python says: {name}() iterable argument is empty"), node)
        return items[ev.apply(_best, [keys, name == "min"], {}, node)]

    def append(self, owner: list[Any], node: ast.Call) -> None:
        ev = self.ev
        args, kwargs = self.arguments(node)
        if kwargs or len(args) != 1:
            raise ev.located(ProgramRaised("Python says: append() takes exactly one argument"), node)
        ev.refuse_growth(owner, args[0], NOTHING, node)
        if not ev.budget.charge(1):
            raise ev.error(budget_message(ev.budget), node)
        owner.append(args[0])
        ev.sizes.changed(owner, args[0])

    def arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        """The values of a call's arguments, positional and by keyword, in the text's order.

        ``*xs`` gives the items of ``xs`` (sized first), ``**d`` the items of a dict with text keys.
        """
        ev = self.ev
        evaluate = ev.eval
        args = ev.expressions.items(node.args) if _starred(node.args) else [evaluate(a) for a in node.args]
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is not None:
                kwargs[keyword.arg] = evaluate(keyword.value)
                continue
            given = evaluate(keyword.value)
            if not isinstance(given, dict) or not all(isinstance(k, str) for k in given):
                raise ev.error(f"** unpacks a dict with text keys here, not {kind(given)}", keyword.value)
            for key, value in given.items():
                if key.startswith("_"):
                    raise ev.error(f"keyword '{key}' is private: names starting with _ are refused", keyword)
                kwargs[key] = value
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
            except ProgramError as exc:
                raise ev.located(exc, node) from None
            except Exception as exc:
                raise ev.located(ProgramRaised(f"PyTorch says: {first_line(exc)}"), node) from None
        try:
            return ev.hooks.autograd_call(entry.kind, run, node, dict(kwargs), tuple(ev.loops))
        except ProgramError as exc:
            raise ev.located(exc, node) from None
