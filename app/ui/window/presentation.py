"""The presentation layout (F5): the graph, the caption, the step counter and the code, large;
and full screen (F11).

Every other panel and the window's chrome (menus, toolbar, status bar, playback
bar) are hidden; the keys still step, since the window's actions live on the
window. F5 again brings back the layout as it was, docks and all.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QObject, Qt, Signal
from PySide6.QtWidgets import QMainWindow, QWidget

from app.ui.window.docks import DockLayout

__all__ = ["CODE_SHARE", "Presentation"]

CODE_SHARE = 0.3  # of the window's width, for the code beside the graph


class Presentation(QObject):
    """Toggles ``window`` between its layout and the presentation one; ``chrome`` is hidden in it."""

    toggled = Signal(bool)
    full_screen_toggled = Signal(bool)

    def __init__(self, window: QMainWindow, docks: DockLayout, chrome: list[QWidget]) -> None:
        super().__init__(window)
        self._window, self._docks, self._chrome = window, docks, chrome
        self._state: QByteArray | None = None  # the layout to come back to
        self._hidden: list[QWidget] = []

    @property
    def active(self) -> bool:
        return self._state is not None

    def toggle(self) -> None:
        self.leave() if self.active else self.enter()

    def enter(self) -> None:
        if self.active:
            return
        self._state = self._docks.save()
        self._hidden = [widget for widget in self._chrome if not widget.isHidden()]
        for widget in self._hidden:
            widget.hide()
        for key, dock in self._docks.docks.items():
            dock.setVisible(key == "code")
        code = self._docks.dock("code")
        self._window.resizeDocks(
            [code], [round(self._window.width() * CODE_SHARE)], Qt.Orientation.Horizontal
        )
        self.toggled.emit(True)

    def leave(self) -> None:
        if self._state is None:
            return
        state, self._state = self._state, None
        self._docks.restore(state)
        for widget in self._hidden:
            widget.show()
        self._hidden = []
        self.toggled.emit(False)

    def toggle_full_screen(self) -> None:
        """Full screen on or off; a maximized window is maximized again after it."""
        window = self._window
        window.setWindowState(window.windowState() ^ Qt.WindowState.WindowFullScreen)
        self.full_screen_toggled.emit(window.isFullScreen())
