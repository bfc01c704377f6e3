"""One slide of a step: a 16:9 picture with the step's caption, the code with its line marked,
and the graph, for a projector or a handout.

The graph alone (what ``app.render.qt.picture`` draws) was a 5946x2971 picture without the code or
the caption: a slide shows what the window shows, at :data:`SLIDE` pixels. The window's slides and
``export --format png`` both draw them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter

from app.render.qt.fonts import qfont

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.render.qt.scene import GraphScene

__all__ = ["CODE_SHARE", "MARK", "SLIDE", "code_font", "code_rows", "slide_image", "slide_png"]

SLIDE = QSize(1920, 1080)  # 16:9, a projector's full HD
MARGIN = 32.0  # pixels around and between the slide's parts
CAPTION_PX = 44.0  # the caption: as large as the window's at text scale 1.5 on a 1280x720 screen
ERROR_PX = 30.0  # PyTorch's message under it, its first sentence
CODE_PX = 34.0  # the code's largest size; a long program is shown smaller, around its marked line
CODE_SMALLEST_PX = 16.0
CODE_SHARE = 0.36  # of the slide's width
BAR_PX = 12.0  # the progress bar along the bottom: how far through the recording this step is
MARK = "#ffe58a"  # the step's line, as the editor marks it
FAILED_MARK = "#ffc9c9"


def slide_image(recording: Recording, scene: GraphScene, index: int) -> QImage:
    """Step ``index`` of ``recording`` on ``scene`` (restyled to it here) as a 16:9 picture."""
    state = recording.timeline.state(index)
    scene.show_state(state)
    step = state.step
    palette = scene.graph_palette
    image = QImage(SLIDE, QImage.Format.Format_ARGB32)
    image.fill(QColor(palette.background))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        width, height = float(SLIDE.width()), float(SLIDE.height())
        last = len(recording.timeline) - 1
        # the caption and where the step is, over everything
        painter.setPen(QColor(palette.text))
        counter = f"step {index} of {last}"
        painter.setFont(qfont(CAPTION_PX * 0.7, bold=False))
        counter_w = QFontMetricsF(painter.font()).horizontalAdvance(counter) + MARGIN
        painter.drawText(
            QRectF(width - MARGIN - counter_w, MARGIN, counter_w, CAPTION_PX * 1.4),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            counter,
        )
        flags = int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        top = MARGIN
        for text, px, share in (
            (step.caption, CAPTION_PX, 0.22),
            (_first_sentence(step.error), ERROR_PX, 0.1),
        ):
            if not text:
                continue
            painter.setFont(qfont(px, bold=px == CAPTION_PX))
            box = QRectF(MARGIN, top, width - 3 * MARGIN - counter_w, height * share)
            painter.save()
            painter.setClipRect(box)  # a caption past its share is cut, never over the code
            painter.drawText(box, flags, text)
            painter.restore()
            top = min(painter.boundingRect(box, flags, text).bottom(), box.bottom()) + MARGIN / 2
        top += MARGIN / 2
        bottom = height - MARGIN - BAR_PX - MARGIN / 2
        # the code, its line marked
        code_box = QRectF(MARGIN, top, width * CODE_SHARE, bottom - top)
        marked = (step.line, FAILED_MARK if step.kind == "error" else MARK)
        _paint_code(painter, recording, marked, code_box, palette.text)
        # the graph, whole, in the rest
        graph_box = QRectF(
            code_box.right() + MARGIN, top, width - code_box.right() - 2 * MARGIN, bottom - top
        )
        source = scene.sceneRect()
        scale = min(
            graph_box.width() / max(source.width(), 1.0), graph_box.height() / max(source.height(), 1.0)
        )
        drawn = QRectF(0, 0, source.width() * scale, source.height() * scale)
        drawn.moveCenter(graph_box.center())
        with scene.drawn_in_full():
            scene.render(painter, drawn, source)
        # how far through the recording
        bar = QRectF(MARGIN, height - MARGIN - BAR_PX, width - 2 * MARGIN, BAR_PX)
        painter.fillRect(bar, QColor(palette.edge).lighter(170))
        done = QRectF(bar)
        done.setWidth(bar.width() * (index / last if last else 1.0))
        painter.fillRect(done, QColor(palette.selection))
    finally:
        painter.end()
    return image


def _paint_code(
    painter: QPainter, recording: Recording, marked: tuple[int | None, str], box: QRectF, colour: str
) -> None:
    line, mark = marked
    lines = recording.program.lines
    font = code_font(lines, box)
    painter.setFont(font)
    metrics = QFontMetricsF(font)
    spacing = metrics.lineSpacing()
    number_w = metrics.horizontalAdvance(f"{len(lines)} ") + 8
    rows = code_rows(lines, line, int(box.height() // spacing), box.width() - number_w, metrics)
    for row, (number, text) in enumerate(rows):
        y = box.top() + row * spacing
        if number == line:
            painter.fillRect(QRectF(box.left(), y, box.width(), spacing), QColor(mark))
            painter.setPen(QColor("#1b1b1b"))  # on the mark's pale colour in every theme
        else:
            painter.setPen(QColor(colour))
        if number is not None and (row == 0 or rows[row - 1][0] != number):  # a line's first row
            painter.drawText(
                QRectF(box.left(), y, number_w - 8, spacing), int(Qt.AlignmentFlag.AlignRight), str(number)
            )
        painter.drawText(QRectF(box.left() + number_w, y, box.width() - number_w, spacing), 0, text)


def code_font(lines: Sequence[str], box: QRectF) -> QFont:
    """The code's font for ``box``: every line in it at up to :data:`CODE_PX`, and up to a third
    smaller (never below :data:`CODE_SMALLEST_PX`) until its widest line fits the width; a line
    wider still wraps."""
    px = max(CODE_SMALLEST_PX, min(CODE_PX, box.height() / max(len(lines), 1) / 1.35))
    font = QFont("DejaVu Sans Mono")
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setPixelSize(round(px))
    metrics = QFontMetricsF(font)
    number_w = metrics.horizontalAdvance(f"{len(lines)} ") + 8
    widest = max((metrics.horizontalAdvance(text) for text in lines), default=0.0)
    if widest > box.width() - number_w > 0:
        # at most a third smaller: a program with one long line stays readable, that line wraps
        px = max(CODE_SMALLEST_PX, px * 2 / 3, px * (box.width() - number_w) / widest)
        font.setPixelSize(int(px))
    return font


def code_rows(
    lines: Sequence[str], marked: int | None, fits: int, width: float, metrics: QFontMetricsF
) -> list[tuple[int, str]]:
    """The rows a slide shows: ``(line number, text)``, a line wider than ``width`` wrapped over
    rows of the same number (never cut short: slide 2's marked line read ``retain_graph=…``), at
    most ``fits`` rows, around the ``marked`` line when the program is longer."""
    rows = [(number, part) for number, text in enumerate(lines, 1) for part in _wrapped(text, width, metrics)]
    fits = max(1, fits)
    if marked is None or len(rows) <= fits:
        return rows[:fits]
    at = next((i for i, (number, _) in enumerate(rows) if number == marked), 0)
    span = sum(1 for number, _ in rows if number == marked)  # the marked line's rows, all in sight
    first = max(0, min(len(rows) - fits, at - max(0, fits - span) // 2, at))
    return rows[first : first + fits]


def _wrapped(text: str, width: float, metrics: QFontMetricsF) -> list[str]:
    """``text`` in pieces no wider than ``width``, broken after a space, a comma or a bracket where
    one fits, else where the width ends; the pieces together are ``text``."""
    pieces: list[str] = []
    while metrics.horizontalAdvance(text) > width and len(text) > 1:
        end = len(text)
        while end > 1 and metrics.horizontalAdvance(text[:end]) > width:
            end -= 1
        breaks = [i + 1 for i in range(end - 1) if text[i] in " ,(["]
        cut = breaks[-1] if breaks and breaks[-1] > end // 3 else end
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text]


def _first_sentence(error: str | None, most: int = 200) -> str:
    """PyTorch's message as a slide shows it: its first sentence, at most ``most`` characters."""
    if not error:
        return ""
    first = error.strip().splitlines()[0] if error.strip() else ""
    cut = first.find(". ")
    first = first[: cut + 1] if cut > 0 else first
    return "PyTorch: " + (first if len(first) <= most else first[: most - 1] + "…")


def slide_png(recording: Recording, scene: GraphScene, index: int) -> bytes:
    """:func:`slide_image` encoded as PNG."""
    image = slide_image(recording, scene, index)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
        raise OSError(f"Qt could not encode a {image.width()}x{image.height()} PNG")
    return bytes(buffer.data().data())
