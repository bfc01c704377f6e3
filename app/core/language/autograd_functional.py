"""``torch.autograd.functional`` in programs: derivatives of a module or a listed function.

``jacobian(model, x)``, ``hessian(f, x)``, ``vjp``, ``jvp``, ``hvp`` and ``vhp`` take a function
and its inputs. In a program the function is something the program holds that can be called: a
module (``nn.Linear(2, 3)``) or a listed function bound by name (``from torch import tanh``).
PyTorch's own implementation runs, through the object's checked call, inside one call of the
language, so the size guard sees every operation of the forward and backward passes it makes;
its internal ``autograd.grad`` calls are its own, not recorded calls of the program. Every
keyword each function documents (``create_graph``, ``strict``, ``vectorize``, ``strategy``,
``outer_jacobian_strategy``, ``v``) is passed to PyTorch, which checks it: ``vectorize`` and the
forward-mode strategy run the function under ``vmap``, whose batched operations reach the size
guard as the real, batched tensors they compute on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.autograd import functional

from app.core.language.hints import refused
from app.core.language.objects import Checked

__all__ = ["FUNCTIONAL_AUTOGRAD", "functional_members"]

FUNCTIONAL_AUTOGRAD = ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")
SETTINGS = frozenset({"create_graph", "strict", "vectorize", "strategy", "outer_jacobian_strategy", "v"})


def functional_members() -> dict[str, Any]:
    """The listed functions of ``torch.autograd.functional``, by name.

    >>> from app.core.language.python_modules import ListedFunction
    >>> import torch
    >>> cube = ListedFunction("torch.square", torch.square)
    >>> functional_members()["jacobian"](cube, torch.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    return {name: _checked(name, getattr(functional, name)) for name in FUNCTIONAL_AUTOGRAD}


def _checked(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def call(func: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        where = f"torch.autograd.functional.{name}"
        if not isinstance(func, Checked):
            raise refused(
                f"{where} takes something the program can call first, such as a module "
                "(nn.Linear(2, 1)) or a function imported by name (from torch import tanh)"
            )
        unknown = sorted(set(kwargs) - SETTINGS)
        if unknown:  # PyTorch's own TypeError names the keyword; no other keyword reaches it
            raise TypeError(f"{name}() got an unexpected keyword argument '{unknown[0]}'")
        return real(func.call, inputs, *args, **kwargs)

    call.__name__ = name
    call.__module__ = "torch"
    return call
