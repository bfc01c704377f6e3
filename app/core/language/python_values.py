"""Bounds on plain Python values: lists, tuples, text and integers.

``[0] * 10**9``, ``9**9**9``, ``'%*d' % (10**9, 1)`` or ``list(range(10**9))``
never reach PyTorch, so the size guard cannot see them; they are refused
here before they are built (see NOTE [size guard] in ``guard.py``).
"""

from __future__ import annotations

import ast
import sys
from typing import Any, NamedTuple

import torch

from app.core.language.objects import Checked
from app.core.language.safe_builtins import SafeBuiltin
from app.core.language.whitelist import Namespace
from app.core.sizing.limits import MAX_INT_BITS, MAX_NESTING, MAX_SEQUENCE

__all__ = ["NOTHING", "PySizes", "is_iterable", "is_lazy", "kind", "python_arith_refusal", "range_length"]


NOTHING: Any = object()  # "no item": None is an item like any other
_REMEMBERED_COST = 256  # containers that take this many steps to walk have their size remembered
_NESTED = (list, tuple, range, enumerate, zip)  # what a list's items are measured through
_FIRST_SWEEP = 1024  # remembered values before the first sweep of those the program let go


class _Size(NamedTuple):
    items: int  # counted through every nested list
    depth: int
    steps: int  # what walking it took
    holds_list: bool  # a list somewhere inside: its size can change
    value: Any = None  # kept alive while remembered (last, as _sweep reads it)


class PySizes:
    """Items and nesting depth of lists, tuples, text and lazy sequences (``range``, ``zip``).

    Measuring walks a container, counting an empty one as one item. The size of any container that took
    ``_REMEMBERED_COST`` steps to walk is remembered by identity, so nested
    containers are never walked twice and no walk costs more than 256 steps per
    item; the value is kept alive while remembered so its id is never reused,
    and swept out once only this cache holds it (:meth:`_sweep`). Lists change
    only through the language (``append``, item assignment, ``del``), which
    reports each change with :meth:`changed`: the changed list's entry is
    updated and every remembered container holding a list is forgotten, since
    it may hold the changed one.

    >>> sizes = PySizes()
    >>> sizes.measure([[1, 2], (3,), "abc", range(10)])
    (14, 2)
    """

    def __init__(self) -> None:
        self._known: dict[int, _Size] = {}
        self._lazy: dict[int, tuple[int | None, Any]] = {}  # length, enumerate or zip object
        self._sweep_at = _FIRST_SWEEP

    def note_lazy(self, value: Any, length: int | None) -> None:
        """Remember how many items ``enumerate(...)`` or ``zip(...)`` will give (None: unknown)."""
        self._lazy[id(value)] = (length, value)
        self._sweep_if_due()

    def length(self, value: Any) -> int | None:
        """How many items iterating ``value`` gives, when known without iterating it."""
        if isinstance(value, range):
            return range_length(value)
        if isinstance(value, (list, tuple, str)):
            return len(value)
        if isinstance(value, torch.Tensor):
            return int(value.shape[0]) if value.dim() > 0 else None
        if is_iterable(value):  # a dataset or a loader: its length, as len() gives it
            return len(value)
        known = self._lazy.get(id(value))
        return known[0] if known is not None and known[1] is value else None

    def forget_lazy(self, value: Any) -> None:
        """``value`` is being iterated: whatever it gives later is no longer its full length."""
        known = self._lazy.get(id(value))
        if known is not None and known[1] is value:
            del self._lazy[id(value)]

    def measure(self, value: Any) -> tuple[int, int]:
        """(items counted through every nested list, nesting depth)."""
        size = self._measure(value, {})
        return size.items, size.depth

    def _measure(self, value: Any, seen: dict[int, _Size]) -> _Size:
        """The size of ``value``; ``seen`` holds what this walk met already (shared sublists)."""
        if isinstance(value, str):
            return _Size(len(value), 0, 1, False)
        if isinstance(value, range) or is_lazy(value):
            return _Size(self.length(value) or 0, 1, 1, False)
        if not isinstance(value, (list, tuple)):
            return _Size(1, 0, 1, False)
        known = self._known.get(id(value)) or seen.get(id(value))
        if known is not None:
            return known._replace(steps=1)
        items, depth, steps, holds_list = 0, 0, 1, False
        for item in value:
            if isinstance(item, _NESTED):
                sub = self._measure(item, seen)
                items, depth, steps = items + sub.items, max(depth, sub.depth), steps + sub.steps
                holds_list = holds_list or sub.holds_list or isinstance(item, list)
            else:
                items, steps = items + 1, steps + 1
        # An empty list still takes a slot where it is held: x.append(x[:]) doubles each time.
        size = _Size(max(items, 1), depth + 1, steps, holds_list)
        seen[id(value)] = size
        if steps >= _REMEMBERED_COST:
            self._known[id(value)] = size._replace(value=value)
            self._sweep_if_due()
        return size

    def refusal(self, value: Any) -> str | None:
        """Why ``value`` is nested too deeply or holds too many items, or None."""
        items, depth = self.measure(value)
        return _size_refusal(items, depth)

    def refusal_to_add(self, target: list[Any], item: Any, removed: Any = NOTHING) -> str | None:
        """Why ``item`` may not go into ``target`` (in place of ``removed``), or None."""
        if item is target or (self.measure(item)[1] >= 2 and _contains(item, target)):
            return "a list cannot hold itself"
        items, depth = self.measure(target)
        added, added_depth = self.measure(item)
        taken = 0 if removed is NOTHING else self.measure(removed)[0]
        return _size_refusal(items + added - taken, max(depth, added_depth + 1))

    def changed(self, target: list[Any], added: Any = NOTHING, removed: Any = NOTHING) -> None:
        """``target`` was changed in place (``added`` went in, ``removed`` came out).

        Its own size is updated rather than measured again, so appending in a loop
        stays linear; every other remembered container that holds a list is
        forgotten, since it may hold ``target``.
        """
        entry = self._known.get(id(target))
        for key in [k for k, known in self._known.items() if known.holds_list and k != id(target)]:
            del self._known[key]
        if entry is None:
            return
        none = _Size(0, 0, 0, False)
        new = self._measure(added, {}) if added is not NOTHING else none
        taken = self._measure(removed, {}) if removed is not NOTHING else none
        holds = entry.holds_list or new.holds_list or isinstance(added, list)
        self._known[id(target)] = entry._replace(
            items=entry.items + new.items - taken.items,
            depth=max(entry.depth, new.depth + 1),
            holds_list=holds,
        )

    def _sweep_if_due(self) -> None:
        if len(self._known) + len(self._lazy) >= self._sweep_at:
            self._sweep()
            self._sweep_at = max(_FIRST_SWEEP, 2 * (len(self._known) + len(self._lazy)))

    def _sweep(self) -> None:
        """Forget the values nothing but this cache holds (so a sweep frees what loops let go)."""
        for table in (self._known, self._lazy):
            for key in [k for k, entry in table.items() if sys.getrefcount(entry[-1]) <= _ONLY_REMEMBERED]:
                del table[key]


