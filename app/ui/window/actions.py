"""The window's commands: one :class:`QAction` each, with the shortcut the README lists.

The actions know their text and keys, not what they do: the window connects each
to its handler, so this file reads as the table of commands. Every action is
added to the window itself, so its keys work even when the menus and toolbar are
hidden (full screen, the presentation layout); text editors keep their own
arrows and Space because a focused editor takes those keys first.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from app.ui.runtime.settings import THEMES

__all__ = ["Keys", "WindowActions", "build_menus"]

Keys = QKeySequence | QKeySequence.StandardKey | str | list[QKeySequence] | None


class WindowActions:
    """Every command of ``window``; ``add`` makes one more (a hook for new features)."""

    def __init__(self, window: QMainWindow) -> None:
        self._window = window
        add = self.add
        self.next_step = add("Next node", "Right")
        self.prev_step = add("Previous node", "Left")
        self.next_call = add("Next call", "Shift+Right")
        self.prev_call = add("Previous call", "Shift+Left")
        self.next_iteration = add("Next loop iteration", "Ctrl+Right")
        self.previous_iteration = add("Previous loop iteration", "Ctrl+Left")
        self.home = add("First step", "Home")
        self.end = add("Last step", "End")
        self.play = add("Play / pause", "Space")
        self.full_screen = add("Full screen", "F11", checkable=True)
        self.presentation = add("Presentation layout", "F5", checkable=True)
        self.zoom_in = add("Zoom in", [QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
        self.zoom_out = add("Zoom out", "Ctrl+-")
        self.fit = add("Fit graph", "Ctrl+0")
        self.follow = add("Follow the running node", None, checkable=True)
        self.wrap_code = add("Wrap code lines", None, checkable=True)
        self.wrap_code.setChecked(
            True
        )  # the Code panel's default (code_panel.py's NOTE [code wraps by default])
        self.larger_text = add("Larger text", "Ctrl+Alt+=")
        self.smaller_text = add("Smaller text", "Ctrl+Alt+-")
        self.normal_text = add("Normal text size", "Ctrl+Alt+0")
        self.find = add("Find node…", QKeySequence.StandardKey.Find)
        self.new = add("New", QKeySequence.StandardKey.New)
        self.open = add("Open…", QKeySequence.StandardKey.Open)
        self.save = add("Save", QKeySequence.StandardKey.Save)
        self.save_as = add("Save As…", "Ctrl+Shift+S")
        self.export_svg = add("Export view as SVG…", None)
        self.export_png = add("Export view as PNG…", None)
        self.export_slides = add("Export every step (slides)…", None)
        self.export_torchviz = add("Export torchviz's drawing (make_dot)…", None)
        self.quit = add("Quit", QKeySequence.StandardKey.Quit)
        self.undo = add("Undo the last fix or toggle", QKeySequence.StandardKey.Undo)
        self.undo.setEnabled(False)
        self.details = add("Program details…", None)
        self.predict = add("Predict first", "P", checkable=True)
        for action, short in ((self.fit, "Fit"), (self.presentation, "Present"), (self.full_screen, "Full")):
            action.setIconText(short)  # the toolbar's button text; the menus say it in full
        for action in (self.new, self.open, self.save, self.save_as, self.details):
            action.setEnabled(False)  # until the editor exists (first recording)
        self.themes = QActionGroup(window)
        for name in THEMES:
            theme = QAction(name.capitalize(), window, checkable=True)
            theme.setData(name)
            self.themes.addAction(theme)

    def add(self, text: str, keys: Keys, *, checkable: bool = False) -> QAction:
        """A new action of the window, active wherever the focus is in it."""
        action = QAction(text, self._window)
        if isinstance(keys, list):
            action.setShortcuts(keys)
        elif keys is not None:
            action.setShortcut(QKeySequence(keys))
        action.setCheckable(checkable)
        self._window.addAction(action)  # active even when the menus are hidden
        return action


def build_menus(window: QMainWindow, actions: WindowActions, recent: QMenu, panels: list[QAction]) -> None:
    """File, Edit, Step and View menus; ``panels`` are the docks' show/hide toggles."""
    a, bar = actions, window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([a.new, a.open])
    file_menu.addMenu(recent)
    file_menu.addActions([a.save, a.save_as])
    file_menu.addSeparator()
    file_menu.addActions([a.export_svg, a.export_png, a.export_slides, a.export_torchviz])
    file_menu.addSeparator()
    file_menu.addAction(a.quit)
    bar.addMenu("&Edit").addActions([a.undo, a.details])
    step_menu = bar.addMenu("&Step")
    step_menu.addActions([a.prev_step, a.next_step, a.prev_call, a.next_call])
    step_menu.addActions([a.previous_iteration, a.next_iteration, a.home, a.end, a.play])
    view_menu = bar.addMenu("&View")
    view_menu.addActions([a.zoom_in, a.zoom_out, a.fit, a.follow, a.find, a.wrap_code])
    view_menu.addSeparator()
    view_menu.addActions([a.larger_text, a.smaller_text, a.normal_text])
    view_menu.addMenu("&Theme").addActions(a.themes.actions())
    view_menu.addSeparator()
    view_menu.addMenu("&Panels").addActions(panels)
    view_menu.addActions([a.presentation, a.full_screen, a.predict])
