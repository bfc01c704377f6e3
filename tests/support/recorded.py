"""Recordings of the built-in programs, made once per test process and shared (read-only).

A :class:`Recording` is frozen data: tests that only read one can share it, and recording the
same built-in in module after module was a large part of the suite's time.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from app.core import load_builtin, record
from app.core.model.recording import Recording

if TYPE_CHECKING:
    from app.render.layout import Layout

__all__ = ["builtin_layout", "builtin_recording"]


@functools.cache
def builtin_recording(name: str) -> Recording:
    """The recording of built-in ``name`` on the CPU with the default limits (made once)."""
    return record(load_builtin(name))


@functools.cache
def builtin_layout(name: str) -> Layout:
    """Graphviz's layout of :func:`builtin_recording`'s graph (frozen too; made once)."""
    from app.render.layout import layout_graph

    return layout_graph(builtin_recording(name).graph)
