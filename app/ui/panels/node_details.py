"""One node up close: PyTorch's name, its label, and each saved slot with its state now.

Shows the node clicked in the graph; until one is clicked, it follows the node
of the current step (or the last one that ran before it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.lesson.lines import node_origin
from app.ui.runtime.session import Session
from app.ui.style.breakable import breakable, unbroken
from app.ui.style.steady_label import SteadyLabel

if TYPE_CHECKING:
    from app.core.model.graph import GraphNode, SavedSlot
    from app.core.model.recording import Recording
    from app.core.model.timeline import StepState

__all__ = ["COLUMNS", "NodeDetails"]

# the state first: last, at 1280x720 and text 1.5 it was past the dock's right edge, and second,
# after a column as wide as addmm's "mat1_sym_strides", still half out of it
COLUMNS = ("State", "Slot", "Shape", "Dtype", "Bytes")
SLOT_COLUMN = COLUMNS.index("Slot")
# before a node: a title of one line, as a node's name takes (the title keeps its height while
# stepping: "Click a node in the graph", two lines at text 1.5, left a blank line over the table)
CLICK_TITLE = "Click a node"
CLICK_SUBTITLE = "in the graph: its saved values and their state at this step appear here."
STATE_COLUMN = COLUMNS.index("State")


def _shape(slot: SavedSlot) -> str:
    return "—" if slot.shape is None else f"({', '.join(map(str, slot.shape))})"


def _nbytes(slot: SavedSlot) -> str:
    from app.core.model.text import format_bytes

    return "—" if slot.nbytes is None else format_bytes(slot.nbytes)


def _latest_node(recording: Recording, index: int) -> str | None:
    """The node of step ``index``, or of the latest step before it that ran one."""
    steps = recording.timeline.steps
    for i in range(index, -1, -1):
        if steps[i].node is not None:
            return steps[i].node
    return None


TABLE_MIN_HEIGHT = 60


class _Table(QTableWidget):
    """The slots' table asks for no more than its minimum and takes what the dock leaves: a
    short dock scrolls the panel (labels whole, NOTE [layout fences]), a tall one grows the table.
    (Qt's default hint, 192 px, made every fresh dock tall; an ignored hint left the table out
    of the panel's height for its width, and the labels were cut.)"""

    def minimumSizeHint(self) -> QSize:
        """Its header and first row whole, with the scroll bar under them: a fixed 60 px cut the
        row in half at text 1.5, the bar over it."""
        row = self.rowHeight(0) if self.rowCount() else self.verticalHeader().defaultSectionSize()
        bar = self.horizontalScrollBar().sizeHint().height()
        height = self.horizontalHeader().sizeHint().height() + row + bar + 2 * self.frameWidth()
        return QSize(super().minimumSizeHint().width(), max(TABLE_MIN_HEIGHT, height))

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumSizeHint().height())


