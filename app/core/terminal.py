"""Text from a program or a recording, made safe to write to a terminal.

What a program printed, its title (a comment line, a TOML ``title``, a ``.lens``
file), PyTorch's error text and the names in a recording are a stranger's text:
an ESC in them is a terminal's control sequence (move the cursor, rewrite a
line, set the window title, on some terminals answer back into the input), a
BEL rings, a carriage return hides what came before it on the line. Every
piece of such text that the command line writes goes through
:func:`terminal_text`, which writes every character that is not printable as
its Python escape, so the reader sees that it is there and the terminal never
acts on it.
"""

from __future__ import annotations

__all__ = ["terminal_text"]


def terminal_text(text: str, *, newlines: bool = False) -> str:
    r"""``text`` with every character that is not printable written as its escape.

    Control characters (C0 such as ESC and BEL, DEL, C1), line and paragraph
    separators and format characters (such as the bidirectional overrides that
    reorder what a line shows) are escaped; letters and signs of any script
    are kept. ``newlines``: keep ``\n``, where the caller lays out lines.

    >>> terminal_text("loss\x1b[2J\x07 ok")
    'loss\\x1b[2J\\x07 ok'
    >>> terminal_text("a\nb\r"), terminal_text("a\nb\r", newlines=True)
    ('a\\nb\\r', 'a\nb\\r')
    >>> terminal_text("μ∂ → ✗")
    'μ∂ → ✗'
    """
    if text.isprintable():  # nearly always: one pass in C
        return text
    if newlines:
        return "\n".join(terminal_text(line) for line in text.split("\n"))
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)  # \x1b, \n, \u202e
