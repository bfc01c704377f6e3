"""Python syntax colours for the program's text, taken from the widget's palette.

No colour is written here: each kind of word gets a hue, and its lightness
and saturation follow the palette of the widget that shows the text (the
theme's stylesheet sets that palette), so keywords stay readable on the light,
dark and projector themes alike. Comments are the text colour faded towards
the background. :meth:`PythonHighlighter.follow_palette` recomputes them when
the theme changes.

The code panel writes a marker and a line number before each program line;
``offset`` is how many characters of each line to leave alone.
"""

from __future__ import annotations

import keyword
import re

from PySide6.QtGui import QColor, QFont, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument

__all__ = ["BUILTINS", "PythonHighlighter", "colour_for", "token_spans"]

BUILTINS = frozenset(
    {
        *("abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "isinstance", "len"),
        *("list", "max", "min", "print", "range", "round", "sum", "tuple", "zip"),
        *("torch", "nn", "F", "optim"),  # the checked namespaces
    }
)
CONSTANTS = frozenset({"True", "False", "None"})
HUES = {"keyword": 285, "builtin": 200, "string": 125, "number": 25, "constant": 330}  # degrees

_TOKEN = re.compile(
    r"(?P<triple>[rRbBuUfF]{0,2}('''|\"\"\"))"
    r"|(?P<string>[rRbBuUfF]{0,2}('([^'\\\n]|\\.)*'?|\"([^\"\\\n]|\\.)*\"?))"
    r"|(?P<comment>\#.*)"
    r"|(?P<number>\b(0[xXoObB][0-9a-fA-F_]+|\d[\d_]*\.?[\d_]*([eE][+-]?\d+)?j?)|(?<!\w)\.\d[\d_]*)"
    r"|(?P<word>[A-Za-z_]\w*)"
)
_IN_TRIPLE = {"'''": 1, '"""': 2}
_DELIMITER = {state: delimiter for delimiter, state in _IN_TRIPLE.items()}


def colour_for(kind: str, palette: QPalette) -> QColor:
    """The colour of a ``kind`` of token on ``palette``: its hue, the palette's lightness."""
    base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
    if kind == "comment":
        return _mix(text, base, 0.45)
    dark = base.lightnessF() < 0.5
    return QColor.fromHslF(HUES[kind] / 360, 0.65 if dark else 0.75, 0.72 if dark else 0.32)


def _mix(a: QColor, b: QColor, share_of_b: float) -> QColor:
    keep = 1 - share_of_b
    return QColor.fromRgbF(
        a.redF() * keep + b.redF() * share_of_b,
        a.greenF() * keep + b.greenF() * share_of_b,
        a.blueF() * keep + b.blueF() * share_of_b,
    )


def token_spans(text: str, start: int = 0, state: int = 0) -> tuple[list[tuple[int, int, str]], int]:
    """``(start, length, kind)`` of every coloured token of one line, and the state it ends in.

    ``state`` is 1 or 2 inside a triple-quoted string (single or double quotes) carried over
    from the line before.

    >>> token_spans("for i in range(3):  # loop")[0]
    [(0, 3, 'keyword'), (6, 2, 'keyword'), (9, 5, 'builtin'), (15, 1, 'number'), (20, 6, 'comment')]
    >>> token_spans("s = '''a", 0)
    ([(4, 4, 'string')], 1)
    """
    spans: list[tuple[int, int, str]] = []
    position = start
    if state:
        end = text.find(_DELIMITER[state], position)
        if end < 0:
            return [(position, len(text) - position, "string")], state
        spans.append((position, end + 3 - position, "string"))
        position = end + 3
    while (match := _TOKEN.search(text, position)) is not None:
        kind = match.lastgroup or ""
        begin, position = match.start(), match.end()
        if kind == "triple":
            delimiter = match.group(2)
            end = text.find(delimiter, position)
            if end < 0:
                spans.append((begin, len(text) - begin, "string"))
                return spans, _IN_TRIPLE[delimiter]
            position = end + 3
            kind = "string"
        elif kind == "word":
            word = match.group()
            kind = (
                "constant"
                if word in CONSTANTS
                else "keyword"
                if keyword.iskeyword(word) or keyword.issoftkeyword(word)
                else "builtin"
                if word in BUILTINS
                else ""
            )
        if kind:
            spans.append((begin, position - begin, kind))
    return spans, 0


class PythonHighlighter(QSyntaxHighlighter):
    """Colours Python in ``document`` after the first ``offset`` characters of each line."""

    def __init__(self, document: QTextDocument, palette: QPalette, offset: int = 0) -> None:
        super().__init__(document)
        self._offset = offset
        self._formats: dict[str, QTextCharFormat] = {}
        self.follow_palette(palette, rehighlight=False)

    @property
    def offset(self) -> int:
        return self._offset

    def colour(self, kind: str) -> QColor:
        return self._formats[kind].foreground().color()

    def follow_palette(self, palette: QPalette, *, rehighlight: bool = True) -> None:
        formats = {}
        for kind in (*HUES, "comment"):
            fmt = QTextCharFormat()
            fmt.setForeground(colour_for(kind, palette))
            if kind == "keyword":
                fmt.setFontWeight(QFont.Weight.Bold)  # keywords stand out without colour too
            if kind == "comment":
                fmt.setFontItalic(True)
            formats[kind] = fmt
        if formats.keys() == self._formats.keys() and all(
            formats[k].foreground().color() == self._formats[k].foreground().color() for k in formats
        ):
            return
        self._formats = formats
        if rehighlight:
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        previous = self.previousBlockState()
        spans, state = token_spans(text, min(self._offset, len(text)), max(previous, 0))
        for begin, length, kind in spans:
            self.setFormat(begin, length, self._formats[kind])
        self.setCurrentBlockState(state)
