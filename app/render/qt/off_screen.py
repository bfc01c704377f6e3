"""Restyles of the items no view shows, done after the step, a slice at a time.

# NOTE [restyle off screen later]
Where a call begins or ends nearly every item changes look. Fitted, a big graph is an
overview and its hidden items wait (put_off.py's NOTE [restyle what is seen]); following the
run, the view is zoomed in and every box is shown, but only a screenful is on screen: the
end of a 20,000-node backward restyled thousands of boxes in one 2.4 s turn. So a step that
restyles more than ``LATER_ABOVE`` items restyles those in a view's rectangle at once and
files the rest here; a timer restyles them a slice at a time, and a view about to paint
restyles first those of them it is about to draw (``restyle_within``). What tests and panels
read is the current step's look regardless (looks.py computes it on demand).
"""

from __future__ import annotations

import time
from collections.abc import Collection

from PySide6.QtCore import QRectF

from app.core.model.graph import Edge
from app.core.model.timeline import SlotKey
from app.render.qt.scene_items import SceneItems

__all__ = ["LATER_ABOVE", "OffScreen"]

LATER_ABOVE = 300  # a step restyling more items than this leaves those off screen for later
SLICE_ITEMS = 64  # items restyled between two looks at the clock


class OffScreen:
    """The nodes, saved values and edges whose restyle waits until they are drawn or time allows."""

    def __init__(self, items: SceneItems) -> None:
        self._items = items
        self.nodes: set[str] = set()
        self.slots: set[SlotKey] = set()
        self.edges: set[Edge] = set()

    @property
    def waiting(self) -> int:
        return len(self.nodes) + len(self.slots) + len(self.edges)

    def split(
        self,
        nodes: Collection[str],
        slots: Collection[SlotKey],
        edges: Collection[Edge],
        seen: QRectF | None,
    ) -> tuple[list[str], list[SlotKey], list[Edge]]:
        """Of a step's restyles, those to do now: every one when they are few or no view is
        given, else those drawn within ``seen`` (scene units); the rest are filed for later."""
        if seen is None or len(nodes) + len(slots) + len(edges) <= LATER_ABOVE:
            return list(nodes), list(slots), list(edges)
        now_nodes = [n for n in nodes if self._node_within(n, seen)]
        now_slots = [k for k in slots if self._slot_within(k, seen)]
        now_edges = [e for e in edges if self._edge_within(e, seen)]
        self.nodes.update(nodes)
        self.nodes.difference_update(now_nodes)
        self.slots.update(slots)
        self.slots.difference_update(now_slots)
        self.edges.update(edges)
        self.edges.difference_update(now_edges)
        return now_nodes, now_slots, now_edges

    def forget(self, nodes: Collection[str], slots: Collection[SlotKey], edges: Collection[Edge]) -> None:
        """These are restyled now: none of them waits any more."""
        self.nodes.difference_update(nodes)
        self.slots.difference_update(slots)
        self.edges.difference_update(edges)

    def restyle_within(self, seen: QRectF) -> int:
        """Restyle the waiting items drawn within ``seen`` (a view about to paint it)."""
        if not self.waiting:
            return 0
        nodes = [n for n in self.nodes if self._node_within(n, seen)]
        slots = [k for k in self.slots if self._slot_within(k, seen)]
        edges = [e for e in self.edges if self._edge_within(e, seen)]
        self.forget(nodes, slots, edges)
        return self._items.restyle(nodes, slots, edges)[0]

    def restyle_some(self, seconds: float) -> int:
        """Restyle waiting items for about ``seconds``; how many were restyled."""
        deadline, done = time.perf_counter() + seconds, 0
        while self.waiting and time.perf_counter() < deadline:
            nodes = [self.nodes.pop() for _ in range(min(SLICE_ITEMS, len(self.nodes)))]
            slots = [self.slots.pop() for _ in range(min(SLICE_ITEMS, len(self.slots)))]
            edges = [self.edges.pop() for _ in range(min(SLICE_ITEMS, len(self.edges)))]
            done += self._items.restyle(nodes, slots, edges)[0]
        return done

    def restyle_all(self) -> int:
        """Restyle every waiting item (before a picture of the whole graph)."""
        done = self._items.restyle(self.nodes, self.slots, self.edges)[0]
        self.nodes, self.slots, self.edges = set(), set(), set()
        return done

    # -- where an item is drawn ----------------------------------------------------------
    def _node_within(self, node_id: str, seen: QRectF) -> bool:
        items = self._items
        node = items.nodes.get(node_id)
        if node is None:
            return True  # not built: its restyle costs nothing
        if node.sceneBoundingRect().intersects(seen):
            return True
        return any(proxy.sceneBoundingRect().intersects(seen) for proxy in items.proxies.get(node_id, ()))

    def _slot_within(self, key: SlotKey, seen: QRectF) -> bool:
        items = self._items
        slot = items.slots.get(key)
        if slot is None:
            return True
        line = items.slot_edges.get(key)
        return slot.sceneBoundingRect().intersects(seen) or (
            line is not None and line.sceneBoundingRect().intersects(seen)
        )

    def _edge_within(self, edge: Edge, seen: QRectF) -> bool:
        line = self._items.edges.get(edge)
        return line is None or line.sceneBoundingRect().intersects(seen)
