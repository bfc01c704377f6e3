"""``t.register_hook(fn)`` in programs, with a function of the program.

PyTorch calls ``fn`` with the gradient flowing into ``t`` during a backward, and uses what it
returns (when not None) instead. ``fn`` is the program's own function (a ``def``, a ``lambda``, a
``functools.partial`` of one, or ``print``): the evaluator runs it when PyTorch calls it, quietly
(no statement of it a step of its own, as the saved-tensor hooks' pack and unpack: NOTE
[saved-tensor hooks]), every operation in it sized and checked like any other code. The handle
answers ``remove()`` and nothing else.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, Protocol

import torch

from app.core.language.instances import ProgramFunction
from app.core.language.objects import Checked, listed_method
from app.core.language.safe_builtins import SafeBuiltin
from app.core.language.saved_hooks import Evaluating, quietly
from app.core.language.stand_ins import Partial
from app.core.model.errors import ProgramError

__all__ = ["HookHandle", "register_hook"]


class _Applying(Evaluating, Protocol):
    def apply(
        self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any: ...
    def error(self, message: str, node: ast.AST) -> ProgramError: ...


class HookHandle(Checked):
    """What ``t.register_hook(fn)`` gives: ``handle.remove()`` takes the hook off."""

    kind = "a hook handle"
    METHODS = ("remove",)

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def method(self, name: str) -> Callable[..., Any]:
        return listed_method(self, name, self.METHODS)

    def members(self) -> list[str]:
        return list(self.METHODS)

    def remove(self) -> None:
        self._handle.remove()


def register_hook(ev: _Applying, owner: torch.Tensor, node: ast.Call) -> HookHandle:
    """``owner.register_hook(fn)``: PyTorch's own hook, calling ``fn`` through the evaluator."""
    if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
        raise ev.error("register_hook(fn) takes one function", node)
    fn = ev.eval(node.args[0])
    if not isinstance(fn, (ProgramFunction, Partial, SafeBuiltin)):
        raise ev.error("register_hook(fn) takes a function the program defines", node.args[0])
    handle = ev.apply(owner.register_hook, [quietly(ev, fn, node)], {}, node)
    return HookHandle(handle)
