"""What the window remembers between runs: theme, font scale, following the running node, last
program, geometry, docks.

A thin typed layer over :class:`QSettings`, so the keys and defaults live in one
place. Tests pass ``path`` (an INI file of their own) and never touch the
user's settings.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QSize

__all__ = ["DEFAULT_PROGRAM", "FONT_SCALE_RANGE", "THEMES", "AppSettings"]

ORGANIZATION = "AutogradLens"
APPLICATION = "Autograd Lens"
THEMES = ("light", "dark", "projector")
DEFAULT_PROGRAM = "two-losses"
FONT_SCALE_RANGE = (0.6, 3.0)


class AppSettings(QSettings):
    """The program's settings; ``AppSettings(path)`` uses an INI file at ``path``."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            super().__init__(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
        else:
            super().__init__(str(path), QSettings.Format.IniFormat)

    # -- theme and font scale ----------------------------------------------
    @property
    def theme(self) -> str:
        value = str(self.value("view/theme", "light"))
        return value if value in THEMES else "light"

    @theme.setter
    def theme(self, name: str) -> None:
        self.setValue("view/theme", name if name in THEMES else "light")

    @property
    def font_scale(self) -> float:
        try:
            value = float(self.value("view/font_scale", 1.0))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return 1.0
        return clamp_font_scale(value)

    @font_scale.setter
    def font_scale(self, value: float) -> None:
        self.setValue("view/font_scale", clamp_font_scale(value))

    @property
    def follow_nodes(self) -> bool:
        """Whether backward and forward steps too show their node readable (NOTE [auto fit]); on
        unless turned off."""
        return str(self.value("view/follow_nodes", "true")).lower() in ("true", "1")

    @follow_nodes.setter
    def follow_nodes(self, on: bool) -> None:
        self.setValue("view/follow_nodes", "true" if on else "false")

    # -- program --------------------------------------------------------------
    # The last program is kept under its old key "scenario/last": settings files already
    # written by earlier versions still open the program they last showed.
    @property
    def last_program(self) -> str:
        return str(self.value("scenario/last", DEFAULT_PROGRAM) or DEFAULT_PROGRAM)

    @last_program.setter
    def last_program(self, name_or_path: str) -> None:
        self.setValue("scenario/last", name_or_path)

    # -- window ----------------------------------------------------------------
    @property
    def geometry(self) -> QByteArray | None:
        value = self.value("window/geometry")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @geometry.setter
    def geometry(self, value: QByteArray) -> None:
        self.setValue("window/geometry", value)

    @property
    def dock_state(self) -> QByteArray | None:
        """Which panels are shown and where (``QMainWindow.saveState``)."""
        value = self.value("window/docks")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @dock_state.setter
    def dock_state(self, value: QByteArray) -> None:
        self.setValue("window/docks", value)

    @property
    def dock_room(self) -> QSize | None:
        """The window size the panels were saved at: a smaller window re-fits them."""
        value = self.value("window/dock_room")
        return value if isinstance(value, QSize) and value.isValid() else None

    @dock_room.setter
    def dock_room(self, value: QSize) -> None:
        self.setValue("window/dock_room", value)

    @property
    def closed_panels(self) -> list[str]:
        """The panels closed when the window closed (kept when its layout is not)."""
        value = self.value("window/closed_panels", [])
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        return [str(item) for item in items if item]

    @closed_panels.setter
    def closed_panels(self, keys: list[str]) -> None:
        self.setValue("window/closed_panels", list(keys))


def clamp_font_scale(value: float) -> float:
    low, high = FONT_SCALE_RANGE
    return round(min(max(value, low), high), 2)
