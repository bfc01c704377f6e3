"""The exercise the project started from, as a plain function."""

from __future__ import annotations

import torch

__all__ = ["two_losses"]


def two_losses(x: torch.Tensor) -> torch.Tensor:
    """Backpropagate two losses that share ``y = x.square()``; return ``x.grad``.

    The first backward retains the graph so the second can reuse the saved
    ``x`` of the square; the second omits retention and frees it. Gradients
    accumulate: ``2x + 6x = 8x`` when ``x.grad`` starts as None, added onto
    an existing ``x.grad`` otherwise.

    >>> two_losses(torch.tensor([1., 2.], requires_grad=True)).tolist()
    [8.0, 16.0]
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"two_losses needs a tensor, not {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"two_losses needs a floating-point tensor, not {x.dtype}")
    if not x.requires_grad:
        raise ValueError("two_losses needs a tensor that requires grad: create it with requires_grad=True")
    if not x.is_leaf:
        raise ValueError("two_losses needs a leaf tensor (one you created, not the result of an operation)")
    y = x.square()
    y.sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    assert x.grad is not None  # both calls reach x
    return x.grad
