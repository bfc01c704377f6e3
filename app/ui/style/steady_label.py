"""A word-wrapped label whose height, while it shows one recording, only grows.

# NOTE [steady heights]
Panels that follow the step rewrite their text at every step. A wrapped line
one row shorter than the step before shrinks its label, the layout moves what
is below it, and Qt repaints the whole panel (and, through the window's
layout, more): in a training loop that was most steps (the gradients
panel's leaf views were resized 218 times in 100 steps, and hiding that panel
alone took the window's step p95 from 25-34 ms to 14-16 ms). A steady label
keeps the tallest height it needed since ``release``, its text at the top, so
later steps change only the pixels of the text. At another width (a dragged
splitter, a resized window) the text wraps anew and the label is fitted afresh.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["SteadyLabel"]


class SteadyLabel(QLabel):
    """A plain-text, word-wrapped :class:`QLabel` that never shrinks until :meth:`release`."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._floor_width = -1  # the width the kept height was measured at

    def show_text(self, text: str) -> None:
        """Show ``text`` (the label grows to fit it, and stays that tall: NOTE [steady heights])."""
        if text != self.text():
            self.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        # The layout gave the label the height its text needs at this width; keep at least that
        # while the width stays (measured here, from Qt's own layout, rather than by laying the
        # text out once more). At another width the text wraps anew: it is fitted afresh.
        super().resizeEvent(event)
        width, height = event.size().width(), event.size().height()
        if width != self._floor_width:
            self._floor_width = width
            self.release()
        elif height > self.minimumHeight():
            self.setMinimumHeight(height)

    def release(self) -> None:
        """Fit the text again from now on (a new recording: other text, other lengths)."""
        if self.minimumHeight():
            self.setMinimumHeight(0)
