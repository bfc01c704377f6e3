"""Restyles of the items no view shows, done after the step, a slice at a time.

# NOTE [restyle off screen later]
Where a call begins or ends nearly every item changes look. Fitted, a big graph is an
overview and its hidden items wait (restyle_later.py's NOTE [restyle what is seen]); following the
run, the view is zoomed in and every box is shown, but only a screenful is on screen: the
end of a 20,000-node backward restyled thousands of boxes in one 2.4 s turn. So a step that
restyles more than ``LATER_ABOVE`` items restyles those in a view's rectangle at once and
files the rest here; a timer restyles them a slice at a time once the steps pause (stepping
on, each step's slices went to items no view showed), and a view about to paint restyles
first those of them it is about to draw (``restyle_within``). What tests and panels read is
the current step's look regardless (step_style.py computes it on demand).
"""

from __future__ import annotations

import time
from collections.abc import Collection

from PySide6.QtCore import QRectF, Qt

from app.core.model.graph import Edge
from app.core.model.timeline import SlotKey
from app.render.qt.boxes import NodeItem, ProxyItem, SlotItem
from app.render.qt.edges import EdgeItem
from app.render.qt.fonts import Fonts
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
        # none of the waiting items is drawn within this rectangle (scene units), the last one
        # split or restyled within, while the items keep their places and sizes (spread, fonts).
        # A view paints what the step's split just restyled, or a part of it, at nearly every
        # step; a look at the scene's index for it cost ~1.5 ms a paint.
        self._clear: tuple[QRectF, float, Fonts] | None = None

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
        proxies = self._items.proxy_of
        many = len(nodes) + len(slots) + len(edges) + sum(e in proxies for e in edges)
        if seen is None or many <= LATER_ABOVE:
            return list(nodes), list(slots), list(edges)
        in_nodes, in_slots, in_edges = self._keys_within(seen)
        self._clear = (QRectF(seen), self._items.spread, self._items.fonts)
        self.nodes.update(nodes)
        self.slots.update(slots)
        self.edges.update(edges)
        now = (list(self.nodes & in_nodes), list(self.slots & in_slots), list(self.edges & in_edges))
        self.forget(*now)
        return now

    def forget(self, nodes: Collection[str], slots: Collection[SlotKey], edges: Collection[Edge]) -> None:
        """These are restyled now: none of them waits any more."""
        self.nodes.difference_update(nodes)
        self.slots.difference_update(slots)
        self.edges.difference_update(edges)

    def restyle_within(self, seen: QRectF) -> int:
        """Restyle the waiting items drawn within ``seen`` (a view about to paint it). After a pan
        only the strips it brought into view are looked up: what the view showed before is clear."""
        if not self.waiting or self._all_restyled_within(seen):
            return 0
        clear = self._clear[0] if self._clear is not None and self._still_clear() else None
        in_nodes, in_slots, in_edges = self._keys_within(*uncovered(seen, clear))
        self._clear = (QRectF(seen), self._items.spread, self._items.fonts)
        now = (list(self.nodes & in_nodes), list(self.slots & in_slots), list(self.edges & in_edges))
        self.forget(*now)
        return self._items.restyle(*now)[0]

    def _all_restyled_within(self, seen: QRectF) -> bool:
        return self._clear is not None and self._still_clear() and self._clear[0].contains(seen)

    def _still_clear(self) -> bool:
        """Whether the items kept the places and sizes they had when the clear rectangle was made."""
        clear = self._clear
        return clear is not None and clear[1] == self._items.spread and clear[2] is self._items.fonts

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

    def _keys_within(self, *areas: QRectF) -> tuple[set[str], set[SlotKey], set[Edge]]:
        """What the items drawn within ``areas`` are filed under, found through the scene's index
        (a look at every waiting item's rectangle took ~1 s at a 5,000-node call's end)."""
        nodes: set[str] = set()
        slots: set[SlotKey] = set()
        edges: set[Edge] = set()
        scene, mode = self._items.scene, Qt.ItemSelectionMode.IntersectsItemBoundingRect
        for item in (item for area in areas for item in scene.items(area, mode)):
            if isinstance(item, NodeItem):
                nodes.add(item.node_id)
            elif isinstance(item, ProxyItem):
                edges.add(item.edge)  # restyled with its long edge
            elif isinstance(item, SlotItem):
                slots.add(item.key)
            elif isinstance(item, EdgeItem) and isinstance(item.key, Edge):
                edges.add(item.key)
            elif isinstance(item, EdgeItem) and item.key is not None:
                slots.add(item.key)  # a saved value's dotted line: restyled with its box
        return nodes, slots, edges


def uncovered(seen: QRectF, clear: QRectF | None) -> list[QRectF]:
    """The parts of ``seen`` outside ``clear``: up to four strips (above, below, then left and right
    of it), or ``seen`` whole when the two do not overlap. An item that meets ``seen`` meets
    ``clear`` or one of the strips."""
    if clear is None or not clear.intersects(seen):
        return [QRectF(seen)]
    middle = seen.intersected(clear)
    strips = [
        QRectF(seen.left(), seen.top(), seen.width(), middle.top() - seen.top()),
        QRectF(seen.left(), middle.bottom(), seen.width(), seen.bottom() - middle.bottom()),
        QRectF(seen.left(), middle.top(), middle.left() - seen.left(), middle.height()),
        QRectF(middle.right(), middle.top(), seen.right() - middle.right(), middle.height()),
    ]
    return [s for s in strips if s.width() > 0 and s.height() > 0]
