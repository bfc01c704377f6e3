"""The plain Python builtins a program may call (``print``, ``sum``, ``round``...) and the text
they make: ``print``'s, an f-string field's, without object addresses."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from app.core.model.errors import ProgramError
from app.core.sizing.limits import MAX_SEQUENCE

__all__ = [
    "BUILTINS",
    "LAZY_BUILTINS",
    "PRINT_LIMIT",
    "SafeBuiltin",
    "format_field",
    "print_text",
    "without_addresses",
]


@dataclass(frozen=True)
class SafeBuiltin:
    """A plain Python function the language may call by name."""

    name: str
    fn: Callable[..., Any]


MAX_ROUND_DIGITS = 1000
PRINT_LIMIT = 2_000  # characters of one print(...)'s text; the rest is cut off with an ellipsis
# Builtins that go through a range, zip or enumerate one item at a time (or not at all):
# everything else that takes one makes all its items at once, so its length is checked first.
LAZY_BUILTINS = frozenset(["enumerate", "zip", "len", "bool", "print"])


def _round(number: Any, ndigits: Any = None) -> Any:
    """``round``, except that ``round(5, -10**9)`` (which computes 10**10**9) is refused."""
    if isinstance(ndigits, int) and abs(ndigits) > MAX_ROUND_DIGITS:
        raise ProgramError(f"round() takes at most {MAX_ROUND_DIGITS} digits")  # a refusal, not Python's
    return round(number) if ndigits is None else round(number, ndigits)


def _sum(values: Any, /, start: Any = 0) -> Any:
    """``sum`` of numbers or tensors; joining lists this way copies them again and again."""
    if isinstance(start, (list, tuple, str)):
        raise ProgramError("sum() adds numbers and tensors here; join lists with +")  # a refusal
    return sum(values, start)


def print_text(*values: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: Any = False) -> str:
    """The text ``print(*values)`` would write, without ``end``, at most PRINT_LIMIT characters.

    >>> print_text("loss", 0.5, [1, "a"], (2,))
    "loss 0.5 [1, 'a'] (2,)"
    """
    if file is not None:
        raise ProgramError("print() writes to the program's output only: leave out file=")  # a refusal
    if sep is None:
        sep = " "
    if not isinstance(sep, str):
        raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
    text = ""
    for index, value in enumerate(values):
        text += (sep if index else "") + _limited_text(value, PRINT_LIMIT + 1 - len(text), top=True)
        if len(text) > PRINT_LIMIT:
            return text[: PRINT_LIMIT - 1] + "\u2026"
    return text


def format_field(value: Any, conversion: int, spec: str) -> str:
    """One ``{value!conversion:spec}`` field of an f-string; the spec was checked when parsed.

    >>> format_field(0.123456, -1, ".3f"), format_field("a", ord("r"), ""), format_field([1, "b"], -1, "")
    ('0.123', "'a'", "[1, 'b']")
    """
    if conversion in (ord("r"), ord("a")):
        text = _limited_text(value, MAX_SEQUENCE)
        value = text.encode("ascii", "backslashreplace").decode() if conversion == ord("a") else text
    elif conversion == ord("s") or (not spec and isinstance(value, (list, tuple))):
        value = _limited_text(value, MAX_SEQUENCE, top=True)
    text = format(value, spec)  # an object's format() with no spec is its str(): its address too
    return text if isinstance(value, str) else without_addresses(text)


# NOTE [no addresses in a recording]
# Python writes an object's memory address into its default repr (``<zip object at
# 0x7f...>``, ``<torch._C.Generator object at 0x...>``, what torch.manual_seed returns).
# An address tells where the recording process keeps things, which a recording shared
# with others must not say. Every object a program turns into text goes through
# _limited_text or format_field, so the address is taken out there (``<zip object>``), before
# the text can be printed, taken apart or joined: print(list(f"{g}")) finds no address either.
_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")  # a literal start, one run of digits: linear


def without_addresses(text: str) -> str:
    """``text`` without the addresses Python writes in object reprs.

    >>> without_addresses("<zip object at 0x7f3a9c0e1d40> and 0x1f")
    '<zip object> and 0x1f'
    """
    return _ADDRESS.sub("", text) if " at 0x" in text else text


def _limited_text(value: Any, room: int, *, top: bool = False) -> str:
    """``str(value)`` (``repr`` inside lists), built only as far as ``room`` characters."""
    if isinstance(value, str):
        return value if top else repr(value)
    if not isinstance(value, (list, tuple)) or isinstance(value, torch.Size):
        return without_addresses(str(value))  # NOTE [no addresses in a recording]
    opening, closing = ("[", "]") if isinstance(value, list) else ("(", ",)" if len(value) == 1 else ")")
    text = opening
    for index, item in enumerate(value):
        if len(text) > room:
            return text
        text += (", " if index else "") + _limited_text(item, room - len(text))
    return text + closing


# NOTE [object numbers]
# ``id(x)`` is an object's address in CPython, which a recording never shows (NOTE [no addresses
# in a recording]). A program gets a number per address instead, in the order it first asks: the
# same object gives the same number and two live objects never share one; as in CPython, a number
# may come back for a new object once the old one is gone (``a = a.exp()`` between two ids).
_NUMBERS: dict[int, int] = {}


def _id(value: Any) -> int:
    """``id(value)``: the object's number (NOTE [object numbers]).

    >>> a, b = [1], [2]
    >>> _id(a) == _id(a) != _id(b)
    True
    """
    return _NUMBERS.setdefault(id(value), len(_NUMBERS) + 1)


_id.__name__ = "id"


BUILTINS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "id": _id,
    "len": len,
    "min": min,
    "max": max,
    "sum": _sum,
    "float": float,
    "int": int,
    "bool": bool,
    "round": _round,
    "range": range,
    "enumerate": enumerate,
    "zip": zip,
    "list": list,
    "print": print_text,  # the evaluator sends the text to the recorder (NOTE [program hooks])
}
