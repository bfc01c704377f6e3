"""The banner above the panels: a failed recording, a caught exception. Click to dismiss."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["NoticeBanner"]


class NoticeBanner(QLabel):
    """Hidden until :meth:`show_text`; a click hides it again."""

    shown = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setObjectName("notice")
        self.setTextFormat(Qt.TextFormat.PlainText)  # messages quote a recording's text
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setToolTip("Click to dismiss")
        self.hide()

    def show_text(self, text: str) -> None:
        self.setText(text)
        self.show()
        self.shown.emit(text)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        self.hide()
