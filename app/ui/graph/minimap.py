"""The whole graph, small, in a corner of the graph view while the view shows only part of it.

Zoomed in on a step's node (NOTE [auto fit] in ``graph_navigation.py``) the room reads the node
but loses where it is: the corner shows every node as a small box, the followed node in the
selection colour, and the part the view shows as a frame. A click or a drag there centres the
view on that point, as the learner's own pan (following stops until "Fit graph").

The boxes are drawn once per graph and size into a pixmap; a paint of the view only moves the
frame, so a 5,000-node graph costs its boxes once, not at every step. The corner takes one of two
sizes (half where the full one would cover a node), so a pixmap is kept for each size it took:
following a loop's run across the graph, the corner changed size at nearly every pan and drew its
1,200 boxes again each time (~25 ms a paint).

The corner never covers a node: of the four corners it takes the first where no node is drawn
(asked of the scene's index, once per view position), then the same at half the size; where
nodes fill every corner it stays hidden (Fit graph shows the whole graph).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QWidget

from app.render.style import PALETTES

if TYPE_CHECKING:
    from app.render.qt.scene import GraphScene

__all__ = ["MappedView", "Minimap"]

SHARE = 0.22  # the corner's largest side, as a share of the view's side
LARGEST = QSize(260, 170)  # pixels: a corner, never a second graph
SMALLEST_VIEW = 360  # pixels: a view narrower or lower than this has no room for a corner
INSET = 8  # pixels between the corner and the view's edges
SHOWN_SHARE = 0.9  # the view shows less than this share of the graph's width or height: a corner


class _Reading(Protocol):
    @property
    def reading(self) -> str | None: ...


class MappedView(Protocol):
    """What the corner reads of a graph view and moves (``GraphView`` is one): the scene shown or
    waiting to be, its palette, the node its camera shows readable, the viewport and the part of
    the scene it shows, and Qt's call that centres a scene point."""

    @property
    def graph_scene(self) -> GraphScene | None: ...

    @property
    def unshown(self) -> GraphScene | None: ...

    @property
    def palette_name(self) -> str: ...

    @property
    def camera(self) -> _Reading: ...

    def viewport(self) -> QWidget: ...

    def mapToScene(self, rect: QRect, /) -> QPolygonF: ...

    def centerOn(self, pos: QPointF, /) -> None: ...


