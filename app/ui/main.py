"""Start the window: ``python -m app``, ``python -m app gui [PROGRAM]``, ``autograd-lens-gui``.

Environment variables (for screenshots, benchmarks and tests):

- ``AUTOGRAD_LENS_SETTINGS``: an INI file to use instead of the user's settings.
- ``AUTOGRAD_LENS_SCREENSHOT``: save the window to this PNG once the first graph
  is painted, then quit (exit status 0, or 1 when nothing could be recorded).
- ``AUTOGRAD_LENS_STEP``: the step to show first: a number, ``end``, or
  ``call:N`` (the last step of call N, counted from 1); with or without a screenshot.
- ``AUTOGRAD_LENS_SIZE``: window size as ``WIDTHxHEIGHT`` (e.g. ``1600x1000``), whatever
  the screen; without it a fresh start fits the screen the window opens on.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

from app.ui.runtime.excepthook import install_exception_handler
from app.ui.runtime.settings import APPLICATION, ORGANIZATION, AppSettings
from app.ui.window.main_window import MainWindow

__all__ = ["run_gui"]

log = logging.getLogger(__name__)

SETTLE_MS = 400  # after the graph is set, let Qt lay out and paint before grabbing
GIVE_UP_MS = 120_000


def _application() -> QApplication:
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    app = QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APPLICATION)
    return app


def _size(text: str) -> tuple[int, int] | None:
    width, _, height = text.lower().partition("x")
    try:
        return int(width), int(height)
    except ValueError:
        return None


def step_from_text(window: MainWindow, text: str) -> int | None:
    """``"7"`` -> 7, ``"end"`` -> the last step, ``"call:2"`` -> the last step of call 2."""
    recording = window.session.recording
    if recording is None or not text:
        return None
    if text == "end":
        return window.session.last_index
    if text.startswith("call:"):
        number = int(text[5:]) - 1
        return recording.calls[number].last_step if 0 <= number < len(recording.calls) else None
    return int(text)


class StartStep(QObject):
    """Go to the step ``text`` names once the first recording is on screen, then say so."""

    shown = Signal()

    def __init__(self, window: MainWindow, text: str) -> None:
        super().__init__(window)
        self._window, self._text = window, text
        window.session.recording_applied.connect(self._on_recording_applied)

    def _on_recording_applied(self, recording: object) -> None:
        self._window.session.recording_applied.disconnect(self._on_recording_applied)
        QTimer.singleShot(SETTLE_MS, self._go_to_step)

    def _go_to_step(self) -> None:
        try:
            index = step_from_text(self._window, self._text)
        except ValueError:
            log.warning("AUTOGRAD_LENS_STEP=%r is not a step number, 'end' or 'call:N'", self._text)
            index = None
        if index is not None and 0 <= index <= self._window.session.last_index:
            self._window.session.go_to(index)
        self.shown.emit()


class _Screenshot(QObject):
    """Save the window to a PNG once the first recording is painted at its start step, then quit."""

    def __init__(self, window: MainWindow, path: Path, start: StartStep) -> None:
        super().__init__(window)
        self._window, self._path = window, path
        start.shown.connect(lambda: QTimer.singleShot(SETTLE_MS, lambda: self._save(0)))
        window.session.failed.connect(self._on_failed)
        QTimer.singleShot(GIVE_UP_MS, lambda: self._save(1))

    def _on_failed(self, message: str) -> None:
        if self._window.session.recording is None and self._window.session.busy is False:
            log.error("nothing to screenshot: %s", message)

    def _save(self, status: int) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        ok = self._window.grab().save(str(self._path), "PNG")
        QApplication.exit(status if ok else 1)


def run_gui(program: str | None = None) -> int:
    """Open the window on ``program`` (a built-in name, a .toml, .py or .lens path) until it closes."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from app.child.client import prestart_for

    prestart_for(program)  # it imports torch while Qt starts and the window is built (once)
    app = _application()
    settings_path = os.environ.get("AUTOGRAD_LENS_SETTINGS")
    settings = AppSettings(settings_path or None)
    window = MainWindow(settings, program)
    size = _size(os.environ.get("AUTOGRAD_LENS_SIZE", ""))
    if size is not None:
        window.set_size(*size)  # not fitted to the screen: pictures of a known size
    start = StartStep(window, os.environ.get("AUTOGRAD_LENS_STEP", ""))
    screenshot = os.environ.get("AUTOGRAD_LENS_SCREENSHOT")
    if screenshot:
        _Screenshot(window, Path(screenshot), start)
    install_exception_handler(window.show_notice)  # a failing slot shows a notice; the program runs on
    window.start()  # the child records while the window is shown and painted (NOTE [fast start])
    window.show()
    return int(app.exec())
