"""Zoom, fit and find in the graph view, and keeping the graph fitted while nobody zoomed.

The window's policy over the view's :class:`~app.ui.graph.camera.Camera` (its zoom and pan): the
learner's commands, fitting again as the view changes size, following a step's node.

# NOTE [auto fit]
Until the learner zooms (keys, a plain wheel over the graph, finding a node),
the graph stays fitted to its view: when the window, a dock or the presentation
layout changes the view's size, it is fitted again. "Fit graph" (Ctrl+0) turns
this back on.

While the graph is fitted so, a step about one node shows that node readable
(``follow``): a graph fitted to a projector's view draws a real model's node
names a few pixels tall, and the room reads a name from ~12 px (times the text
scale) up. An error step is about the node PyTorch failed at (with its freed
saved values). With "Follow the running node" (View menu; on unless turned
off) a backward step is about the node it ran, with its neighbours where they
fit, and a line's forward step about the nodes it added; a step about no node
(a call's end, a line that made no node) keeps the view, and so does a step whose node
is already drawn readable in it, or, for a weight every iteration reads, one of its
neighbours (camera.py's NOTE [steady camera]: a pan repaints the whole view). So the view pans with
the run at one zoom: going back to the whole graph at every iteration of a
training loop was a jump each time, and hiding or showing every item of a big
graph's overview (100-200 ms at 1,200 nodes). A recording opens fitted where its
names can be read so, else on the step's node (following, the newest made), and after a
fix on the nodes its lines made; "Fit graph" shows the whole graph until the next step
about a node. A graph whose
fitted names can be read stays fitted throughout. While zoomed in, a corner
of the view shows the whole graph small (``minimap.py``); a click there goes
to that part of the graph.

Zoomed in, a loop's graph paints every long edge that crosses the view (a
shared weight has one to each iteration; NOTE [long edges] in render/qt/edges.py:
only the pieces of each that meet the view are stroked, dashed ones too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QWheelEvent

if TYPE_CHECKING:
    from app.ui.graph.graph_view import GraphView

__all__ = ["GraphNavigation"]


class GraphNavigation(QObject):
    """Zoom and find for the graph view, once :meth:`attach` gave it one."""

    not_found = Signal(str)  # the text that matched no node
    node_found = Signal(str)  # the node's id

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._view: GraphView | None = None
        self.auto_fit = True
        self._followed: str | None = None  # the failing node shown readable, while fitted
        self._step_node: str | None = None  # the shown step's failing node, zoomed or not
        self._also: tuple[str, ...] = ()  # the nodes shown with the followed one where they fit

    def attach(self, view: GraphView) -> None:
        self._view = view
        view.installEventFilter(self)  # resizes
        view.viewport().installEventFilter(self)  # a plain wheel zooms the view itself
        view.modules_changed.connect(self._refit)  # a new drawing is fitted: show the node again
        view.learner_zoomed.connect(self._learner_zoomed)

    def _learner_zoomed(self) -> None:
        """The learner's own zoom: no more fitting, nor following the failing node."""
        self.auto_fit = False
        self._followed = None

    def zoom_in(self) -> None:
        if self._view is not None:
            self._learner_zoomed()
            self._view.camera.zoom_in()

    def zoom_out(self) -> None:
        if self._view is not None:
            self._learner_zoomed()
            self._view.camera.zoom_out()

    def fit(self) -> None:
        self._followed = None
        if self._view is not None:
            self.auto_fit = True  # and keep it fitted as the window changes size
            self._view.camera.fit()

    def follow(self, node_id: str | None, also: Sequence[str] = (), *, shared: bool = False) -> None:
        """The node the shown step is about (an error step's failing node; following, a backward
        step's node or a line's newest one), or None: while the learner has not zoomed, show it
        readable (``Camera.show_readable``) with as many of ``also`` as fit, else the whole graph.
        ``shared``: a node many parts of the graph use, shown by one of ``also`` in view."""
        self._step_node = node_id
        if node_id == self._followed or self._view is None or not self.auto_fit:
            return
        self._followed, self._also = node_id, tuple(also)
        if node_id is None:
            self._view.camera.fit()
        else:
            self._view.camera.show_readable(node_id, self._also, shared=shared)
        # NOTE [the corner moves before the paint]: the corner map found its place as the view
        # painted; moved then, it left its old place to paint again, a second pass over the window
        # at each step that moved the view. Placed now, the one paint of the pan covers both.
        self._view.minimap.sync()

    def _refit(self) -> None:
        if self._view is None or not self.auto_fit:
            return
        if self._followed is not None:
            self._view.camera.show_readable(self._followed, self._also)
        else:
            self._view.camera.fit()

    def fit_soon(self, delay_ms: int = 0) -> None:
        """Fit again after the view changed size (full screen, presentation): as :meth:`fit`, but
        an error step's failing node stays shown readable."""
        QTimer.singleShot(delay_ms, self._fit_again)

    def _fit_again(self) -> None:
        if not self.auto_fit:  # the learner's zoom is dropped: back to what the step shows
            self._followed = self._step_node
        self.auto_fit = True
        self._refit()

    def find(self, text: str) -> None:
        text = text.strip()
        if not text or self._view is None:
            return
        self._learner_zoomed()  # finding zooms in on the node
        node_id = self._view.find_node(text)
        if node_id is None:
            self.not_found.emit(text)
        else:
            self.node_found.emit(node_id)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._view and event.type() == QEvent.Type.Resize:
            if self.auto_fit:
                QTimer.singleShot(0, self._refit)
        elif isinstance(event, QWheelEvent) and not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._learner_zoomed()
        return False
