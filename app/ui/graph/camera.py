"""One graph view's zoom and pan: what part of the scene it shows, and what that zoom hides.

Zoomed far out, saved-value boxes are hidden (level of detail) and a big graph is drawn as an
overview of dots, so fit-to-window of a 5,000-node graph paints only the nodes and arrows. A
node's name fitted too small to read is shown readable instead (:meth:`Camera.show_readable`).
The window's policy over it (fit again, follow a step's node) is ``graph_navigation.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, overload

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QPolygon, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QScrollBar, QWidget

from app.render.labels import NODE_FONT_PX, SLOT_FONT_PX
from app.render.preview import MAX_FIT_ZOOM
from app.render.qt.boxes import MIN_SLOT_LOD
from app.render.style import PALETTES, text_readable

if TYPE_CHECKING:
    from app.render.qt.scene import GraphScene

__all__ = ["READABLE_NODE_PX", "ZOOM_STEP", "Camera", "FramedView"]

ZOOM_STEP = 1.25
MIN_ZOOM = 0.02
MAX_ZOOM = 12.0
READ_ZOOM = 1.0  # finding a node zooms in at least this far so the found node can be read
# a node's name drawn smaller than this on screen (at text scale 1; times the window's text scale)
# cannot be read from the back of a classroom: a 1280x720 projector's pixel is ~2 mm on a 2.5 m wall
READABLE_NODE_PX = 12.0
FOCUS_MARGIN = 16  # pixels kept between a node shown readable and the view's edge


class FramedView(Protocol):
    """What a camera moves (``GraphView`` is one): the scene shown or waiting to be, the text
    scale and palette, and Qt's transform, viewport and the calls that zoom and pan."""

    @property
    def graph_scene(self) -> GraphScene | None: ...

    @property
    def unshown(self) -> GraphScene | None: ...

    @property
    def font_scale(self) -> float: ...

    @property
    def palette_name(self) -> str: ...

    def transform(self) -> QTransform: ...

    def viewport(self) -> QWidget: ...

    def mapFromScene(self, rect: QRectF, /) -> QPolygon: ...

    def fitInView(self, rect: QRectF, mode: Qt.AspectRatioMode = ..., /) -> None: ...

    @overload
    def centerOn(self, item: QGraphicsItem, /) -> None: ...

    @overload
    def centerOn(self, pos: QPointF, /) -> None: ...

    def ensureVisible(self, rect: QRectF, xmargin: int = ..., ymargin: int = ..., /) -> None: ...

    def horizontalScrollBar(self) -> QScrollBar: ...

    def verticalScrollBar(self) -> QScrollBar: ...

    def transformationAnchor(self) -> QGraphicsView.ViewportAnchor: ...

    def setTransformationAnchor(self, anchor: QGraphicsView.ViewportAnchor, /) -> None: ...

    def scale(self, sx: float, sy: float, /) -> None: ...


