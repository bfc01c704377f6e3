"""Each leaf's ``.grad`` as it accumulates: numbers per call and a bar per element that grows.

Everything shown comes from the recording: ``.grad`` at the current step
(``state.grads``), the gradient after each finished call (``grads_at_end``) and
each call's contribution (the ``contribution`` of its ``call_end`` step).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.core.lesson.copies import copied_names, copy_grad_text
from app.core.lesson.panel_words import finished_calls, grad_history, grad_text
from app.core.model.errors import UserError
from app.ui.runtime.session import Session
from app.ui.style.steady_label import SteadyLabel
from app.ui.style.theme import hue_colour

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.core.model.timeline import StepState
    from app.core.model.values import Values

__all__ = ["MAX_BARS", "GradBars", "GradPanel"]

BARS_PX, BARS_FOLDED_PX = 80, 44  # the bars' least height, and in a short dock
FOLD_LINES = 14  # a panel lower than this many lines of text folds its heading and legend

BAR_HUES = (0.58, 0.08, 0.33)  # blue, orange, green: one per call, without a stylesheet
MAX_BARS = 16  # elements drawn per leaf; the rest are summarised in the text
MAX_LEAVES = 12
CallGrads = dict[int, "Mapping[str, Values | None]"]


def _values(values: Values | None) -> list[float]:
    if values is None:
        return []
    return [float(v) for v in values.flat[:MAX_BARS]]


@dataclass(frozen=True)
class Segment:
    """One call's share of one bar: from ``start`` to ``end``, coloured by ``call``."""

    call: int
    start: float
    end: float


class GradBars(QWidget):
    """Per-element bars, stacked by call: the part each call added, on a fixed scale.

    A call that made an element smaller draws its part hatched, from the old
    value down to the new one, so the bar's solid top is always the value now.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bars: list[list[Segment]] = []
        self._scale = 1.0
        self._colors: list[QColor | None] = [None, None, None]  # None: from the palette
        self.setMinimumHeight(BARS_PX)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    # Colours come from the stylesheet: GradBars { qproperty-firstColor: ...; }
    def _set_color(self, i: int, color: QColor) -> None:
        self._colors[i] = QColor(color)
        self.update()

    def _get_first(self) -> QColor:
        return self.color(0)

    def _set_first(self, color: QColor) -> None:
        self._set_color(0, color)

    def _get_second(self) -> QColor:
        return self.color(1)

    def _set_second(self, color: QColor) -> None:
        self._set_color(1, color)

    def _get_third(self) -> QColor:
        return self.color(2)

    def _set_third(self, color: QColor) -> None:
        self._set_color(2, color)

    def color(self, i: int) -> QColor:
        """Call ``i``'s colour: the stylesheet's, else a hue from the palette (NOTE [palette colours])."""
        return QColor(self._colors[i] or hue_colour(self.palette(), BAR_HUES[i]))

    firstColor = Property(QColor, _get_first, _set_first)
    secondColor = Property(QColor, _get_second, _set_second)
    thirdColor = Property(QColor, _get_third, _set_third)

    def set_bars(self, bars: list[list[Segment]], scale: float) -> None:
        self._bars = bars
        self._scale = scale if scale > 0 else 1.0
        self.update()

    def values(self) -> list[float]:
        """The height each bar reaches now (the top of its last segment)."""
        return [segments[-1].end if segments else 0.0 for segments in self._bars]

    def segments(self) -> list[list[Segment]]:
        return self._bars

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._bars:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text_height = painter.fontMetrics().height()
        area = QRectF(self.rect()).adjusted(4, text_height + 2, -4, -text_height - 4)
        negative = any(seg.end < 0 or seg.start < 0 for bar in self._bars for seg in bar)
        zero_y = area.center().y() if negative else area.bottom()
        unit = (area.height() / 2 if negative else area.height()) / self._scale
        width = area.width() / len(self._bars)
        for i, bar in enumerate(self._bars):
            left = area.left() + i * width + width * 0.15
            self._paint_bar(painter, bar, (left, width * 0.7), zero_y, unit)
            top = zero_y - (bar[-1].end if bar else 0.0) * unit
            self._paint_labels(painter, i, bar, QRectF(left - width * 0.15, top, width, area.bottom() - top))
        painter.setPen(QPen(self.palette().windowText().color(), 2))
        painter.drawLine(int(area.left()), int(zero_y), int(area.right()), int(zero_y))
        painter.end()

    def _paint_bar(
        self, painter: QPainter, bar: list[Segment], span: tuple[float, float], zero_y: float, unit: float
    ) -> None:
        left, width = span
        for seg in bar:
            top, bottom = zero_y - seg.end * unit, zero_y - seg.start * unit
            color = self.color(seg.call % len(self._colors))
            shrinking = abs(seg.end) < abs(seg.start)  # this call took some of the gradient away
            painter.setPen(QPen(color if shrinking else self.palette().windowText().color(), 1))
            painter.setBrush(
                QBrush(color, Qt.BrushStyle.BDiagPattern if shrinking else Qt.BrushStyle.SolidPattern)
            )
            painter.drawRect(QRectF(left, min(top, bottom), width, abs(bottom - top)))

    def _paint_labels(self, painter: QPainter, i: int, bar: list[Segment], column: QRectF) -> None:
        """The value just above the bar's top, the element index below the axis."""
        painter.setPen(self.palette().windowText().color())
        value = bar[-1].end if bar else 0.0
        metrics = painter.fontMetrics()
        if metrics.horizontalAdvance(f"{value:.4g}") > column.width() * 0.9:
            return  # too many bars to label each one legibly; the numbers are in the text above
        line = metrics.height()
        above = QRectF(column.left(), column.top() - line - 2, column.width(), line)
        painter.drawText(above, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, f"{value:.4g}")
        below = QRectF(column.left(), self.height() - line - 2, column.width(), line)
        painter.drawText(below, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, f"[{i}]")


