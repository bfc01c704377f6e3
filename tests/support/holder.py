"""A panel alone in a shown window of its own: the panel tests' start."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QVBoxLayout, QWidget


def shown_in_holder(qtbot: Any, panel: QWidget, width: int, height: int) -> QWidget:
    """``panel`` laid out in a plain widget of ``width`` x ``height``, shown and exposed; keep it:
    the panel is deleted with it."""
    holder = QWidget()
    QVBoxLayout(holder).addWidget(panel)
    qtbot.addWidget(holder)
    holder.resize(width, height)
    holder.show()
    qtbot.waitExposed(holder)
    return holder