class NodeDetails(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._pinned: str | None = None
        self._program_name: str | None = None
        self._table_node: str | None = None  # the node whose rows the table holds
        self._table_least = QSize()  # the table's least size the panel's layout last heard of
        self.node_id: str | None = None
        # NOTE [steady heights]: the node changes at every step of a call
        self.title = SteadyLabel(CLICK_TITLE, name="nodeTitle")
        self.subtitle = SteadyLabel("", name="nodeSubtitle")
        self.table = _Table(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # sized to their contents when the text changes (_fit_columns), not by the header at each
        # change of any cell: the header measured every column again, through a layout of the table
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.table, 1)
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    def set_compact(self, on: bool) -> None:
        """On a small screen (``screen_fit.is_tight``) the table comes right under the node's name,
        before the lines about it: at 1280x720 and text 1.5 the dock shows ~150 px, and the
        wrapped lines about the node took them all, the saved values' states below the fold."""
        layout = self._layout
        layout.removeWidget(self.table)
        layout.insertWidget(layout.indexOf(self.subtitle) + (0 if on else 1), self.table, 1)

    def show_node(self, node_id: str | None) -> None:
        """Pin ``node_id`` (None: follow the current step's node again)."""
        self._pinned = node_id
        self._update_node()

    def shown_name(self) -> str:
        """The node name the title shows (without its wrapping points)."""
        return unbroken(self.title.text())

    def slot_states(self) -> dict[str, str]:
        """Slot name -> the state text shown in the table."""
        rows = range(self.table.rowCount())
        return {self._cell(row, SLOT_COLUMN): self._cell(row, STATE_COLUMN) for row in rows}

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def _on_recording_applied(self, recording: Recording) -> None:
        self._table_node = None  # a new recording: shapes and bytes may differ
        self.title.release()
        self.subtitle.release()
        same = recording.program.name == self._program_name
        self._program_name = recording.program.name
        if self._pinned is not None and (not same or self._pinned not in recording.graph):
            self._pinned = None  # another program: its ids name other nodes

    def _on_step_applied(self, index: int) -> None:
        self._update_node()

    def _update_node(self) -> None:
        state, recording = self._session.state(), self._session.recording
        if state is None or recording is None:
            return
        node_id = self._pinned or _latest_node(recording, state.step.index)
        self.node_id = node_id
        if node_id is None or node_id not in recording.graph:
            self.title.show_text(CLICK_TITLE)
            self.subtitle.show_text(CLICK_SUBTITLE)
            self.table.setRowCount(0)
            self._table_node = None
            return
        node = recording.graph.node(node_id)
        self.title.show_text(breakable(node.name))
        self.subtitle.show_text(breakable(self._subtitle(recording, state, node)))
        self._fill_table(node, state)

    def _subtitle(self, recording: Recording, state: StepState, node: GraphNode) -> str:
        from app.core.model.text import format_values

        text = node.label or ("" if node.line is None else recording.program.line(node.line).strip())
        parts = [text] if text else []  # a node with no text of its own: its line's
        if node.line is not None:
            parts.append(node_origin(node, recording.program))
        parts.append(
            "forward graph" if node.added_at_call is None else f"added by call {node.added_at_call + 1}"
        )
        if node.id in state.gone:
            parts.append("nothing in the program reaches it any more")
        calls = recording.needed_by.get(node.id, ())
        if calls:
            parts.append("reached by call " + ", ".join(str(c + 1) for c in calls))
        leaf = next((name for name, nid in recording.leaves.items() if nid == node.id), None)
        if leaf is not None:
            parts.append(f"{leaf}.grad = {format_values(state.grads.get(leaf))}")
        if not node.saved:
            parts.append("saves nothing")
        return " · ".join(parts)

    def _fill_table(self, node: GraphNode, state: StepState) -> None:
        rows = _rows(node)
        if self._table_node == node.id:  # same node, next step: only the states can change
            changed = [
                self._set_cell(row, STATE_COLUMN, _state_text(node, slot, state))
                for row, slot in enumerate(rows)
            ]
            if any(changed):
                self.table.resizeColumnToContents(STATE_COLUMN)
            return
        self._table_node = node.id
        new_texts = self.table.rowCount() != len(rows)
        if new_texts:
            self.table.setRowCount(len(rows))
        least = self.table.minimumSizeHint()
        if least != self._table_least:  # its least height holds a row of this node's
            self._table_least = least
            self.table.updateGeometry()
        for row, slot in enumerate(rows):
            tensor = slot.kind == "tensor"
            cells = {
                "State": _state_text(node, slot, state),
                "Slot": slot.name,
                "Shape": _shape(slot) if tensor else "—",
                "Dtype": (slot.dtype or "—") if tensor else "—",
                "Bytes": _nbytes(slot) if tensor else "—",
            }
            for column, name in enumerate(COLUMNS):
                new_texts = self._set_cell(row, column, cells[name]) or new_texts
        if new_texts:  # the same texts as the node before (the next iteration's): the same widths
            self.table.resizeColumnsToContents()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.table.resizeColumnsToContents()  # another text size: other widths

    def _set_cell(self, row: int, column: int, text: str) -> bool:
        """Show ``text`` in the cell; whether it changed."""
        item = self.table.item(row, column)  # reused: rewriting text is cheaper than new items
        if item is None:
            self.table.setItem(row, column, QTableWidgetItem(text))
            return True
        if item.text() == text:  # setText repaints and re-measures the table even when equal
            return False
        item.setText(text)
        return True


def _rows(node: GraphNode) -> list[SavedSlot]:
    """The node's slots, its saved tensors first: they are what is freed or modified (``addmm``
    saves ``alpha`` and ``beta`` too, and a short panel shows only its first row or two)."""
    return sorted(node.saved, key=lambda slot: slot.kind != "tensor")


def _state_text(node: GraphNode, slot: SavedSlot, state: StepState) -> str:
    if slot.kind == "tensor":
        key = (node.id, slot.name)
        text = state.slots.get(key, "—")
        now = state.versions.get(key)
        if text == "modified" and slot.saved_version is not None and now is not None:
            return f"modified (saved at v{slot.saved_version}, now v{now})"
        return text
    return f"value {slot.value}" if slot.kind == "value" else "None"
