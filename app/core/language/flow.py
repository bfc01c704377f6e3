"""What the evaluator's parts share: control-flow signals and the words of a failure.

``break`` and ``continue`` leave a loop by raising :class:`Break` and
:class:`Continue`; they are not errors and never reach the program.
"""

from __future__ import annotations

from app.core.language.safe_builtins import without_addresses
from app.core.model.errors import ProgramError

__all__ = ["HAS_MEMBERS", "Break", "Continue", "NotListed", "Return", "first_line"]

# What a learner may read attributes from and call methods on, as refusals name them.
HAS_MEMBERS = "tensors, nn modules, optimizers, torch and F"


class Break(Exception):
    """``break``: leaves the innermost loop."""


class Continue(Exception):
    """``continue``: goes on with the next item of the innermost loop."""


class NotListed(ProgramError):
    """A proxy answered KeyError: the member is not listed (NOTE [checked objects])."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, without memory addresses."""
    text = str(exc).strip() or type(exc).__name__
    return without_addresses(text.splitlines()[0])  # NOTE [no addresses in a recording]


class Return(Exception):
    """``return``: leaves the innermost function with ``value``."""

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value
