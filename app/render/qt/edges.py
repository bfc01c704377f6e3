"""An edge of the graph: a Graphviz spline with an arrowhead, or a dotted line to a saved value."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from app.core.model.graph import Edge
from app.core.model.timeline import SlotKey
from app.render.layout import EdgePath
from app.render.qt.box_paint import NO_BRUSH, PEN_STYLES, SOLID
from app.render.qt.boxes import MIN_SLOT_LOD
from app.render.qt.repaint import fade, repaint
from app.render.step_style import StepLooks
from app.render.style import EdgeStyle

__all__ = ["ARROW_HALF_WIDTH", "LONG_EDGE_POINTS", "EdgeItem"]

ARROW_HALF_WIDTH = 0.35  # of the arrowhead's length, as Graphviz draws it


@lru_cache(maxsize=256)
def _edge_look(style: EdgeStyle) -> tuple[QPen, QPen, QBrush]:
    pen = QPen(QColor(style.colour), style.width)
    pen.setStyle(PEN_STYLES[style.dash])
    arrow = QPen(pen)
    arrow.setStyle(SOLID)
    return pen, arrow, QBrush(QColor(style.colour))


@lru_cache(maxsize=256)
def _hairline_of(colour: str, style: Qt.PenStyle) -> QPen:
    pen = QPen(QColor(colour), 1.0)
    pen.setCosmetic(True)
    pen.setStyle(style)
    return pen


def _hairline(pen: QPen) -> QPen:
    """``pen`` one screen pixel wide (NOTE [hairlines])."""
    return _hairline_of(pen.color().name(), pen.style())


def _spline_path(points: Sequence[tuple[float, float]]) -> QPainterPath:
    path = QPainterPath(QPointF(*points[0]))
    for i in range(1, len(points) - 2, 3):
        path.cubicTo(QPointF(*points[i]), QPointF(*points[i + 1]), QPointF(*points[i + 2]))
    return path


def _arrowhead(base: tuple[float, float], tip: tuple[float, float]) -> tuple[tuple[float, float], ...]:
    """The arrowhead's three corners: its tip and the two ends of its base (as Graphviz draws it)."""
    (tx, ty), (bx, by) = tip, base
    # the base line's normal, as long as ARROW_HALF_WIDTH of the arrow (QLineF.normalVector's turn)
    nx, ny = (by - ty) * ARROW_HALF_WIDTH, -(bx - tx) * ARROW_HALF_WIDTH
    return (tip, (bx + nx, by + ny), (bx - nx, by - ny))


# NOTE [long edges]
# A leaf used by every iteration of a loop (a model's weight) has an edge to each of them, and
# each edge runs across the graph. Zoomed in, every such edge meets the view, and Qt strokes all
# of its length to draw the few pixels shown: stepping a 200-iteration loop at a readable zoom
# painted ~270 edges a step, a full frame 162 ms. A solid edge of more than LONG_EDGE_POINTS
# points that the repainted area does not hold whole draws only its Bezier pieces whose hulls
# meet that area (a full frame: 18-55 ms). A dashed one (a gone iteration's edges: most of a
# loop's) does the same, each run's dashes started at the length of the pieces before it, so
# they keep their phase as the view pans (Qt measures both the same, along the flattened
# curve); drawn whole, stepping a 200-iteration loop zoomed in took 57 ms a step (p50).
LONG_EDGE_POINTS = 7  # two Bezier pieces: shorter edges are drawn whole
# A piece whose hull is wider or taller than this many times the repainted area is split in
# halves (de Casteljau) until its halves are not, and only those meeting the area are stroked:
# zoomed in, one piece of a loop's long edge runs thousands of pixels past the view.
SPLIT_BEYOND = 3.0
MAX_SPLITS = 10  # halvings of one piece at most (1,024 parts)
# NOTE [hairlines]
# Qt strokes a line up to one device pixel wide with its fast line drawer, a wider one with its
# general stroker: a dashed edge 1.2 px wide on screen took 2.4 ms to stroke, 1 px wide 0.03 ms.
# Following a loop's run at a readable zoom, a view crosses ~240 of a shared weight's long
# edges and repainted them at ~200 ms a frame. An edge narrower on screen than HAIRLINE_BELOW
# pixels is drawn one pixel wide (a cosmetic pen: the width and dashes in screen pixels);
# a wider one (a running edge, a zoom from close by) keeps its width.
HAIRLINE_BELOW = 1.75

