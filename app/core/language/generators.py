"""A program's generators: what calling a function with ``yield`` (or a generator expression) gives.

# NOTE [program generators]
The language runs a generator's body (or a generator expression's loops) to its end when it is
called, and the call gives :func:`drawn`: a Python generator over the items made, which holds the
body's scope (for a generator expression, its scope and what it goes over, Python's ``.0``) until
the consumer asks past the last item (a ``for`` loop's end, ``list(g)``, ``next(g, None)``), or
until the program drops it. So what the body's names refer to is held while a Python generator's
suspended frame would hold it (NOTE [held is reachable] in
``app/core/recorder/reach.py`` walks the drawn generator's frame), and each item is let go as
it is drawn. Where it differs from Python:

* everything the body does happens at the call: its tensors, its prints and its writes to
  other names are made before the first item is drawn, and all of them even if none is;
* the scope held is the one the body ended with, for every item (a name re-bound between two
  yields holds its last value all along), and the items not drawn yet are held as well;
* an exception in the body is raised at the call, not at the ``next`` that would reach it.

>>> g = drawn([1, 2])
>>> next(g), list(g)
(1, [2])
"""

from __future__ import annotations

import types
from collections.abc import Generator
from typing import Any, cast

__all__ = ["GENERATOR", "drawn"]


def drawn(made: list[Any], *held: Any, name: str = "<genexpr>") -> Generator[Any, None, None]:
    """The items ``made``, one at a time, holding ``held`` till the end (NOTE [program generators]):
    a body's scope, and a generator expression's scope and the items it goes over. It prints as
    Python's does: ``<generator object name>``."""
    generator = cast("types.GeneratorType[Any, None, None]", _drawn(made, held))
    generator.__qualname__ = name
    return generator


def _drawn(made: list[Any], held: tuple[Any, ...]) -> Generator[Any, None, None]:
    made.reverse()  # popped from the end: an item drawn is held here no more
    while made:
        yield made.pop()


GENERATOR = types.GeneratorType
