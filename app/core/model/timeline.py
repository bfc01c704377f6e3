"""The recorded steps of a run, stored as changes and replayed on demand.

# NOTE [compact timeline]
A step stores only what changed since the step before it: slot states and
leaf gradients. :meth:`Timeline.state` rebuilds the full state of any step by
replaying from the nearest checkpoint (one every ``CHECKPOINT_EVERY`` steps,
built lazily, at most ``CHECKPOINTS_KEPT`` kept), so memory grows with the
changes, not with steps x graph size, and stepping back never touches torch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import torch

__all__ = [
    "CHECKPOINTS_KEPT",
    "CHECKPOINT_EVERY",
    "SlotKey",
    "SlotState",
    "Step",
    "StepKind",
    "StepState",
    "Timeline",
]

SlotState = Literal["alive", "retained", "freed", "modified"]
SlotKey = tuple[str, str]  # (node id, slot name)
StepKind = Literal["forward", "node", "call_end", "error"]
CHECKPOINT_EVERY = 32
CHECKPOINTS_KEPT = 16

_EMPTY: Mapping[object, object] = MappingProxyType({})


@dataclass(frozen=True)
class Step:
    """One moment of the run. Gradients are detached CPU copies, never live tensors."""

    index: int
    kind: StepKind
    call: int | None
    node: str | None
    slot_changes: Mapping[SlotKey, SlotState]
    grad_changes: Mapping[str, torch.Tensor | None]
    saved_bytes: int
    device_bytes: int | None = None
    error: str | None = None
    caption: str = ""
    contribution: Mapping[str, torch.Tensor | None] | None = None  # call_end: this call's share
    result: Mapping[str, torch.Tensor] | None = None  # call_end of a grad call: what it returned
    added_nodes: tuple[str, ...] = ()  # nodes that joined the graph at this step


@dataclass(frozen=True)
class StepState:
    """Everything true at one step: the step itself plus the replayed full state."""

    step: Step
    slots: Mapping[SlotKey, SlotState]
    grads: Mapping[str, torch.Tensor | None]
    visible_nodes: frozenset[str]


@dataclass(frozen=True)
class _Full:
    slots: dict[SlotKey, SlotState]
    grads: dict[str, torch.Tensor | None]
    visible: frozenset[str]


@dataclass
class Timeline:
    steps: tuple[Step, ...]
    # NOTE [checkpoint cache]: at most CHECKPOINTS_KEPT full states, least recently used
    # dropped. Keeping one per CHECKPOINT_EVERY steps forever grew with steps x graph size
    # (175 MB at 5,000 nodes once a learner had stepped through); stepping is local, and a far
    # jump replays from the nearest kept checkpoint (a few changes per step).
    _checkpoints: OrderedDict[int, _Full] = field(default_factory=OrderedDict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    def state(self, index: int) -> StepState:
        """The full state at step ``index`` (replayed, O(CHECKPOINT_EVERY))."""
        if not 0 <= index < len(self.steps):
            raise IndexError(f"step {index} is outside 0..{len(self.steps) - 1}")
        base = (index // CHECKPOINT_EVERY) * CHECKPOINT_EVERY
        full = self._checkpoint(base)
        slots, grads, visible = dict(full.slots), dict(full.grads), set(full.visible)
        for step in self.steps[base + 1 : index + 1]:
            _apply(step, slots, grads, visible)
        return StepState(
            self.steps[index], MappingProxyType(slots), MappingProxyType(grads), frozenset(visible)
        )

    def _checkpoint(self, base: int) -> _Full:
        with self._lock:  # the window's worker and GUI thread may both replay
            full = self._checkpoints.get(base)
            if full is None:
                full = self._replay_to(base)
                self._checkpoints[base] = full
                while len(self._checkpoints) > CHECKPOINTS_KEPT:
                    self._checkpoints.popitem(last=False)
            self._checkpoints.move_to_end(base)
            return full

    def _replay_to(self, base: int) -> _Full:
        start = max((b for b in self._checkpoints if b < base), default=None)
        slots: dict[SlotKey, SlotState] = {}
        grads: dict[str, torch.Tensor | None] = {}
        visible: set[str] = set()
        if start is None:
            start = -1
        else:
            prev = self._checkpoints[start]
            slots, grads, visible = dict(prev.slots), dict(prev.grads), set(prev.visible)
        for step in self.steps[start + 1 : base + 1]:
            _apply(step, slots, grads, visible)
        return _Full(slots, grads, frozenset(visible))

    def changed_between(self, a: int, b: int) -> tuple[set[SlotKey], set[str]]:
        """Slots and nodes whose state may differ between steps ``a`` and ``b``."""
        lo, hi = sorted((a, b))
        slots: set[SlotKey] = set()
        nodes: set[str] = set()
        for step in self.steps[lo + 1 : hi + 1]:
            slots.update(step.slot_changes)
            nodes.update(step.added_nodes)
        return slots, nodes

    def call_bounds(self, call: int) -> tuple[int, int]:
        """First and last step index of a call."""
        indices = [s.index for s in self.steps if s.call == call]
        if not indices:
            raise IndexError(f"call {call} was not recorded")
        return indices[0], indices[-1]


def _apply(
    step: Step,
    slots: dict[SlotKey, SlotState],
    grads: dict[str, torch.Tensor | None],
    visible: set[str],
) -> None:
    slots.update(step.slot_changes)
    grads.update(step.grad_changes)
    visible.update(step.added_nodes)
