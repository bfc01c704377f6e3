"""Run something once the window has drawn: after a widget's first paint, or once a graph is drawn.

The window makes its graph view after the first paint (NOTE [fast start] in ``main_window.py``):
a timer armed before ``show`` fired, under X11, before the first frame, and its ~70-90 ms of
imports and widgets held that frame back. The editor's checks import and the lesson wait, with
:func:`unless_busy`, while the window still draws a big graph.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QEvent, QObject, QTimer

__all__ = ["FIRST_PAINT_WAIT_MS", "after_first_paint", "unless_busy"]

FIRST_PAINT_WAIT_MS = 1000  # the call runs by then even if no paint came (a window never shown)


def after_first_paint(widget: QObject, call: Callable[[], None]) -> None:
    """Run ``call`` once, in the turn after ``widget``'s next paint (its window's first frame, when
    called before ``show``), or after :data:`FIRST_PAINT_WAIT_MS` if no paint comes."""
    _AfterPaint(widget, call)


class _AfterPaint(QObject):
    def __init__(self, widget: QObject, call: Callable[[], None]) -> None:
        super().__init__(widget)
        self._call: Callable[[], None] | None = call
        widget.installEventFilter(self)
        QTimer.singleShot(FIRST_PAINT_WAIT_MS, self, self._run)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self, self._run)  # once this paint is done
        return False

    def _run(self) -> None:
        call, self._call = self._call, None
        if call is not None:
            self.deleteLater()
            call()


def unless_busy(
    context: QObject,
    busy: Callable[[], bool],
    call: Callable[[], None],
    *,
    every_ms: int,
    looks: int,
    looked: int = 0,
) -> bool:
    """Run ``call`` now unless ``busy()``; else look again every ``every_ms``, running it once
    ``busy()`` is false or after ``looks`` looks. Returns whether it waits. The timers go with
    ``context``: a call whose context was deleted meanwhile never runs."""
    if looked < looks and busy():
        again = partial(unless_busy, context, busy, call, every_ms=every_ms, looks=looks, looked=looked + 1)
        QTimer.singleShot(every_ms, context, again)
        return True
    call()
    return False