class _LeafView(QWidget):
    """One leaf: ``x.grad = [8, 16]``, a line per call, and its bars."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        # long tensors wrap at their commas instead of widening the panel; NOTE [steady heights]
        self.value = SteadyLabel(f"{name}.grad = None", name="gradValue")
        self.history = SteadyLabel("", name="gradHistory")
        self.bars = GradBars()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 8)
        layout.addWidget(self.value)
        layout.addWidget(self.history)
        layout.addWidget(self.bars, 1)

    def reset(self, name: str) -> None:
        """Show leaf ``name`` with no gradient yet (a view is reused for the next recording)."""
        self.name = name
        for label in (self.value, self.history):
            label.release()
        self.show_text(f"{name}.grad = None", "")
        self.bars.set_bars([], 1.0)

    def show_text(self, value: str, history: str) -> None:
        self.value.show_text(value)
        self.history.show_text(history)


class GradPanel(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._leaves: dict[str, _LeafView] = {}
        self._scales: dict[str, float] = {}
        self._ends: CallGrads = {}
        self._tops: dict[tuple[int, str], tuple[bool, list[float]]] = {}
        self._lines: dict[tuple[int, str], str] = {}
        title = self._title = QLabel("Gradients (.grad)")
        title.setProperty("role", "title")
        title.setWordWrap(True)
        self._legend = QLabel("")
        self._legend.setObjectName("gradLegend")
        self._legend.setProperty("role", "hint")
        self._legend.setWordWrap(True)
        self._body = QWidget()
        # A name that now holds a non-leaf copy of a leaf: its .grad, as PyTorch leaves it (None)
        self._copies = QLabel("", self._body)
        self._copies.setObjectName("gradCopies")
        self._copies.setProperty("role", "hint")
        self._copies.setWordWrap(True)
        self._rows = QVBoxLayout(self._body)
        self._rows.setContentsMargins(0, 0, 0, 0)
        scroll = self._scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self._body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(title)
        layout.addWidget(self._legend)
        layout.addWidget(scroll, 1)
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    # -- a short dock ----------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        folded = event.size().height() < FOLD_LINES * self.fontMetrics().lineSpacing()
        if folded != self._title.isHidden():
            self._fold(folded)

    def _fold(self, folded: bool) -> None:
        """In a short dock (the lower left one of a 1280x720 window, ~150 px) the heading, which the
        dock's title says, and the bars' legend, then a tooltip, leave the room to the leaves:
        ``x.grad``, each call's sum and the bars, which were scrolled away."""
        self._title.setVisible(not folded)
        self._legend.setVisible(not folded)
        self._scroll.setToolTip(self._legend.text() if folded else "")
        for view in self._leaves.values():
            view.bars.setMinimumHeight(BARS_FOLDED_PX if folded else BARS_PX)

    # -- what tests and people read ------------------------------------------------
    def grad_text(self, leaf: str) -> str:
        return self._leaves[leaf].value.text()

    def history_text(self, leaf: str) -> str:
        return self._leaves[leaf].history.text()

    def bars(self, leaf: str) -> GradBars:
        return self._leaves[leaf].bars

    def leaf_names(self) -> list[str]:
        return list(self._leaves)

    def copy_text(self) -> str:
        return self._copies.text()

    # -- updates ---------------------------------------------------------------------
    def _on_recording_applied(self, recording: Recording) -> None:
        # The views are reused, renamed: a new styled widget costs ~2 ms to polish, and a re-recording
        # (an edit, a toggle) has the same leaves.
        names = list(recording.leaves)[:MAX_LEAVES]
        views = list(self._leaves.values())
        for view in views[len(names) :]:
            view.deleteLater()
        while self._rows.count():  # the stretch left by the previous recording
            self._rows.takeAt(0)
        self._leaves = {}
        for i, name in enumerate(names):
            view = views[i] if i < len(views) else _LeafView(name, self._body)
            view.reset(name)
            view.bars.setMinimumHeight(BARS_FOLDED_PX if self._title.isHidden() else BARS_PX)
            self._leaves[name] = view
            self._rows.addWidget(view, 1)
        copies = [copy_grad_text(name, leaf) for name, leaf in copied_names(recording.leaves).items()]
        self._copies.setText("\n".join(copies))
        self._copies.setVisible(bool(copies))
        self._rows.addWidget(self._copies)
        # Both read the whole timeline: worked out when first needed (no .grad at the forward step)
        self._scales = {}
        self._ends = {}  # .grad after each finished call, replayed once per recording
        self._tops = {}  # (call, leaf) -> whether .grad started afresh there, and its bar values
        self._lines = {}  # (call, leaf) -> its line in the history
        self._legend.setText("Bars: one colour per call, stacked as the calls add up; fixed scale.")

    def _on_step_applied(self, index: int) -> None:
        state, recording = self._session.state(), self._session.recording
        if state is None or recording is None:
            return
        finished = finished_calls(recording, index)
        for call in finished:
            if call not in self._ends:
                self._ends[call] = recording.grads_at_end(call)
        if not self._scales and (self._ends or any(state.grads.get(n) is not None for n in self._leaves)):
            self._scales = _largest(recording, list(self._leaves))
        for name, view in self._leaves.items():
            now = state.grads.get(name)
            history = grad_history(
                recording, state.step, name, now, self._ends, lines_of=self._lines, finished=finished
            )
            view.show_text(grad_text(name, now), "\n".join(history))
            bars = _bars(recording, state, name, self._ends, finished, tops_of=self._tops)
            view.bars.set_bars(bars, self._scales.get(name, 1.0))