Bezier = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]


def _halves(curve: Bezier) -> tuple[Bezier, Bezier]:
    """A cubic Bezier curve cut at t = 0.5 into two that trace it exactly.

    >>> _halves(((0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 0.0)))[1][0]
    (1.5, 0.0)
    """

    def mid(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
        return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)

    p0, p1, p2, p3 = curve
    a, b, c = mid(p0, p1), mid(p1, p2), mid(p2, p3)
    d, e = mid(a, b), mid(b, c)
    f = mid(d, e)
    return (p0, a, d, f), (f, e, c, p3)


def _hull(curve: Bezier) -> QRectF:
    xs, ys = [x for x, _ in curve], [y for _, y in curve]
    return QRectF(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))


def _length(curve: Bezier) -> float:
    """About the curve's length: the mean of its chord and its control polygon (both bound it)."""

    def dist(a: tuple[float, float], b: tuple[float, float]) -> float:
        return float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)

    polygon = dist(curve[0], curve[1]) + dist(curve[1], curve[2]) + dist(curve[2], curve[3])
    return (polygon + dist(curve[0], curve[3])) / 2


def _seen_parts(curve: Bezier, seen: QRectF, before: float, depth: int = 0) -> list[tuple[float, Bezier]]:
    """The parts of ``curve`` to stroke for ``seen``, each with the length before it."""
    hull = _hull(curve)
    if not seen.intersects(hull) and not hull.isEmpty():
        return []
    big = hull.width() > SPLIT_BEYOND * seen.width() or hull.height() > SPLIT_BEYOND * seen.height()
    if not big or depth >= MAX_SPLITS:
        return [(before, curve)]
    first, second = _halves(curve)
    return _seen_parts(first, seen, before, depth + 1) + _seen_parts(
        second, seen, before + _length(first), depth + 1
    )


def _curve_path(curve: Bezier) -> QPainterPath:
    path = QPainterPath(QPointF(*curve[0]))
    path.cubicTo(QPointF(*curve[1]), QPointF(*curve[2]), QPointF(*curve[3]))
    return path


