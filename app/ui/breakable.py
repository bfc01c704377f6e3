"""Wrapping points inside long names, for labels in narrow docks at large text sizes.

A word-wrapped label is never narrower than its longest word: at text scale 1.5 a node name
like ``BinaryCrossEntropyWithLogitsBackward0`` is wider than a 1280x720 window's dock, and the
caption or the node details were cut off at the right (or widened their panel). Long words get
a zero-width space at each inner capital, so they wrap there and read the same; short ones keep
no wrapping point (``PowBackward0`` is never split over two lines).
"""

from __future__ import annotations

import re

__all__ = ["BREAK", "LONG_WORD", "breakable", "breakable_code", "unbroken"]

BREAK = "\u200b"  # a zero-width space: a line may wrap here
LONG_WORD = 20  # characters: shorter words are never split


def breakable(text: str) -> str:
    """``text`` with a wrapping point before each inner capital of its long words.

    >>> breakable("NativeBatchNormBackward0 ran").split(BREAK)
    ['Native', 'Batch', 'Norm', 'Backward0 ran']
    >>> breakable("PowBackward0 ran") == "PowBackward0 ran"
    True
    """
    return _LONG.sub(lambda word: _INNER_CAPITAL.sub(BREAK, word.group()), text)


def breakable_code(text: str) -> str:
    """``text`` (a line of code) with a wrapping point after each ``.``, ``(`` and ``,`` of its words
    of 12 characters or more: a call like ``y.sum().backward(retain_graph=True)`` wraps between
    its parts.

    >>> breakable_code("y.sum().backward(retain_graph=True)").split(BREAK)
    ['y.', 'sum(', ').', 'backward(', 'retain_graph=True)']
    """
    return _LONG_CODE.sub(lambda word: _CODE_JOINT.sub(BREAK, word.group()), text)


def unbroken(text: str) -> str:
    """``text`` as written, without the wrapping points :func:`breakable` put in."""
    return text.replace(BREAK, "")


_LONG = re.compile(rf"\S{{{LONG_WORD},}}")
_INNER_CAPITAL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CODE_JOINT = re.compile(r"(?<=[.(,])(?=.)")
_LONG_CODE = re.compile(r"\S{12,}")  # code reads fine split at a dot: ``d_loss.backward()`` may wrap
