"""Every bound the program language enforces, and the words that report them.

The numbers a recording may change live in :class:`Limits`; the fixed ones
are module constants. How each is enforced: NOTE [size guard] in ``guard.py``.

# NOTE [caps]
Each cap's message names it and ends with the ``run`` hint: a person's own script records
without them. The counts of statements and of one loop's rounds are backstops against bombs;
real code runs cheap scalar loops of hundreds of thousands of rounds (a polynomial fitted for
100,000 steps, a table filled element by element), so both counts sit above what the evaluator
runs inside the time limit, and the time limit is what such a loop meets first, if anything.
What a loop makes all at once (a dataset's pass, the items of a program's ``__len__`` and
``__getitem__``) is capped by ``MAX_SEQUENCE``, as a list is.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.model.errors import with_run_hint

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_NESTING",
    "MAX_OPS_PER_CALL",
    "MAX_PIECES",
    "MAX_SEQUENCE",
    "MAX_SOURCE_CHARS",
    "MAX_TEXT",
    "Budget",
    "Limits",
    "budget_message",
    "loop_message",
    "statements_message",
    "timeout_message",
    "too_big",
]

MAX_SOURCE_CHARS = 100_000  # characters in one field's text
MAX_DEPTH = 100  # levels of the syntax tree
MAX_TEXT = 1_000  # characters in one text constant
MAX_SEQUENCE = 1_000_000  # items in a list or tuple (nested lists count every item), characters in text
MAX_NESTING = 32  # lists inside lists
MAX_INT_BITS = 100_000  # bits of a Python integer
MAX_PIECES = 10_000  # tensors one operation may return or take in a list
MAX_OPS_PER_CALL = 20_000  # ATen operations one call of the language may run


@dataclass(frozen=True)
class Limits:
    """Bounds on what one recording may do (``record(program, limits=...)``).

    >>> Limits(time_limit_s=5.0).max_elements
    10000000
    """

    max_elements: int = 10_000_000  # per tensor, including intermediates and views
    time_limit_s: float = 30.0
    max_work: int = 10_000_000_000  # multiply-adds (or elements touched) per call of the language
    max_total_elements: int = 100_000_000  # allocated per Budget (per Evaluator unless shared)
    max_iterations: int = 10_000_000  # per loop, each time it runs (NOTE [caps])
    max_statements: int = 10_000_000  # statements one program runs, loops counted each time round


class Budget:
    """Elements allocated so far. Share one between the evaluators of a recording.

    It also counts the operations that wrote into an existing tensor
    (``writes``), so a recorder knows when saved tensors may have changed.

    >>> b = Budget(10)
    >>> b.charge(4), b.charge(7), b.used
    (True, False, 11)
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.writes = 0

    def charge(self, elements: int) -> bool:
        self.used += elements
        return self.used <= self.limit


def too_big(elements: int, limits: Limits) -> str:
    """The refusal for a tensor of ``elements`` elements."""
    return with_run_hint(
        f"this would make a tensor of {elements:,} elements; the limit is {limits.max_elements:,}"
    )


def budget_message(budget: Budget) -> str:
    """The refusal once ``budget`` is spent."""
    return with_run_hint(
        f"this program has now made {budget.used:,} tensor elements and list items; "
        f"the limit is {budget.limit:,}"
    )


def loop_message(limits: Limits) -> str:
    """The refusal when one loop would run once more than allowed."""
    n = limits.max_iterations
    return with_run_hint(f"this loop ran {n:,} times; the limit is {n:,}")


def statements_message(limits: Limits) -> str:
    """The refusal when a program would run one statement more than allowed."""
    n = limits.max_statements
    return with_run_hint(f"the program ran {n:,} statements; the limit is {n:,}")


def timeout_message(limits: Limits) -> str:
    """Why a recording was stopped after its time limit."""
    return with_run_hint(f"the recording ran longer than {limits.time_limit_s:g} s and was stopped")
