"""A holder that keeps a panel's changes from laying the whole window out again.

# NOTE [layout fences]
Every ``QLabel.setText`` calls ``updateGeometry``. Qt then invalidates each layout from the
label up to the window and, a turn later, lays the whole window out again, even when no size
changed at all. The step counter and the node details change their text at every step: in a
training loop (``benchmarks/window_bench.py``'s recording, its last 300 steps) pinning the two
panels' sizes took a step's GUI-thread CPU from 10.7-11.2 ms to 7.5-8.3 ms (three rounds).
A widget of fixed size stops that walk (Qt skips ``updateGeometry`` when its minimum and
maximum sizes are equal), but the panels must still follow the window's size.

A fence holds one panel and has no layout of its own. A change inside the panel reaches the
fence as a posted ``LayoutRequest``; the fence asks its parent for a new layout only when the
panel now needs more room than the fence already reports. The fence's size hint and its minimum
height only grow (like NOTE [steady heights]), so a panel never shrinks and jumps back from step
to step; ``release`` (a new recording's first step) and a new font measure it afresh, and a new
width measures its height afresh (a wrapped text needs another height at another width). A
panel whose height follows its width (wrapped text) asks for that height as its minimum: in a
short dock it scrolls (the dock's scroll area) rather than cutting its text off. Its minimum
width is kept too, so one unbreakable word would keep the panel wide for the rest of a recording
(a narrow dock scrolling sideways): long names are shown breakable (``breakable.py``). Letting
the kept width fall back to the room instead made the details panel ask for a new layout at most
steps of a training loop whose dock is narrower than the panel (4,307 requests in 2,599 steps).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget

__all__ = ["LayoutFence"]


class LayoutFence(QWidget):
    """Holds ``inner``, filling the fence; reports a size hint that only grows until :meth:`release`.

    The fence takes ``inner``'s size policy when made, is shown and hidden with it, and holds
    nothing once ``inner`` is deleted.
    """

    def __init__(self, inner: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hint = QSize(0, 0)
        self._minimum = QSize(0, 0)
        self._width = -1  # the width the hint's height was measured at
        self.relayouts = 0  # how often a change inside asked the window for a new layout
        self.inner: QWidget | None = inner
        inner.setParent(self)
        self.setSizePolicy(inner.sizePolicy())
        inner.installEventFilter(self)  # shown and hidden with it from now on
        inner.destroyed.connect(self._forget_inner)
        self._refit()

    def sizeHint(self) -> QSize:
        return QSize(self._hint)

    def minimumSizeHint(self) -> QSize:
        return QSize(self._minimum)

    def release(self) -> None:
        """Measure the panel afresh (a new recording: other texts, other lengths)."""
        self._hint, self._minimum = QSize(0, 0), QSize(0, 0)
        self._refit(force=True)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self.inner and kind in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self.setVisible(kind == QEvent.Type.ShowToParent)
        return super().eventFilter(watched, event)

    def _forget_inner(self) -> None:
        self.inner = None
        self._hint, self._minimum = QSize(0, 0), QSize(0, 0)
        self.updateGeometry()

    def event(self, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.LayoutRequest:  # the panel's own layout changed inside it
            self._refit()
            return True
        if kind in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.release()  # another text size
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.inner is None:
            return
        self.inner.setGeometry(self.rect())
        if event.size().width() != self._width:
            self._width = event.size().width()
            self._hint.setHeight(0)  # wrapped text needs another height at another width
            self._minimum.setHeight(0)
            self._refit()

    def _refit(self, *, force: bool = False) -> None:
        inner = self.inner
        if inner is None:
            return
        need = inner.sizeHint()
        minimum = inner.minimumSizeHint().expandedTo(inner.minimumSize())
        if inner.hasHeightForWidth() and self.width() > 0:
            need.setHeight(inner.heightForWidth(self.width()))
            minimum.setHeight(max(minimum.height(), need.height()))  # wrapped text is never cut off
        hint = need.expandedTo(self._hint).expandedTo(minimum)
        least = minimum.expandedTo(self._minimum)
        if force or hint != self._hint or least != self._minimum:
            self._hint, self._minimum = hint, least
            self.relayouts += 1
            self.updateGeometry()
        if inner.geometry() != self.rect():
            inner.setGeometry(self.rect())
