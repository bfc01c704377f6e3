"""What ``msgspec`` says of a file that does not fit the schema, in the reader's words: one line
naming the place and what is wrong there (``steps[3].saved_bytes: expected a whole number, found
a string``), as for everything else the reader refuses.
"""

from __future__ import annotations

import re
from typing import Any, get_args

import msgspec

from app.core.lensfile.format import MAX_DIMS, LensError, checked_top, damaged
from app.core.lensfile.schema import HIGHEST, LOWEST
from app.core.model.graph import SlotKind
from app.core.model.program import CallKind
from app.core.model.timeline import StepKind
from app.core.model.values import PACKED_SIZES

__all__ = ["DECODE_ERRORS", "refusal"]

DECODE_ERRORS = (msgspec.DecodeError, RecursionError)  # ValidationError is a DecodeError

_SAID = re.compile(r"(?P<what>.*?)(?: - at `\$(?P<path>.*)`)?", re.DOTALL)
_PLACE = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_PAIRS = {
    "edges": "[from, to]",
    "source": "[file, line]",
    "storages": "[device, pointer, nbytes]",
    "loops": "[line, index, count]",
    "freed_by": "[node, slot, call]",
}


def refusal(exc: BaseException, text: bytes, prefix: str, *, top: bool = False) -> LensError:
    """The :class:`LensError` for what decoding ``text`` (the place ``prefix`` of the file) raised:
    broken JSON first, then (``top``) a file of another format or version, then the first field
    that is not what the schema says."""
    try:
        value = msgspec.json.decode(text)
    except UnicodeDecodeError as bad:  # pragma: no cover - msgspec says so as a DecodeError
        return damaged(f"its text is not UTF-8 ({bad.reason})")
    except RecursionError:
        return damaged("its JSON is nested too deeply")
    except msgspec.DecodeError as bad:
        if "UTF-8" in str(bad):
            return damaged("its text is not UTF-8 (invalid UTF-8)")
        return damaged(f"it is not JSON ({bad})")
    if top:
        checked_top(value)
    if isinstance(exc, RecursionError):  # pragma: no cover - the generic decode says so first
        return damaged("its JSON is nested too deeply")
    return damaged(_words(str(exc), prefix, value))


def _words(message: str, prefix: str, value: Any) -> str:
    said = _SAID.fullmatch(message)
    what, path = (said["what"], said["path"] or "") if said else (message, "")
    where = (prefix + path).lstrip(".") or "the file"
    names = [m[1] for m in _PLACE.finditer(path) if m[1]]
    name = names[-1] if names else ""
    found = _at(value, path)
    if what.startswith("Object missing required field"):
        return f"{where}: the key {what.split('`')[1]!r} is missing"
    if what.startswith("Expected `") and ", got `" in what:
        expected, got = what.split("`")[1], what.split("`")[3]
        wanted = "a number" if name == "flat" else _noun(expected)
        return f"{where}: expected {wanted}, found {_FOUND.get(got, 'a number')}"
    if what.startswith("Invalid enum value "):
        if name == "flat":
            return f"{where}: expected a number, found a string"
        return f"{where}: {what[19:][:42]} is not one of {', '.join(sorted(_choices(names)))}"
    if what.startswith("Expected `array` of length <="):
        dims = len(found) if isinstance(found, list) else "more"
        return f"{where}: {dims} dimensions, more than {MAX_DIMS}"
    if what.startswith("Expected `array` of length"):
        return f"{where}: expected {_PAIRS.get(name, what.split('of ', 1)[1])}"
    bounds = re.fullmatch(r"Expected `int` (>=|<=) (-?\d+)", what)
    if bounds:
        low = int(bounds[2]) if bounds[1] == ">=" else LOWEST
        return f"{where}: {found} is outside {low}..{HIGHEST}"
    return f"{where}: {what[0].lower()}{what[1:]}"


_FOUND = {"str": "a string", "bool": "true/false", "null": "null", "array": "a list", "object": "an object"}


def _noun(expected: str) -> str:
    kinds = expected.split(" | ")
    for kind, noun in (
        ("float", "a number"), ("int", "a whole number"), ("str", "a string"), ("bool", "true or false"),
        ("array", "a list"), ("object", "an object"),
    ):  # fmt: skip
        if kind in kinds:
            return noun
    return expected


def _choices(names: list[str]) -> frozenset[str]:
    """The words a Literal field at a place takes: a kind of slot, call or step, or a packing."""
    if names[-1] == "packed":
        return frozenset(PACKED_SIZES)
    holder = names[-2] if len(names) > 1 else ""
    return frozenset(get_args({"saved": SlotKind, "call": CallKind}.get(holder, StepKind)))


def _at(value: Any, path: str) -> Any:
    """The value at msgspec's ``path`` (``.field``, ``[3]``) in ``value``; None where a key is
    not named (``[...]``)."""
    for field, index in _PLACE.findall(path):
        if field and isinstance(value, dict):
            value = value.get(field)
        elif index.isdigit() and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return None
    return value
