"""The overview: a whole big graph drawn as dots and lines in a few calls, for a fitted view.

# NOTE [overview]
Fitted to the window, a graph of thousands of nodes draws each box smaller than a
pixel, yet Qt still calls every visible item's Python paint(): 11,659 calls, 140 ms a
frame at 5,000 nodes, on every pan, zoom and fill-in repaint. Below OVERVIEW_PX the
items are hidden and the scene's foreground draws the whole graph in a few C++ calls
instead (:class:`OverviewRenderer`): one 1 px line per edge and one OVERVIEW_DOT_PX dot per
node in its state's colour (cosmetic pens: the same size at any zoom). The geometry is
made in slices while the scene fills in; node colours follow the steps shown; zooming in
shows the items again.
"""

from __future__ import annotations

import functools
import statistics
import weakref
from collections.abc import Collection, Iterator, Mapping

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsScene, QWidget

from app.core.model.graph import Graph
from app.render.layout import Layout
from app.render.preview import OVERVIEW_DOT_PX, OVERVIEW_PX
from app.render.qt.frames import ClusterItem
from app.render.step_style import StepLooks
from app.render.style import BoxStyle, edge_style

__all__ = ["DOTS_UPDATED_ONE_BY_ONE", "OverviewRenderer"]

DOTS_UPDATED_ONE_BY_ONE = 64  # more changed dots than this: the scene is repainted whole
_LinesKey = tuple[float, ...]  # the transform, device and colour a picture of the lines was drawn for


