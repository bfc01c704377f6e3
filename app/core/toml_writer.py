"""Write a :class:`~app.core.model.program.Program` back as TOML text, in the program format.

The output reads like the hand-written built-ins (``title``, ``summary``,
``notes`` and ``twin`` when set, long prose wrapped with TOML's line-ending
backslash, then ``[program]`` with the code in a multi-line string) and
always loads back to an equal program. The program's ``name`` is not
written: a file is named by its file name, as :func:`~app.core.loading.load_file`
reads it, so ``parse_program(to_toml(p), name=p.name) == p``.

>>> from app.core.loading import load_builtin, parse_program
>>> p = load_builtin("two-losses")
>>> parse_program(to_toml(p), name=p.name) == p
True
>>> to_toml(p).splitlines()[0]
'title = "Backward twice through a shared square"'

# NOTE [exact strings]
Every string is written so that TOML gives back exactly the same characters:
multi-line strings start with the newline TOML trims, control characters are
escaped, and a wrapped line is broken only after a space followed by a
non-space (TOML's line-ending backslash eats the newline and the indent after
it, never the space before it). Text that cannot be stored in a UTF-8 file
(lone surrogates) is refused with ``ValueError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.model.program import Program

__all__ = ["to_toml", "toml_key", "toml_string"]

WRAP_AT = 80
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHORT_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
# Characters TOML does not allow raw in a literal string (tab is allowed).
_NOT_LITERAL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_NOT_MULTILINE_LITERAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def to_toml(program: Program) -> str:
    """The program as the text of a ``.toml`` file (ends with a newline)."""
    return "".join(_document(program))


def _document(program: Program) -> Iterator[str]:
    fields = [(key, getattr(program, key)) for key in ("title", "summary", "notes", "twin")]
    for key, value in fields:
        if value:
            yield f"{key} = {toml_string(value)}\n"
    _check_encodable(program.code)
    yield "\n[program]\n" if any(value for _, value in fields) else "[program]\n"
    yield f"code = {_multiline(program.code)}\n"


def toml_key(key: str) -> str:
    """A key, bare when TOML allows it, quoted otherwise.

    >>> toml_key("x"), toml_key("a b")
    ('x', '"a b"')
    """
    return key if _BARE_KEY.fullmatch(key) else _basic(key)


def toml_string(text: str, *, wrap: bool = True) -> str:
    """``text`` as a TOML string value that loads back unchanged.

    Multi-line text becomes a multi-line string; with ``wrap``, long prose is
    folded at spaces.

    >>> toml_string('say "hi"'), toml_string("a\\\\b"), toml_string("tab\\there")
    ('\\'say "hi"\\'', "'a\\\\b'", '"tab\\\\there"')
    """
    _check_encodable(text)
    if "\n" in text:
        return _multiline(text)
    if wrap and len(text) > WRAP_AT and _wrap_points(text):
        return _wrapped(text)
    if ('"' in text or "\\" in text) and "'" not in text and not _NOT_LITERAL.search(text):
        return f"'{text}'"
    return _basic(text)


def _check_encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text with a lone surrogate (position {exc.start}) cannot be written to a UTF-8 file"
        ) from None


def _escape(text: str, *, keep_newlines: bool) -> str:
    out = []
    for char in text:
        if char == "\n" and keep_newlines:
            out.append(char)
        elif char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif char < " " or char == "\x7f":
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def _basic(text: str) -> str:
    return f'"{_escape(text, keep_newlines=False)}"'


def _multiline(text: str) -> str:
    # A newline right after the opening quotes is trimmed by TOML, so adding
    # one keeps a leading newline of ``text`` intact (see NOTE [exact strings]).
    escaped = _escape(text, keep_newlines=True)
    literal_ok = "'''" not in text and not text.endswith("'") and not _NOT_MULTILINE_LITERAL.search(text)
    if escaped != text and literal_ok:  # backslashes and quotes read better unescaped
        return f"'''\n{text}'''"
    return f'"""\n{escaped}"""'


def _wrap_points(text: str) -> list[int]:
    """Indexes just after a space that is followed by a non-space."""
    return [m.end() for m in re.finditer(r" (?=\S)", text)]


def _wrapped(text: str) -> str:
    escaped = _escape(text, keep_newlines=False)
    lines: list[str] = []
    start = 0
    last_break = 0
    for point in _wrap_points(escaped):
        if point - start > WRAP_AT and last_break > start:
            lines.append(escaped[start:last_break])
            start = last_break
        last_break = point
    if len(escaped) - start > WRAP_AT and last_break > start:
        lines.append(escaped[start:last_break])
        start = last_break
    lines.append(escaped[start:])
    # Each line but the last ends with a space; the backslash after it folds the newline away.
    return '"""' + "\\\n".join(lines) + '"""'
