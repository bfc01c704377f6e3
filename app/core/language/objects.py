"""What the evaluator may hold besides tensors, numbers and lists, and how it tells the recorder.

# NOTE [checked objects]
A program may hold ``torch.nn`` modules and ``torch.optim`` optimizers, but
never the objects themselves: each comes wrapped in a :class:`Checked` proxy
that answers only the members it lists (``lin.weight``, ``model.parameters()``,
``opt.step()``). The evaluator asks the proxy and nothing else; a member the
proxy does not list is refused with its :attr:`Checked.kind` in the message.
Every call through a proxy runs under the size guard like any other call.

# NOTE [program hooks]
``loss.backward(...)``, ``torch.autograd.backward(...)`` and
``torch.autograd.grad(...)`` are ordinary calls in a program. The evaluator
does not run them itself: it hands the recorder a ready call
(:meth:`ProgramHooks.autograd_call`), so the recorder can hook the graph
first. After every simple statement it calls
:meth:`ProgramHooks.statement_done` with the loops around it, and
``print(...)`` text goes to :meth:`ProgramHooks.printed`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from app.core.model.graph import LoopMark
from app.core.model.program import CallKind

__all__ = [
    "AutogradEntry",
    "Checked",
    "GradModeEntry",
    "PrintedText",
    "ProgramHooks",
    "is_own_name",
    "listed_method",
]


def is_own_name(name: str) -> bool:
    """A name with one leading underscore, which a program may give its own things.

    >>> is_own_name("_init_weights"), is_own_name("__class__"), is_own_name("weight")
    (True, False, False)
    """
    return name.startswith("_") and not name.startswith("__")


def listed_method(owner: object, name: str, methods: Collection[str]) -> Callable[..., Any]:
    """``owner``'s own method ``name`` (bound) when ``methods`` lists it; KeyError otherwise: what
    a proxy's :meth:`Checked.method` is when its methods are its own, listed in ``METHODS``."""
    if name not in methods:
        raise KeyError(name)
    bound: Callable[..., Any] = getattr(owner, name)
    return bound


class Checked:
    """Base of every proxy a program may hold (NOTE [checked objects])."""

    kind: str = "an object"  # how messages name it: "an nn.Linear module"
    holds_own_names: bool = False  # the program defined it: its _names are its own (NOTE [own names])

    def get_attribute(self, name: str) -> Any:
        """The listed attribute ``name``; KeyError when it is not listed."""
        raise KeyError(name)

    def set_attribute(self, name: str, value: Any) -> None:
        """Assign a listed attribute; KeyError when it may not be assigned."""
        raise KeyError(name)

    def delete_attribute(self, name: str) -> None:
        """``del obj.name`` of a value the program set; KeyError when it may not be deleted."""
        raise KeyError(name)

    def method(self, name: str) -> Callable[..., Any]:
        """The listed method ``name`` (bound); KeyError when it is not listed."""
        raise KeyError(name)

    def members(self) -> list[str]:
        """Every listed attribute and method, for did-you-mean hints."""
        return []

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Calling the object itself (a module's forward); TypeError when it cannot be called."""
        raise TypeError(f"{self.kind} cannot be called")

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """Tensors it holds, with their path (``weight``, ``0.bias``): parameters and buffers.

        The recorder names leaves by these paths and walks from them to see which
        graph nodes the program still holds.
        """
        return iter(())


class PrintedText(str):
    """What a stand-in's call writes (``logger.info``, ``warnings.warn``): the evaluator sends it
    to the recording's printed output, as ``print``'s text (NOTE [program hooks]), and the call
    gives None. ``values``: what ``%`` fills in first (``logger.info("loss %.3f", loss)``)."""

    values: Any

    def __new__(cls, text: str, values: Any = None) -> PrintedText:
        made = super().__new__(cls, text)
        made.values = values
        return made


@dataclass(frozen=True)
class AutogradEntry:
    """``torch.autograd.backward``, ``torch.autograd.grad`` or ``Tensor.backward``, as a marker."""

    kind: CallKind
    fn: Callable[..., Any]


@dataclass(frozen=True)
class GradModeEntry:
    """``torch.no_grad``, ``torch.enable_grad`` or ``torch.set_grad_enabled``: usable only as
    ``with torch.no_grad():`` (``with torch.set_grad_enabled(training):``, whose flag is given)."""

    name: str
    enabled: bool | None  # None: set by the one True/False the with statement gives


class ProgramHooks(Protocol):
    """What the evaluator tells whoever runs the program (NOTE [program hooks])."""

    def autograd_call(
        self,
        kind: CallKind,
        run: Callable[[], Any],
        node: ast.Call,
        given: Mapping[str, Any],
        loops: tuple[LoopMark, ...],
    ) -> Any:
        """Run ``run()`` (the call, arguments evaluated) and return its result.

        ``given`` holds the keyword values as passed; ``node`` is the call's tree
        (its position and source are on it). Exceptions from ``run`` propagate.
        """

    def statement_done(self, statement: ast.stmt, loops: tuple[LoopMark, ...]) -> None:
        """A simple statement finished (not ``for``/``if``/``with`` themselves)."""

    def printed(self, text: str) -> None:
        """``print(...)`` wrote ``text`` (one line, without the newline)."""
