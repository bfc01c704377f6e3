"""The picture a big ``.lens`` file opens with, painted while its recording is read.

``lensfile.format``'s NOTE [picture first]: the file's header holds the graph as the graph view's
overview draws it fitted (``app.render.preview``). This widget lies over the graph view and
paints that picture, fitted as ``QGraphicsView.fitInView`` would, with a line saying the
recording is being read; the window hides it once the graph view draws the real graph. It
needs QtGui and the style's colours only, so it paints in the window's first frame, before the
graph view's modules are imported.
"""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPaintEvent, QPen, QPixmap, QTransform
from PySide6.QtWidgets import QWidget

from app.render.preview import MARGIN, MAX_FIT_ZOOM, OVERVIEW_DOT_PX, Preview
from app.render.style import DEFAULT_PALETTE, PALETTES, cluster_style, dot_colour, edge_style
from app.ui.style.plain_text import plain_tip

__all__ = ["GraphPreview"]

FIT_BORDER = 2  # pixels fitInView leaves on each side
TEXT_PADDING = 8


class GraphPreview(QWidget):
    """Paints one :class:`Preview`, fitted, in the window's palette, with a line of text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphPreview")
        self.setAccessibleName("Autograd graph, a preview while the recording is read")
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self._preview: Preview | None = None
        self._text = ""
        self._palette = DEFAULT_PALETTE
        self._points: list[QPointF] = []
        self._lines: list[QLineF] = []
        # The dots by colour, per palette: the window repaints the picture a dozen times while
        # the file is read, and colouring 5,000 dots one by one each time held the interpreter
        # (a cached colour's key, the palette, is hashed whole on every call) from the reader.
        self._dot_groups: dict[str, list[tuple[str, list[QPointF]]]] = {}
        self._drawn: QPixmap | None = None  # the whole widget as last drawn (paintEvent)

    @property
    def preview(self) -> Preview | None:
        return self._preview

    def show_preview(self, preview: Preview, text: str) -> None:
        """Paint ``preview`` with ``text`` (what is being read) over it."""
        dots = preview.dots
        self._points = [QPointF(dots[i], dots[i + 1]) for i in range(0, len(dots), 2)]
        points, ends = self._points, preview.lines
        self._lines = [QLineF(points[ends[i]], points[ends[i + 1]]) for i in range(0, len(ends), 2)]
        self._preview, self._text, self._dot_groups, self._drawn = preview, text, {}, None
        self.setToolTip(plain_tip(text))
        self.update()

    def clear(self) -> None:
        self._preview, self._points, self._lines, self._dot_groups = None, [], [], {}
        self._drawn = None
        self.update()

    def set_palette(self, name: str) -> None:
        self._palette = name if name in PALETTES else DEFAULT_PALETTE
        self._drawn = None
        self.update()

    def fitted(self) -> QTransform:
        """Scene units to pixels, as the graph view fits the whole graph (``fitInView``)."""
        preview = self._preview
        if preview is None:
            return QTransform()
        scene = QRectF(-MARGIN, -MARGIN, preview.width + 2 * MARGIN, preview.height + 2 * MARGIN)
        view = QRectF(self.rect()).adjusted(FIT_BORDER, FIT_BORDER, -FIT_BORDER, -FIT_BORDER)
        if view.isEmpty():
            return QTransform()
        scale = min(view.width() / scene.width(), view.height() / scene.height(), MAX_FIT_ZOOM)
        transform = QTransform()
        transform.translate(view.center().x(), view.center().y())
        transform.scale(scale, scale)
        transform.translate(-scene.center().x(), -scene.center().y())
        return transform

    def paintEvent(self, event: QPaintEvent) -> None:
        # Painted once into a pixmap, then copied: the window repaints parts of the picture while
        # the file is read (a widget shown or moved over it), and drawing it whole each time took
        # 20-90 ms of the interpreter, beside the worker reading the file.
        ratio = self.devicePixelRatioF()
        drawn = self._drawn
        if (
            drawn is None
            or drawn.devicePixelRatioF() != ratio
            or drawn.deviceIndependentSize().toSize() != self.size()
        ):
            drawn = self._drawn = QPixmap(self.size() * ratio)
            drawn.setDevicePixelRatio(ratio)
            painter = QPainter(drawn)
            self._paint(painter)
            painter.end()
        painter = QPainter(self)  # clipped to the region to repaint
        painter.drawPixmap(0, 0, drawn)
        painter.end()

    def _paint(self, painter: QPainter) -> None:
        palette = PALETTES[self._palette]
        painter.fillRect(self.rect(), QColor(palette.background))
        if self._preview is not None:
            painter.save()
            painter.setTransform(self.fitted())
            self._paint_picture(painter)
            painter.restore()
        painter.setPen(QColor(palette.text))
        area = self.rect().adjusted(TEXT_PADDING, TEXT_PADDING, -TEXT_PADDING, -TEXT_PADDING)
        painter.drawText(area, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft, self._text)

    def _paint_picture(self, painter: QPainter) -> None:
        preview, palette = self._preview, PALETTES[self._palette]
        assert preview is not None
        for frame in preview.frames:  # a few per loop iteration: one call each is cheap enough
            style = cluster_style(frame.state, palette)
            if style.opacity <= 0:
                continue
            painter.setOpacity(style.opacity)
            painter.setPen(QPen(QColor(style.border), 0))
            painter.setBrush(QBrush(QColor(style.fill)))
            painter.drawRect(
                QRectF(frame.x - frame.width / 2, frame.y - frame.height / 2, frame.width, frame.height)
            )
        painter.setOpacity(1.0)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(QColor(edge_style("normal", palette).colour), 0))
        painter.drawLines(self._lines)
        for colour, points in self._dots_by_colour(preview):
            pen = QPen(QColor(colour), OVERVIEW_DOT_PX)
            pen.setCosmetic(True)
            pen.setCapStyle(Qt.PenCapStyle.SquareCap)
            painter.setPen(pen)
            painter.drawPoints(points)

    def _dots_by_colour(self, preview: Preview) -> list[tuple[str, list[QPointF]]]:
        """The dots grouped by their colour in the palette shown, made once per palette."""
        groups = self._dot_groups.get(self._palette)
        if groups is None:
            palette = PALETTES[self._palette]
            colours = [dot_colour(*look, palette) for look in preview.looks]  # a few looks
            by_colour: dict[str, list[QPointF]] = {}
            for look, point in zip(preview.dot_looks, self._points, strict=True):
                by_colour.setdefault(colours[look], []).append(point)
            groups = self._dot_groups[self._palette] = list(by_colour.items())
        return groups
