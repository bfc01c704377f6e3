"""Restyles put off while a kind of item is hidden, and what they add up to once it is shown (Qt-free).

# NOTE [restyle what is seen]
Where a call begins or ends nearly every item changes: restyling them all took 335 ms
at 5,000 nodes, though fitted to the window they are all hidden (the overview draws
dots; saved-value boxes show only when zoomed in). So a hidden kind of item is not
restyled: :class:`PutOff` keeps the step it was last restyled for, and what changed since is
looked up and restyled when the items are shown (the scene's ``set_overview``,
``set_details``). An item read meanwhile computes its look from the step shown (``step_style.py``),
so what tests and panels read is always the current step's. Keeping the changed keys of every
step instead still cost ~100 ms at the end of a backward through a 20,000-node model (every
node, saved value and edge of the call, mapped to the 2,367 module boxes drawn): while the
overview shows, a step asks only which drawn nodes changed, and a collapsed module's box sums
its nodes up with set operations over its members (``ShownStates.summary_state``), not a call
per node.
"""

from __future__ import annotations

from typing import Literal

from app.core.model.graph import Edge
from app.core.model.timeline import SlotKey, StepState
from app.render.states import Changes, DrawnStates

__all__ = ["Kind", "PutOff"]

Kind = Literal["boxes", "slots"]  # boxes: nodes, proxies, edges; slots: saved values and their lines


class PutOff:
    """The kinds of item hidden at some step, and the keys of the items whose restyle waits."""

    def __init__(self, drawn: DrawnStates) -> None:
        self.drawn = drawn
        # a hidden kind -> the state its items were last restyled for (None: never); what changed
        # since is looked up only when they are shown or asked about
        self._since: dict[Kind, StepState | None] = {}
        self.nodes: set[str] = set()
        self.slots: set[SlotKey] = set()
        self.edges: set[Edge] = set()

    def hidden(self, kind: Kind) -> bool:
        """Whether the items of ``kind`` are not being restyled."""
        return kind in self._since

    def step(self, before: StepState | None, *, boxes_hidden: bool, slots_hidden: bool) -> None:
        """A step moves on from ``before``: a kind hidden now starts waiting, from ``before`` (None,
        a new palette: every item of the kind waits)."""
        hidden: tuple[tuple[Kind, bool], ...] = (("boxes", boxes_hidden), ("slots", slots_hidden))
        for kind, now in hidden:
            if now and (before is None or kind not in self._since):
                self._since[kind] = before

    def catch_up(self, state: StepState | None) -> None:
        """Turn the steps shown while a kind was hidden into the keys of its waiting items."""
        pending = {kind: since for kind, since in self._since.items() if since is not state}
        if not pending:
            return
        if state is None:
            self._since.clear()
            return
        made: dict[int, Changes] = {}  # both kinds hidden since the same step: one lookup
        for kind, since in pending.items():
            changes = made.get(id(since))
            if changes is None:
                changes = made[id(since)] = self.drawn.changes(since, state)
            if kind == "boxes":
                self.nodes.update(changes.nodes)
                self.edges.update(changes.edges)
            else:
                self.slots.update(changes.slots)
            self._since[kind] = state

    def take(self, state: StepState | None) -> tuple[set[str], set[SlotKey], set[Edge]]:
        """Every waiting key, nodes, saved values and edges, forgotten here (they are restyled
        now; a kind still hidden starts waiting again at the next step)."""
        self.catch_up(state)
        self._since.clear()
        taken = self.nodes, self.slots, self.edges
        self.nodes, self.slots, self.edges = set(), set(), set()
        return taken
