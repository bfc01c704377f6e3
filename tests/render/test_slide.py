"""The one slide drawer: 16:9 pictures with caption, code and graph for the window and the
command line alike, and every character of a program's lines on them, however long the line."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF, QImage

from app.cli import main
from app.core import load_builtin, record
from app.render.qt.export import ensure_app
from app.render.qt.slide import CODE_SHARE, CODE_SMALLEST_PX, SLIDE, code_font, code_rows


def test_the_command_lines_png_export_writes_the_windows_16_9_slides(tmp_path) -> None:
    assert main(["export", "forgot-retain", "--out", str(tmp_path), "--format", "png"]) == 0
    files = sorted(tmp_path.glob("step-*.png"))
    assert len(files) == len(record(load_builtin("forgot-retain")).timeline)
    for path in files:
        image = QImage(str(path))
        assert (image.width(), image.height()) == (SLIDE.width(), SLIDE.height()), path.name


def test_a_slides_code_shows_every_character_of_each_line() -> None:
    ensure_app()
    program = load_builtin("forgot-retain")
    long_line = "y.sum().backward(retain_graph=True, inputs=[x], create_graph=False)  # " + "keep " * 30
    lines = [*program.lines, long_line]
    box = QRectF(0, 0, SLIDE.width() * CODE_SHARE, 700)
    font = code_font(lines, box)
    assert font.pixelSize() >= CODE_SMALLEST_PX
    metrics = QFontMetricsF(font)
    width = box.width() - metrics.horizontalAdvance(f"{len(lines)} ") - 8
    rows = code_rows(lines, None, 200, width, metrics)
    for number, text in enumerate(lines, 1):
        assert "".join(part for n, part in rows if n == number) == text  # nothing cut, nothing added
    assert all(metrics.horizontalAdvance(part) <= width for _, part in rows)
    marked = len(lines)  # a window of rows around the marked line holds it, whole
    shown = code_rows(lines, marked, 6, width, metrics)
    assert len(shown) <= 6 and "".join(part for n, part in shown if n == marked) == long_line
