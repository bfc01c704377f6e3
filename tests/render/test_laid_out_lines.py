"""A box's lines are laid out once and drawn again and again (``QStaticText``); each lands where
Qt's own ``drawText(rect, AlignCenter, line)`` puts it, and a name that looks like markup is
drawn as it is written."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter

from app.render.qt import fonts as fonts_module
from app.render.qt.box_paint import draw_line
from app.render.qt.fonts import Fonts

LINES = ["MulBackward0", "<lambda>", "a & b <b>bold</b>", "x", "self ◆ retained", "(8, 8) float32 · 256 B"]


def _ink(draw, zoom: float = 1.0) -> QRect:
    """The bounding rectangle of what ``draw(painter)`` puts on a white image."""
    image = QImage(800, 200, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.translate(7.5, 3.25)  # an item's position in the view: not on whole pixels
    painter.scale(zoom, zoom)
    painter.setPen(QColor("black"))
    draw(painter)
    painter.end()
    xs, ys = [], []
    for y in range(image.height()):
        for x in range(image.width()):
            if image.pixelColor(x, y).lightness() < 128:
                xs.append(x)
                ys.append(y)
    assert xs, "nothing was drawn"
    return QRect(min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1)


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("role", ["node_head", "slot_body"])
def test_a_laid_out_line_lands_where_draw_text_centres_it(qapp, line, role):
    fonts = Fonts(1.0)
    rect = QRectF(4.0, 10.0, 150.0, 30.0)

    def qt_own(painter: QPainter) -> None:
        painter.setFont(fonts.fonts[role])
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, line)

    expected = _ink(qt_own)
    for _ in range(2):  # made, then drawn again from the kept layout
        got = _ink(lambda painter: draw_line(painter, fonts, role, line, rect))
        for a, b in ((got.left(), expected.left()), (got.top(), expected.top())):
            assert abs(a - b) <= 1, (line, got, expected)
        assert abs(got.width() - expected.width()) <= 2 and abs(got.height() - expected.height()) <= 2


@pytest.mark.parametrize("zoom", [0.6, 1.4, 2.5])
@pytest.mark.parametrize("line", LINES)
def test_zoomed_a_laid_out_line_stays_centred_and_within_its_measured_width(qapp, line, zoom):
    """Zoomed, the line is the one laid out at the font's size, scaled: as wide as the width the
    box was measured for (Qt's drawText lays it out again at the scaled size, a few pixels off),
    and centred in its row."""
    fonts = Fonts(1.0)
    rect = QRectF(4.0, 10.0, 150.0, 30.0)
    got = _ink(lambda painter: draw_line(painter, fonts, "node_head", line, rect), zoom)
    measured = fonts.width("node_head", line) * zoom
    assert got.width() <= measured + 2 and got.width() >= 0.8 * measured, (got, measured)
    centre_x, centre_y = 7.5 + rect.center().x() * zoom, 3.25 + rect.center().y() * zoom
    assert abs((got.left() + got.right() + 1) / 2 - centre_x) <= 1.5, (got, centre_x)
    assert abs((got.top() + got.bottom() + 1) / 2 - centre_y) <= 0.25 * 30 * zoom, (got, centre_y)


def test_only_the_most_recent_layouts_are_kept(qapp, monkeypatch):
    monkeypatch.setattr(fonts_module, "STATIC_TEXTS_KEPT", 8)
    fonts = Fonts(1.0)
    first = fonts.static_text("node_head", "line 0")
    for n in range(1, 20):
        fonts.static_text("node_head", f"line {n}")
        fonts.static_text("node_head", "line 0")  # drawn at every paint: kept
    assert fonts.static_text("node_head", "line 0") is first
    assert fonts.static_text("node_head", "line 1") is not fonts.static_text("node_body", "line 1")
    assert len(fonts._static) == 8
