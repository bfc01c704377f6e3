"""The legend: every state the graph can show, as a swatch and as its text tag."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QWidget

from app.render.qt.box_paint import paint_box
from app.render.style import DEFAULT_PALETTE, LEGEND, PALETTES, LegendEntry, Palette, node_style, slot_style

__all__ = ["Legend"]

SWATCH = QSize(34, 20)


def _swatch(entry: LegendEntry, palette: Palette, ratio: float) -> QPixmap:
    pixmap = QPixmap(SWATCH * ratio)
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(QColor(palette.background))
    if entry.box == "slot":
        style = slot_style(entry.state, palette)  # type: ignore[arg-type]
    else:
        style = node_style("op", entry.state, palette)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setOpacity(style.opacity)
    inset = min(style.border_width, 4.0)
    paint_box(painter, QRectF(inset, inset, SWATCH.width() - 2 * inset, SWATCH.height() - 2 * inset), style)
    painter.end()
    return pixmap


class Legend(QWidget):
    """One row per state: colour swatch, text tag (bold) and what it means."""

    def __init__(self, parent: QWidget | None = None, *, columns: int = 1) -> None:
        super().__init__(parent)
        self._palette = DEFAULT_PALETTE
        self._swatches: dict[str, QLabel] = {}
        self._tags: dict[str, QLabel] = {}
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 4, 4, 4)
        grid.setHorizontalSpacing(16)
        for i, entry in enumerate(LEGEND):
            grid.addWidget(self._row(entry), i // columns, i % columns)
        grid.setRowStretch(-(-len(LEGEND) // columns), 1)  # rows stay together at the top
        self.setAccessibleName("Legend")
        self._update_swatches()

    def _row(self, entry: LegendEntry) -> QWidget:
        row = QWidget(self)
        box = QHBoxLayout(row)
        box.setContentsMargins(0, 0, 0, 0)
        swatch = QLabel(row)
        swatch.setFixedSize(SWATCH)
        tag = QLabel(f"<b>{entry.tag}</b> {entry.meaning}", row)
        tag.setTextFormat(Qt.TextFormat.RichText)
        tag.setWordWrap(True)  # a narrow dock wraps the meaning rather than cutting it off
        tag.setAccessibleName(f"{entry.tag}: {entry.meaning}")
        box.addWidget(swatch)
        box.addWidget(tag, 1)
        self._swatches[entry.state] = swatch
        self._tags[entry.state] = tag
        return row

    def set_palette(self, name: str) -> None:
        if name not in PALETTES:
            raise ValueError(f"unknown palette {name!r}; choose one of {', '.join(PALETTES)}")
        self._palette = name
        self._update_swatches()

    @property
    def palette_name(self) -> str:
        return self._palette

    def _update_swatches(self) -> None:
        palette = PALETTES[self._palette]
        ratio = self.devicePixelRatioF()
        for entry in LEGEND:
            self._swatches[entry.state].setPixmap(_swatch(entry, palette, ratio))

    def entries(self) -> list[tuple[str, str]]:
        """``(state, shown text)`` per row, for tests and accessibility checks."""
        return [(entry.state, self._tags[entry.state].text()) for entry in LEGEND]

    def swatch(self, state: str) -> QPixmap:
        return self._swatches[state].pixmap()
