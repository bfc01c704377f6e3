"""A module's hooks in programs, with the program's own functions.

``m.register_forward_hook(fn)``, ``register_forward_pre_hook``, ``register_full_backward_hook``,
``register_full_backward_pre_hook`` and the deprecated ``register_backward_hook`` (which PyTorch
still runs) on a module the program holds, a ``torch.nn`` one or one of its own classes. PyTorch's
own mechanism registers and calls the hook; ``fn`` is the program's function (a ``def``, a
``lambda``, a ``functools.partial`` of one, or ``print``), run by the evaluator when PyTorch calls
it, quietly as a tensor's hook is (``tensor_hooks.py``), every operation in it sized and checked.
``fn`` sees the module as the program holds it, never the real one, and what it gives back must be
what a module takes or gives (tensors, numbers, tuples and dicts of them, None). The keywords are
PyTorch's own (``prepend``, ``with_kwargs``, ``always_call``), passed to PyTorch, which checks them.
The handle answers ``remove()`` and nothing else.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, Protocol

import torch

from app.core.language.hints import refused
from app.core.language.instances import ProgramFunction
from app.core.language.module_proxies import ModuleProxy
from app.core.language.python_values import kind
from app.core.language.safe_builtins import SafeBuiltin
from app.core.language.saved_hooks import Evaluating
from app.core.language.stand_ins import Partial
from app.core.language.tensor_hooks import HookHandle

__all__ = ["MODULE_HOOKS", "register_module_hook"]

# Each registration, with the keywords PyTorch takes for it.
MODULE_HOOKS: dict[str, frozenset[str]] = {
    "register_forward_hook": frozenset({"prepend", "with_kwargs", "always_call"}),
    "register_forward_pre_hook": frozenset({"prepend", "with_kwargs"}),
    "register_full_backward_hook": frozenset({"prepend"}),
    "register_full_backward_pre_hook": frozenset({"prepend"}),
    "register_backward_hook": frozenset(),
}
_NESTING = 3  # tuples of tuples of tensors: what a module takes and gives


class _Arguments(Protocol):
    def arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]: ...
    def call_value_with(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any: ...


class _Calling(Evaluating, Protocol):
    @property
    def calls(self) -> _Arguments: ...
    def apply(
        self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any: ...


def register_module_hook(ev: _Calling, owner: ModuleProxy, name: str, node: ast.Call) -> HookHandle:
    """``owner.<name>(fn, ...)``: PyTorch's own registration, ``fn`` called through the evaluator."""
    args, kwargs = ev.calls.arguments(node)
    if len(args) != 1:
        raise ev.error(f"{name}(hook) takes one function", node)
    fn = args[0]
    if not isinstance(fn, (ProgramFunction, Partial, SafeBuiltin)):
        raise ev.error(f"{name}(hook) takes a function the program defines", node.args[0])
    unknown = sorted(set(kwargs) - MODULE_HOOKS[name])
    if unknown:
        raise ev.error(f"{name} takes no keyword '{unknown[0]}'", node)
    hook = _as_hook(ev, owner, fn, node)
    register = getattr(owner._module, name)  # the real module stays here: fn gets `owner`
    handle = ev.apply(register, [hook], kwargs, node)
    return HookHandle(handle)


def _as_hook(ev: _Calling, owner: ModuleProxy, fn: Any, node: ast.Call) -> Callable[..., Any]:
    """What PyTorch calls: ``fn`` with the module as the program holds it, quietly."""

    def hook(_module: torch.nn.Module, *values: Any) -> Any:
        for value in values:
            _check_plain(value, 0)
        ev.quiet += 1
        try:
            result = ev.calls.call_value_with(fn, [owner, *values], {}, node)
        finally:
            ev.quiet -= 1
        _check_plain(result, 0)
        return result

    return hook


def _check_plain(value: Any, depth: int) -> None:
    """Only what modules take and give crosses between PyTorch and the program."""
    if isinstance(value, (torch.Tensor, bool, int, float, str, type(None))):
        return
    if depth < _NESTING and isinstance(value, (tuple, list)):
        for item in value:
            _check_plain(item, depth + 1)
        return
    if depth < _NESTING and isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, depth + 1)
            _check_plain(item, depth + 1)
        return
    raise refused(f"a module's hook takes and gives tensors, numbers and tuples, not {kind(value)}")