def _references_when_only_remembered() -> int:
    """What ``sys.getrefcount`` says, in :meth:`PySizes._sweep`, of a value only the cache holds."""
    table: dict[int, tuple[int, Any]] = {0: (0, [])}
    return max(sys.getrefcount(entry[-1]) for entry in table.values())


_ONLY_REMEMBERED = _references_when_only_remembered()


def _size_refusal(items: int, depth: int) -> str | None:
    if depth > MAX_NESTING:
        return f"lists can be nested at most {MAX_NESTING} deep"
    if items > MAX_SEQUENCE:
        return f"this would hold {items:,} items; the limit is {MAX_SEQUENCE:,}"
    return None


def _contains(container: Any, target: Any) -> bool:
    """Whether ``target`` is inside ``container`` at any depth (only lists and tuples are opened)."""
    stack, seen = [container], {id(container)}
    while stack:
        current = stack.pop()
        for item in current:
            if item is target:
                return True
            if isinstance(item, (list, tuple)) and id(item) not in seen:
                seen.add(id(item))
                stack.append(item)
    return False


def is_iterable(value: Any) -> bool:
    """Whether ``value`` is a checked object a for loop may go through (a dataset, a loader)."""
    return isinstance(value, Checked) and hasattr(value, "__iter__") and hasattr(value, "__len__")


def is_lazy(value: Any) -> bool:
    """Whether ``value`` is an ``enumerate`` or ``zip`` object, which gives its items one by one."""
    return isinstance(value, (enumerate, zip))


def range_length(r: range) -> int:
    """``len(r)``, also for ranges longer than ``len`` can count."""
    if r.step > 0:
        return max(0, (r.stop - r.start + r.step - 1) // r.step)
    return max(0, (r.start - r.stop - r.step - 1) // -r.step)


def python_arith_refusal(op: ast.operator, left: Any, right: Any, sizes: PySizes) -> str | None:
    """Why plain-Python arithmetic would be too big (``[0] * 10**9``, ``9**9**9``), or None."""
    sequences = (list, tuple, str)
    if isinstance(left, sequences) or isinstance(right, sequences):
        return _sequence_refusal(op, left, right, sizes)
    if isinstance(left, int) and isinstance(right, int):
        return _int_refusal(op, left, right)
    return None


def _sequence_refusal(op: ast.operator, left: Any, right: Any, sizes: PySizes) -> str | None:
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
    if isinstance(value, Checked):
        return value.kind
    if isinstance(value, SafeBuiltin):
        return f"the built-in {value.name}"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"
