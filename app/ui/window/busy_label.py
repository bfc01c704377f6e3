"""The status bar's "Recording… 2.4 s": how long the current recording or export has run."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["BusyLabel"]

TICK_MS = 200  # how often the seconds count on
WIDEST = "Recording… 000.0 s "
CORNER_MARGIN_PX = 6


class BusyLabel(QLabel):
    """Hidden while idle; counts the seconds while busy. It floats over a corner of the widget
    it is given (:meth:`float_over`), in no layout: a recording starting moves nothing (in the
    playback row it pushed the timeline onto a row of its own at 1280 px).

    A label that counts, not an indeterminate QProgressBar: the style animates that at 60
    frames a second, and on a big load its painting took a third of the GUI thread's time
    (py-spy), time the graph view needed.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Recording…", parent)
        self.hide()
        self._since = QElapsedTimer()
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._update_text)
        self._fix_size()

    def set_busy(self, busy: bool) -> None:
        if busy:
            self._fix_size()  # the font may have been scaled since
            self._since.start()
            self._tick.start()
        else:
            self._tick.stop()
        self._update_text()
        self.setVisible(busy)
        if busy:
            self._place()

    def _fix_size(self) -> None:
        """The text changes while a recording runs; a fixed size spares the window a relayout
        each time (QLayout::activate was a tenth of the GUI thread during a big load)."""
        self.setFixedSize(self.fontMetrics().horizontalAdvance(WIDEST), self.sizeHint().height())

    def float_over(self, widget: QWidget) -> None:
        """Sit at the top right corner of ``widget``, above its children, following its size."""
        self.setParent(widget)
        self.setAutoFillBackground(True)
        # It fills itself (an opaque palette colour), so the widgets under it need not paint first:
        # without this each tick repainted the strip of a .lens file's picture beneath it (the
        # picture's whole paint, 2-50 ms, every 200 ms while the file is read).
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        widget.installEventFilter(self)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parent() and event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        parent = self.parentWidget()
        if parent is not None:
            self.move(max(0, parent.width() - self.width() - CORNER_MARGIN_PX), CORNER_MARGIN_PX)
            self.raise_()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fix_size()
            self._place()

    def _update_text(self) -> None:
        seconds = self._since.elapsed() / 1000 if self._since.isValid() else 0.0
        self.setText(f"Recording… {seconds:.1f} s" if seconds >= 1 else "Recording…")
