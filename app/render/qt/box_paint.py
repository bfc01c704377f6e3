"""Qt pens and brushes for a box style, and the painting of a box's fill, hatch and border.

Items share their Qt pens and brushes (one set per distinct style, cached) and their
rectangles (one per distinct size), so building thousands of items stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen

from app.render.qt.fonts import Fonts, Role, qfont
from app.render.style import BoxStyle

__all__ = [
    "CENTRE",
    "DASH",
    "HATCH_STEP",
    "MAX_HATCH_LINES",
    "NO_BRUSH",
    "NO_PEN",
    "PEN_STYLES",
    "SELECT_MARGIN",
    "SOLID",
    "BoxLook",
    "box_look",
    "centred",
    "draw_line",
    "glyph_font",
    "hatch_lines",
    "paint_box",
]

HATCH_STEP = 7.0
MAX_HATCH_LINES = 1000  # per box: a box's every paint makes them
SELECT_MARGIN = 6.0

# Enum members read once: attribute access on PySide6 enums is slow in hot paths.
SOLID, DASH, DOT = Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine
NO_PEN, NO_BRUSH = Qt.PenStyle.NoPen, Qt.BrushStyle.NoBrush
CENTRE = Qt.AlignmentFlag.AlignCenter
PEN_STYLES = {"solid": SOLID, "dash": DASH, "dot": DOT}


@dataclass(frozen=True)
class BoxLook:
    pen: QPen
    brush: QBrush
    hatch: QPen | None
    text: QColor


@lru_cache(maxsize=512)
def box_look(style: BoxStyle) -> BoxLook:
    """Qt objects for a style, shared by every item in that style (never mutated)."""
    pen = QPen(QColor(style.border), style.border_width)
    pen.setStyle(PEN_STYLES[style.dash])
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    hatch = QPen(QColor(style.hatch), 1.0) if style.hatch else None
    return BoxLook(pen, QBrush(QColor(style.fill)), hatch, QColor(style.text))


def hatch_lines(rect: QRectF) -> list[QLineF]:
    """Diagonal '/' lines filling ``rect`` without clipping (SVG export has no clip)."""
    w, h = rect.width(), rect.height()
    lines = []
    step = max(HATCH_STEP, (w + h) / MAX_HATCH_LINES)  # a huge box gets a coarser hatch, not millions
    c = step
    while c < w + h:
        top = QPointF(rect.left() + min(c, w), rect.top() + c - min(c, w))
        bottom = QPointF(rect.left() + c - min(c, h), rect.top() + min(c, h))
        lines.append(QLineF(top, bottom))
        c += step
    return lines


def paint_box(painter: QPainter, rect: QRectF, style: BoxStyle, look: BoxLook | None = None) -> None:
    """Fill, hatch and border of a box; shared by the scene items and the legend swatches."""
    look = look or box_look(style)
    radius = min(8.0, rect.height() / 3) if style.rounded else 0.0
    painter.setPen(NO_PEN)
    painter.setBrush(look.brush)
    painter.drawRoundedRect(rect, radius, radius)
    if look.hatch is not None:
        painter.setPen(look.hatch)
        painter.drawLines(hatch_lines(rect))
    painter.setPen(look.pen)
    painter.setBrush(NO_BRUSH)
    painter.drawRoundedRect(rect, radius, radius)


@lru_cache(maxsize=8192)
def centred(width: float, height: float) -> tuple[QRectF, QRectF]:
    """A box's rectangle around its centre, and its bounds (room for the selection outline).

    Shared by every box of that size and never changed in place: most boxes of a big graph
    have one of a few sizes, and each Qt value object kept from Python is an entry in
    PySide's table of wrappers, which is rehashed on the GUI thread as it grows (a 5,000-node
    graph kept 50,000 such rectangles, one table rehash alone 40 ms).
    """
    rect = QRectF(-width / 2, -height / 2, width, height)
    grow = SELECT_MARGIN + 4
    return rect, rect.adjusted(-grow, -grow, grow, grow)


@lru_cache(maxsize=64)
def glyph_font(px: int) -> QFont:
    """The font of a state glyph ``px`` scene units tall (a few box heights: a few fonts)."""
    return qfont(px, bold=False)


def draw_line(painter: QPainter, fonts: Fonts, role: Role, line: str, rect: QRectF) -> None:
    """``line`` in the ``role``'s font, centred in ``rect`` as ``drawText(rect, CENTRE, line)``
    centres it (and, wider than ``rect``, cut at its sides as drawText cuts it), from a layout
    made once (``Fonts.static_text``)."""
    painter.setFont(fonts.fonts[role])
    text = fonts.static_text(role, line)
    size = text.size()
    left, top = (
        rect.left() + (rect.width() - size.width()) / 2,
        rect.top() + (rect.height() - size.height()) / 2,
    )
    if size.width() <= rect.width() + 0.5 and size.height() <= rect.height() + 0.5:
        painter.drawStaticText(QPointF(left, top), text)
        return
    painter.save()
    painter.setClipRect(rect, Qt.ClipOperation.IntersectClip)
    painter.drawStaticText(QPointF(left, top), text)
    painter.restore()