class EdgeItem(QGraphicsItem):
    """A Graphviz spline with an arrowhead (between nodes) or dotted (to a saved value).

    The Qt path and polygon are made at the first paint: a fitted 5,000-node graph paints no edge
    items (NOTE [overview] in overview.py), and every Qt object kept from Python is an entry in PySide's
    table of wrappers, rehashed on the GUI thread as it grows (box_paint.py's ``centred``).
    """

    def __init__(
        self,
        path: EdgePath,
        state: str,
        style: EdgeStyle,
        *,
        to_slot: bool = False,
        key: Edge | SlotKey | None = None,
        looks: StepLooks | None = None,
    ) -> None:
        super().__init__()
        self._points = path.points or ((0.0, 0.0),)
        self._corners = _arrowhead(self._points[-1], path.arrow) if path.arrow else None
        self._path: QPainterPath | None = None
        self._arrow: QPolygonF | None = None
        self._pieces: list[tuple[QRectF, QPainterPath, float]] | None = None  # NOTE [long edges]
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)  # the exposed rect
        # a Bezier curve lies within the hull of its control points: their box bounds the curve
        every = (*self._points, *(self._corners or ()))
        xs, ys = [x for x, _ in every], [y for _, y in every]
        left, top = min(xs) - 8, min(ys) - 8
        self._bounds = QRectF(left, top, max(xs) + 8 - left, max(ys) + 8 - top)
        self.min_lod = MIN_SLOT_LOD if to_slot else 0.0
        self.key = key  # what the scene files it under (its Edge, or a slot's key)
        self.looks = looks  # None: drawn alone, in the look it is given
        self._state = state
        self._style = style
        self._pen, self._arrow_pen, self._brush = _edge_look(style)

    @property
    def has_arrow(self) -> bool:
        return self._corners is not None

    def look_now(self) -> tuple[str, EdgeStyle]:
        """State and style at the step shown (restyle_later.py's NOTE: what is painted may wait)."""
        if self.looks is None or self.key is None:
            return self._state, self._style
        if isinstance(self.key, Edge):
            return self.looks.edge(self.key)
        return self.looks.slot_line(self.key)

    @property
    def state(self) -> str:
        return self.look_now()[0]

    @property
    def style(self) -> EdgeStyle:
        return self.look_now()[1]

    @property
    def painted_opacity(self) -> float:
        """The opacity painted now (the painter's, as it paints: repaint.py's NOTE)."""
        return self._style.opacity

    def restyle(self) -> bool:
        """Paint the look of the step shown; False (nothing repainted) when unchanged."""
        return self.set_look(*self.look_now())

    def set_look(self, state: str, style: EdgeStyle) -> bool:
        if state == self._state and style == self._style:
            return False
        self._state, self._style = state, style
        self._pen, self._arrow_pen, self._brush = _edge_look(style)
        repaint(self)  # NOTE [a restyle repaints without a walk]
        return True

    def boundingRect(self) -> QRectF:
        return self._bounds

    @property
    def _long(self) -> bool:
        return len(self._points) > LONG_EDGE_POINTS

    def _visible_runs(self, exposed: QRectF, *, split: bool = True) -> list[tuple[float, QPainterPath]]:
        """The runs of this spline's Bezier pieces whose hulls meet ``exposed`` (item units), each
        with the length of the spline before it (where its dashes start). ``split``: a piece far
        larger than ``exposed`` is cut to the parts that meet it (a hairline's stroker clips
        cheaply by itself: NOTE [hairlines])."""
        if self._pieces is None:
            pieces = [_spline_path(self._points[i : i + 4]) for i in range(0, len(self._points) - 3, 3)]
            self._pieces, before = [], 0.0
            for piece in pieces:
                self._pieces.append((piece.controlPointRect(), piece, before))
                before += piece.length()
        margin = self._pen.widthF() + 1.0
        seen = exposed.adjusted(-margin, -margin, margin, margin)
        runs: list[tuple[float, QPainterPath]] = []
        joined = False  # whether the last piece is in the last run
        for index, (hull, piece, before) in enumerate(self._pieces):
            if not seen.intersects(hull):
                joined = False
            elif split and (
                hull.width() > SPLIT_BEYOND * seen.width() or hull.height() > SPLIT_BEYOND * seen.height()
            ):
                curve = tuple(self._points[3 * index : 3 * index + 4])
                assert len(curve) == 4
                runs += [(at, _curve_path(part)) for at, part in _seen_parts(curve, seen, before)]
                joined = False
            elif joined:
                runs[-1][1].connectPath(piece)
            else:
                runs.append((before, QPainterPath(piece)))
                joined = True
        return runs

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if (
            self.min_lod
            and QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform()) < self.min_lod
        ):
            return
        fade(painter, self._style.opacity)
        if self._path is None:
            self._path = _spline_path(self._points)
            if self._corners is not None:
                self._arrow = QPolygonF([QPointF(x, y) for x, y in self._corners])
        scale = painter.worldTransform().m11()
        pen, unit = self._pen, max(self._pen.widthF(), 1e-3)  # dash lengths in pen widths
        hairline = 0 < pen.widthF() * scale < HAIRLINE_BELOW
        if hairline:  # NOTE [hairlines]
            pen, unit = _hairline(pen), 1 / scale  # dash lengths in screen pixels
        painter.setPen(pen)
        painter.setBrush(NO_BRUSH)
        exposed = option.exposedRect
        if self._long and not exposed.contains(self._bounds):  # NOTE [long edges]
            dashed = pen.style() != SOLID
            for before, run in self._visible_runs(exposed, split=not hairline):
                if dashed:
                    phased = QPen(pen)
                    phased.setDashOffset(before / unit)
                    painter.setPen(phased)
                painter.drawPath(run)
        else:
            painter.drawPath(self._path)
        if self._arrow is not None and exposed.intersects(self._arrow.boundingRect()):
            painter.setPen(self._arrow_pen)
            painter.setBrush(self._brush)
            painter.drawPolygon(self._arrow)
