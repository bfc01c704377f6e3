"""Layouts of one recording's graph with different module groups collapsed, made off the GUI thread
and kept (modules.py's NOTE [module groups]; layout.py's NOTE [layout once]).

Collapsing or expanding a module asks for the layout of that set of collapsed groups: a set seen
before is answered at once from the cache; a new one runs Graphviz on a thread of its own and
``ready`` brings it to the GUI thread. Stepping never asks for a layout.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Hashable
from functools import partial

from PySide6.QtCore import QObject, Signal

from app.core.model.recording import Recording
from app.render.layout import Layout, LayoutError, layout_graph
from app.render.modules import module_groups
from app.ui.runtime.worker import GcPause

__all__ = ["ModuleLayouts"]


class ModuleLayouts(QObject):
    """The layouts made so far for one recording, keyed by the collapsed module groups."""

    ready = Signal(object)  # a Layout asked for by ``request``, for the current recording
    failed = Signal(str)  # why Graphviz could not lay it out
    _arrived = Signal(object, object, object)  # (recording, key, Layout | error text), from the thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._recording: Recording | None = None
        self._names: frozenset[str] = frozenset()
        self._cache: dict[frozenset[str], Layout] = {}
        self._pending: set[frozenset[str]] = set()
        self._arrived.connect(self._on_arrived)
        self._held: set[Hashable] = set()  # GcPause keys of layouts on their thread
        self.destroyed.connect(partial(GcPause.release_all, self._held))

    def reset(self, recording: Recording, layout: Layout) -> None:
        """Start over for ``recording`` (unless it is the one held), keeping ``layout``."""
        if recording is not self._recording:
            self._recording = recording
            self._names = frozenset(g.name for g in module_groups(recording.graph))
            self._cache, self._pending = {}, set()
        self._cache[layout.collapsed] = layout

    def key(self, collapsed: Collection[str]) -> frozenset[str]:
        """The groups of ``collapsed`` the recording has (others are ignored)."""
        return frozenset(collapsed) & self._names

    def cached(self, collapsed: Collection[str]) -> Layout | None:
        return self._cache.get(self.key(collapsed))

    def request(self, collapsed: Collection[str]) -> None:
        """Emit ``ready`` with the layout for ``collapsed``: now when cached, else once Graphviz made it."""
        key, recording = self.key(collapsed), self._recording
        if recording is None:
            return
        if key in self._cache:
            self.ready.emit(self._cache[key])
            return
        if key in self._pending:
            return
        self._pending.add(key)
        self._held.add((id(self), key))
        GcPause.hold((id(self), key))  # NOTE [no full GC while loading]: released on the GUI thread
        threading.Thread(target=self._lay_out, args=(recording, key), daemon=True).start()

    def _lay_out(self, recording: Recording, key: frozenset[str]) -> None:
        try:
            result: Layout | str = layout_graph(recording.graph, collapsed=key)
        except LayoutError as exc:
            result = str(exc)
        self._arrived.emit(recording, key, result)  # queued to the GUI thread

    def _on_arrived(self, recording: Recording, key: frozenset[str], result: Layout | str) -> None:
        self._held.discard((id(self), key))
        GcPause.release((id(self), key))
        if recording is not self._recording:
            return  # a layout of a recording no longer shown
        self._pending.discard(key)
        if isinstance(result, str):
            self.failed.emit(result)
            return
        self._cache[key] = result
        self.ready.emit(result)