class OverviewRenderer:
    """Draws ``graph`` (placed by ``layout``) as dots and lines on ``scene``'s foreground while
    ``on``; ``frames``: the scene's frames by name, drawn here as rectangles (the items are hidden).

    ``colours``: node -> its dot's colour at the step shown; ``centres``: node -> its dot.
    """

    def __init__(
        self,
        scene: QGraphicsScene,
        layout: Layout,
        graph: Graph,
        looks: StepLooks,
        frames: Mapping[str, ClusterItem],
    ) -> None:
        # weak: the scene owns this; a cycle would keep a replaced recording alive until a full
        # collection, which the window holds off while a big one loads (NOTE [no full GC while loading])
        self._scene = weakref.ref(scene)
        self.layout = layout
        self.graph = graph
        self.looks = looks
        self.frames = frames
        self.on = False
        self.placed = False  # every dot and line is made
        self.colours: dict[str, str] = {}
        self.centres: dict[str, QPointF] = {}
        self._lines: list[QLineF] = []
        self._spread = 1.0
        self._groups: dict[str, dict[str, QPointF]] | None = None  # colour -> its dots
        self._points: dict[str, list[QPointF]] = {}  # colour -> its dots, as drawn
        self._frame_groups: dict[BoxStyle, list[QRectF]] | None = None  # frames by look, as drawn
        self._frames_grouped = 0  # how many frames there were then
        self._lines_cache: tuple[_LinesKey, QPixmap] | None = None  # see _lines_pixmap

    @property
    def scene(self) -> QGraphicsScene:
        scene = self._scene()
        assert scene is not None, "the scene outlives its parts"
        return scene

    @functools.cached_property
    def zoom(self) -> float:
        """The zoom below which the graph is drawn as an overview (the view asks at every zoom
        step; the layout never changes, so the median is taken once)."""
        heights = [box.height for box in self.layout.nodes.values()]
        return OVERVIEW_PX / max(statistics.median(heights) if heights else 1.0, 1e-9)

    # -- geometry ------------------------------------------------------------
    def place(self, spread: float, chunk: int) -> Iterator[None]:
        """Centres, edge lines and colours for the layout spread by ``spread``, a slice of ``chunk``
        at a time; what is drawn changes only once all are made (a paint meanwhile draws the last
        ones whole)."""
        boxes, state = self.layout.nodes, self.looks.state
        centres: dict[str, QPointF] = {}
        lines: list[QLineF] = []
        colours: dict[str, str] = {}
        for done, (node_id, box) in enumerate(boxes.items(), 1):
            centres[node_id] = QPointF(box.x * spread, box.y * spread)
            colours[node_id] = self.looks.dot(node_id)
            if done % chunk == 0:
                yield None
        for done, edge in enumerate(self.graph.edges, 1):
            if edge.src in centres and edge.dst in centres:
                lines.append(QLineF(centres[edge.src], centres[edge.dst]))
            if done % chunk == 0:
                yield None
        if self.looks.state is not state:  # a step was shown meanwhile: some colours are of the one before
            colours = {node_id: self.looks.dot(node_id) for node_id in colours}
        self.centres, self._lines, self.colours, self._spread = centres, lines, colours, spread
        self._groups = None
        self.placed = True
        if self.on:  # nothing else repaints it: the items built next are hidden in the overview
            self.scene.update()

    def node_at(self, point: QPointF, radius: float) -> str | None:
        """The node whose dot lies nearest ``point``, within ``radius`` scene units.

        Asked once per hover, not per step: a walk over every centre is fine here.
        """
        best, best_d2 = None, radius * radius
        x, y = point.x(), point.y()
        for node_id, centre in self.centres.items():
            d2 = (centre.x() - x) ** 2 + (centre.y() - y) ** 2
            if d2 <= best_d2:
                best, best_d2 = node_id, d2
        return best

    # -- per step ------------------------------------------------------------
    def recolour(self, nodes: Collection[str]) -> None:
        """Give ``nodes`` their dot colours at the step shown; repaint the dots that changed."""
        if not self.colours or self.looks.state is None:
            return
        colours, groups, points = self.colours, self._groups, self._points
        moved: list[str] = []
        states = self.looks.drawn.node_states(self.looks.state, (n for n in nodes if n in colours))
        for node_id, state in states:
            old = colours[node_id]
            new = self.looks.dot(node_id, state)
            if new == old:
                continue
            colours[node_id] = new
            moved.append(node_id)
            if groups is not None:
                centre = groups.get(old, {}).pop(node_id, None)
                if centre is not None:
                    groups.setdefault(new, {})[node_id] = centre
                points.pop(old, None)
                points.pop(new, None)
        if moved and self.on:
            self._update_dots(moved)

    def frames_changed(self, *frames: ClusterItem) -> None:
        """``frames`` changed look or place: draw the frames anew, repainting where they are."""
        if not frames:
            return
        self._frame_groups = None
        if self.on:
            for frame in frames:
                self.scene.update(frame.frame_rect.adjusted(-2, -2, 2, 2))

    def _update_dots(self, nodes: Collection[str]) -> None:
        """Repaint only around the dots that changed colour (a step changes two or three; where a
        call starts or ends, nearly all: then one repaint of everything, not a region of thousands)."""
        scale = min((view.transform().m11() for view in self.scene.views()), default=0.0)
        if scale <= 0 or len(nodes) > DOTS_UPDATED_ONE_BY_ONE:
            self.scene.update()
            return
        half = (OVERVIEW_DOT_PX + 2) / scale
        for node_id in nodes:
            centre = self.centres.get(node_id)
            if centre is not None:
                self.scene.update(QRectF(centre.x() - half, centre.y() - half, 2 * half, 2 * half))

    # -- painting ------------------------------------------------------------
    def paint(self, painter: QPainter) -> None:
        """Frames, lines and dots, each in a few calls."""
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # 1 px lines: 5x faster
        self._paint_frames(painter)
        colour = QColor(edge_style("normal", self.looks.palette).colour)
        lines = self._lines_pixmap(painter, colour) if isinstance(painter.device(), QWidget) else None
        if lines is None:
            painter.setPen(QPen(colour, 0))
            painter.drawLines(self._lines)
        else:
            painter.save()
            painter.resetTransform()
            painter.drawPixmap(0, 0, lines)  # clipped to what is repainted: a step's few dots
            painter.restore()
        for colour_name, points in self._dots().items():
            pen = QPen(QColor(colour_name), OVERVIEW_DOT_PX)
            pen.setCosmetic(True)
            pen.setCapStyle(Qt.PenCapStyle.SquareCap)
            painter.setPen(pen)
            painter.drawPoints(points)
        painter.restore()

    def _paint_frames(self, painter: QPainter) -> None:
        """The iteration frames, a few calls for all of them: as items, each was a Python paint
        at every step (a fitted 200-iteration loop repainted ~190 of them per step)."""
        if self._frame_groups is None or self._frames_grouped != len(self.frames):  # built meanwhile
            self._frame_groups, self._frames_grouped = {}, len(self.frames)
            for frame in self.frames.values():
                if frame.style.opacity > 0:
                    self._frame_groups.setdefault(frame.style, []).append(frame.frame_rect)
        for style, rects in self._frame_groups.items():
            pen = QPen(QColor(style.border), 0)  # cosmetic: a hairline at any zoom
            painter.setOpacity(style.opacity)
            painter.setPen(pen)
            painter.setBrush(QBrush(QColor(style.fill)))
            painter.drawRects(rects)
        painter.setOpacity(1.0)
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def _lines_pixmap(self, painter: QPainter, colour: QColor) -> QPixmap:
        """Every line, drawn once per zoom, pan and viewport size into a picture of the viewport:
        a step repaints a few dots, and drawing all lines (clipped) cost ~1 ms a paint."""
        device = painter.device()
        t = painter.worldTransform()
        ratio = device.devicePixelRatioF()
        key: _LinesKey = (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(), ratio)
        key += (device.width(), device.height(), colour.rgba(), len(self._lines), self._spread)
        if self._lines_cache is not None and self._lines_cache[0] == key:
            return self._lines_cache[1]
        pixmap = QPixmap(round(device.width() * ratio), round(device.height() * ratio))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        drawn = QPainter(pixmap)
        drawn.setTransform(t)
        drawn.setPen(QPen(colour, 0))
        drawn.drawLines(self._lines)
        drawn.end()
        self._lines_cache = (key, pixmap)
        return pixmap

    def _dots(self) -> dict[str, list[QPointF]]:
        """Node centres grouped by colour; a colour's list is made again only when a dot joins or
        leaves it (``recolour``), not at every paint."""
        if self._groups is None:
            groups: dict[str, dict[str, QPointF]] = {}
            for node_id, colour in self.colours.items():
                centre = self.centres.get(node_id)
                if centre is not None:
                    groups.setdefault(colour, {})[node_id] = centre
            self._groups, self._points = groups, {}
        points = self._points
        for colour, dots in self._groups.items():
            if colour not in points:
                points[colour] = list(dots.values())
        return points
