"""The methods of plain Python values a program may call: lists, dicts, sets and text.

# NOTE [python methods]
Listed by name, each with what it may cost: a list grows only through
methods whose new items are sized first (``append``, ``extend``, ``insert``);
text is formatted by :func:`format_text` and :func:`percent_text`, which take
written-out specs only (``{:.4f}``, ``%5.2f``) and never walk an attribute or
an index inside a field (``{0.__class__}``, ``{x[0]}``), so a format string
reaches nothing a program could not reach by itself.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from typing import Any

from app.core.language.instances import SUPER
from app.core.language.python_values import kind
from app.core.language.raised import exception_names
from app.core.language.safe_builtins import SafeBuiltin, format_field, without_addresses
from app.core.model.errors import ProgramError

__all__ = [
    "GROWING_LIST_METHODS",
    "PYTHON_METHOD_OWNERS",
    "format_spec_refusal",
    "format_text",
    "lacks_attribute",
    "percent_text",
    "python_method",
    "python_method_refusal",
]

PYTHON_METHOD_OWNERS = (list, dict, set, str)
GROWING_LIST_METHODS = frozenset(["extend", "insert"])
MAX_TEXT_WIDTH = 100  # widths in % formats and ljust/rjust/center, as in f-strings

_LIST = ("append", "extend", "insert", "pop", "index", "count", "reverse", "copy", "clear", "remove")
_DICT = ("items", "keys", "values", "get", "pop", "update", "setdefault", "copy", "clear")
_SET = ("add", "discard", "remove", "copy", "clear", "union", "intersection", "difference")
_STR = (
    "join",
    "upper",
    "lower",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "replace",
    "startswith",
    "endswith",
    "title",
    "capitalize",
    "isdigit",
    "find",
    "count",
)
_LISTED: dict[type, frozenset[str]] = {
    list: frozenset(_LIST),
    dict: frozenset(_DICT),
    set: frozenset(_SET),
    str: frozenset((*_STR, "format", "ljust", "rjust", "center", "zfill")),
}


MAX_FORMAT_WIDTH = 100  # width and precision in an f-string's format spec
_FORMAT_SPEC = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?"
)


def format_spec_refusal(spec: str) -> str | None:
    """Why an f-string format spec is refused (not one, or too wide), or None.

    >>> format_spec_refusal(".4f"), format_spec_refusal(">8"), format_spec_refusal(">1000000")
    (None, None, 'f-string widths and precisions are limited to 100')
    """
    match = _FORMAT_SPEC.fullmatch(spec)
    if match is None:
        return f"'{spec}' is not a format spec f-strings take here, such as .4f or >8"
    numbers = [n for n in match.group("width", "precision") if n]
    if any(len(n) > 3 or int(n) > MAX_FORMAT_WIDTH for n in numbers):
        return f"f-string widths and precisions are limited to {MAX_FORMAT_WIDTH}"
    return None


def python_method(owner: Any, name: str) -> Callable[..., Any] | None:
    """The function that runs ``owner.name(...)`` (owner first), or None when not listed."""
    # an OrderedDict or a defaultdict is a dict: the same methods are listed
    listed = next((names for cls, names in _LISTED.items() if isinstance(owner, cls)), None)
    if listed is None or name not in listed:
        return None
    if isinstance(owner, str) and name == "format":
        return format_text
    if isinstance(owner, str) and name in ("ljust", "rjust", "center", "zfill"):
        return _padded(name)
    if isinstance(owner, str) and name == "replace":
        return _replace
    method: Callable[..., Any] = getattr(type(owner), name)
    return method


# NOTE [missing attributes]
# A plain Python value (a number, None, text, a list, tuple, dict or set) that has no attribute of
# that name at all is Python's own AttributeError, as a plain run raises it: ``loss.item().backward()``
# (a float), ``x.grad.zero_()`` while the grad is None, ``hidden.detach()`` on an LSTM's tuple. That
# is the program's exception, recorded at its line, not a refusal. A name the type does have but
# the language does not list (``(0.5).hex()``, ``d.fromkeys``) stays refused: it is there, it is
# just not taken.
PLAIN_VALUES = (int, float, complex, bool, type(None), str, list, tuple, dict, set)


def lacks_attribute(owner: Any, name: str) -> bool:
    """Whether ``owner`` is a plain value with no attribute ``name``: Python's AttributeError.

    >>> lacks_attribute(1.5, "backward"), lacks_attribute(None, "zero_"), lacks_attribute(1.5, "hex")
    (True, True, False)
    >>> lacks_attribute(object(), "backward")  # not a plain value: the language decides
    False
    """
    return type(owner) in PLAIN_VALUES and not hasattr(type(owner), name)


def python_method_refusal(owner: Any, name: str) -> str:
    listed = ", ".join(sorted(_LISTED.get(type(owner), ())))
    return f"'{name}' is not a method programs call on {kind(owner)}; they call {listed}"


def format_text(text: str, *args: Any, **kwargs: Any) -> str:
    """``text.format(...)`` with fields that name an argument only (NOTE [python methods]).

    >>> format_text("{} {:.2f} {name!r}", 1, 0.5, name="a")
    "1 0.50 'a'"
    """
    pieces: list[str] = []
    automatic = 0
    for literal, field, spec, conversion in string.Formatter().parse(text):
        pieces.append(literal)
        if field is None:
            continue
        if "." in field or "[" in field or "{" in (spec or ""):
            shown = "{" + field + "}"
            raise ProgramError(f"a format field here names an argument, as in {{}} or {{loss}}, not {shown}")
        refusal = format_spec_refusal(spec or "")
        if refusal is not None:
            raise ProgramError(refusal)
        if field == "":
            value, automatic = args[automatic], automatic + 1
        elif field.isdigit():
            value = args[int(field)]
        else:
            value = kwargs[field]
        pieces.append(format_field(value, ord(conversion) if conversion else -1, spec or ""))
    return "".join(pieces)


def percent_text(text: str, values: Any) -> str:
    """``text % values`` with written-out widths no wider than MAX_TEXT_WIDTH, checked before any
    text is made.

    >>> percent_text("%d: %.3f %s", (1, 0.5, "a"))
    '1: 0.500 a'
    """
    for number in _percent_numbers(text):
        if number == "*" or (number and (len(number) > 3 or int(number) > MAX_TEXT_WIDTH)):
            raise ProgramError(
                f"% formats here take widths and precisions written out, up to {MAX_TEXT_WIDTH}"
            )
    return without_addresses(text % values)


def _percent_numbers(text: str) -> Iterator[str]:
    """The width and precision of each ``%`` field of ``text``, read as Python's ``%`` reads them:
    a mapping key in parentheses may hold parentheses of its own (``%(a(b)c)9s``), which a regular
    expression would end at the first ``)``."""
    i = text.find("%")
    while 0 <= i < len(text) - 1:
        i += 1
        if text[i] == "(":
            depth = 1
            while depth and i + 1 < len(text):
                i += 1
                depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        while i < len(text) and text[i] in "-+ #0":
            i += 1
        for lead in ("", "."):
            if lead and (i >= len(text) or text[i] != "."):
                continue
            i += len(lead)
            start = i
            while i < len(text) and (text[i].isdigit() or (i == start and text[i] == "*")):
                i += 1
            yield text[start:i]
        i = text.find("%", i + 1)


def _padded(name: str) -> Callable[..., str]:
    def pad(text: str, width: int, *fill: str) -> str:
        if isinstance(width, int) and width > MAX_TEXT_WIDTH:
            raise ProgramError(f"{name}() widths are limited to {MAX_TEXT_WIDTH}")
        padded: str = getattr(str, name)(text, width, *fill)
        return padded

    return pad


def _replace(text: str, old: str, new: str, count: int = -1) -> str:
    if isinstance(new, str) and isinstance(old, str) and len(new) > len(old):
        grown = len(text) + text.count(old) * (len(new) - len(old)) if old else len(text) * (len(new) + 1)
        if grown > 100_000:
            raise ProgramError("replace() would make a text of more than 100,000 characters")
    return text.replace(old, new, count)


def language_names() -> dict[str, Any]:
    """Names every program has besides the listed torch ones: more builtins, exceptions, super."""
    more: dict[str, Callable[..., Any]] = {
        "str": _text,
        "tuple": tuple,
        "dict": dict,
        "set": set,
        "sorted": _sorted,
        "reversed": _reversed,
        "any": any,
        "all": all,
        "divmod": divmod,
        "slice": slice,
        # ``class Meter(object):`` is a class with no base; ``object()`` a sentinel (NOTE [object]).
        "object": object,
        # Called by the evaluator itself, as they call the program's functions (NOTE [program types]).
        "isinstance": isinstance,
        "type": type,
        "map": map,
        "filter": filter,
        "iter": iter,
        "next": next,
    }
    named = {n: SafeBuiltin(n, fn) for n, fn in more.items()}
    # __name__ is read by ``if __name__ == "__main__":`` and ``logging.getLogger(__name__)``.
    return {**named, **exception_names(), "super": SUPER, "__name__": "__main__"}


def _text(value: Any = "") -> str:
    """``str(value)``, built as ``print`` builds it (no addresses, bounded)."""
    return format_field(value, ord("s"), "")


def _reversed(values: Any) -> list[Any]:
    """``reversed``, made at once: a lazy one could be turned into a list past every bound."""
    return list(reversed(values))


def _sorted(values: Any, *, reverse: bool = False) -> list[Any]:
    """``sorted`` without ``key=`` (it would call a function of the program from Python)."""
    return sorted(values, reverse=reverse)
