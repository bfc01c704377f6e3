"""Module groups in the graph view: which are collapsed, and the layouts that draw them so.

:class:`ModuleGroups` is the view's part that collapses and expands modules (a double click, the
right-click menu, View's two commands). Each set of collapsed groups has its own layout
(:class:`ModuleLayouts`), made off the GUI thread and kept (modules.py's NOTE [module groups];
layout.py's NOTE [layout once]).

Collapsing or expanding a module asks for the layout of that set of collapsed groups: a set seen
before is answered at once from the cache; a new one runs Graphviz on a thread of its own and
``ready`` brings it to the GUI thread. Stepping never asks for a layout.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Hashable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QPoint, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from app.core.model.recording import Recording
from app.render.layout import Layout, LayoutError, layout_graph
from app.render.modules import ModuleGroup, module_groups
from app.render.qt.boxes import NodeItem
from app.ui.graph.pointer import PointedView, box_at, dot_at
from app.ui.runtime.worker import GcPause

if TYPE_CHECKING:
    from app.core.model.timeline import StepState
    from app.render.states import ShownStates

__all__ = ["GroupedView", "ModuleGroups", "ModuleLayouts"]


class GroupedView(PointedView, Protocol):
    """What module groups read of a graph view and redraw (``GraphView`` is one): what the pointer
    is over (``PointedView``), and the calls that draw a recording placed by another layout."""

    def set_model(
        self,
        recording: Recording,
        layout: Layout,
        *,
        progressive: bool | None = ...,
        shown: ShownStates | None = ...,
    ) -> None: ...

    def show_state(self, state: StepState) -> int: ...


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


class ModuleGroups(QObject):
    """The module groups of the recording ``view`` shows, and which of them are collapsed.

    ``parent`` (the view's widget) owns the two actions and the context menu. Once the view is
    redrawn with other groups collapsed, ``redrawn`` is emitted; a layout Graphviz could not make
    is told through ``said``, and the drawing shown stays.
    """

    redrawn = Signal()
    said = Signal(str)

    def __init__(self, view: GroupedView, parent: QWidget) -> None:
        super().__init__(parent)
        self._view = view
        self._parent = parent
        self._layouts = ModuleLayouts(self)
        self._layouts.ready.connect(self._on_layout_ready)
        self._layouts.failed.connect(self._on_layout_failed)
        self._wanted: frozenset[str] | None = None  # the collapsed set asked for, until drawn
        self.collapse_all_action = QAction("Collapse all modules", parent)
        self.collapse_all_action.triggered.connect(self.collapse_all)
        self.expand_all_action = QAction("Expand all modules", parent)
        self.expand_all_action.triggered.connect(self.expand_all)
        self.update_actions()

    def reset(self, recording: Recording, layout: Layout) -> None:
        """The view draws ``recording`` placed by ``layout`` (a set asked for is drawn, or dropped)."""
        self._layouts.reset(recording, layout)
        self._wanted = None

    @property
    def groups(self) -> tuple[ModuleGroup, ...]:
        """Every module group of the recording shown (none for programs without modules)."""
        graph = self._view.graph_scene
        return () if graph is None else graph.module_groups

    @property
    def collapsed(self) -> frozenset[str]:
        """The module groups drawn as one box each."""
        graph = self._view.graph_scene
        return frozenset() if graph is None else graph.collapsed

    def box(self, group: str) -> NodeItem | None:
        """The box of the collapsed module group ``group`` (None while it is drawn expanded)."""
        graph = self._view.graph_scene
        return None if graph is None else graph.module_box(group)

    def set_collapsed(self, groups: Collection[str]) -> None:
        """Draw exactly ``groups`` collapsed. A set drawn before comes back at once; a new one is laid
        out off the GUI thread first. ``modules_changed`` says when the new drawing is there."""
        if self._view.graph_scene is None:
            return
        wanted = self._layouts.key(groups)
        if wanted == self.collapsed and self._wanted is None:
            return
        self._wanted = wanted
        self._layouts.request(wanted)

    def collapse(self, group: str) -> None:
        self.set_collapsed(self._collapsed_next() | {group})

    def expand(self, group: str) -> None:
        self.set_collapsed(self._collapsed_next() - {group})

    def toggle(self, group: str) -> None:
        (self.expand if group in self._collapsed_next() else self.collapse)(group)

    def collapse_all(self) -> None:
        self.set_collapsed({g.name for g in self.groups})

    def expand_all(self) -> None:
        self.set_collapsed(())

    def _collapsed_next(self) -> frozenset[str]:
        """The collapsed set as asked for last (a toggle made while a layout is made adds to it)."""
        return self.collapsed if self._wanted is None else self._wanted

    def _on_layout_ready(self, layout: Layout) -> None:
        view, graph = self._view, self._view.graph_scene
        if graph is None or layout.collapsed != self._wanted:
            return  # asked for another set since
        state, selected = graph.state, graph.selected
        view.set_model(graph.recording, layout, shown=graph.shown)
        if state is not None:
            view.show_state(state)
        if selected is not None and view.graph_scene is not None:
            view.graph_scene.select(selected)
        self.redrawn.emit()

    def _on_layout_failed(self, why: str) -> None:
        self._wanted = None  # the drawing shown stays
        self.update_actions()
        self.said.emit(f"The modules could not be redrawn: {why}")

    def update_actions(self) -> None:
        groups, collapsed = self.groups, self.collapsed
        self.collapse_all_action.setEnabled(bool(groups) and len(collapsed) < len(groups))
        self.expand_all_action.setEnabled(bool(collapsed))

    def group_at(self, pos: QPoint) -> str | None:
        """The module group under ``pos`` (viewport pixels): a collapsed module's box, or the
        innermost expanded module frame around the point (a plain node inside it answers None)."""
        view, graph = self._view, self._view.graph_scene
        if graph is None:
            return None
        point = view.mapToScene(pos)
        if graph.overview:
            node_id = dot_at(view, graph, pos)
            if node_id is not None:
                return graph.group_of(graph.nodes.get(node_id))
        else:
            box = box_at(view, pos)
            if box is not None:
                return graph.group_of(box) if isinstance(box, NodeItem) else None
        frames = [f for f in graph.clusters.values() if f.module and f.frame_rect.contains(point)]
        inner = min(frames, key=lambda f: f.frame_rect.width() * f.frame_rect.height(), default=None)
        return None if inner is None else inner.module

    def menu(self, pos: QPoint) -> QMenu:
        """The context menu at ``pos``: collapse or expand the module there, and all of them."""
        menu = QMenu(self._parent)
        group = self.group_at(pos)
        if group is not None:
            module = next((g.module for g in self.groups if g.name == group), group)
            verb = "Expand" if group in self._collapsed_next() else "Collapse"
            menu.addAction(f"{verb} {module}", partial(self.toggle, group))
            menu.addSeparator()
        menu.addAction(self.collapse_all_action)
        menu.addAction(self.expand_all_action)
        return menu
