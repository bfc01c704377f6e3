"""The centre of the window: the caption and step counter over the graph, the error panel
between them at the error step, the notice banner on top.

# NOTE [the graph keeps the stage]
At the error step the error panel (PyTorch's message, why, the fixes) can be taller
than the graph, most of all at a large text scale. It gets at most ``ERROR_SHARE`` of
the stage's height and scrolls inside; the graph keeps the rest.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

__all__ = ["ERROR_SHARE", "Stage"]

ERROR_SHARE = 0.4


class Stage(QWidget):
    """Lays out the central widgets it is given; it owns none of their behaviour."""

    def __init__(
        self, notice: QWidget, caption: QWidget, counter: QWidget, error_panel: QWidget, graph: QWidget
    ) -> None:
        super().__init__()
        self._error_panel = error_panel
        header = QHBoxLayout()  # the sentence to read out, and where we are: across the top
        header.addWidget(caption, 1)
        header.addWidget(counter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(notice)
        layout.addLayout(header)
        layout.addWidget(error_panel)
        layout.addWidget(graph, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._error_panel.setMaximumHeight(round(event.size().height() * ERROR_SHARE))
        super().resizeEvent(event)
