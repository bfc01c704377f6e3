"""PyTorch's own error messages for what the built-ins do wrong, taken from plain PyTorch."""

import pytest


def plain_forgot_retain_error() -> str:
    """PyTorch's own message for the seed's second backward without retention (the oracle)."""
    import torch

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.square()
    y.sum().backward()
    with pytest.raises(RuntimeError) as info:
        (y * 3).sum().backward()
    return str(info.value)
