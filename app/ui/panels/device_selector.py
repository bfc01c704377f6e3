"""Choose where the program runs: CPU, each CUDA device torch reports, MPS where torch has it.

Devices torch cannot use are listed but disabled, with the reason as their
tooltip. A choice records the program again on that device; if that fails
(say CUDA runs out of memory), the box goes back to the device on screen.
A recording opened from a file may come from a device this machine does not
list (a teacher's GPU): the box then shows that device, disabled, as where
the recording on screen was made, until a choice records it again here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget

from app.ui.runtime.session import Session

if TYPE_CHECKING:
    from app.child.client import Device

__all__ = ["DeviceSelector"]

NAME_ROLE = Qt.ItemDataRole.UserRole
ELSEWHERE_ROLE = Qt.ItemDataRole.UserRole + 1  # a device the recording came from, not listed here


def _devices() -> Sequence[Device] | None:
    """The devices the recording child's torch reports (it owns them); None until a child has started.

    Asked of the child, so that the window's own process never imports torch to list them.
    """
    from app.child.client import POOL

    return POOL.devices


class DeviceSelector(QComboBox):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._model = QStandardItemModel(self)
        self.setModel(self._model)
        self._model.appendRow(self._item_for("cpu", "CPU", True, ""))
        self.setToolTip("The device the program runs on; a change records it again there")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # As wide as the device shown, not the longest entry. Qt's own policies measured every
        # entry ("CUDA — unavailable") once the text size changed, and after 1.5 and back to 1.0 the
        # toolbar stayed stretched, its last field pushed into the overflow menu.
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(0)
        self.currentIndexChanged.connect(lambda index: self.updateGeometry())
        self._listed = False
        self.activated.connect(self._on_activated)
        session.recording_applied.connect(self._on_recording_applied)
        session.failed.connect(self._on_failed)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()  # the frame and the arrow
        return QSize(hint.width() + self.fontMetrics().horizontalAdvance(self.currentText()), hint.height())

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    @staticmethod
    def _item_for(name: str, description: str, available: bool, reason: str) -> QStandardItem:
        item = QStandardItem(description if available else f"{description} — unavailable")
        item.setData(name, NAME_ROLE)
        if not available:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsSelectable)
            item.setData(reason, Qt.ItemDataRole.ToolTipRole)
        return item

    def refresh(self) -> None:
        """List the devices torch reports now."""
        devices = _devices()
        if devices is None:  # a .lens file opened, nothing recorded yet: CPU only, for now
            return
        self._model.clear()
        for info in devices:
            self._model.appendRow(self._item_for(info.name, info.description, info.available, info.reason))
        self._listed = True
        self._select(self._session.device)

    def device_names(self) -> list[str]:
        return [self._model.item(row).data(NAME_ROLE) for row in range(self._model.rowCount())]

    def item_for(self, name: str) -> QStandardItem | None:
        for row in range(self._model.rowCount()):
            if self._model.item(row).data(NAME_ROLE) == name:
                return self._model.item(row)
        return None

    def current_device(self) -> str:
        return str(self.currentData(NAME_ROLE))

    def choose(self, name: str) -> None:
        """Pick ``name`` as a user would (ignored when disabled or unknown)."""
        item = self.item_for(name)
        if item is None or not item.isEnabled():
            return
        self.setCurrentIndex(item.row())
        self._on_activated(item.row())

    def _select(self, name: str) -> None:
        self._forget_elsewhere()
        item = self.item_for(name)
        if item is None and name:
            item = self._elsewhere(name)
            self._model.appendRow(item)
        if item is not None:
            self.setCurrentIndex(item.row())

    @staticmethod
    def _elsewhere(name: str) -> QStandardItem:
        """The device a recording on screen was made on, which this machine does not list."""
        item = QStandardItem(name)  # the tooltip and the status bar say more
        item.setData(name, NAME_ROLE)
        item.setData(True, ELSEWHERE_ROLE)
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsSelectable)
        item.setData(
            f"The recording on screen was made on {name}, which this machine's PyTorch does not list;"
            " choose a device to record the program again here.",
            Qt.ItemDataRole.ToolTipRole,
        )
        return item

    def _forget_elsewhere(self) -> None:
        for row in reversed(range(self._model.rowCount())):
            if self._model.item(row).data(ELSEWHERE_ROLE):
                self._model.removeRow(row)

    def _on_activated(self, row: int) -> None:
        name = self._model.item(row).data(NAME_ROLE)
        if name != self._session.device:
            self._session.set_device(name)

    def _on_recording_applied(self, recording: object) -> None:
        if not self._listed:
            self.refresh()
        self._select(self._session.device)

    def _on_failed(self, message: str) -> None:
        self._select(self._session.device)
