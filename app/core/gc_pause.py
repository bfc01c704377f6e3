"""No automatic garbage collection inside a block (Qt-free, torch-free).

Two places want it: a ``.lens`` file read back (millions of new objects and no
cycles, which the full collections they set off would walk again and again),
and a Qt call that walks a snapshot of widgets (``app.ui.runtime.collector``: a
collection in the middle of it may delete one).

>>> import gc
>>> with collection_paused():
...     gc.isenabled()
False
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collection_paused"]


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection inside the block; left as it was before it (the window's collector
    keeps it off for itself, and a block inside it must not turn it back on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
