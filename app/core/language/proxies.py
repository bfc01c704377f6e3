"""Checked proxies for ``torch.nn`` modules and ``torch.optim`` optimizers (NOTE [checked objects])."""

from __future__ import annotations

from typing import Any

__all__ = ["nn_members", "optim_members"]


def nn_members() -> dict[str, Any]:
    """The ``torch.nn`` classes a program may build, by name (each makes a :class:`Checked`)."""
    return {}


def optim_members() -> dict[str, Any]:
    """The ``torch.optim`` optimizers a program may build, by name."""
    return {}
