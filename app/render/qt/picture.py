"""Write a :class:`GraphScene` to SVG or PNG, with an optional title line above it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

from app.render.qt.fonts import qfont
from app.render.qt.scene import GraphScene

__all__ = ["MAX_PNG_SIDE", "png_bytes", "svg_bytes", "write_png", "write_svg"]

TITLE_PX = 16.0
TITLE_GAP = 12.0
MIN_WIDTH = 640.0
MAX_PNG_SIDE = 8000  # pixels; a 5,000-node graph is scaled down rather than allocating gigabytes
TEXT_FLAGS = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap)


def _title_height(scene: GraphScene, title: str | None, width: float) -> float:
    if not title:
        return 0.0
    metrics = QFontMetricsF(qfont(TITLE_PX * scene.graph_palette.text_scale, bold=True))
    box = metrics.boundingRect(QRectF(0, 0, width, 1e6), TEXT_FLAGS, title)
    return box.height() + TITLE_GAP


def _page(scene: GraphScene, title: str | None) -> tuple[float, float, float]:
    """Width, height and title height of the picture, in scene units."""
    source = scene.sceneRect()
    width = max(source.width(), MIN_WIDTH if title else 0.0)
    head = _title_height(scene, title, width - 2 * TITLE_GAP)
    return width, source.height() + head, head


def _paint(painter: QPainter, scene: GraphScene, title: str | None, width: float, head: float) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    source = scene.sceneRect()
    painter.fillRect(QRectF(0, 0, width, source.height() + head), QColor(scene.graph_palette.background))
    if title:
        painter.setPen(QColor(scene.graph_palette.text))
        painter.setFont(qfont(TITLE_PX * scene.graph_palette.text_scale, bold=True))
        painter.drawText(QRectF(TITLE_GAP, TITLE_GAP, width - 2 * TITLE_GAP, head), TEXT_FLAGS, title)
    left = (width - source.width()) / 2
    with scene.drawn_in_full():  # whatever the view's zoom hides, a picture shows every box
        scene.render(painter, QRectF(left, head, source.width(), source.height()), source)


def write_svg(scene: GraphScene, path: str | Path, *, title: str | None = None) -> Path:
    """The whole scene as an SVG file (text stays text, so slot states are searchable)."""
    path = Path(path)
    path.write_bytes(svg_bytes(scene, title=title))  # a failure is Python's OSError: it says why
    return path


def svg_bytes(scene: GraphScene, *, title: str | None = None) -> bytes:
    """What :func:`write_svg` writes, in memory."""
    width, height, head = _page(scene, title)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(round(width), round(height)))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setTitle(title or "Autograd Lens")
    generator.setDescription("Autograd graph drawn by Autograd Lens")
    painter = QPainter(generator)
    try:
        _paint(painter, scene, title, width, head)
    finally:
        painter.end()
    return bytes(buffer.data().data())


def write_png(scene: GraphScene, path: str | Path, *, title: str | None = None, scale: float = 2.0) -> Path:
    """The whole scene as a PNG at ``scale`` pixels per scene unit (capped at ``MAX_PNG_SIDE``)."""
    path = Path(path)
    path.write_bytes(png_bytes(scene, title=title, scale=scale))  # a failure is Python's OSError: it says why
    return path


def png_bytes(scene: GraphScene, *, title: str | None = None, scale: float = 2.0) -> bytes:
    """What :func:`write_png` writes, in memory."""
    width, height, head = _page(scene, title)
    scale = min(scale, MAX_PNG_SIDE / max(width, height, 1.0))
    image = QImage(max(1, round(width * scale)), max(1, round(height * scale)), QImage.Format.Format_ARGB32)
    image.fill(QColor(scene.graph_palette.background))
    painter = QPainter(image)
    try:
        painter.scale(scale, scale)
        _paint(painter, scene, title, width, head)
    finally:
        painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
        raise OSError(f"Qt could not encode a {image.width()}x{image.height()} PNG")
    return bytes(buffer.data().data())
