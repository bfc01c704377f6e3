"""A word-wrapped label whose height, while it shows one recording, only grows.

# NOTE [steady heights]
Panels that follow the step rewrite their text at every step. A wrapped line
one row shorter than the step before shrinks its label, the layout moves what
is below it, and Qt repaints the whole panel (and, through the window's
layout, more): in a training loop that was most steps, half the window's
per-step work (the gradients panel's leaf views resized 218 times in 100
steps). A steady label keeps the tallest height it needed since ``release``,
its text at the top, so later steps change only the pixels of the text.
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

    def show_text(self, text: str) -> None:
        """Show ``text`` (the label grows to fit it, and stays that tall: NOTE [steady heights])."""
        if text != self.text():
            self.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        # The layout gave the label the height its text needs; keep at least that from now on.
        # Measured here, from Qt's own layout, rather than by laying the text out once more.
        super().resizeEvent(event)
        if event.size().height() > self.minimumHeight():
            self.setMinimumHeight(event.size().height())

    def release(self) -> None:
        """Fit the text again from now on (a new recording: other text, other lengths)."""
        self.setMinimumHeight(0)
