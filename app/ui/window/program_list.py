"""The toolbar's list of programs: the built-ins by title, the seed first and each twin right
after its pair (``app.core.builtins``), then the file or edited program on screen."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

from app.core.builtins import builtin_entries

__all__ = ["ProgramList"]

NAME_ROLE = Qt.ItemDataRole.UserRole  # a built-in's name, or a file's path (None: edited text)
TWIN_PREFIX = "    ↳ "  # the second of a pair, indented under the first


class ProgramList(QComboBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setToolTip("Built-in programs (File ▸ Open… for a .toml, .py or .lens file)")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(14)  # long titles are cut in the toolbar, not in the list
        self._names: list[str] = []
        for entry in builtin_entries():
            label = f"{TWIN_PREFIX}{entry.title}" if entry.is_twin else entry.title
            self.addItem(label, entry.name)
            tip = entry.name + (f" (its twin: {entry.twin})" if entry.twin else "")
            self.setItemData(self.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
            self._names.append(entry.name)
        self.view().setTextElideMode(Qt.TextElideMode.ElideNone)

    @property
    def builtin_names(self) -> list[str]:
        """The built-ins in the order listed."""
        return list(self._names)

    def showPopup(self) -> None:
        metrics = self.view().fontMetrics()
        widest = max((metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        self.view().setMinimumWidth(widest + 48)  # every title whole in the open list
        super().showPopup()

    def source_at(self, position: int) -> str | None:
        """What choosing ``position`` opens: a built-in's name or a file's path (None: the edited
        program already on screen)."""
        data = self.itemData(position, NAME_ROLE)
        return data if isinstance(data, str) else None

    def is_builtin_at(self, position: int) -> bool:
        return 0 <= position < len(self._names)

    def show_builtin(self, name: str) -> None:
        self.setCurrentIndex(self.findData(name, NAME_ROLE))

    def show_file(self, label: str, path: str | None) -> None:
        """One entry after the built-ins for the file (or edited program) on screen."""
        while self.count() > len(self._names):
            self.removeItem(len(self._names))
        self.addItem(label, path)
        self.setCurrentIndex(len(self._names))

    def current_name(self) -> str | None:
        """The built-in shown, or None for a file or an edited program."""
        position = self.currentIndex()
        return self.source_at(position) if self.is_builtin_at(position) else None
