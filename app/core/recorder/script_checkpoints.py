"""``torch.utils.checkpoint.checkpoint`` in a script of the user's own, as in a program.

While a script is recorded (``run``), PyTorch's ``checkpoint`` is wrapped so that the block's
forward is drawn in its frame and its recompute inside a backward is a ``recompute`` step of that
call, as for a checked program (NOTE [checkpoint frames] in ``app/core/language/checkpoints.py``).
PyTorch's own checkpoint runs, with the script's own function; only its early stop is turned off,
so that the recompute runs the whole block (what it computes is the same).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from torch.utils import checkpoint as torch_checkpoint

from app.core.language.checkpoints import CheckpointHooks, in_backward

__all__ = ["patched_checkpoint"]


def patched_checkpoint(hooks: CheckpointHooks, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real`` (PyTorch's ``checkpoint``) telling ``hooks`` of the block's forward and recompute."""

    def checkpoint(function: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(function, "__name__", None) or type(function).__name__
        frame = f"checkpoint({name})"
        made: list[Callable[[], Any]] = []  # the forward's outputs, weakly (PyTorch holds `block`)

        def block(*inner: Any, **more: Any) -> Any:
            if not in_backward():
                return function(*inner, **more)
            forward = [ref() for ref in made]
            return hooks.recompute(frame, lambda: function(*inner, **more), forward)

        with (
            hooks.checkpoint_forward(frame, None) as outputs,
            torch_checkpoint.set_checkpoint_early_stop(False),
        ):
            result = real(block, *args, **kwargs)
            outputs(result)
        made.extend(
            weakref.ref(t) for t in (result if isinstance(result, tuple) else (result,)) if t is not None
        )
        return result

    checkpoint.__name__ = checkpoint.__qualname__ = "checkpoint"
    checkpoint.__module__ = real.__module__
    checkpoint.__doc__ = real.__doc__
    return checkpoint
