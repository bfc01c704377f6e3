"""The classroom's look: colour theme and text scale, remembered, and Ctrl+wheel to scale text.

One object holds both settings and applies the stylesheet; the views that paint
their own colours (the graph, the legend) follow :attr:`Appearance.theme_changed`
and :attr:`Appearance.font_scale_changed`.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from app.ui.runtime.settings import THEMES, AppSettings, clamp_font_scale
from app.ui.style.theme import apply_theme

__all__ = ["FONT_STEP", "Appearance"]

FONT_STEP = 0.1


class Appearance(QObject):
    """Theme and text scale of ``window`` (NOTE [a theme per window]), kept in ``settings``."""

    theme_changed = Signal(str)
    font_scale_changed = Signal(float)

    def __init__(self, settings: AppSettings, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._settings = settings
        self._theme = settings.theme
        self._font_scale = settings.font_scale

    @property
    def theme(self) -> str:
        return self._theme

    @property
    def font_scale(self) -> float:
        return self._font_scale

    def set_theme(self, name: str) -> None:
        self._theme = name if name in THEMES else "light"
        self._settings.theme = self._theme
        self.apply()
        self.theme_changed.emit(self._theme)

    def set_font_scale(self, scale: float) -> None:
        scale = clamp_font_scale(scale)
        changed = scale != self._font_scale
        self._font_scale = scale
        self._settings.font_scale = scale
        if changed:
            self.apply()
        self.font_scale_changed.emit(scale)

    def larger(self) -> None:
        self.set_font_scale(self._font_scale + FONT_STEP)

    def smaller(self) -> None:
        self.set_font_scale(self._font_scale - FONT_STEP)

    def reset(self) -> None:
        self.set_font_scale(1.0)

    def apply(self) -> None:
        """The stylesheet of the theme at the text scale, on the window."""
        apply_theme(self._window, self._theme, self._font_scale)

    # -- Ctrl+wheel anywhere scales the text (scroll views would zoom or scroll themselves) --
    def watch_wheel(self, root: QWidget) -> None:
        """Scale the text on Ctrl+wheel over ``root`` and every scroll area inside it."""
        for area in [root, *root.findChildren(QAbstractScrollArea)]:
            target = area.viewport() if isinstance(area, QAbstractScrollArea) else area
            target.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QWheelEvent) and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            delta = event.angleDelta().y()
            if delta:
                self.set_font_scale(self._font_scale + (FONT_STEP if delta > 0 else -FONT_STEP))
            event.accept()
            return True
        return super().eventFilter(watched, event)
