"""Bytes of saved tensors held, and nodes alive, at each step, over the whole timeline.

Bytes fill the chart; the count of alive nodes (``Step.alive_nodes``: nodes
some value the program holds still reaches) is a dashed line on its own scale,
named in the title with its peak, so a graph kept alive across iterations
(``total_loss += loss``) reads as a rising line even when every backward
freed its bytes. On CUDA the recording also has the allocator's
``memory_allocated`` per step; it is drawn as another line. The current step
is marked; a click jumps there. Below the chart, at the last step of a program
that kept old graphs for nothing, the :class:`~app.ui.panels.advice_panel.AdvicePanel`
offers the edit that lets them go: the rising line is the evidence it cites.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QEvent, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import QDockWidget, QScrollArea, QSizePolicy, QSpacerItem, QVBoxLayout, QWidget

from app.ui.panels.advice_panel import AdvicePanel
from app.ui.runtime.session import Session
from app.ui.style.theme import hue_colour

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["MemoryChart", "named_stops"]

SAVED_HUE, DEVICE_HUE, ALIVE_HUE, MARKER_HUE = 0.58, 0.78, 0.45, 0.0  # without a stylesheet's colours
DRAW_LATER_STEPS = 2000  # a longer series is drawn on a timer after the first paint (NOTE [chart cache])


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def named_stops(xs: Sequence[float], widths: Sequence[float], gap: float) -> list[int]:
    """Which call ends get their label, each right-aligned at its line: the last call always,
    then, right to left, every one whose label clears the next label named (calls close together
    wrote "call 1" over "call 2").

    >>> named_stops([100.0, 105.0, 300.0], [40.0, 40.0, 40.0], 4.0)
    [1, 2]
    """
    named: list[int] = []
    free_until = math.inf
    for call in reversed(range(len(xs))):
        if xs[call] <= free_until:
            named.append(call)
            free_until = xs[call] - widths[call] - gap
    return named[::-1]


class MemoryChart(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._saved: list[int] = []
        self._device: list[int] | None = None
        self._alive: list[int] = []
        self._stops: list[int] = []
        self._marker = 0
        self._cache: QPixmap | None = None
        self._cache_area = QRectF()  # the plot area the cache was drawn for
        self._drawing_later = False  # a timer will draw the series (NOTE [chart cache])
        self._draw_now = False  # the timer has fired: the next paint draws the series
        # None: from the palette (NOTE [palette colours]); every theme's stylesheet sets them
        self._saved_color: QColor | None = None
        self._device_color: QColor | None = None
        self._alive_color: QColor | None = None
        self._marker_color: QColor | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setToolTip(
            "Bytes held by saved tensors (filled) and nodes alive (dashed, own scale) at each step; "
            "click to jump to a step"
        )
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)
        self.advice = AdvicePanel(session, self)  # under the chart; the plot keeps the space above it
        self.advice.advice_shown.connect(self._bring_forward)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        plot = QSpacerItem(0, 100, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.MinimumExpanding)
        layout.addItem(plot)  # at least 100 px of chart, the advice (when shown) below
        layout.addWidget(self.advice)

    def _bring_forward(self) -> None:
        """When the advice appears and this chart's dock shares its place with others, show its tab:
        at 1280 px every panel shares one column, and the advice would wait behind another tab."""
        holder = self.parentWidget()
        while holder is not None and not isinstance(holder, QDockWidget):
            holder = holder.parentWidget()
        if holder is not None and not holder.isFloating():
            holder.raise_()
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if isinstance(area, QScrollArea):  # the dock's one scroll: the advice in sight, not the plot
            QTimer.singleShot(0, lambda: area.ensureWidgetVisible(self.advice, 0, 0))

    # Colours come from the stylesheet: MemoryChart { qproperty-savedColor: ...; }
    def _get_saved(self) -> QColor:
        return QColor(self._saved_color or hue_colour(self.palette(), SAVED_HUE))

    def _set_saved(self, color: QColor) -> None:
        self._saved_color = QColor(color)
        self._invalidate()

    def _get_device(self) -> QColor:
        return QColor(self._device_color or hue_colour(self.palette(), DEVICE_HUE))

    def _set_device(self, color: QColor) -> None:
        self._device_color = QColor(color)
        self._invalidate()

    def _get_marker(self) -> QColor:
        return QColor(self._marker_color or hue_colour(self.palette(), MARKER_HUE))

    def _set_marker(self, color: QColor) -> None:
        self._marker_color = QColor(color)
        self._invalidate()

    def _get_alive(self) -> QColor:
        return QColor(self._alive_color or hue_colour(self.palette(), ALIVE_HUE))

    def _set_alive(self, color: QColor) -> None:
        self._alive_color = QColor(color)
        self._invalidate()

    savedColor = Property(QColor, _get_saved, _set_saved)
    aliveColor = Property(QColor, _get_alive, _set_alive)
    deviceColor = Property(QColor, _get_device, _set_device)
    markerColor = Property(QColor, _get_marker, _set_marker)

    # -- what is drawn ------------------------------------------------------------
    def saved_series(self) -> list[int]:
        return list(self._saved)

    def alive_series(self) -> list[int]:
        """Nodes alive at each step (every step; ``drawn_alive`` is what a width of pixels shows)."""
        return list(self._alive)

    def drawn_alive(self, columns: int) -> list[int]:
        """The alive series as drawn across ``columns`` pixel columns (each the peak of its steps)."""
        return _columns(self._alive, columns)

    def device_series(self) -> list[int] | None:
        return None if self._device is None else list(self._device)

    def marker(self) -> int:
        return self._marker

    def _on_recording_applied(self, recording: Recording) -> None:
        saved, alive, device = recording.timeline.memory_series()
        self._saved, self._alive = list(saved), list(alive)
        self._device = None if device is None else list(device)
        self._stops = [info.last_step for info in recording.calls]
        self._invalidate()

    def _on_step_applied(self, index: int) -> None:
        self._marker = index
        self.update()

    # -- drawing ----------------------------------------------------------------------
    def _title_lines(self) -> int:
        return 2 + (self._device is not None)

    def _plot_area(self) -> QRectF:
        line = self.fontMetrics().height()
        rect = QRectF(self.rect())
        if not self.advice.isHidden():
            rect.setBottom(min(rect.bottom(), self.advice.geometry().top()))
        return rect.adjusted(8, line * self._title_lines() + 6, -8, -line - 6)

    def _x(self, area: QRectF, index: int) -> float:
        count = max(len(self._saved), 1)
        return area.left() + area.width() * (index + 0.5) / count

    # NOTE [chart cache]
    # The series (one point per step, thousands on a big graph) only change with the
    # recording, the size or the colours; they are drawn once into a pixmap, and a
    # step repaints the pixmap, the title and the marker. For a long recording the
    # pixmap is drawn on a 1 ms timer after the first paint (~7 ms at 10,000 steps): the
    # window's first paint after a recording is applied repaints every panel at once,
    # and this one is not added to that turn (the benchmark's heartbeat measures it).
    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._saved:
            return
        painter = QPainter(self)
        if self._cache_ready() or self._draw_now or len(self._saved) <= DRAW_LATER_STEPS:
            painter.drawPixmap(0, 0, self._series_pixmap())
        elif not self._drawing_later:
            self._drawing_later = True
            QTimer.singleShot(1, self._draw_series_next)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._paint_title(painter)
        self._paint_marker(painter, self._plot_area())
        painter.end()

    def _cache_ready(self) -> bool:
        """Whether the drawn series fit now: same size, and the same plot area (the advice below
        the chart comes and goes; no event filter on it: one on a child runs while this chart is
        being destroyed)."""
        return (
            self._cache is not None
            and self._cache.size() == self.size() * self.devicePixelRatioF()
            and self._cache_area == self._plot_area()
        )

    def _draw_series_next(self) -> None:
        """The next paint draws the series (a paint of this chart alone, in a turn of its own)."""
        self._drawing_later = False
        self._draw_now = True
        self.update()

    def _series_pixmap(self) -> QPixmap:
        ratio = self.devicePixelRatioF()
        if self._cache is not None and self._cache_ready():
            return self._cache
        pixmap = QPixmap(self.size() * ratio)
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setFont(self.font())
        area = self._cache_area = self._plot_area()
        top = max([*self._saved, *(self._device or []), 1])
        _paint_series(painter, area, self._saved, top, self._get_saved(), fill=True)
        if self._device is not None:
            _paint_series(painter, area, self._device, top, self._get_device(), fill=False)
        if any(self._alive):  # its own scale: nodes, not bytes
            alive_top = max(self._alive)
            _paint_series(painter, area, self._alive, alive_top, self._get_alive(), fill=False, dashed=True)
        self._paint_stops(painter, area)
        painter.end()
        self._cache = pixmap
        self._draw_now = False
        return pixmap

    def _invalidate(self) -> None:
        self._cache = None
        self.update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._cache = None

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self._cache = None

    def _paint_title(self, painter: QPainter) -> None:
        now = self._saved[self._marker] if self._marker < len(self._saved) else 0
        held, peak = _bytes(now), _bytes(max(self._saved))
        saved = [
            f"Saved tensors held: {held} · peak {peak}",
            f"Saved: {held} · peak {peak}",
            f"Saved: {held}",
        ]
        _paint_line_title(self, painter, 0, self.palette().windowText().color(), saved)
        _paint_line_title(self, painter, 1, self._get_alive(), self._alive_titles())
        if self._device is not None:
            device_now = _bytes(self._device[self._marker] if self._marker < len(self._device) else 0)
            _paint_line_title(
                self,
                painter,
                2,
                self._get_device(),
                [f"— device memory allocated: {device_now}", f"— device: {device_now}"],
            )

    def alive_title(self) -> str:
        """The second title line: nodes alive now and at the peak (the dashed line's scale)."""
        titles = self._alive_titles()
        return titles[0] if titles else ""

    def _alive_titles(self) -> list[str]:
        """The second title line, longest first: a narrow chart shows the longest that fits."""
        if not self._alive:
            return []
        now = self._alive[self._marker] if self._marker < len(self._alive) else 0
        peak = max(self._alive)
        return [
            f"╌ Nodes alive: {now} · peak {peak} (own scale)",
            f"╌ Nodes: {now} · peak {peak}",
            f"╌ Nodes: {now}",
        ]

    def shown_alive_title(self) -> str:
        """The alive-node title as drawn at the chart's width."""
        return _fit(self.fontMetrics(), self.width() - 16, self._alive_titles()) if self._alive else ""

    def _paint_stops(self, painter: QPainter, area: QRectF) -> None:
        step_width = area.width() / max(len(self._saved), 1)
        painter.setPen(QPen(self.palette().windowText().color(), 1, Qt.PenStyle.DashLine))
        metrics = self.fontMetrics()
        xs = [area.left() + (stop + 1) * step_width for stop in self._stops]
        texts = [f"call {call + 1}" for call in range(len(xs))]
        widths = [metrics.horizontalAdvance(text) + 2 for text in texts]
        for x in xs:
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
        for call in named_stops(xs, widths, metrics.horizontalAdvance(" ")):
            label = QRectF(xs[call] - widths[call], area.bottom() + 2, widths[call], metrics.height())
            painter.drawText(label, Qt.AlignmentFlag.AlignRight, texts[call])

    def _paint_marker(self, painter: QPainter, area: QRectF) -> None:
        x = self._x(area, self._marker)
        painter.setPen(QPen(self._get_marker(), 4))
        painter.drawLine(QPointF(x, area.top() - 4), QPointF(x, area.bottom() + 4))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not self._saved:
            return
        area = self._plot_area()
        fraction = (event.position().x() - area.left()) / max(area.width(), 1)
        self._session.go_to(int(fraction * len(self._saved)))


def _columns(values: list[int], columns: int) -> list[int]:
    """At most one value per pixel column, the largest of the steps it covers, so every peak stays
    visible. A 5,000-node recording has 10,000 steps: a path of 20,000 points took ~20 ms to build
    and fill on the GUI thread, for a chart a few hundred pixels wide.
    """
    count = len(values)
    if count <= columns or columns < 1:
        return values
    return [max(values[c * count // columns : (c + 1) * count // columns]) for c in range(columns)]


def _fit(metrics: QFontMetrics, room: int, texts: list[str]) -> str:
    """The first of ``texts`` that fits ``room`` pixels, else the last one elided."""
    fitting = [t for t in texts if metrics.horizontalAdvance(t) <= room]
    return fitting[0] if fitting else metrics.elidedText(texts[-1], Qt.TextElideMode.ElideRight, room)


def _paint_line_title(chart: QWidget, painter: QPainter, row: int, color: QColor, texts: list[str]) -> None:
    """The first of ``texts`` that fits the chart's width (a large text scale, a narrow dock), else
    the last one elided: the numbers stay whole as long as they can."""
    if not texts:
        return
    metrics = chart.fontMetrics()
    line, room = metrics.height(), chart.width() - 16
    painter.setPen(color)
    painter.drawText(
        QRectF(8, 2 + row * line, room, line), Qt.AlignmentFlag.AlignLeft, _fit(metrics, room, texts)
    )


def _paint_series(
    painter: QPainter,
    area: QRectF,
    values: list[int],
    top: int,
    color: QColor,
    *,
    fill: bool,
    dashed: bool = False,
) -> None:
    """One series as steps across ``area``, scaled so ``top`` meets its top edge."""
    values = _columns(values, int(area.width() * painter.device().devicePixelRatioF()))
    step_width = area.width() / max(len(values), 1)
    ys = [area.bottom() - area.height() * value / top for value in values]
    path = QPainterPath(QPointF(area.left(), area.bottom() if fill else ys[0]))
    for i, y in enumerate(ys):
        path.lineTo(area.left() + i * step_width, y)
        path.lineTo(area.left() + (i + 1) * step_width, y)
    if fill:
        path.lineTo(area.right(), area.bottom())
    pen = QPen(color, 3)
    if dashed:  # not colour alone: the nodes line is dashed
        pen.setStyle(Qt.PenStyle.DashLine)
    painter.setPen(pen)
    if fill:
        shade = QColor(color)
        shade.setAlpha(90)
        painter.setBrush(shade)
    else:
        painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawPath(path)
