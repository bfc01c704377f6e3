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


TRAINING = Path(__file__).parent / "scripts" / "training" / "mlp_adam_batches.py"


def training_window(qtbot: Any, folder: Path) -> MainWindow:
    """A window held to 1280x720 that started on a built-in, then opened the recorded training
    script's ``.lens``, once its graph is built and fitted."""
    from app.core.lensfile import save_lens
    from app.core.recorder.script import record_script

    lens = folder / "training.lens"
    save_lens(record_script(TRAINING).recording, lens)
    made = MainWindow(AppSettings(folder / "settings.ini"), "two-losses")
    qtbot.addWidget(made)
    made.set_size(1280, 720)
    made.setMaximumSize(1280, 720)
    made.show()
    with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
        made.start()
    qtbot.waitUntil(lambda: made.graph_view is not None and made.size() == QSize(1280, 720), timeout=TIMEOUT)
    with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
        made.load_program(lens)
    view = made.graph_view
    qtbot.waitUntil(lambda: not view.building and view.unshown is None, timeout=TIMEOUT)
    qtbot.wait(50)  # fitted once the page has its size, a turn later
    return made
