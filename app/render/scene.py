"""The drawn graph of one recording: items built once from a layout, restyled per step.

# NOTE [restyle, never rebuild]
``GraphScene`` creates one item per node, saved value and edge when it is
made, at the places Graphviz chose (see ``layout.py``'s NOTE [layout once]).
``show_state`` then restyles only the items whose state may have changed
since the step shown before (``ShownStates.changes``), so a step costs what
changed in it, not the size of the graph. The view and the headless export
share this scene, so both draw a step the same way.
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QRectF
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from app.core.graph import Edge
from app.core.recorder import Recording
from app.core.timeline import SlotKey, StepState

from .items import EdgeItem, Fonts, NodeItem, SlotItem
from .labels import drawn_slots
from .layout import Layout
from .states import ShownStates
from .style import DEFAULT_PALETTE, PALETTES, Palette, edge_style, node_style, slot_style

__all__ = ["MARGIN", "GraphScene"]

MARGIN = 24.0
_Item = TypeVar("_Item", bound=QGraphicsItem)


class GraphScene(QGraphicsScene):
    """Every box and edge of ``recording``'s graph, placed by ``layout``."""

    def __init__(
        self,
        recording: Recording,
        layout: Layout,
        *,
        palette: str = DEFAULT_PALETTE,
        font_scale: float = 1.0,
    ) -> None:
        super().__init__()
        self.recording = recording
        self.layout = layout
        self.shown = ShownStates(recording)
        self._palette = PALETTES[palette]
        self._font_scale = font_scale
        self._state: StepState | None = None
        self._selected: str | None = None
        self.nodes: dict[str, NodeItem] = {}
        self.slots: dict[SlotKey, SlotItem] = {}
        self.edges: dict[Edge, EdgeItem] = {}
        self.slot_edges: dict[SlotKey, EdgeItem] = {}
        self._build()
        self._apply_fonts()
        self.setBackgroundBrush(QBrush(QColor(self._palette.background)))
        if len(recording.timeline):
            self.show_state(recording.timeline.state(0))

    # -- building (once) ---------------------------------------------------
    def _build(self) -> None:
        pal = self._palette
        for edge, path in self.layout.edges.items():
            self.edges[edge] = self._add(EdgeItem(path, edge_style("hidden", pal), "hidden"))
        for key, path in self.layout.slot_edges.items():
            self.slot_edges[key] = self._add(
                EdgeItem(path, edge_style("hidden", pal, slot_edge=True), "hidden")
            )
        for node in self.recording.graph.nodes:
            kind = self.shown.kinds[node.id]
            box = self.layout.nodes[node.id]
            self.nodes[node.id] = self._add(NodeItem(node, box, node_style(kind, "hidden", pal), "hidden"))
            for slot in drawn_slots(node):
                key = (node.id, slot.name)
                item = SlotItem(node.id, slot, self.layout.slots[key], slot_style("hidden", pal), "hidden")
                self.slots[key] = self._add(item)
        m = MARGIN
        self.setSceneRect(QRectF(-m, -m, self.layout.width + 2 * m, self.layout.height + 2 * m))

    def _add(self, item: _Item) -> _Item:
        self.addItem(item)
        return item

    # -- per step ----------------------------------------------------------
    @property
    def state(self) -> StepState | None:
        return self._state

    def show_state(self, state: StepState) -> int:
        """Restyle what changed since the last step shown; returns how many items changed."""
        changes = self.shown.changes(self._state, state)
        self._state = state
        changed = sum(self._restyle_node(state, n) for n in changes.nodes)
        changed += sum(self._restyle_slot(state, k) for k in changes.slots if k in self.slots)
        changed += sum(self._restyle_edge(state, e) for e in changes.edges if e in self.edges)
        return changed

    def _restyle_node(self, state: StepState, node_id: str) -> bool:
        look = self.shown.node_state(state, node_id)
        return self.nodes[node_id].set_look(look, node_style(self.shown.kinds[node_id], look, self._palette))

    def _restyle_slot(self, state: StepState, key: SlotKey) -> bool:
        look = self.shown.slot_state(state, key)
        changed = self.slots[key].set_look(look, slot_style(look, self._palette))
        line = self.slot_edges.get(key)
        if line is not None:
            edge_look = "hidden" if look == "hidden" else "normal"
            line.set_look(edge_look, edge_style(edge_look, self._palette, slot_edge=True))
        return changed

    def _restyle_edge(self, state: StepState, edge: Edge) -> bool:
        look = self.shown.edge_state(state, edge)
        return self.edges[edge].set_look(look, edge_style(look, self._palette))

    def restyle_all(self) -> None:
        state, self._state = self._state, None
        if state is not None:
            self.show_state(state)

    # -- looks -------------------------------------------------------------
    @property
    def palette(self) -> Palette:
        return self._palette

    def set_palette(self, name: str) -> None:
        self._palette = PALETTES[name]
        self.setBackgroundBrush(QBrush(QColor(self._palette.background)))
        self._apply_fonts()
        self.restyle_all()
        if self._selected is not None:
            self.select(self._selected)

    @property
    def font_scale(self) -> float:
        return self._font_scale

    def set_font_scale(self, scale: float) -> None:
        self._font_scale = scale
        self._apply_fonts()
        self.update()

    def _apply_fonts(self) -> None:
        scale = self._font_scale * self._palette.text_scale
        fonts = Fonts.at(scale, bold_body=self._palette.bold_text)
        for node in self.nodes.values():
            node.set_fonts(fonts, fonts.node_px)
        for slot in self.slots.values():
            slot.set_fonts(fonts, fonts.slot_px)

    # -- selection and lookup ------------------------------------------------
    @property
    def selected(self) -> str | None:
        return self._selected

    def select(self, node_id: str | None) -> None:
        if self._selected in self.nodes:
            self.nodes[self._selected].set_selected(False, self._palette.selection)
        self._selected = node_id if node_id in self.nodes else None
        if self._selected is not None:
            self.nodes[self._selected].set_selected(True, self._palette.selection)

    def node_of(self, item: QGraphicsItem | None) -> str | None:
        """The node id an item belongs to (a node box or one of its saved-value boxes)."""
        if isinstance(item, (NodeItem, SlotItem)):
            return item.node_id
        return None

    def find(self, text: str, *, after: str | None = None) -> str | None:
        """The next node whose id, PyTorch name or label contains ``text`` (exact id first)."""
        needle = text.strip().lower()
        if not needle:
            return None
        if needle in self.nodes:
            return needle
        hits = [
            n.id
            for n in self.recording.graph.nodes
            if needle in n.name.lower() or (n.label is not None and needle in n.label.lower())
        ]
        if not hits:
            return None
        if after in hits:
            return hits[(hits.index(after) + 1) % len(hits)]
        return hits[0]
