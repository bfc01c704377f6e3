"""The centre of the window: the caption and step counter over the graph, the error panel
between them at the error step, the notice banner on top.

# NOTE [the graph keeps the stage]
At the error step the error panel (PyTorch's message, why, the fixes) can be taller
than the graph, most of all at a large text scale. It gets what the header (caption
and step counter) leaves of ``GRAPH_SHARE`` of the stage's height, never less than
``ERROR_SHARE`` nor more than ``ERROR_MAX_SHARE``, and scrolls inside; the graph keeps
the rest. At the projector theme and text 1.5 on a 1280x720 screen the header took 0.3
of the stage and the panel 0.4, and the graph was left 0.3 (140 px); the caption above
the panel already says where and why the call failed.

# NOTE [the graph keeps its size while stepping]
Every step sets a new caption, one to fourteen lines long. Laid out as it comes, the
graph above it grew and shrank at each step: a jumping picture, and a full repaint
of the graph for every step (two, with the step counter's own relayout), the largest
cost of a step on a fitted 1,200-node graph. So the caption sits in a room that only
grows: as tall as the tallest caption shown since the stage last changed width, at
most ``CAPTION_SHARE`` of the stage's height, a longer caption scrolling inside.

The room's scroll bar follows the same ratchet: once a caption since the last change of
width has been taller than the room, the bar stays until the next. Shown only while needed,
it came and went with every other step of a training loop (a gradient's caption scrolls,
the next node's fits): each time the caption wrapped anew at another width and the stage
was laid out and painted again (199 times in 100 such steps).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

__all__ = ["CAPTION_SHARE", "ERROR_MAX_SHARE", "ERROR_SHARE", "GRAPH_SHARE", "CaptionRoom", "Stage"]

GRAPH_SHARE = 0.5  # the header and the error panel together leave the graph this much
ERROR_SHARE = 0.25  # the error panel's room, at least (its heading and a line of PyTorch's message)
ERROR_MAX_SHARE = 0.4
CAPTION_SHARE = 0.3


class CaptionRoom(QScrollArea):
    """The caption's room: as tall as the tallest caption since ``forget``, at most ``limit``
    pixels, scrolling beyond (NOTE [the graph keeps its size while stepping]). ``widest``: its
    minimum width, too, only grows until ``forget`` (a caption that changes at every step)."""

    def __init__(self, caption: QWidget, *, widest: bool = False) -> None:
        super().__init__()
        self._caption = caption
        self._widest = widest
        self._tallest = 0
        self._limit = 1 << 20
        self._least = -1  # the caption's minimum width, as the room last reported it
        self.setWidget(caption)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        caption.setAutoFillBackground(False)
        self.viewport().installEventFilter(self)  # a new text posts a layout request to its parent
        caption.installEventFilter(self)
        self._update_height()

    def set_limit(self, pixels: int) -> None:
        """The most the room may grow to (the stage's share)."""
        self._limit = max(1, pixels)
        self._update_height()

    @property
    def tallest(self) -> int:
        return self._tallest

    def sizeHint(self) -> QSize:
        # a scroll area's own hint ignores its widget: the caption would lose its width to the counter
        hint = self._caption.sizeHint()
        return QSize(hint.width() + self.verticalScrollBar().sizeHint().width(), self.height())

    def minimumSizeHint(self) -> QSize:
        least = self._caption.minimumSizeHint().width()
        return QSize(max(self._least, least) if self._widest else least, self.height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._tallest, self._least = 0, -1  # another text size: measured afresh
        if kind in (QEvent.Type.LayoutRequest, QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._update_height()
        elif kind == QEvent.Type.Resize and watched is self.viewport():
            assert isinstance(event, QResizeEvent)
            if event.size().width() != event.oldSize().width():
                # narrower within the same stage (the step counter beside it grew, or the bar
                # came): the caption wraps into more lines, so it is measured again, once the
                # scroll area has laid out its children (changing the room's height inside that
                # pass left the viewport at the old height)
                QCoreApplication.postEvent(self.viewport(), QEvent(QEvent.Type.LayoutRequest))
        return super().eventFilter(watched, event)

    def forget(self) -> None:
        """Measure afresh (the stage changed width: every caption wraps anew)."""
        self._tallest = 0
        self._least = -1
        # measured without the bar: measured with it, the caption wrapped narrower than it will be
        # shown once the bar goes, and the room kept a blank line
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._update_height()

    def _update_height(self) -> None:
        caption = self._caption
        width = max(1, self.viewport().width())
        need = caption.heightForWidth(width) if caption.hasHeightForWidth() else -1
        need = need if need > 0 else caption.sizeHint().height()
        self._tallest = max(self._tallest, need)
        height = min(self._tallest, self._limit)
        # the widest minimum since ``forget``: a caption's minimum width is its longest word, and
        # reported anew at each step it laid the whole window out again at most steps
        least = caption.minimumSizeHint().width()
        least = max(self._least, least) if self._widest else least
        if least != self._least:  # the header's layout keeps the room's minimum until told
            self._least = least
            self.updateGeometry()
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)
        bar = (
            Qt.ScrollBarPolicy.ScrollBarAlwaysOn
            if self._tallest > height
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        if self.verticalScrollBarPolicy() != bar:
            self.setVerticalScrollBarPolicy(bar)


class Stage(QWidget):
    """Lays out the central widgets it is given; it owns none of their behaviour."""

    def __init__(
        self, notice: QWidget, caption: QWidget, counter: QWidget, error_panel: QWidget, graph: QWidget
    ) -> None:
        super().__init__()
        self._error_panel = error_panel
        self.caption_room = CaptionRoom(caption, widest=True)
        self.header = QWidget()  # the sentence to read out, and where we are: across the top
        row = QHBoxLayout(self.header)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.caption_room, 1)
        row.addWidget(counter)
        self._tallest_header = 0
        self.error_share = ERROR_SHARE  # the error panel's least share (set_error_share)
        self._width = -1
        self.header.installEventFilter(self)  # the counter wraps its line anew at some steps
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(notice)
        layout.addWidget(self.header)
        layout.addWidget(error_panel)
        layout.addWidget(graph, 1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.header and event.type() == QEvent.Type.LayoutRequest:
            self._steady_header()
        return super().eventFilter(watched, event)

    def _steady_header(self) -> None:
        """The header never shrinks while the stage keeps its width (NOTE [the graph keeps its
        size while stepping])."""
        self._tallest_header = max(self._tallest_header, self.header.sizeHint().height())
        if self.header.minimumHeight() != self._tallest_header:
            self.header.setMinimumHeight(self._tallest_header)
            self._limit_error_panel()

    def error_limit(self) -> int:
        """The most the error panel may take now (NOTE [the graph keeps the stage])."""
        height = self.height()
        left = round(height * GRAPH_SHARE) - self._tallest_header
        return max(round(height * self.error_share), min(left, round(height * ERROR_MAX_SHARE)))

    def set_error_share(self, share: float) -> None:
        """The error panel's least share of the stage's height (:data:`ERROR_SHARE`, or more on a
        small screen, where its heading, PyTorch's first sentence and the first fix need it)."""
        self.error_share = share
        self._limit_error_panel()

    def _limit_error_panel(self) -> None:
        limit = self.error_limit()
        if self._error_panel.maximumHeight() != limit:
            self._error_panel.setMaximumHeight(limit)

    def remeasure(self) -> None:
        """Forget the tallest header so far (another text scale: at 1.5 it was 173 px, and kept
        after going back to 1.0 it held the window's minimum ~100 px taller)."""
        self._tallest_header = 0
        self.header.setMinimumHeight(0)
        self.caption_room.forget()
        self._steady_header()

    def resizeEvent(self, event: QResizeEvent) -> None:
        height = event.size().height()
        self.caption_room.set_limit(round(height * CAPTION_SHARE))
        if event.size().width() != self._width:
            self._width = event.size().width()
            self.remeasure()
        self._limit_error_panel()
        super().resizeEvent(event)
