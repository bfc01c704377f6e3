"""What the pointer names when it rests on a box (Qt-free): the line that made it, and its state now.

The graph view asks these when the learner hovers a node or a saved value, so
the text comes from the recording and the step shown, never from the items
(NOTE [restyle what is seen]: a hidden item's look may be put off).

>>> from app.core import load_builtin, record
>>> rec = record(load_builtin("rnn-no-detach"))
>>> shown = ShownStates(rec)
>>> print(node_tip(shown, rec.timeline.state(0), "n0"))
TanhBackward0 (h = cell(xs[i], h))
made by line 12, iteration 1 of 3
idle: built, not running now
"""

from __future__ import annotations

from app.core.lesson.lines import node_origin, node_tooltip
from app.core.model.graph import SavedSlot
from app.core.model.timeline import SlotKey, StepState
from app.render.labels import SharedValues, drawn_slots, tensor_detail, version_text
from app.render.states import DrawnStates, ShownStates
from app.render.style import LEGEND, NODE_TAGS, SLOT_TAGS

__all__ = ["module_tip", "node_tip", "slot_tip"]

_MEANINGS: dict[tuple[str, str], str] = {(entry.box, entry.state): entry.meaning for entry in LEGEND}
_MEANINGS |= {
    ("node", "idle"): "built, not running now",
    ("slot", "unknown"): "the recording has no state for it",
    ("slot", "hidden"): "its node is built by a later statement or call",
}


def _state_line(box: str, state: str) -> str:
    tag = (SLOT_TAGS if box == "slot" else NODE_TAGS)[state] or state
    return f"{tag}: {_MEANINGS[(box, state)]}"


def node_tip(shown: ShownStates, state: StepState, node_id: str) -> str:
    """The node's name, the line (and loop iteration) that made it, and its state at ``state``."""
    head = node_tooltip(shown.recording, node_id)
    if not head:
        return ""
    return f"{head}\n{_state_line('node', shown.node_state(state, node_id))}"


def slot_tip(shown: ShownStates, state: StepState, key: SlotKey) -> str:
    """A saved value: which slot of which node, its state, and its version (or its value)."""
    graph = shown.recording.graph
    node_id, name = key
    if node_id not in graph:
        return ""
    node = graph.node(node_id)
    slot = next((s for s in drawn_slots(node) if s.name == name), None)
    if slot is None:
        return ""
    lines = [
        _slot_title(slot, node.name),
        node_origin(node),
        _state_line("slot", shown.slot_state(state, key)),
        _slot_detail(slot, state, key),
    ]
    if shown.is_gone(state, node_id):
        lines.append(_state_line("node", "gone"))
    return "\n".join(lines)


def _slot_title(slot: SavedSlot, node_name: str) -> str:
    """``saved tensor self of PowBackward0``, ``saved value exponent of …``, ``6 values saved by …``."""
    if isinstance(slot, SharedValues):
        return f"{slot.name} saved by {node_name}"
    return f"saved {'tensor' if slot.kind == 'tensor' else 'value'} {slot.name} of {node_name}"


def _slot_detail(slot: SavedSlot, state: StepState, key: SlotKey) -> str:
    """``= 2`` for a value (a line per value of a shared box); a tensor's shape and bytes with
    ``saved at v0`` (``, now v1`` once changed)."""
    if isinstance(slot, SharedValues):  # every value, though the box shows a few
        return "\n".join(f"{m.name} = {m.value}" for m in slot.members)
    if slot.kind == "value":
        return f"= {slot.value}"
    detail = tensor_detail(slot)
    saved = slot.saved_version
    if saved is None:
        return detail
    now = state.versions.get(key, saved)
    version = version_text(saved, now) if now != saved else f"saved at v{saved}"
    return f"{detail}, {version}"


def module_tip(drawn: DrawnStates, state: StepState, box: str) -> str:
    """A collapsed module's box (modules.py's NOTE [module groups]): its name, what it holds, the
    state of its nodes and of their saved tensors, and how to open it."""
    node = drawn.folded.graph.node(box)
    lines = [f"module {node.name}: {node.label}", _state_line("node", drawn.node_state(state, box))]
    if node.saved:
        key = (box, node.saved[0].name)
        lines.append(f"saved tensors, the worst: {_state_line('slot', drawn.slot_state(state, key))}")
    lines.append("double-click to expand")
    return "\n".join(lines)
