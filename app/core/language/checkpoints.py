"""``torch.utils.checkpoint`` in programs: PyTorch's own checkpoint around the program's block.

``checkpoint(block, *args, use_reentrant=..., preserve_rng_state=...)`` is PyTorch's
``torch.utils.checkpoint.checkpoint``; the function it runs, in the forward and again in the
backward, is the program's ``block`` called by the evaluator, so every operation of both passes
runs under the size guard. ``checkpoint_sequential(functions, segments, input)`` splits the
functions into segments as PyTorch does and checkpoints every segment but the last.

# NOTE [checkpoint frames]
Whoever runs the program may want to see the block: a recorder answers :class:`CheckpointHooks`.
The block's forward runs inside :meth:`CheckpointHooks.checkpoint_forward` (its nodes are drawn in
one frame, named ``checkpoint(block)``); when PyTorch runs the block again inside a backward (it
is then inside an engine's graph task), the run goes through :meth:`CheckpointHooks.recompute`, so
the nodes it made again are steps of that backward call. A recompute runs quietly: the block's
statements are no steps of their own, as a custom backward's are not. A non-reentrant checkpoint
recomputes the whole block (PyTorch's early stop is turned off: it would stop the block half-way,
at an exception of its own, and the recompute would show half its nodes); what it computes is the
same.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import torch
from torch.utils import checkpoint as torch_checkpoint

from app.core.language.torch_wrappers import PassThrough

if TYPE_CHECKING:
    from app.core.language.evaluation import Evaluation

__all__ = ["CheckpointHooks", "frame_name", "in_backward", "run_checkpoint"]

# checkpoint's own settings, and the values each may take
_FLAGS = frozenset(["use_reentrant", "preserve_rng_state", "debug"])
_CHECKS = frozenset(["default", "none"])


@runtime_checkable
class CheckpointHooks(Protocol):
    """What a recorder answers to see checkpointed blocks (NOTE [checkpoint frames])."""

    def checkpoint_forward(
        self, frame: str, line: int | None
    ) -> AbstractContextManager[Callable[[Any], None]]:
        """The block's forward runs inside; the context gives a function told the outputs."""

    def recompute(self, frame: str, run: Callable[[], Any], forward: Any) -> Any:
        """Run ``run()``, the block again inside a backward call, and return its result;
        ``forward`` is what the block's forward returned (the checkpoint's own output when
        reentrant)."""


def in_backward() -> bool:
    """Whether an autograd engine is running a graph task here (a backward's recompute)."""
    return bool(torch._C._current_graph_task_id() != -1)


def frame_name(node: ast.Call, what: str = "checkpoint") -> str:
    """``checkpoint(block)``: the frame's name, from the program text of the block's argument."""
    block = ast.unparse(node.args[0]) if node.args else "block"
    return f"{what}({block if len(block) <= 40 else block[:39] + '…'})"


def _settings(ev: Any, kwargs: dict[str, Any], node: ast.Call) -> dict[str, Any]:
    settings = {k: kwargs.pop(k) for k in list(kwargs) if k in PassThrough.SETTINGS}
    for key, value in settings.items():
        fine = value in _CHECKS if key == "determinism_check" else isinstance(value, bool) or value is None
        if not fine:
            raise ev.error(f"checkpoint's {key}= takes True or False here", node)
    return settings


def run_checkpoint(
    ev: Evaluation, fn: PassThrough, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    """``checkpoint(block, *args)`` or ``checkpoint_sequential(functions, segments, input)``."""
    calls = ev.calls
    kwargs = dict(kwargs)
    run = _Checkpointer(ev, _settings(ev, kwargs, node), node)
    if not args:
        raise ev.error(f"{fn.kind} takes a function first", node)
    if not fn.sequential:
        block = args[0]

        def call_block(*inner: Any) -> Any:
            return calls.call_value_with(block, list(inner), dict(kwargs), node)

        return run.checkpointed(call_block, args[1:], frame_name(node))
    if len(args) != 3 or kwargs or not isinstance(args[1], int) or args[1] < 1:
        raise ev.error("checkpoint_sequential(functions, segments, input) takes these three", node)
    return run.sequential(args[0], args[1], args[2])


class _Checkpointer:
    """One ``checkpoint`` call of the program: its settings, and the recorder's hooks if any."""

    def __init__(self, ev: Evaluation, settings: dict[str, Any], node: ast.Call) -> None:
        self.ev, self.calls, self.settings, self.node = ev, ev.calls, settings, node
        hooks = ev.hooks
        self.hooks = hooks if isinstance(hooks, CheckpointHooks) else None

    def sequential(self, functions: Any, segments: int, value: Any) -> Any:
        """PyTorch's ``checkpoint_sequential``: equal segments checkpointed, the rest run as it is."""
        items = self.ev.statements.all_items(functions, self.node)
        size = len(items) // segments
        end = -1
        name = frame_name(self.node, "checkpoint_sequential")
        for number, start in enumerate(range(0, size * (segments - 1), size), 1):
            end = start + size - 1
            value = self.checkpointed(
                self._chain(items[start : end + 1]), [value], f"{name} segment {number}"
            )
        return self._chain(items[end + 1 :])(value)

    def _chain(self, part: list[Any]) -> Callable[..., Any]:
        def run(value: Any) -> Any:
            for item in part:
                value = self.calls.call_value_with(item, [value], {}, self.node)
            return value

        return run

    def checkpointed(self, run: Callable[..., Any], args: list[Any], frame: str) -> Any:
        """PyTorch's ``checkpoint`` of ``run``, a recompute told to the hooks (NOTE [checkpoint frames])."""
        ev, hooks = self.ev, self.hooks
        # What the checkpoint returned in the forward, weakly: PyTorch's frame holds this closure,
        # and the result's nodes hold the frame, until the backward frees them.
        made: list[Callable[[], Any]] = []

        def block(*inner: Any) -> Any:
            if not in_backward():
                return run(*inner)
            ev.quiet += 1  # PyTorch runs it inside a backward call: no statement of it is a step
            try:
                if hooks is None:
                    return run(*inner)
                forward = [ref() for ref in made]
                return hooks.recompute(frame, lambda: run(*inner), forward)
            finally:
                ev.quiet -= 1

        early_stop = torch_checkpoint.set_checkpoint_early_stop(False)
        with _forward(hooks, frame, self.node.lineno) as outputs, early_stop:
            result = ev.apply(torch_checkpoint.checkpoint, [block, *args], self.settings, self.node)
            outputs(result)
        made.extend(weakref.ref(t) for t in (result if isinstance(result, tuple) else (result,)))
        return result


@contextmanager
def _forward(hooks: CheckpointHooks | None, frame: str, line: int) -> Iterator[Callable[[Any], None]]:
    if hooks is None:
        yield lambda result: None
        return
    with hooks.checkpoint_forward(frame, line) as outputs:
        yield outputs
