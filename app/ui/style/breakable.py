"""Wrapping points inside long names, for labels in narrow docks at large text sizes.

A word-wrapped label is never narrower than its longest word: at text scale 1.5 a node name
like ``BinaryCrossEntropyWithLogitsBackward0`` is wider than a 1280x720 window's dock, and the
caption or the node details were cut off at the right (or widened their panel). Long words get
a zero-width space at each inner capital, so they wrap there and read the same; short ones keep
no wrapping point (``PowBackward0`` is never split over two lines).

Code wraps between its tokens, never inside a name (:func:`code_breaks`): a label gets zero-width
spaces there (:func:`breakable_code`), and the code editor, whose text must stay the program's,
ends its lines there instead (NOTE [code wraps between tokens] in ``code_edit.py``).
"""

from __future__ import annotations

import re
from itertools import pairwise

__all__ = [
    "BREAK",
    "LONG_WORD",
    "SHORT_GROUP",
    "breakable",
    "breakable_code",
    "code_breaks",
    "keyword_breaks",
    "unbroken",
]

BREAK = "\u200b"  # a zero-width space: a line may wrap here
LONG_WORD = 20  # characters: shorter words are never split
SHORT_GROUP = 6  # characters between brackets, of one item, that code never wraps inside


def breakable(text: str) -> str:
    """``text`` with a wrapping point before each inner capital of its long words.

    >>> breakable("NativeBatchNormBackward0 ran").split(BREAK)
    ['Native', 'Batch', 'Norm', 'Backward0 ran']
    >>> breakable("PowBackward0 ran") == "PowBackward0 ran"
    True
    """
    return _LONG.sub(lambda word: _INNER_CAPITAL.sub(BREAK, word.group()), text)


def breakable_code(text: str) -> str:
    """``text`` (a line of code) with a wrapping point at each of :func:`code_breaks` inside its
    words of 12 characters or more: a call like ``y.sum().backward(retain_graph=True)`` wraps
    between its parts (a label wraps at the spaces by itself).

    >>> breakable_code("y.sum().backward(retain_graph=True)").split(BREAK)
    ['y.', 'sum().', 'backward(', 'retain_graph=True)']
    """
    return _LONG_CODE.sub(lambda word: _broken_at(word.group(), code_breaks(word.group())), text)


def code_breaks(line: str) -> list[int]:
    """Where a line of code may wrap: each index ``i`` at which ``line[i:]`` may begin a line on
    screen. Only between tokens: after spaces or a comma, after an opening bracket (but not inside
    a short ``model(x)`` or ``targets[i]``), after an operator written without spaces,
    and after the ``.`` before an attribute; never inside a name or a number, and never so that a
    line begins with a closing bracket, a comma or a colon.

    >>> line = "h = F.layer_norm(h, [8])"
    >>> _broken_at(line, code_breaks(line)).split(BREAK)
    ['h ', '= ', 'F.', 'layer_norm(', 'h, ', '[8])']
    >>> _broken_at("lr=1.5e-3*x.grad", code_breaks("lr=1.5e-3*x.grad")).split(BREAK)
    ['lr=1.5e-3*', 'x.', 'grad']
    """
    inside = {i for token in _TOKEN.finditer(line) for i in range(token.start() + 1, token.end())}
    indent = len(line) - len(line.lstrip())  # a line of indentation alone would look empty
    breaks = [m.start() for m in _CODE_BREAK.finditer(line)]
    breaks += [m.end() for m in _OPERATOR.finditer(line) if m.group() != "="]
    breaks += _after_opening_brackets(line)
    return sorted({i for i in breaks if i > indent and i not in inside})


def keyword_breaks(line: str) -> list[int]:
    """Just after the ``=`` of each keyword argument: where a line wraps only when no break of
    :func:`code_breaks` fits (``requires_grad=`` / ``True)`` rather than ``requires_grad=Tr`` /
    ``ue)``), since ``retain_graph=True`` otherwise reads best whole.

    >>> keyword_breaks("f(x, requires_grad=True)")
    [19]
    """
    inside = {i for token in _TOKEN.finditer(line) for i in range(token.start() + 1, token.end())}
    return [m.end() for m in _OPERATOR.finditer(line) if m.group() == "=" and m.end() not in inside]


def _after_opening_brackets(line: str) -> list[int]:
    """Just after each opening bracket but those of a short group of one thing: ``model(x)`` or
    ``targets[i]`` reads better whole."""
    breaks, opened = [], []
    for i, char in enumerate(line):
        if char in "([{":
            opened.append(i)
        elif char in ")]}" and opened:
            start = opened.pop()
            inner = line[start + 1 : i]
            if len(inner) > SHORT_GROUP or any(c in " ," for c in inner):
                breaks.append(start + 1)
    breaks += [start + 1 for start in opened]  # the call goes on below
    return [i for i in breaks if i < len(line) and _NOT_FIRST.match(line, i)]


def _broken_at(text: str, breaks: list[int]) -> str:
    cuts = [0, *breaks, len(text)]
    return BREAK.join(text[start:end] for start, end in pairwise(cuts))


def unbroken(text: str) -> str:
    """``text`` as written, without the wrapping points :func:`breakable` put in."""
    return text.replace(BREAK, "")


_LONG = re.compile(rf"\S{{{LONG_WORD},}}")
_INNER_CAPITAL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_LONG_CODE = re.compile(r"\S{12,}")  # code reads fine split at a dot: ``d_loss.backward()`` may wrap
# A name, or a number (``1.5e-3``, ``0x1F``, ``2j``): never split, though they hold ``.`` and ``-``.
_TOKEN = re.compile(
    r"[^\W\d]\w*|0[xXoObB][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?"
)
_NOT_FIRST = re.compile(r"[^\s)\]},;:]")  # what may begin a line after a break
# After spaces or a comma; after the "." before an attribute.
_CODE_BREAK = re.compile(rf"(?<=[\s,])(?={_NOT_FIRST.pattern})|(?<=\.)(?=[^\W\d])")
# An operator with a name, a number or a bracket on both sides (``x**2``, ``a+b``). A lone "=" is
# not a break: without spaces it is a keyword argument's, and ``retain_graph=True`` reads as one.
_OPERATOR = re.compile(r"(?<=[\w)\]}])[-+*/%@&|^<>!=~]+(?=[\w(\[{.'\"])")
