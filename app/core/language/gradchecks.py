"""``torch.autograd.gradcheck`` and ``gradgradcheck`` in programs, and ``MyFn.apply`` held as a value.

# NOTE [gradchecks]
A custom function's snippet ends by checking its backward: ``gradcheck(MyFn.apply, inp)``. The
check is PyTorch's own (its finite differences, its message when they disagree); what it calls is
the program's function, which the evaluator runs, each operation sized as any other. The inputs
are capped (``MAX_CHECKED_ELEMENTS``): the check calls the function twice per input element and
keeps a Jacobian of inputs by outputs. Only its number settings are taken (``eps``, ``atol``,
``rtol``, ``raise_exception``, ``nondet_tol``), never a setting that hands PyTorch other code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from app.core.language.objects import Checked

__all__ = ["GRADCHECK_SETTINGS", "MAX_CHECKED_ELEMENTS", "FunctionApply", "GradCheck", "gradcheck_members"]

MAX_CHECKED_ELEMENTS = 1_000
GRADCHECK_SETTINGS = frozenset(["eps", "atol", "rtol", "raise_exception", "nondet_tol"])


class GradCheck(Checked):
    """``torch.autograd.gradcheck`` or ``gradgradcheck``: called by the evaluator (NOTE [gradchecks])."""

    def __init__(self, name: str, check: Callable[..., Any]) -> None:
        self.name = name
        self.check = check
        self.kind = f"torch.autograd.{name}"


class FunctionApply(Checked):
    """``MyFn.apply`` read without calling it: calling it later is ``MyFn.apply(...)``."""

    def __init__(self, cls: Any) -> None:
        self.cls = cls
        self.kind = f"{cls.name}.apply"

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """PyTorch's own apply of the program's function (jacobian(MyFn.apply, x))."""
        return self.cls.function_class.apply(*args, **kwargs)


def gradcheck_members() -> dict[str, Any]:
    """What ``torch.autograd`` gives for checking a backward."""
    return {
        "gradcheck": GradCheck("gradcheck", torch.autograd.gradcheck),
        "gradgradcheck": GradCheck("gradgradcheck", torch.autograd.gradgradcheck),
    }