class Minimap(QWidget):
    """The corner of ``view``, a child of its viewport, at the bottom right. ``panned``: the
    learner clicked or dragged in it, and the view was centred there.

    NOTE [a pan paints what it uncovers]: a child of the viewport, not of the view. A widget
    over the viewport beside it made every scroll repaint the whole viewport (Qt moves the
    pixels of a scrolled widget only where no sibling covers it): following a run, each pan
    painted a screenful of boxes and edges, where the strip it uncovers would do. A child is
    moved with the pixels, and put back in its corner before the paint (``sync``)."""

    panned = Signal()

    def __init__(self, view: MappedView) -> None:
        super().__init__(view.viewport())
        self._view = view
        self._pixmaps: dict[QSize, QPixmap] = {}  # the boxes, drawn once for each size the corner took
        self._key: tuple[object, ...] = ()  # the graph and palette they were drawn for
        self.boxes_drawn = 0  # how many times the boxes were drawn into a pixmap
        self._shown = QRectF()  # the part of the scene the view shows, when last painted
        self._place_key: tuple[QRect, QSize, QRectF] | None = None
        self._place: tuple[QPoint, QSize] | None = None  # the free corner for that key
        self.setObjectName("graphMinimap")
        self.setAccessibleName("Whole graph: click to go there")
        self.setToolTip("The whole graph: click or drag to go there")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.hide()
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Paint, QEvent.Type.Resize):
            self.sync()
        return False

    def sync(self) -> None:
        """Show the corner while the view shows part of the graph; move its frame."""
        view, graph = self._view, self._view.graph_scene
        room = view.viewport().rect()
        scene = graph.sceneRect() if graph is not None else QRectF()
        shown = view.mapToScene(view.viewport().rect()).boundingRect()
        wanted = (
            graph is not None
            and view.unshown is None
            and not scene.isEmpty()
            and min(room.width(), room.height()) >= SMALLEST_VIEW
            and (shown.width() < SHOWN_SHARE * scene.width() or shown.height() < SHOWN_SHARE * scene.height())
        )
        if not wanted:
            if self.isVisible():
                self.hide()
            return
        size = QSize(int(room.width() * SHARE), int(room.height() * SHARE)).boundedTo(LARGEST)
        size = scene.size().scaled(size.toSizeF(), Qt.AspectRatioMode.KeepAspectRatio).toSize()
        size = size.expandedTo(QSize(24, 24))
        place = self._free_corner(room, size, shown)
        if place is None:
            if self.isVisible():
                self.hide()
            return
        corner, size = place
        if self.size() != size or self.pos() != corner:
            self.setGeometry(corner.x(), corner.y(), size.width(), size.height())
        if not self.isVisible():
            self.show()
            self.raise_()
        if shown != self._shown:
            self._shown = shown
            self.update()

    def _free_corner(self, room: QRect, size: QSize, shown: QRectF) -> tuple[QPoint, QSize] | None:
        """Where the corner covers no node: bottom right, bottom left, top right, top left, then at
        half the size; None when every one would. Asked again only when the view moved."""
        key = (room, size, shown)
        if key != self._place_key:
            self._place_key, self._place = key, None
            for tried in (size, (size / 2).expandedTo(QSize(24, 24))):
                corner = next(
                    (c for c in _corners(room, tried) if not self._covers_node(QRect(c, tried))), None
                )
                if corner is not None:
                    self._place = (corner, tried)
                    break
        return self._place

    def _covers_node(self, rect: QRect) -> bool:
        view, graph = self._view, self._view.graph_scene
        assert graph is not None
        area = view.mapToScene(rect.adjusted(-INSET, -INSET, INSET, INSET)).boundingRect()
        return any(graph.node_of(item) is not None for item in graph.items(area))

    # -- drawing ---------------------------------------------------------------------------
    def _scale(self) -> tuple[float, QPointF]:
        graph = self._view.graph_scene
        assert graph is not None
        scene = graph.sceneRect()
        scale = min(self.width() / max(scene.width(), 1.0), self.height() / max(scene.height(), 1.0))
        return scale, scene.topLeft()

    def _to_widget(self, rect: QRectF) -> QRectF:
        scale, origin = self._scale()
        return QRectF(
            (rect.x() - origin.x()) * scale,
            (rect.y() - origin.y()) * scale,
            rect.width() * scale,
            rect.height() * scale,
        )

    def _boxes(self) -> QPixmap:
        graph = self._view.graph_scene
        assert graph is not None
        palette = PALETTES[self._view.palette_name]
        key = (id(graph), graph.sceneRect(), len(graph.nodes), palette.name)
        if key != self._key:
            self._pixmaps, self._key = {}, key
        pixmap = self._pixmaps.get(self.size())
        if pixmap is None:
            pixmap = self._pixmaps[self.size()] = self._draw_boxes(graph, palette.background, palette.edge)
        return pixmap

    def _draw_boxes(self, graph: GraphScene, background: str, edge: str) -> QPixmap:
        """Every node as a small box, in a pixmap of the corner's size."""
        self.boxes_drawn += 1
        pixmap = QPixmap(self.size())
        pixmap.fill(QColor(background))
        painter = QPainter(pixmap)
        colour = QColor(edge)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        scale, origin = self._scale()
        for item in graph.nodes.values():
            rect = item.sceneBoundingRect()
            painter.drawRect(
                QRectF(
                    (rect.x() - origin.x()) * scale,
                    (rect.y() - origin.y()) * scale,
                    rect.width() * scale + 1,
                    rect.height() * scale + 1,
                )
            )
        painter.setPen(QPen(colour, 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(pixmap.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.end()
        return pixmap

    def paintEvent(self, event: QPaintEvent) -> None:
        graph = self._view.graph_scene
        if graph is None:
            return
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._boxes())
        selection = QColor(PALETTES[self._view.palette_name].selection)
        reading = self._view.camera.reading
        item = graph.nodes.get(graph.folded.shown_as(reading)) if reading is not None else None
        if item is not None:
            box = self._to_widget(item.sceneBoundingRect()).adjusted(-2, -2, 2, 2)
            painter.fillRect(box, selection)
        painter.setPen(QPen(selection, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self._to_widget(self._shown).intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1)))
        painter.end()

    # -- going there -------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._go(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event)

    def _go(self, event: QMouseEvent) -> None:
        if self._view.graph_scene is None or event.button() not in (
            Qt.MouseButton.LeftButton,
            Qt.MouseButton.NoButton,
        ):
            return
        self._view.centerOn(self.scene_point(event.position()))
        self.panned.emit()  # the learner's own pan: following stops
        event.accept()

    def scene_point(self, point: QPointF) -> QPointF:
        """The scene point under ``point`` of the corner (what a click there centres)."""
        scale, origin = self._scale()
        return QPointF(origin.x() + point.x() / scale, origin.y() + point.y() / scale)


def _corners(room: QRect, size: QSize) -> list[QPoint]:
    """The four corners' top-left points for a ``size`` box inside ``room``, bottom right first."""
    left, top = room.left() + INSET, room.top() + INSET
    right, bottom = room.right() - size.width() - INSET, room.bottom() - size.height() - INSET
    return [QPoint(right, bottom), QPoint(left, bottom), QPoint(right, top), QPoint(left, top)]
