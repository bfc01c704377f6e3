"""Marks under the timeline's slider: where each call and each loop iteration begins.

A click on a mark, its tick or its drawn label, jumps to its step; hovering names it. A call that is going to
fail gets a small ``✖`` at its start, named "this call will fail" and nothing
more: the error itself appears at the error step (no spoilers); while Predict
first asks how that call ends, not even the ✖ (``hide_outcome``). The marks are
read from the recording (``app.core.lesson.panel_words``, which words the HTML page's marks
too), never computed from torch.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from app.core.lesson.panel_words import Mark, timeline_marks
from app.ui.runtime.session import Session
from app.ui.style.plain_text import plain_tip
from app.ui.style.theme import hue_colour

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["TimelineMarks"]

HIT_PX = 8  # a click this close to a mark lands on it
_LOOK_CHANGES = frozenset(  # what changes the strip's pixels besides its size and its marks
    {
        QEvent.Type.PaletteChange,
        QEvent.Type.FontChange,
        QEvent.Type.StyleChange,
        QEvent.Type.LayoutDirectionChange,
        QEvent.Type.EnabledChange,  # the palette's colour group
        QEvent.Type.ActivationChange,
    }
)
LABEL_GAP_PX = 6  # labels closer than this to the one before are left out (the tooltip still names it)


def _tick_between(ticks: list[float], low: float, high: float, own: float) -> bool:
    """Whether a tick of the sorted ``ticks`` other than one at ``own`` lies strictly between
    ``low`` and ``high`` (a bisection: a 200-iteration loop has 400 marks).

    >>> _tick_between([1.0, 5.0, 9.0], 4.0, 8.0, 5.0), _tick_between([1.0, 5.0, 9.0], 4.0, 10.0, 5.0)
    (False, True)
    """
    return any(tick != own for tick in ticks[bisect_right(ticks, low) : bisect_left(ticks, high)])


class TimelineMarks(QWidget):
    """The strip of marks; ``x_of`` (set by the timeline bar) places a step under the slider's handle."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._marks: list[Mark] = []
        self._all_marks: list[Mark] = []  # with the failing call's ✖, shown unless hidden
        self._hide_outcome = False  # Predict first asks how the call ends: no ✖ before the answer
        self._steps = 1
        self._fail_color: QColor | None = None  # None: a red that reads on the palette
        self._x_of: Callable[[int], float] | None = None
        self._strip: QPixmap | None = None  # NOTE [marks drawn once]
        self._strip_key: tuple[QSize, float] | None = None
        self._drawn = 0
        self._labels: list[tuple[float, float, Mark]] = []  # (left, right, mark) of each drawn label
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        self.setAccessibleName("Calls and loop iterations")
        session.recording_applied.connect(self._on_recording_applied)

    # Colour of the failing call's mark, from the stylesheet: TimelineMarks { qproperty-failColor: ...; }
    def _get_fail(self) -> QColor:
        return QColor(self._fail_color or hue_colour(self.palette(), 0.0))

    def _set_fail(self, color: QColor) -> None:
        self._fail_color = QColor(color)
        self._forget_strip()

    failColor = Property(QColor, _get_fail, _set_fail)

    # -- what is shown -------------------------------------------------------------
    def marks(self) -> list[Mark]:
        return list(self._marks)

    def set_placement(self, x_of: Callable[[int], float]) -> None:
        """Where step ``i`` sits, in this widget's x (the slider's handle centre at value ``i``)."""
        self._x_of = x_of
        self._forget_strip()

    def x_of(self, step: int) -> float:
        if self._x_of is not None:
            return self._x_of(step)
        return (step + 0.5) * self.width() / max(self._steps, 1)

    def hide_outcome(self, hidden: bool) -> None:
        """Leave out the ✖ that says a call will fail (while Predict first waits for the room's
        answer), or show it again."""
        if hidden != self._hide_outcome:
            self._hide_outcome = hidden
            self._pick_marks()

    def _pick_marks(self) -> None:
        hidden = self._hide_outcome
        self._marks = [m for m in self._all_marks if not (hidden and m.kind == "fail")]
        self._forget_strip()

    def _on_recording_applied(self, recording: Recording) -> None:
        self._all_marks = timeline_marks(recording)
        self._pick_marks()
        self._steps = len(recording.timeline)
        names = sorted({m.kind for m in self._marks})
        self.setToolTip(plain_tip("Marks: " + ", ".join(names)) if names else "")
        self._forget_strip()

    def sizeHint(self) -> QSize:
        return QSize(200, self.fontMetrics().height() + 12)

    def minimumSizeHint(self) -> QSize:
        return QSize(40, self.fontMetrics().height() + 12)

    # -- drawing ---------------------------------------------------------------------
    # NOTE [marks drawn once]: placing a mark asks the slider's style where its handle would be
    # (twice per mark, through the style sheet), and labels are fitted between the ticks: a
    # training loop's 150 marks took 5 ms to draw. The strip changes only with the recording,
    # its size (and pixel ratio), the slider's placement or the theme, so it is drawn into a
    # pixmap then, and any other repaint (the window exposed, a neighbour resized) only copies it.
    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._marks:
            return
        ratio = self.devicePixelRatioF()
        if self._strip is None or self._strip_key != (self.size(), ratio):
            self._strip = self._draw_strip(ratio)
            self._strip_key = (self.size(), ratio)
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._strip)
        painter.end()

    def drawn_labels(self) -> list[tuple[float, float, Mark]]:
        """``(tick x, label's right end, mark)`` of each label drawn on the strip."""
        return list(self._labels)

    def strips_drawn(self) -> int:
        """How many times the strip was drawn (a test's window onto NOTE [marks drawn once])."""
        return self._drawn

    def _forget_strip(self) -> None:
        self._strip = None
        self._labels = []
        self.update()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in _LOOK_CHANGES:
            self._forget_strip()

    def _draw_strip(self, ratio: float) -> QPixmap:
        self._drawn += 1
        strip = QPixmap(QSize(max(1, round(self.width() * ratio)), max(1, round(self.height() * ratio))))
        strip.setDevicePixelRatio(ratio)
        strip.fill(Qt.GlobalColor.transparent)
        painter = QPainter(strip)
        painter.setFont(self.font())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.WindowText)
        faint = QColor(text)
        faint.setAlphaF(0.65)  # iterations: quieter than calls, in the theme's own text colour
        height = self.height()
        xs = [self.x_of(m.step) for m in self._marks]
        for mark, x in zip(self._marks, xs, strict=True):
            if mark.kind == "fail":
                self._paint_fail(painter, x)
                continue
            call = mark.kind == "call"
            painter.setPen(QPen(text if call else faint, 3 if call else 1.5))
            painter.drawLine(QPointF(x, 0), QPointF(x, height * (0.9 if call else 0.45)))
        self._paint_labels(painter, xs, {"call": text, "iteration": faint})
        painter.end()
        return strip

    def _paint_labels(self, painter: QPainter, xs: list[float], colours: dict[str, QColor]) -> None:
        """Each label right of its tick, where it crosses no other tick and no label before it;
        a crowded strip keeps its ticks and leaves the names to the tooltips."""
        metrics = self.fontMetrics()
        line = metrics.height()
        ticks = sorted(xs)
        self._labels = []
        ends = {"call": -1e9, "iteration": -1e9}
        for mark, x in zip(self._marks, xs, strict=True):
            if mark.kind == "fail":
                continue
            left = x + 3
            for label in (mark.label, mark.short):
                right = left + metrics.horizontalAdvance(label)
                crossed = _tick_between(ticks, left - 2, right + LABEL_GAP_PX, x)
                if label and not crossed and left >= ends[mark.kind] + LABEL_GAP_PX and right <= self.width():
                    top = self.height() - line - 1 if mark.kind == "call" else 0
                    painter.setPen(colours[mark.kind])
                    painter.drawText(QRectF(left, top, right - left + 2, line), label)
                    self._labels.append((x, right, mark))
                    ends[mark.kind] = right
                    break

    def _paint_fail(self, painter: QPainter, x: float) -> None:
        """A small ✖ on the line of the call that will fail: a glyph, not colour alone."""
        metrics = self.fontMetrics()
        width = metrics.horizontalAdvance("✖")
        painter.setPen(self._get_fail())
        painter.drawText(QRectF(x - width - 2, 0, width + 1, metrics.height()), "✖")

    # -- clicks and hover --------------------------------------------------------------
    def mark_at(self, x: float, y: float | None = None) -> Mark | None:
        """The mark whose drawn label holds ``(x, y)`` (a call's label sits in the strip's lower
        half, an iteration's in its upper half), else the one whose tick is nearest ``x`` within
        a few pixels (a call's start before an iteration's)."""
        if y is not None:
            lower = y >= self.height() / 2
            for left, right, mark in self._labels:
                if left <= x <= right + 2 and (mark.kind == "call") == lower:
                    return mark
        near = [m for m in self._marks if abs(self.x_of(m.step) - x) <= HIT_PX]
        if not near:
            return None
        return min(near, key=lambda m: (abs(self.x_of(m.step) - x), m.kind == "iteration"))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        mark = self.mark_at(event.position().x(), event.position().y())
        if mark is None:
            super().mousePressEvent(event)
            return
        self._session.go_to(mark.step)
        event.accept()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            mark = self.mark_at(event.pos().x(), event.pos().y())
            tips = [m.tip for m in self._marks if mark is not None and m.step == mark.step]
            if tips:
                QToolTip.showText(event.globalPos(), plain_tip("\n".join(tips)), self)
                return True
        return super().event(event)
