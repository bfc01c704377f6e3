"""Python's own errors for Python's own mistakes on tensors, raised as plain Python raises them.

``x.requires_grad()`` calls a ``bool``: Python raises ``TypeError: 'bool' object is not
callable``. ``x.gradient`` names nothing a tensor has: ``AttributeError: 'Tensor' object has no
attribute 'gradient'``. Neither is a refusal: the program's line raised, and the recording ends
there with that exception, as the plain run ends. The error comes from doing the same thing on
the real value (reading the member, calling what was read), so its type and message are
Python's; only a public name reaches it (private and denied names are refused before), and
only when the real tensor lacks it, so nothing more than Python shows becomes readable.
``super().__init__`` read without a call is Python's bound method, a value that does nothing.
"""

from __future__ import annotations

from typing import Any

import torch

from app.core.language.objects import Checked

__all__ = ["SuperMethod", "call_member", "lacks_member", "read_missing"]


def lacks_member(owner: torch.Tensor, name: str) -> bool:
    """Whether the real tensor has no public ``name``: reading it raises AttributeError."""
    return not name.startswith("_") and not hasattr(type(owner), name) and name not in vars(owner)


def read_missing(owner: torch.Tensor, name: str) -> Any:
    """Read ``owner.name`` that ``lacks_member`` found missing: Python's AttributeError."""
    if not lacks_member(owner, name):  # checked by the caller; checked again on purpose
        raise ValueError(name)
    return getattr(owner, name)


def call_member(owner: torch.Tensor, name: str, *args: Any, **kwargs: Any) -> Any:
    """``owner.name(...)`` where ``name`` is a value, not a method: Python calls the value."""
    if name.startswith("_"):  # listed and public, checked by the caller; checked again on purpose
        raise ValueError(name)
    value = getattr(owner, name)
    if callable(value):  # checked by the caller: only values that are not methods come here
        raise ValueError(name)
    return value(*args, **kwargs)


class SuperMethod(Checked):
    """``super().__init__`` read and not called: Python's bound method, held and never called.

    ``super(Net, self).__init__`` without ``()`` is a plain run's no-op (and then assigning a
    module raises "cannot assign module before Module.__init__() call"). Only ``__init__``
    read from ``super()`` gives one of these; it has no members and is not called.
    """

    kind = "a bound method of super()"

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<bound method {self.name}>"

    def members(self) -> list[str]:
        return []
