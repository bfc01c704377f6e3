"""Stylesheets: the numbered ``resources/styles/*.qss`` files combined in one place.

# NOTE [theme files]
Files are applied in name order. ``NN-<theme>.qss`` (``10-light.qss``,
``10-dark.qss``, ``10-projector.qss``) belongs to one theme and is used only
for it; every other file (``00-base.qss``) is shared. Font sizes are written as
``$base``, ``$small``, ``$title``, ``$caption``, ``$counter`` (points), filled in
here from the font scale, so one setting scales every panel at once.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from app.core.gc_pause import collection_paused
from app.core.resources import style_files
from app.ui.runtime.settings import THEMES

__all__ = [
    "THEMES",
    "apply_theme",
    "font_sizes",
    "hue_colour",
    "is_dark",
    "mixed",
    "stylesheet",
    "theme_files",
    "tint_colour",
]

BASE_PT = 12.0
SIZES = {"small": 0.85, "base": 1.0, "title": 1.25, "caption": 1.45, "counter": 2.1}


def _theme_of(path: Path) -> str | None:
    """The theme a file belongs to, or None when it is shared."""
    stem = path.stem
    _, _, rest = stem.partition("-")
    return rest if rest in THEMES else None


def theme_files(theme: str) -> list[Path]:
    """The files that make up ``theme``, in the order they apply."""
    return [p for p in style_files() if _theme_of(p) in (None, theme)]


def font_sizes(scale: float) -> dict[str, str]:
    """Point sizes for the ``$name`` placeholders, e.g. ``{"base": "12.0pt", ...}``."""
    return {name: f"{BASE_PT * factor * scale:.1f}pt" for name, factor in SIZES.items()}


def stylesheet(theme: str, scale: float = 1.0) -> str:
    """The combined stylesheet for ``theme`` at font ``scale``."""
    sizes = font_sizes(scale)
    parts = [
        f"/* {path.name} */\n" + Template(path.read_text(encoding="utf-8")).safe_substitute(sizes)
        for path in theme_files(theme if theme in THEMES else "light")
    ]
    return "\n".join(parts)


def apply_theme(target: QApplication | QWidget, theme: str, scale: float = 1.0) -> None:
    """Style ``target``: a window (it and everything it parents: docks, menus, dialogs, tooltips),
    or the whole application.

    # NOTE [a theme per window]
    The window styles itself, never the application. ``QApplication.setStyleSheet``
    repolishes every widget alive, also the closed, not yet deleted widgets of
    earlier windows, and in full test runs it crashed inside that walk (several
    times, at a new window's first theme, after other test files had made and
    closed windows; never with one window). A window's own style sheet repolishes
    its own widgets only, and its dialogs, menus and tooltips follow it.
    """
    text = stylesheet(theme, scale)
    with collection_paused():  # Qt repolishes a snapshot of widgets: NOTE [collect on the GUI thread]
        target.setStyleSheet(text)


# -- colours that follow the palette ------------------------------------------------------
# NOTE [palette colours]
# Every theme's stylesheet sets the colours a view paints itself (``GradBars {
# qproperty-firstColor: ... }``). Without one (a view made alone, a theme file that
# leaves a colour out), a view takes its colour from its palette here, never a fixed
# hex value: a hue at the lightness that reads on the palette's own background.


def is_dark(palette: QPalette) -> bool:
    """Whether the palette's text background is dark (light text on it)."""
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def hue_colour(palette: QPalette, hue: float, saturation: float = 0.75) -> QColor:
    """A line or text colour of ``hue`` (0 red, 1/3 green, 2/3 blue) that reads on ``palette``.

    >>> light, dark = QPalette(QColor("#ffffff")), QPalette(QColor("#1e1f22"))
    >>> light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    >>> dark.setColor(QPalette.ColorRole.Base, QColor("#1e1f22"))
    >>> hue_colour(light, 0.0).lightnessF() < 0.5 < hue_colour(dark, 0.0).lightnessF()
    True
    """
    return QColor.fromHslF(hue, saturation, 0.66 if is_dark(palette) else 0.45)


def tint_colour(palette: QPalette, hue: float, saturation: float = 0.8) -> QColor:
    """A background tint of ``hue`` behind text (a marked line): pale on light, deep on dark."""
    return QColor.fromHslF(hue, saturation, 0.27 if is_dark(palette) else 0.8)


def mixed(a: QColor, b: QColor, share: float) -> QColor:
    """``a`` with ``share`` (0-1) of ``b`` mixed in."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * share,
        a.greenF() + (b.greenF() - a.greenF()) * share,
        a.blueF() + (b.blueF() - a.blueF()) * share,
    )
