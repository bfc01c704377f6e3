"""The plain-Python modules a program may import: ``math`` and ``random``, as closed lists.

# NOTE [program random]
``import random`` gives every program the same :class:`random.Random` (Python's own Mersenne
Twister, so ``random.seed(0)`` then ``random.random()`` gives what plain Python gives), seeded
with the program's seed when a recording starts and put back as it was when it ends
(:func:`seeded_random`), as ``torch.manual_seed`` is: re-recording after an edit shows the same
numbers. Only functions whose work is bounded by what they are given are listed: ``choices``
has its ``k`` checked before it builds a list, ``getrandbits`` and the state are left out.

Functions a program imports by name (``from math import sqrt``) are held as
:class:`ListedFunction`: a checked object that can be called and answers no member, so the
program never holds the Python function itself.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from app.core.language.objects import Checked
from app.core.model.errors import ProgramError
from app.core.sizing.limits import MAX_SEQUENCE

__all__ = [
    "MATH_MEMBERS",
    "PROGRAM_RANDOM",
    "RANDOM_FUNCTIONS",
    "ListedFunction",
    "math_members",
    "random_members",
    "seeded_random",
]

# math's functions of numbers; factorial, comb, perm and prod are left out: their work grows
# with the size of the integers they are given (math.factorial(10**6) takes seconds).
MATH_MEMBERS = frozenset(
    [
        "pi",
        "e",
        "tau",
        "inf",
        "nan",
        "sqrt",
        "exp",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "floor",
        "ceil",
        "trunc",
        "fabs",
        "pow",
        "hypot",
        "degrees",
        "radians",
        "isclose",
        "isnan",
        "isinf",
        "isfinite",
        "erf",
        "erfc",
        "gamma",
        "lgamma",
        "copysign",
        "fmod",
        "fsum",
        "isqrt",
        "gcd",
    ]
)

RANDOM_FUNCTIONS = frozenset(
    [
        "seed",
        "random",
        "uniform",
        "randint",
        "randrange",
        "choice",
        "choices",
        "shuffle",
        "sample",
        "gauss",
        "normalvariate",
        "expovariate",
        "triangular",
        "betavariate",
    ]
)


class ListedFunction(Checked):
    """A listed function bound to a name of the program's own (``from math import sqrt``).

    >>> root = ListedFunction("math.sqrt", math.sqrt)
    >>> root.call(9.0), root.kind
    (3.0, 'the function math.sqrt')
    """

    def __init__(self, path: str, fn: Callable[..., Any]) -> None:
        self._fn = fn
        self.path = path
        self.kind = f"the function {path}"
        self.__name__ = path.rsplit(".", 1)[-1]
        self.__module__ = "torch" if path.startswith("torch") else path.split(".", maxsplit=1)[0]

    def __repr__(self) -> str:
        return f"<function {self.path}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function."""
        return self._fn(*args, **kwargs)


def math_members() -> dict[str, Any]:
    """``math``'s listed members, by name.

    >>> sorted(math_members())[:4], math_members()["pi"] == math.pi
    (['acos', 'acosh', 'asin', 'asinh'], True)
    """
    return {name: getattr(math, name) for name in sorted(MATH_MEMBERS) if hasattr(math, name)}


SEED = 0  # the program's seed, as torch.manual_seed(0) in the recorder
PROGRAM_RANDOM = random.Random(SEED)


def _choices(population: Any, weights: Any = None, *, cum_weights: Any = None, k: Any = 1) -> list[Any]:
    """``random.choices``, with ``k`` checked before the list is built."""
    if isinstance(k, int) and k > MAX_SEQUENCE:
        raise ProgramError(f"random.choices(k=...) makes at most {MAX_SEQUENCE:,} items")  # a refusal
    return PROGRAM_RANDOM.choices(population, weights, cum_weights=cum_weights, k=k)


def _sample(population: Any, k: Any, *, counts: Any = None) -> list[Any]:
    """``random.sample``, with ``k`` checked before the list is built (``counts`` repeat the
    population without a list, so ``k`` alone bounds the work)."""
    if isinstance(k, int) and k > MAX_SEQUENCE:
        raise ProgramError(f"random.sample(k=...) makes at most {MAX_SEQUENCE:,} items")  # a refusal
    return PROGRAM_RANDOM.sample(population, k, counts=counts)


def random_members() -> dict[str, Any]:
    """``random``'s listed functions, bound to the program's generator (NOTE [program random]).

    >>> with seeded_random(3):
    ...     first = random_members()["random"]()
    >>> first == random.Random(3).random()
    True
    """
    members: dict[str, Any] = {name: getattr(PROGRAM_RANDOM, name) for name in sorted(RANDOM_FUNCTIONS)}
    members["choices"] = _choices
    members["sample"] = _sample
    return members


@contextmanager
def seeded_random(seed: int = SEED) -> Iterator[None]:
    """The program's generator seeded with ``seed``; its state as before once the block ends."""
    state = PROGRAM_RANDOM.getstate()
    PROGRAM_RANDOM.seed(seed)
    try:
        yield
    finally:
        PROGRAM_RANDOM.setstate(state)
