"""The text inside each box, shared by the DOT source (sizing) and the drawing (Qt-free).

>>> from app.core.model.graph import GraphNode, SavedSlot
>>> node_lines(GraphNode("n0", "PowBackward0", "y = x.square()"))
('PowBackward0', 'y = x.square()')
>>> slot_lines(SavedSlot("self", "tensor", (2,), "float32", "cpu", 8), "● alive")
('self ● alive', '(2,) float32 · 8 B')
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from app.core.model.graph import Graph, GraphNode, SavedSlot
from app.core.model.text import format_bytes
from app.core.model.timeline import SlotKey
from app.render.style import NodeKind

__all__ = [
    "FONT_FAMILY",
    "NODE_FONT_PX",
    "SLOT_FONT_PX",
    "SharedValues",
    "clip",
    "drawn_slot_table",
    "drawn_slots",
    "node_kinds",
    "node_lines",
    "proxy_lines",
    "slot_key",
    "slot_lines",
    "tensor_detail",
    "value_lines",
    "version_room",
    "version_text",
]

FONT_FAMILY = "DejaVu Sans"
NODE_FONT_PX = 14.0
SLOT_FONT_PX = 11.0
MAX_CHARS = 40  # program text is user text: keep boxes a sane width
SHOWN_VALUES = 3  # lines of a node's shared values box; the rest are counted (the tooltip lists all)


def clip(text: str, limit: int = MAX_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def node_lines(node: GraphNode) -> tuple[str, ...]:
    """Name first (a leaf is named by its variable), then what made it."""
    if node.is_leaf:
        return (clip(node.label or "leaf"), node.name)
    return (node.name, clip(node.label)) if node.label else (node.name,)


def proxy_lines(node: GraphNode) -> tuple[str, ...]:
    """Text of a proxy box standing in for ``node`` at the end of a long edge."""
    return (node_lines(node)[0], "↗ drawn elsewhere")


@dataclass(frozen=True)
class SharedValues(SavedSlot):
    """A node's saved non-tensor values drawn as one box, one line each.

    ``AddmmBackward0`` alone saves ``alpha``, ``beta`` and four ``*_sym_sizes`` /
    ``*_sym_strides``: a box each made every node's row so wide that a fitted
    ``nn.Linear`` program was tiny. They are shown, as torchviz shows saved
    values, but side by side in one narrow box.
    """

    members: tuple[SavedSlot, ...] = ()


def drawn_slots(node: GraphNode) -> tuple[SavedSlot, ...]:
    """Slots that get a box: each tensor, and the non-tensor values (``None`` slots are skipped,
    as torchviz). Two or more values share one box (:class:`SharedValues`), where the first was."""
    values = tuple(s for s in node.saved if s.kind == "value")
    shared = SharedValues(f"{len(values)} values", "value", members=values) if len(values) > 1 else None
    out: list[SavedSlot] = []
    for slot in node.saved:
        if slot.kind == "tensor" or (slot.kind == "value" and shared is None):
            out.append(slot)
        elif slot.kind == "value" and slot is values[0] and shared is not None:
            out.append(shared)
    return tuple(out)


# NOTE [drawn slot table]
# Opening a recording asks for every node's drawn slots twice off the GUI thread: the stored
# layout's reader keys its slot boxes by them, and ShownStates its slot states (6 to 12 ms each
# for the 5,000-node chain). :func:`drawn_slot_table` works them out once per graph and keeps the
# table while the graph lives. A graph is a frozen dataclass whose hash reads every node, so the
# table is found by the graph's identity, checked through a weak reference (an id is reused once
# its object is gone; the reference's callback drops the entry then).
_TABLES: dict[int, tuple[weakref.ref[Graph], Mapping[str, tuple[SavedSlot, ...]]]] = {}


def drawn_slot_table(graph: Graph) -> Mapping[str, tuple[SavedSlot, ...]]:
    """:func:`drawn_slots` of each node of ``graph``, by node id, in the graph's order; made once
    per graph (NOTE [drawn slot table])."""
    key = id(graph)
    entry = _TABLES.get(key)
    if entry is not None and entry[0]() is graph:
        return entry[1]
    table = MappingProxyType({n.id: drawn_slots(n) for n in graph.nodes})
    _TABLES[key] = (weakref.ref(graph, lambda ref: _forget(key, ref)), table)
    return table


def _forget(key: int, ref: weakref.ref[Graph]) -> None:
    entry = _TABLES.get(key)
    if entry is not None and entry[0] is ref:  # not a newer graph's entry under a reused id
        del _TABLES[key]


def value_lines(slot: SavedSlot) -> tuple[str, ...]:
    """``('= 2',)`` for one value; ``('alpha = 1', 'beta = 1', …)`` for a node's shared values."""
    if not isinstance(slot, SharedValues):
        return (clip(f"= {slot.value}", 30),)
    members = slot.members
    shown = [clip(f"{m.name} = {m.value}", 30) for m in members[:SHOWN_VALUES]]
    if len(members) > SHOWN_VALUES + 1:  # a line saying "+2 more" costs what one more value would
        return (*shown, f"+{len(members) - SHOWN_VALUES} more")
    return (*shown, *(clip(f"{m.name} = {m.value}", 30) for m in members[SHOWN_VALUES:]))


def slot_key(node: GraphNode, slot: SavedSlot) -> SlotKey:
    return (node.id, slot.name)


def tensor_detail(slot: SavedSlot) -> str:
    """``(2,) float32 · 8 B``: what a saved tensor holds (``scalar`` for shape ``()``)."""
    parts = []
    if slot.shape is not None:
        parts.append(str(slot.shape) if slot.shape else "scalar")
    if slot.dtype:
        parts.append(slot.dtype)
    text = " ".join(parts)
    if slot.nbytes is not None:
        text = f"{text} · {format_bytes(slot.nbytes)}" if text else format_bytes(slot.nbytes)
    return text or "tensor"


def version_text(saved: int, now: int) -> str:
    """A saved tensor changed in place since it was saved: ``saved at v0, now v1``."""
    return f"saved at v{saved}, now v{now}"


def version_room(slot: SavedSlot) -> str:
    """The widest version text a tensor slot is sized for (a box is sized once, for every step)."""
    saved = slot.saved_version or 0
    return version_text(saved, saved + 100)


def slot_lines(slot: SavedSlot, tag: str, note: str = "") -> tuple[str, ...]:
    """``('self ● alive', '(2,) float32 · 8 B')`` or ``('exponent ▪ value', '= 2')``.

    ``note``: a version change (``saved at v0, now v1``) shown in place of the shape line:
    at that step the version is what the learner needs to read.
    """
    head = clip(f"{slot.name} {tag}".strip())
    if slot.kind == "value":
        return (head, *value_lines(slot))
    return (head, note or tensor_detail(slot))


def node_kinds(graph: Graph) -> dict[str, NodeKind]:
    """``leaf`` for AccumulateGrad, ``root`` for a node nothing points to (a loss), else ``op``."""
    has_parent = {e.dst for e in graph.edges}
    return {n.id: "leaf" if n.is_leaf else ("op" if n.id in has_parent else "root") for n in graph.nodes}
