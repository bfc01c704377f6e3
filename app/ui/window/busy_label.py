"""The status bar's "Recording… 2.4 s": how long the current recording or export has run."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["BusyLabel"]

TICK_MS = 200  # how often the seconds count on
WIDEST = "Recording… 000.0 s "


class BusyLabel(QLabel):
    """Hidden while idle; counts the seconds while busy.

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

    def _fix_size(self) -> None:
        """The text changes while a recording runs; a fixed size spares the window a relayout
        each time (QLayout::activate was a tenth of the GUI thread during a big load)."""
        self.setFixedSize(self.fontMetrics().horizontalAdvance(WIDEST), self.sizeHint().height())

    def _update_text(self) -> None:
        seconds = self._since.elapsed() / 1000 if self._since.isValid() else 0.0
        self.setText(f"Recording… {seconds:.1f} s" if seconds >= 1 else "Recording…")
