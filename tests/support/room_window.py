"""A window of a given text scale and size, its program recorded and shown: the room tests' start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize

from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow

TIMEOUT = 30_000


def sized_window(qtbot: Any, folder: Path, scale: float, program: str, size: tuple[int, int]) -> MainWindow:
    """A window at text ``scale`` held to ``size``, once ``program``'s recording is applied."""
    settings = AppSettings(folder / "settings.ini")
    settings.font_scale = scale
    made = MainWindow(settings, program)
    qtbot.addWidget(made)
    made.set_size(*size)
    made.setMaximumSize(*size)
    made.show()
    with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
        made.start()
    qtbot.waitUntil(lambda: made.graph_view is not None and made.editor is not None, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: made.size() == QSize(*size), timeout=TIMEOUT)
    return made
