"""Scene items for nodes, saved-value boxes and edges; restyled in place, never rebuilt.

Each item keeps the Qt pens and brushes of its current :class:`BoxStyle`, so
painting does no colour parsing, and ``set_look`` is a no-op when nothing
changed. Text is skipped when it would be too small to read (level of
detail), which keeps thousands of boxes cheap when zoomed out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from app.core.graph import GraphNode, SavedSlot
from app.core.timeline import SlotKey

from .labels import FONT_FAMILY, NODE_FONT_PX, SLOT_FONT_PX, node_lines, slot_lines
from .layout import Box, EdgePath
from .style import NODE_TAGS, BoxStyle, EdgeStyle, slot_tags, text_readable

__all__ = ["BoxItem", "EdgeItem", "Fonts", "NodeItem", "SlotItem", "paint_box"]

PAD_X = 10.0
PAD_Y = 5.0
HATCH_STEP = 7.0
SELECT_MARGIN = 6.0
PEN_STYLES = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}


def qfont(px: float, *, bold: bool) -> QFont:
    font = QFont(FONT_FAMILY)
    font.setStyleHint(QFont.StyleHint.SansSerif)
    font.setPixelSize(max(1, round(px)))
    font.setBold(bold)
    return font


@dataclass(frozen=True)
class Fonts:
    """The four fonts of a drawing at one font scale (labels scale with classroom settings)."""

    node_head: QFont
    node_body: QFont
    slot_head: QFont
    slot_body: QFont
    node_px: float
    slot_px: float

    @classmethod
    def at(cls, scale: float, *, bold_body: bool = False) -> Fonts:
        node_px, slot_px = NODE_FONT_PX * scale, SLOT_FONT_PX * scale
        return cls(
            qfont(node_px, bold=True),
            qfont(node_px, bold=bold_body),
            qfont(slot_px, bold=True),
            qfont(slot_px, bold=bold_body),
            node_px,
            slot_px,
        )


@dataclass(frozen=True)
class _Look:
    pen: QPen
    brush: QBrush
    hatch: QPen | None
    text: QColor


def _look(style: BoxStyle) -> _Look:
    pen = QPen(QColor(style.border), style.border_width)
    pen.setStyle(PEN_STYLES[style.dash])
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    hatch = QPen(QColor(style.hatch), 1.0) if style.hatch else None
    return _Look(pen, QBrush(QColor(style.fill)), hatch, QColor(style.text))


def _hatch_lines(rect: QRectF) -> list[QLineF]:
    """Diagonal '/' lines filling ``rect`` without clipping (SVG export has no clip)."""
    w, h = rect.width(), rect.height()
    lines = []
    c = HATCH_STEP
    while c < w + h:
        top = QPointF(rect.left() + min(c, w), rect.top() + c - min(c, w))
        bottom = QPointF(rect.left() + c - min(c, h), rect.top() + min(c, h))
        lines.append(QLineF(top, bottom))
        c += HATCH_STEP
    return lines


def paint_box(painter: QPainter, rect: QRectF, style: BoxStyle, look: _Look | None = None) -> None:
    """Fill, hatch and border of a box; shared by the scene items and the legend swatches."""
    look = look or _look(style)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(look.brush)
    radius = min(8.0, rect.height() / 3) if style.rounded else 0.0
    painter.drawRoundedRect(rect, radius, radius)
    if look.hatch is not None:
        painter.setPen(look.hatch)
        painter.drawLines(_hatch_lines(rect))
    painter.setPen(look.pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(rect, radius, radius)


class BoxItem(QGraphicsItem):
    """A box centred on its layout position, drawing lines of text in a style."""

    def __init__(self, box: Box, style: BoxStyle, state: str) -> None:
        super().__init__()
        self.setPos(box.x, box.y)
        self._base = (box.width, box.height)
        self._rect = QRectF(-box.width / 2, -box.height / 2, box.width, box.height)
        self.state = state
        self.style = style
        self._look = _look(style)
        self._lines: tuple[str, ...] = ()
        self._fonts: Fonts | None = None
        self._line_fonts: tuple[QFont, ...] = ()
        self._line_heights: tuple[float, ...] = ()
        self._font_px = 1.0
        self.setOpacity(style.opacity)

    # -- what tests and views read --------------------------------------
    @property
    def lines(self) -> tuple[str, ...]:
        return self._lines

    @property
    def text(self) -> str:
        return "\n".join(self._lines)

    def rect(self) -> QRectF:
        return QRectF(self._rect)

    # -- restyling -------------------------------------------------------
    def set_look(self, state: str, style: BoxStyle) -> bool:
        """Show ``state`` in ``style``; returns False (and repaints nothing) when unchanged."""
        if state == self.state and style == self.style:
            return False
        self.state, self.style = state, style
        self._look = _look(style)
        lines = self._lines_for(style.tag)
        if lines != self._lines:
            self._lines = lines
            self._refresh_text()
        self.setOpacity(style.opacity)
        self.update()
        return True

    def _refresh_text(self) -> None:
        if self._fonts is None:
            return
        self._line_fonts = self._fonts_for(self._fonts, len(self._lines))
        self._line_heights = tuple(QFontMetricsF(f).height() for f in self._line_fonts)

    def _lines_for(self, tag: str) -> tuple[str, ...]:
        raise NotImplementedError

    def _fonts_for(self, fonts: Fonts, count: int) -> tuple[QFont, ...]:
        raise NotImplementedError

    def _widest_lines(self) -> Sequence[tuple[str, ...]]:
        raise NotImplementedError

    def set_fonts(self, fonts: Fonts, px: float) -> None:
        """Use ``fonts``; the box grows about its centre if the text would not fit."""
        need_w, need_h = self._base
        for lines in self._widest_lines():
            line_fonts = self._fonts_for(fonts, len(lines))
            metrics = [QFontMetricsF(f) for f in line_fonts]
            need_w = max(
                need_w, max(m.horizontalAdvance(t) for m, t in zip(metrics, lines, strict=True)) + 2 * PAD_X
            )
            need_h = max(need_h, sum(m.height() for m in metrics) + 2 * PAD_Y)
        self.prepareGeometryChange()
        self._rect = QRectF(-need_w / 2, -need_h / 2, need_w, need_h)
        self._font_px = px
        self._fonts = fonts
        self._refresh_text()

    # -- painting --------------------------------------------------------
    def boundingRect(self) -> QRectF:
        grow = SELECT_MARGIN + 4
        return self._rect.adjusted(-grow, -grow, grow, grow)

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        paint_box(painter, self._rect, self.style, self._look)
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        if text_readable(lod, self._font_px):
            self._paint_text(painter)

    def _paint_text(self, painter: QPainter) -> None:
        y = -sum(self._line_heights) / 2
        if self._look.hatch is not None:  # a plate under the text keeps it readable over the hatch
            plate = max(
                QFontMetricsF(f).horizontalAdvance(t)
                for f, t in zip(self._line_fonts, self._lines, strict=True)
            )
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._look.brush)
            painter.drawRect(QRectF(-plate / 2 - 3, y, plate + 6, sum(self._line_heights)))
        painter.setPen(self._look.text)
        for line, font, height in zip(self._lines, self._line_fonts, self._line_heights, strict=True):
            painter.setFont(font)
            painter.drawText(
                QRectF(self._rect.left(), y, self._rect.width(), height), Qt.AlignmentFlag.AlignCenter, line
            )
            y += height


class NodeItem(BoxItem):
    """A backward node (or a leaf's AccumulateGrad): name, label, state tag."""

    def __init__(self, node: GraphNode, box: Box, style: BoxStyle, state: str) -> None:
        super().__init__(box, style, state)
        self.node = node
        self.node_id = node.id
        self.selected = False
        self._lines = self._lines_for(style.tag)
        self.setZValue(2)

    def _lines_for(self, tag: str) -> tuple[str, ...]:
        return node_lines(self.node) + ((tag,) if tag else ())

    def _fonts_for(self, fonts: Fonts, count: int) -> tuple[QFont, ...]:
        body = [fonts.node_body] * max(0, count - 1)
        if count > len(node_lines(self.node)):
            body[-1] = fonts.node_head  # the state tag reads bold
        return (fonts.node_head, *body)[:count]

    def _widest_lines(self) -> Sequence[tuple[str, ...]]:
        return [(*node_lines(self.node), tag) for tag in NODE_TAGS.values() if tag]

    def set_selected(self, on: bool, colour: str) -> None:
        self.selected = on
        self._selection = QPen(QColor(colour), 3.0, Qt.PenStyle.DashLine)
        self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        super().paint(painter, option, widget)
        if self.selected:
            painter.setPen(self._selection)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            m = SELECT_MARGIN
            painter.drawRect(self._rect.adjusted(-m, -m, m, m))


class SlotItem(BoxItem):
    """One saved value of a node: ``self ● alive`` over ``(2,) float32 · 8 B``."""

    def __init__(self, node_id: str, slot: SavedSlot, box: Box, style: BoxStyle, state: str) -> None:
        super().__init__(box, style, state)
        self.node_id = node_id
        self.slot = slot
        self.key: SlotKey = (node_id, slot.name)
        self._lines = self._lines_for(style.tag)
        self.setZValue(2)

    def _lines_for(self, tag: str) -> tuple[str, ...]:
        return slot_lines(self.slot, tag)

    def _fonts_for(self, fonts: Fonts, count: int) -> tuple[QFont, ...]:
        return (fonts.slot_head, *[fonts.slot_body] * (count - 1))

    def _widest_lines(self) -> Sequence[tuple[str, ...]]:
        return [slot_lines(self.slot, tag) for tag in slot_tags(self.slot.kind)]


def _spline_path(points: Sequence[tuple[float, float]]) -> QPainterPath:
    path = QPainterPath(QPointF(*points[0]))
    for i in range(1, len(points) - 2, 3):
        path.cubicTo(QPointF(*points[i]), QPointF(*points[i + 1]), QPointF(*points[i + 2]))
    return path


def _arrowhead(base: tuple[float, float], tip: tuple[float, float]) -> QPolygonF:
    line = QLineF(QPointF(*tip), QPointF(*base))
    normal = line.normalVector()
    normal.setLength(line.length() * 0.35)
    offset = normal.p2() - normal.p1()
    return QPolygonF([QPointF(*tip), line.p2() + offset, line.p2() - offset])


class EdgeItem(QGraphicsItem):
    """A Graphviz spline with an optional arrowhead (nodes) or dotted (saved values)."""

    def __init__(self, path: EdgePath, style: EdgeStyle, state: str) -> None:
        super().__init__()
        points = path.points or ((0.0, 0.0),)
        self._path = _spline_path(points)
        self._arrow = _arrowhead(points[-1], path.arrow) if path.arrow else None
        bounds = self._path.boundingRect()
        if self._arrow is not None:
            bounds = bounds.united(self._arrow.boundingRect())
        self._bounds = bounds.adjusted(-8, -8, 8, 8)
        self.state = ""
        self.style = style
        self.set_look(state, style)

    @property
    def has_arrow(self) -> bool:
        return self._arrow is not None

    def set_look(self, state: str, style: EdgeStyle) -> bool:
        if state == self.state and style == self.style:
            return False
        self.state, self.style = state, style
        self._pen = QPen(QColor(style.colour), style.width)
        self._pen.setStyle(PEN_STYLES[style.dash])
        self._brush = QBrush(QColor(style.colour))
        self.setOpacity(style.opacity)
        self.update()
        return True

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        painter.setPen(self._pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
        if self._arrow is not None:
            solid = QPen(self._pen)
            solid.setStyle(Qt.PenStyle.SolidLine)
            painter.setPen(solid)
            painter.setBrush(self._brush)
            painter.drawPolygon(self._arrow)
