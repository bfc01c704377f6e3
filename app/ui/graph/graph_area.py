"""The window's graph page: a message while there is no graph, else the graph view, and over it the
picture a big ``.lens`` file opens with until the view draws the graph.

The view and the legend are made late (NOTE [fast start] in ``main_window.py``): their modules
and widgets cost ~60-90 ms, spent after the window's first frame rather than in the turn the
first recording arrives. Until then this area shows its message, or the file's picture.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QStackedWidget, QWidget

from app.ui.graph.graph_navigation import GraphNavigation
from app.ui.runtime.after_paint import after_first_paint
from app.ui.runtime.session import Session
from app.ui.style.plain_text import plain

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.core.model.timeline import StepState
    from app.ui.graph.graph_preview import GraphPreview
    from app.ui.graph.graph_view import GraphView
    from app.ui.panels.legend import Legend

__all__ = ["GraphArea", "arrival_node", "is_shared", "step_company", "step_node"]

GRAPH_PAGE, MESSAGE_PAGE = 1, 0


def step_node(state: StepState, *, running: bool) -> str | None:
    """The node a step is about, to show readable (NOTE [auto fit]): the node an error step failed
    at, and with ``running`` the node a backward step ran or the last node a line's forward step
    added; None for every other step and for an error that no node raised."""
    step = state.step
    if step.kind == "error" or (running and step.kind == "node"):
        return step.node
    if running and step.kind == "forward" and step.added_nodes:
        return step.added_nodes[-1]
    return None


def arrival_node(state: StepState, recording: Recording, *, running: bool) -> str | None:
    """The node a recording opens on, to show readable where the whole graph fitted is not: the
    step's own (:func:`step_node`); following the run, else the newest node made so far, or
    before any is made, the first one to come (where the graph begins)."""
    node = step_node(state, running=running)
    if node is not None or not running or not recording.graph.nodes:
        return node
    nodes = recording.graph.nodes
    made = [n for n in nodes if n.id in state.visible_nodes]
    if made:
        return max(made, key=lambda n: n.created_at_step or 0).id
    return min(nodes, key=lambda n: n.created_at_step or 0).id


def step_company(state: StepState, node: str, neighbours: dict[str, list[str]]) -> tuple[str, ...]:
    """The nodes shown with a step's node where they fit at a readable zoom: the other nodes a
    line's forward step added, else the node's neighbours (what it takes from and gives to)."""
    added = state.step.added_nodes if state.step.kind == "forward" else ()
    if node in added:
        return tuple(n for n in reversed(added) if n != node)
    return tuple(neighbours.get(node, ()))


def is_shared(recording: Recording, node: str, neighbours: dict[str, list[str]]) -> bool:
    """Whether ``node`` is used by more than one loop iteration (a model's weight, its gradient's
    accumulation): following a run, the view stays on the iteration that reads it."""
    graph = recording.graph
    if not graph.node(node).is_leaf:
        return False
    marks = {graph.node(n).loops for n in neighbours.get(node, ())}
    marks.discard(())
    return len(marks) > 1


class GraphArea(QStackedWidget):
    """The session's graph, fitted and followed through ``navigation``; the legend goes in
    ``legend_area`` when the view is made."""

    view_made = Signal(object)  # the GraphView, made once
    said = Signal(str)  # a quiet line for the status bar: what Graphviz left out, or why

    def __init__(
        self,
        session: Session,
        navigation: GraphNavigation,
        legend_area: QScrollArea,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._session = session
        self._navigation = navigation
        self._legend_area = legend_area
        self._palette, self._font_scale = "light", 1.0
        self._following = True  # "Follow the running node", as the last step was shown
        self._change_framed: tuple[str, str] | None = None  # the session's last change, once framed
        self.view: GraphView | None = None
        self.legend: Legend | None = None
        self.preview: GraphPreview | None = None  # made when a file with a preview is opened
        self._previewed: Callable[[], object] | None = None  # the load waiting for the preview's paint
        self.message = plain(QLabel("Recording the program…"))
        self.message.setObjectName("graphMessage")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.page = QWidget()
        # one cell: the graph view under the preview, shown until the view draws the graph
        self._cell = QGridLayout(self.page)
        self._cell.setContentsMargins(0, 0, 0, 0)
        self.addWidget(self.message)
        self.addWidget(self.page)

    def drawing_graph(self) -> bool:
        """Whether the view was given a graph it does not draw yet (a big one is drawn in slices)."""
        view = self.view
        return view is not None and self._session.layout is not None and not view.shows_graph

    def loading_graph(self) -> bool:
        """Whether the view is still drawing its graph or filling it in (a big one, in slices)."""
        return self.drawing_graph() or (self.view is not None and self.view.building)

    def make_view(self) -> None:
        """The graph view and the legend, made once (NOTE [fast start])."""
        if self.view is not None:
            return
        from app.ui.graph.graph_view import GraphView
        from app.ui.panels.legend import Legend

        view = self.view = GraphView()
        self.legend = Legend()
        self._cell.addWidget(view, 0, 0)
        if self.preview is not None:
            self.preview.raise_()  # over the view while it waits for the recording
        self._legend_area.setWidget(self.legend)
        view.layout_said.connect(self.said)
        view.set_palette(self._palette)
        self.legend.set_palette(self._palette)
        view.set_font_scale(self._font_scale)
        self._navigation.attach(view)  # NOTE [auto fit]
        self.view_made.emit(view)

    def set_palette(self, name: str) -> None:
        self._palette = name
        for shown in (self.preview, self.view, self.legend):
            if shown is not None:
                shown.set_palette(name)

    def set_font_scale(self, scale: float) -> None:
        self._font_scale = scale
        if self.view is not None:
            self.view.set_font_scale(scale)

    # -- opening: the picture first (lensfile/format.py's NOTE [picture first]) -------------------------
    def open(self, text: str, lens_path: Path | None, load: Callable[[], object]) -> None:
        """Say ``text`` while ``load`` runs; a ``.lens`` file's picture is painted first, and
        ``load`` waits for that paint: run at once, the worker's decoding would share the
        interpreter with it."""
        self.message.setText(text)
        self._previewed = None
        if lens_path is not None and self._show_preview(lens_path):
            self._previewed = load
            assert self.preview is not None
            after_first_paint(self.preview, partial(self._load_previewed, load))
            return
        load()

    def _show_preview(self, path: Path) -> bool:
        """Paint the picture a big ``.lens`` file opens with, if it has one that checks out."""
        from app.core.lensfile import lens_preview
        from app.render.preview import preview_from_json

        preview = preview_from_json(lens_preview(path))
        if preview is None:
            return False
        if self.preview is None:
            from app.ui.graph.graph_preview import GraphPreview

            self.preview = GraphPreview()
            self.preview.set_palette(self._palette)
            self._cell.addWidget(self.preview, 0, 0)
        self.preview.show_preview(preview, f"Reading {path.name}… the picture first, then the steps.")
        self.preview.show()
        self.preview.raise_()
        self.setCurrentIndex(GRAPH_PAGE)
        return True

    def _load_previewed(self, load: Callable[[], object]) -> None:
        if self._previewed is load:  # not replaced by another load meanwhile
            load()

    def hide_preview(self) -> None:
        self._previewed = None
        if self.preview is not None:
            self.preview.hide()
            self.preview.clear()

    def show_message(self, text: str) -> None:
        """No graph: ``text`` in its place (the last recording's graph is not this program's)."""
        self.hide_preview()
        self.message.setText(text)
        self.setCurrentIndex(MESSAGE_PAGE)

    # -- the recording and its steps ---------------------------------------------------------
    def show_recording(self, recording: Recording) -> None:
        """Draw the session's new recording, or say why it cannot be drawn."""
        layout, error = self._session.layout, self._session.layout_error
        if self.view is None or layout is None:
            self.hide_preview()
            why = error or "the graph view is not available in this build"
            self.message.setText(
                f"The graph cannot be drawn: {why}\n\nEvery other panel still works: step with ← →."
            )
            self.setCurrentIndex(MESSAGE_PAGE)
            return
        self.view.set_model(recording, layout, shown=self._session.shown)
        self.setCurrentIndex(GRAPH_PAGE)
        previewing = self.preview is not None and self.preview.isVisible()
        if previewing and not self.view.shows_graph:
            # the picture stays over the view until the view draws the graph: not a blank frame
            self.view.graph_shown.connect(self.hide_preview, Qt.ConnectionType.SingleShotConnection)
        else:
            self.hide_preview()
        QTimer.singleShot(0, self._fit)  # once the page has its final size

    def _fit(self) -> None:
        recording = self._session.recording
        if self.view is None or recording is None:
            return
        failed = recording.failed
        scene = self.view.graph_scene
        if scene is not None and failed is not None and failed.failed_node is not None:
            scene.select(failed.failed_node)  # outlined as well as drawn as failed
        self._navigation.fit()
        state = self._session.state()
        changed = self._changed_nodes(recording)
        if changed:  # after a fix: the nodes its lines make, readable where they fit
            self._navigation.follow(changed[-1], changed[:-1])
        elif state is not None:
            # readable on arrival: the error step's node; following, the step's node or the
            # newest one made (the whole graph, where its names can be read fitted)
            node = arrival_node(state, recording, running=self._following)
            self._follow(state, running=self._following, node=node)

    def _changed_nodes(self, recording: Recording) -> list[str]:
        """The nodes made by the lines the session's last change (a fix, a toggle) wrote, the first
        time its recording is shown; else none."""
        from app.core.lesson.edits import new_line_numbers

        change = self._session.last_change
        if change is None or change is self._change_framed or change[1] != recording.program.code:
            return []
        self._change_framed = change
        lines = set(new_line_numbers(*change))
        return [n.id for n in recording.graph.nodes if n.line in lines]

    def show_step(self, *, following: bool) -> None:
        """Restyle the graph for the session's step; show the node it is about (NOTE [auto fit])."""
        state = self._session.state()
        self._following = following
        if self.view is None or state is None or self.currentIndex() != GRAPH_PAGE:
            return
        self.view.show_state(state)
        if step_node(state, running=following) is not None or not following:
            self._follow(state, running=following)  # following, a step about no node keeps the view

    def follow(self, following: bool) -> None:
        """ "Follow the running node" turned on or off: show what the current step is about now."""
        state = self._session.state()
        self._following = following
        if state is not None and self.view is not None:
            self._follow(state, running=following)

    def _follow(self, state: StepState, *, running: bool, node: str | None = None) -> None:
        node = node if node is not None else step_node(state, running=running)
        recording = self._session.recording
        if node is None or recording is None:
            self._navigation.follow(node)
            return
        neighbours = recording.graph.neighbours  # made by the worker (prepare_shown)
        company = step_company(state, node, neighbours)
        self._navigation.follow(node, company, shared=is_shared(recording, node, neighbours))