class Camera:
    """One graph view's zoom and pan. A scene built in slices is not on screen yet
    (``GraphView.unshown``): a fit or a node shown readable asked for meanwhile is done when it is."""

    def __init__(self, view: FramedView) -> None:
        self._view = view
        self._fit_when_shown = False  # no zoom asked for since the model was set: fit when shown
        self._fitted: tuple[QRectF, float] | None = None  # scene rect and zoom of the last fit()
        self._reading: str | None = None  # the node show_readable() zoomed in on, until a zoom
        self._read_when_shown: str | None = None  # show_readable() asked before the scene was shown
        self._also: tuple[str, ...] = ()  # the nodes shown with the one read, where they fit

    @property
    def zoom(self) -> float:
        return self._view.transform().m11()

    @property
    def reading(self) -> str | None:
        """The node :meth:`show_readable` zoomed in on, while the view still shows it so."""
        return self._reading

    def new_model(self, *, shown_later: bool) -> None:
        """A new model is set; ``shown_later``: its scene goes on screen at a later tick."""
        self._reading = self._read_when_shown = None
        self._fit_when_shown = shown_later

    def scene_shown(self) -> None:
        """The scene of the last model is on screen: fitted, unless the learner zoomed since."""
        read, self._read_when_shown = self._read_when_shown, None
        if self._fit_when_shown and read is not None:
            self.show_readable(read, self._also)
        elif self._fit_when_shown:
            self.fit()
        else:
            self._fitted = None
            self.update_details()

    def zoom_in(self) -> None:
        self._zoom_about_centre(ZOOM_STEP)

    def zoom_out(self) -> None:
        self._zoom_about_centre(1 / ZOOM_STEP)

    def fit(self) -> None:
        """Show the whole graph (Ctrl+0)."""
        view, graph = self._view, self._view.graph_scene
        if graph is None:
            return
        self._read_when_shown = None
        if view.unshown is not None:
            self._fit_when_shown = True
            return
        view.fitInView(graph.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > MAX_FIT_ZOOM:
            self.set_zoom(MAX_FIT_ZOOM)
        view.centerOn(graph.sceneRect().center())
        self.update_details()
        self._fitted = (graph.sceneRect(), self.zoom)
        self._reading = None

    def show_readable(self, node_id: str, also: Sequence[str] = (), *, shared: bool = False) -> bool:
        """Fit the graph; if that draws node names too small to read, zoom in to
        :data:`READ_ZOOM` around ``node_id`` and its saved values instead (the failing node of an
        error step on a projector, the node a backward step runs), with as many of the nodes
        ``also`` (its neighbours, the other nodes a line made) as fit at a readable zoom.
        Returns whether it zoomed in. A zoom by the learner ends it; a resize or a wider scene
        while the graph builds shows the node again. ``shared``: the node is used by many parts
        of the graph (a weight every iteration reads): one of ``also`` drawn readable in the view
        shows the step (the edge it runs along), and the view stays."""
        view, graph = self._view, self._view.graph_scene
        if graph is None:
            return False
        self._also = tuple(also)
        if view.unshown is not None:
            self.fit()
            self._read_when_shown = node_id
            return False
        rects = graph.focus_rects(node_id)
        if rects is None or self.fit_zoom() * self._node_px() >= self.readable_px:
            self.fit()
            return False
        # NOTE [steady camera]: the camera works in proportion to what changed on screen. A node
        # already drawn readable inside the view keeps the view as it is (a pan or a zoom repaints
        # the whole view: a 200-iteration loop's long edges, ~200 ms a step); one that left it is
        # brought back by the shortest pan, at the zoom the view has when that is readable.
        alone, together = rects
        room = self._room()
        readable = self.readable_px / self._node_px()
        zoom = self.zoom

        def fits(rect: QRectF) -> float:
            return min(room.width() / max(rect.width(), 1.0), room.height() / max(rect.height(), 1.0))

        # NOTE [the node with its saved values]: what must be seen is the node with its saved
        # values (the step frees or keeps one of them) wherever they fit the room at this zoom;
        # the node alone kept the view while the value it freed was cut at the view's edge.
        own = QRectF(together)  # together grows by the company below
        if (
            self._reading is not None
            and zoom >= readable
            and self._steady(own if fits(own) >= zoom else alone, also if shared else (), room)
        ):
            self._reading = node_id
            return True

        if self._reading is None or zoom < readable or fits(alone) < zoom:
            zoom = max(readable, min(READ_ZOOM, fits(together)))  # with its saved values where they fit
        for other in also:  # at that zoom, so following a run pans from node to node at one zoom
            more = graph.focus_rects(other)
            if more is not None and fits(together | more[0]) >= zoom:
                together |= more[0]
        wanted = [(own, FOCUS_MARGIN, FOCUS_MARGIN), (alone, FOCUS_MARGIN, FOCUS_MARGIN)]
        if zoom != self.zoom:
            self.set_zoom(zoom)
            view.centerOn(together.center())
        else:
            wanted.insert(0, self._lead(together, room))
        # its saved values before its company; too wide, as many of them as fit beside the node;
        # then the node itself, when all is too wide
        self._ensure_visible(wanted)
        self._fitted = (graph.sceneRect(), self.zoom)
        self._reading = node_id
        return True

    def _room(self) -> QRect:
        """The readable part of the view: the viewport less a margin on each side."""
        return self._view.viewport().rect().adjusted(FOCUS_MARGIN, FOCUS_MARGIN, -FOCUS_MARGIN, -FOCUS_MARGIN)

    def _steady(self, alone: QRectF, company: Sequence[str], room: QRect) -> bool:
        """Whether the node at ``alone``, or else one of ``company``, is drawn whole in ``room``."""
        if self._shown_within(alone, room):
            return True
        graph = self._view.graph_scene
        assert graph is not None
        return any(
            (r := graph.focus_rects(n)) is not None and self._shown_within(r[0], room) for n in company
        )

    def _shown_within(self, rect: QRectF, room: QRect) -> bool:
        """Whether the scene rectangle ``rect`` is drawn whole inside ``room`` (viewport pixels)."""
        drawn = self._view.mapFromScene(rect).boundingRect()
        return QRect(room).contains(drawn)

    def _lead(self, rect: QRectF, room: QRect) -> tuple[QRectF, int, int]:
        """``rect`` (scene units) with the margins that pan the shortest way to it with a lead of up
        to a quarter of the view beyond it, so the next steps of a run that goes on that way stay
        put a while."""
        width, height = rect.width() * self.zoom, rect.height() * self.zoom
        lead_x = max(FOCUS_MARGIN, min(room.width() / 4, (room.width() - width) / 2))
        lead_y = max(FOCUS_MARGIN, min(room.height() / 4, (room.height() - height) / 2))
        return rect, int(lead_x), int(lead_y)

    def _ensure_visible(self, wanted: Sequence[tuple[QRectF, int, int]]) -> None:
        """Where ``QGraphicsView.ensureVisible`` of each rectangle with its margins, in turn, leaves
        the scroll bars, each bar set once. Qt's own calls each scroll as they go, and one too wide
        for the view scrolls a bar twice (to its left edge, then its right): following a 5,000-node
        chain moved the view six times a step, each a scroll with what a scroll costs."""
        view = self._view
        bars = (view.horizontalScrollBar(), view.verticalScrollBar())
        values = [bars[0].value(), bars[1].value()]
        sizes = (view.viewport().width(), view.viewport().height())
        transform = view.transform()
        for rect, xmargin, ymargin in wanted:
            mapped = transform.mapRect(rect)
            spans = ((mapped.left(), mapped.right(), xmargin), (mapped.top(), mapped.bottom(), ymargin))
            for axis, (low, high, margin) in enumerate(spans):
                bar, start = bars[axis], values[axis]  # Qt reads the view's edges once a call
                if low <= start + margin:
                    values[axis] = _clamped(bar, int(low - margin - 0.5))
                if high >= start + sizes[axis] - margin:
                    values[axis] = _clamped(bar, int(high - sizes[axis] + margin + 0.5))
        for bar, value in zip(bars, values, strict=True):
            bar.setValue(value)

    @property
    def readable_px(self) -> float:
        """The smallest node name on screen, in pixels, the room can read at the view's text scale."""
        return READABLE_NODE_PX * self._view.font_scale

    def show_node(self, node_id: str) -> None:
        """Centre ``node_id``, zoomed in at least to :data:`READ_ZOOM` (a found or clicked node)."""
        graph = self._view.graph_scene
        if graph is None or node_id not in graph.nodes:
            return
        if self.zoom < READ_ZOOM:
            self.set_zoom(READ_ZOOM)
        self._view.centerOn(graph.nodes[node_id])

    def fit_zoom(self) -> float:
        """The zoom :meth:`fit` would set, without setting it (``fitInView`` keeps 2 px a side)."""
        graph = self._view.graph_scene
        assert graph is not None
        rect, room = graph.sceneRect(), self._view.viewport().rect().adjusted(2, 2, -2, -2)
        scale = min(room.width() / max(rect.width(), 1e-9), room.height() / max(rect.height(), 1e-9))
        return min(MAX_FIT_ZOOM, scale)

    def _node_px(self) -> float:
        return NODE_FONT_PX * self._view.font_scale * PALETTES[self._view.palette_name].text_scale

    def refit_if_untouched(self) -> None:
        """The first slice of a build may widen the scene (text spread): keep it fitted unless zoomed."""
        graph = self._view.graph_scene
        if graph is None or self._fitted is None:
            return
        rect, zoom = self._fitted
        if graph.sceneRect() != rect and self.zoom == zoom:
            if self._reading is not None:
                self.show_readable(self._reading, self._also)
            else:
                self.fit()

    def _zoom_about_centre(self, factor: float) -> None:
        view = self._view
        anchor = view.transformationAnchor()
        view.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.set_zoom(self.zoom * factor)
        view.setTransformationAnchor(anchor)

    def set_zoom(self, zoom: float) -> None:
        """Zoom to ``zoom`` (clamped) about the view's anchor: the learner's zoom wins over a
        pending fit and ends a node shown readable."""
        zoom = min(MAX_ZOOM, max(MIN_ZOOM, zoom))
        self._fit_when_shown = False
        self._reading = self._read_when_shown = None
        current = self.zoom
        if current > 0 and zoom != current:
            self._view.scale(zoom / current, zoom / current)
        self.update_details()

    def update_details(self) -> None:
        graph = self._view.graph_scene
        if graph is not None:
            graph.set_details(self.zoom >= MIN_SLOT_LOD)
            graph.set_overview(self.zoom < graph.overview_zoom)  # NOTE [overview]

    @property
    def overview(self) -> bool:
        """Whether the graph is drawn as an overview (zoomed out so far that boxes are dots)."""
        graph = self._view.graph_scene
        return graph is not None and graph.overview

    @property
    def boxes_visible(self) -> bool:
        """Whether saved-value boxes are shown at all (hidden when zoomed far out)."""
        graph = self._view.graph_scene
        return graph is not None and graph.details

    @property
    def details_visible(self) -> bool:
        """Whether saved-value text is large enough on screen to be drawn (level of detail)."""
        px = SLOT_FONT_PX * self._view.font_scale * PALETTES[self._view.palette_name].text_scale
        return text_readable(self.zoom, px)


def _clamped(bar: QScrollBar, value: int) -> int:
    return min(max(value, bar.minimum()), bar.maximum())
