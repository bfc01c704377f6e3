"""Bounds on plain Python values: lists, tuples, text and integers.

``[0] * 10**9``, ``9**9**9`` or ``'%*d' % (10**9, 1)`` never reach PyTorch,
so the size guard cannot see them; they are refused here before they are
built (see NOTE [size guard] in ``guard.py``).
"""

from __future__ import annotations

import ast
from typing import Any

import torch

from app.core.language.limits import MAX_INT_BITS, MAX_NESTING, MAX_SEQUENCE
from app.core.language.whitelist import Namespace

__all__ = ["PySizes", "kind", "python_arith_refusal"]


class PySizes:
    """Items and nesting depth of lists, tuples and text.

    The language never changes a list once made (no list methods, no item
    assignment, ``+=`` makes a new list), so sizes are remembered by identity;
    the values are kept alive with them so an id is never reused.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, int, int]] = {}

    def measure(self, value: Any) -> tuple[int, int]:
        """(items counted through every nested list, nesting depth)."""
        if isinstance(value, str):
            return len(value), 0
        if not isinstance(value, (list, tuple)):
            return 1, 0
        known = self._known.get(id(value))
        if known is not None:
            return known[1], known[2]
        items, depth = 0, 0
        for item in value:
            if isinstance(item, (list, tuple)):
                sub_items, sub_depth = self.measure(item)
            else:
                sub_items, sub_depth = 1, 0
            items += sub_items
            depth = max(depth, sub_depth)
        self._known[id(value)] = (value, items, depth + 1)
        return items, depth + 1

    def refusal(self, value: Any) -> str | None:
        """Why ``value`` is nested too deeply or holds too many items, or None."""
        items, depth = self.measure(value)
        if depth > MAX_NESTING:
            return f"lists can be nested at most {MAX_NESTING} deep"
        if items > MAX_SEQUENCE:
            return f"this would hold {items:,} items; the limit is {MAX_SEQUENCE:,}"
        return None


def python_arith_refusal(op: ast.operator, left: Any, right: Any, sizes: PySizes) -> str | None:
    """Why plain-Python arithmetic would be too big (``[0] * 10**9``, ``9**9**9``), or None."""
    sequences = (list, tuple, str)
    if isinstance(left, sequences) or isinstance(right, sequences):
        return _sequence_refusal(op, left, right, sizes)
    if isinstance(left, int) and isinstance(right, int):
        return _int_refusal(op, left, right)
    return None


def _sequence_refusal(op: ast.operator, left: Any, right: Any, sizes: PySizes) -> str | None:
    if isinstance(op, ast.Mod) and isinstance(left, str):
        return "text formatting with % is not part of the scenario language"
    if isinstance(op, ast.Mult):
        seq, count = (left, right) if isinstance(left, (list, tuple, str)) else (right, left)
        if not isinstance(count, int):
            return f"a list or text can only be repeated a whole number of times, not by {kind(count)}"
        return _length_refusal(sizes.measure(seq)[0] * max(count, 0))
    if isinstance(op, ast.Add) and type(left) is type(right):
        return _length_refusal(sizes.measure(left)[0] + sizes.measure(right)[0])
    return None


def _length_refusal(total: int) -> str | None:
    if total > MAX_SEQUENCE:
        return f"this would build a sequence of {total:,} items; the limit is {MAX_SEQUENCE:,}"
    return None


def _int_refusal(op: ast.operator, left: int, right: int) -> str | None:
    bits = max(abs(left).bit_length(), 1)
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1 and bits * right > MAX_INT_BITS:
        return f"this power would have more than {MAX_INT_BITS:,} bits: it is too large to compute"
    if isinstance(op, ast.Mult) and bits + abs(right).bit_length() > MAX_INT_BITS:
        return f"this product would have more than {MAX_INT_BITS:,} bits: it is too large to compute"
    return None


def kind(value: Any) -> str:
    """How a learner would name a value's type, with an article."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a bool (True/False)"
    if isinstance(value, int):
        return "an int"
    if isinstance(value, torch.Tensor):
        return "a tensor"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Namespace):
        return "a module"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"
