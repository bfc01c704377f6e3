"""``torch.autograd.graph.saved_tensors_hooks`` and ``save_on_cpu`` in programs, as ``with`` blocks.

``with torch.autograd.graph.saved_tensors_hooks(pack, unpack):`` is PyTorch's own context; ``pack``
and ``unpack`` are functions of the program (or listed functions), called by the evaluator when
PyTorch calls them, so every operation in them is sized and checked like any other code. PyTorch
calls them in the middle of an operation (pack) or of a backward (unpack): they run quietly, no
statement of theirs a step of its own. ``with torch.autograd.graph.save_on_cpu():`` is PyTorch's
own ``save_on_cpu`` (``pin_memory`` left False). What a slot then holds is what pack returned
(NOTE [saved-tensor hooks] in ``app/core/recorder/capture.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from app.core.language.objects import GradModeEntry
from app.core.model.errors import ProgramError

__all__ = ["SAVED_HOOKS", "Evaluating", "SavedHooksEntry", "graph_members", "quietly", "saved_hooks_context"]

SAVED_HOOKS = ("saved_tensors_hooks", "save_on_cpu")


class _Caller(Protocol):
    def call_value_with(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any: ...


class Evaluating(Protocol):
    """What the saved-tensor contexts use of the evaluation."""

    quiet: int

    @property
    def calls(self) -> _Caller: ...
    def eval(self, node: ast.expr) -> Any: ...
    def error(self, message: str, node: ast.AST) -> ProgramError: ...


@dataclass(frozen=True)
class SavedHooksEntry(GradModeEntry):
    """``saved_tensors_hooks`` or ``save_on_cpu``: usable only as a ``with`` block's context
    (a kind of the ``with`` markers, so imports and the ``with`` check take it as one)."""


def graph_members() -> dict[str, Any]:
    """``torch.autograd.graph``: the two saved-tensor contexts."""
    return {name: SavedHooksEntry(name, enabled=None) for name in SAVED_HOOKS}


def saved_hooks_context(
    ev: Evaluating, entry: SavedHooksEntry, node: ast.expr
) -> AbstractContextManager[Any]:
    """PyTorch's context for ``with <entry>(...)``, its hooks the program's functions."""
    if not isinstance(node, ast.Call):
        raise ev.error(f"with ...{entry.name}(...): calls it", node)
    args, keywords = node.args, node.keywords
    if entry.name == "save_on_cpu":
        if args or keywords:
            raise ev.error("with torch.autograd.graph.save_on_cpu(): takes nothing here", node)
        return torch.autograd.graph.save_on_cpu()
    if len(args) != 2 or keywords:
        raise ev.error("saved_tensors_hooks(pack, unpack) takes the two functions", node)
    pack, unpack = (ev.eval(a) for a in args)
    return torch.autograd.graph.saved_tensors_hooks(quietly(ev, pack, node), quietly(ev, unpack, node))


def quietly(ev: Evaluating, fn: Any, node: ast.Call) -> Callable[[Any], Any]:
    """``fn`` called by the evaluator from inside PyTorch: no statement of it is a step."""

    def hook(value: Any) -> Any:
        ev.quiet += 1
        try:
            return ev.calls.call_value_with(fn, [value], {}, node)
        finally:
            ev.quiet -= 1

    return hook