def _bars(
    recording: Recording,
    state: StepState,
    name: str,
    ends: CallGrads,
    finished: list[int],
    *,
    tops_of: dict[tuple[int, str], tuple[bool, list[float]]],
) -> list[list[Segment]]:
    """Per element, the segment each call added: stacked from the grad before it to after it.

    Only the calls since ``.grad`` last started from nothing (``zero_grad``) are stacked; they are
    found walking back from the last finished call, each call's part worked out once
    (``tops_of``), so a step costs the same after 200 training iterations as after one.
    """
    tops: list[tuple[int, list[float]]] = []
    for call in reversed(finished):
        known = tops_of.get((call, name))
        if known is None:
            after = ends[call].get(name)
            share = recording.timeline[recording.calls[call].last_step].contribution
            fresh = share is not None and after is not None and share.get(name) == after
            known = tops_of[(call, name)] = (fresh, _values(after))
        tops.append((call, known[1]))
        if known[0]:
            break  # .grad started from nothing at this call (zero_grad): the stack starts here
    tops.reverse()
    now = _values(state.grads.get(name))
    if not now:  # no .grad (yet, or zero_grad set it to None): no bars, whatever ran before
        return []
    if state.step.call is not None and state.step.kind != "call_end":
        tops.append((state.step.call, now))
    elif tops and tops[-1][1] != now:  # .grad changed outside a backward: zeroed since the call
        if not any(now):
            return [[] for _ in now]
        tops = [(tops[-1][0], now)]
    size = max((len(v) for _, v in tops), default=0)
    bars: list[list[Segment]] = [[] for _ in range(size)]
    previous = [0.0] * size
    for call, values in tops:
        for i, value in enumerate(values):
            if value != previous[i]:
                bars[i].append(Segment(call, previous[i], value))
            previous[i] = value
    return bars


def _largest(recording: Recording, names: list[str]) -> dict[str, float]:
    """The largest |value| each leaf's grad ever reaches: the bars' fixed scale (one pass over the steps)."""
    largest = dict.fromkeys(names, 0.0)
    try:
        for step in recording.timeline.steps:
            for name, grad in step.grad_changes.items():
                if name in largest and grad is not None and grad.numel():
                    largest[name] = max(largest[name], *(abs(v) for v in _values(grad)))
    except UserError:  # a .lens file's damaged later step: the session says so when it is shown
        pass
    return {name: value or 1.0 for name, value in largest.items()}
