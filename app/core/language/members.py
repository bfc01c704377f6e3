"""Reading and assigning attributes: ``x.grad``, ``torch.float32``, ``lin.weight``, ``t.grad = None``.

Every attribute is read by name in one place, :func:`read_public_attribute`,
which refuses private and denied names again whatever the caller checked.
Objects a program holds answer through their proxies (NOTE [checked
objects]); a module of torch through its :class:`Namespace`; a tensor
through its public API minus the denied members (NOTE [whitelist]).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from functools import cache
from typing import Any

import torch

from app.core.language.classes import SuperProxy
from app.core.language.denials import denied_attribute
from app.core.language.evaluation import Evaluation
from app.core.language.flow import HAS_MEMBERS, NotListed
from app.core.language.grammar import attribute_refusal, missing_member
from app.core.language.graph_nodes import grad_fn_view
from app.core.language.hints import with_run_hint
from app.core.language.objects import AutogradEntry, Checked, GradModeEntry
from app.core.language.performance_settings import is_setting
from app.core.language.python_errors import SuperMethod, lacks_member, read_missing
from app.core.language.python_methods import lacks_attribute
from app.core.language.python_values import kind
from app.core.language.whitelist import (
    Namespace,
    build_namespaces,
    python_modules,
    result_fields,
)
from app.core.model.errors import ProgramError

__all__ = ["ASSIGNABLE_TENSOR_ATTRS", "Members", "listed_callables", "method_caller", "read_public_attribute"]

# .data = t swaps what the tensor holds, as PyTorch does, without telling autograd.
ASSIGNABLE_TENSOR_ATTRS = frozenset(["grad", "requires_grad", "data"])
# torch.finfo(torch.float32).eps, torch.iinfo(torch.int64).max: numbers about a dtype
_TYPE_INFO = frozenset(["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"])
# what a dtype says of itself, as numbers and flags
_DTYPE_FACTS = frozenset(["is_floating_point", "is_complex", "is_signed", "itemsize"])
_TENSOR_ASSIGNMENT = "on a tensor only .grad, .requires_grad and .data can be assigned, not .{name}"


class Members:
    """The attribute part of an :class:`~app.core.language.evaluator.Evaluator`."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev

    def attribute(self, node: ast.Attribute) -> Any:
        """The value of ``owner.name``."""
        return self.read(self.ev.eval(node.value), node)

    def read(self, owner: Any, node: ast.Attribute) -> Any:
        """``owner.<node.attr>`` for an owner already evaluated; a method must be called."""
        ev = self.ev
        if isinstance(owner, Namespace):
            member = self.member(owner, node)
            if isinstance(member, GradModeEntry):
                raise ev.error(f"{owner.path}.{node.attr} is used as with {owner.path}.{node.attr}():", node)
            if isinstance(member, AutogradEntry):
                raise ev.error(f"{owner.path}.{node.attr} is a function: call it", node)
            return member  # act=nn.ReLU, fn=F.relu: a listed function held to call later
        if isinstance(owner, torch.Tensor):
            if lacks_member(owner, node.attr) and attribute_refusal(node.attr) is None:
                return ev.apply(read_missing, [owner, node.attr], {}, node)  # Python's AttributeError
            self.check_tensor_attr(node)
            value = ev.apply(_reader(node.attr), [owner], {}, node)
            if node.attr == "grad_fn":  # a view of the node, never the node (NOTE [grad_fn views])
                return grad_fn_view(value)
            if callable(value):
                raise ev.error(f"'{node.attr}' is a method: call it, as in x.{node.attr}()", node)
            return value
        if isinstance(owner, SuperProxy) and node.attr == "__init__":
            return SuperMethod(f"{owner.kind}.__init__")  # read, not called: python_errors.py
        if isinstance(owner, Checked):
            return self.checked_attribute(owner, node)
        if node.attr in result_fields(owner):
            return read_public_attribute(owner, node.attr)
        if isinstance(owner, (torch.finfo, torch.iinfo)) and node.attr in _TYPE_INFO:  # .eps, .max
            return read_public_attribute(owner, node.attr)
        if isinstance(owner, list) and node.attr == "append":
            raise ev.error("'append' is a method: call it, as in losses.append(loss)", node)
        if isinstance(owner, torch.dtype) and node.attr in _DTYPE_FACTS:  # torch.float32.is_floating_point
            return read_public_attribute(owner, node.attr)
        if lacks_attribute(owner, node.attr):  # NOTE [missing attributes]: Python's AttributeError
            return ev.apply(getattr, [owner, node.attr], {}, node)
        raise ev.error(f"attributes can only be read from {HAS_MEMBERS}, not from {kind(owner)}", node)

    def member(self, owner: Namespace, node: ast.Attribute) -> Any:
        """A listed member of a torch module (``torch.ones``, ``nn.Linear``)."""
        try:
            return owner.member(node.attr)
        except KeyError:
            raise self.ev.error(missing_member(owner, node.attr), node) from None

    def check_tensor_attr(self, node: ast.Attribute) -> None:
        """Refuse a tensor attribute that is private, denied, or not there (with a hint)."""
        refusal = attribute_refusal(node.attr)  # refused statically too; checked again here on purpose
        if refusal is not None:
            raise self.ev.error(refusal, node)
        if not hasattr(torch.Tensor, node.attr):
            close = difflib.get_close_matches(node.attr, _tensor_members(), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self.ev.error(f"tensors have no attribute '{node.attr}'{hint}", node)

    def is_tensor_value(self, func: ast.Attribute) -> bool:
        """Whether ``x.name`` is a listed tensor member that is a value, not a method."""
        self.check_tensor_attr(func)
        return not callable(read_public_attribute(torch.Tensor, func.attr))

    def check_tensor_method(self, func: ast.Attribute) -> None:
        """Refuse ``x.name(...)`` unless ``name`` is a listed tensor method."""
        self.check_tensor_attr(func)
        if not callable(read_public_attribute(torch.Tensor, func.attr)):
            raise self.ev.error(f"'{func.attr}' is not a method: drop the ()", func)

    # -- checked objects (NOTE [checked objects]) ----------------------
    def checked_attribute(self, owner: Checked, node: ast.Attribute) -> Any:
        ev = self.ev
        self.refuse_private(node, owner)
        try:
            value = self.ask(owner.get_attribute, [node.attr], node)
        except NotListed:
            if self.lists_method(owner, node.attr):
                raise ev.error(f"'{node.attr}' is a method: call it, as in {node.attr}()", node) from None
            raise ev.error(not_listed(owner, node.attr), node) from None
        if callable(value) and not isinstance(value, Checked):
            raise ev.error(f"'{node.attr}' is a method: call it, as in {node.attr}()", node)
        return value

    def checked_method(self, owner: Checked, func: ast.Attribute) -> Callable[..., Any]:
        """What ``owner.name(...)`` calls: a listed method, or an attribute that is itself callable."""
        self.refuse_private(func, owner)
        try:
            method: Callable[..., Any] = self.ask(owner.method, [func.attr], func)
        except NotListed:
            method = self.listed_callable_attribute(owner, func)
        return method

    def listed_callable_attribute(self, owner: Checked, func: ast.Attribute) -> Callable[..., Any]:
        """``model.fc(x)``: an attribute that is itself a module, called."""
        try:
            value = self.ask(owner.get_attribute, [func.attr], func)
        except NotListed:
            raise self.ev.error(not_listed(owner, func.attr), func) from None
        if not isinstance(value, Checked):
            raise self.ev.error(f"'{func.attr}' is not a method: drop the ()", func)
        return value.call

    def lists_method(self, owner: Checked, name: str) -> bool:
        try:
            owner.method(name)
        except KeyError:
            return False
        return True

    def ask(self, fn: Callable[..., Any], args: list[Any], node: ast.AST) -> Any:
        """Ask a proxy under the guard; its KeyError (not listed) becomes :class:`NotListed`."""

        def ask(*values: Any) -> Any:
            try:
                return fn(*values)
            except KeyError:
                raise NotListed("not listed") from None

        ask.__module__ = "torch"  # its errors are PyTorch's: the proxies hold torch objects
        return self.ev.apply(ask, args, {}, node)

    def refuse_private(self, node: ast.Attribute, owner: Checked) -> None:
        """Private names never reach a proxy (refused statically too; checked again on purpose),
        except one leading underscore on what the program defined (NOTE [own names])."""
        refusal = attribute_refusal(node.attr, own=owner.holds_own_names)
        if refusal is not None:
            raise self.ev.error(refusal, node)

    # -- assignment ------------------------------------------------------
    def assign(self, owner: Any, node: ast.Attribute, value: Any) -> None:
        """``owner.name = value``: a listed attribute of a proxy, or a tensor's .grad / .requires_grad."""
        ev = self.ev
        name = node.attr
        refusal = attribute_refusal(name, own=isinstance(owner, Checked) and owner.holds_own_names)
        if refusal is not None:
            raise ev.error(refusal, node)
        if isinstance(owner, Checked):
            try:
                self.ask(owner.set_attribute, [name, value], node)
            except NotListed:
                raise ev.error(f"'{name}' cannot be assigned on {owner.kind}", node) from None
        elif isinstance(owner, Namespace) and is_setting(owner.path, name):  # performance_settings.py
            if not isinstance(value, bool):
                raise ev.error(f"{owner.path}.{name} takes True or False", node)
            # Accepted and left as it is: a recording's kernels are chosen where it runs (CPU, or
            # the device picked in the window), and the setting would outlive the program.
        elif isinstance(owner, torch.Tensor):
            if name not in ASSIGNABLE_TENSOR_ATTRS:
                raise ev.error(_TENSOR_ASSIGNMENT.format(name=name), node)
            ev.apply(_writer(name), [owner, value], {}, node)
        else:
            raise ev.error(f"attributes cannot be assigned on {kind(owner)}", node)

    def delete(self, owner: Any, node: ast.Attribute) -> None:
        """``del owner.name``: an attribute the program set on its own object or module."""
        ev = self.ev
        refusal = attribute_refusal(node.attr, own=isinstance(owner, Checked) and owner.holds_own_names)
        if refusal is not None:
            raise ev.error(refusal, node)
        if not isinstance(owner, Checked):
            raise ev.error(f"attributes cannot be deleted on {kind(owner)}", node)
        try:
            self.ask(owner.delete_attribute, [node.attr], node)
        except NotListed:
            raise ev.error(f"'{node.attr}' cannot be deleted on {owner.kind}", node) from None


@cache
def listed_callables() -> frozenset[int]:
    """The ids of every function and class the namespaces list, torch's and the stand-in modules'
    (``s = math.sqrt``, ``P = argparse.ArgumentParser``): what a program may call by value."""
    found: set[int] = set()
    stack = [v for v in build_namespaces().values() if isinstance(v, Namespace)]
    stack += python_modules().values()
    while stack:
        for member in stack.pop().members.values():
            if isinstance(member, Namespace):
                stack.append(member)
            elif callable(member) and not isinstance(member, (Checked, torch.dtype)):
                found.add(id(member))
    return frozenset(found)


def read_public_attribute(owner: Any, name: str) -> Any:
    """The one place the language reads an attribute by name.

    Callers check the name first; this checks again, so that no path can
    reach a private or denied member even if a check above is lost.
    """
    if name.startswith("_") or denied_attribute(name) is not None:
        raise ProgramError(f"'{name}' is not available in programs")
    return getattr(owner, name)


def _reader(name: str) -> Callable[[Any], Any]:
    def read(obj: Any) -> Any:
        return read_public_attribute(obj, name)

    read.__name__ = name
    read.__module__ = "torch"
    return read


def method_caller(name: str) -> Callable[..., Any]:
    """A function calling the public method ``name`` of its first argument (a tensor's, here)."""

    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return read_public_attribute(obj, name)(*args, **kwargs)

    call.__name__ = name
    call.__module__ = "torch"
    return call


def _writer(name: str) -> Callable[[Any, Any], None]:
    def write(obj: Any, value: Any) -> None:
        if name not in ASSIGNABLE_TENSOR_ATTRS:  # checked by the caller; checked again on purpose
            raise ProgramError(_TENSOR_ASSIGNMENT.format(name=name))
        setattr(obj, name, value)

    write.__name__ = name
    write.__module__ = "torch"
    return write


def not_listed(owner: Checked, name: str) -> str:
    """Why ``owner.name`` is refused, with the closest listed member as a hint."""
    close = difflib.get_close_matches(name, owner.members(), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return with_run_hint(f"'{name}' is not available on {owner.kind}{hint}")


_TENSOR_MEMBERS: list[str] = []


def _tensor_members() -> list[str]:
    if not _TENSOR_MEMBERS:
        _TENSOR_MEMBERS.extend(
            n for n in dir(torch.Tensor) if not n.startswith("_") and denied_attribute(n) is None
        )
    return _TENSOR_MEMBERS
