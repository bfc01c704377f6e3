"""The recorded steps of a run, stored as changes and replayed on demand.

# NOTE [compact timeline]
A step stores only what changed since the step before it: slot states, slot
versions, leaf gradients, nodes added and nodes gone. :meth:`Timeline.state`
rebuilds the full state of any step by replaying from the nearest checkpoint
(one every ``CHECKPOINT_EVERY`` steps, built lazily, at most ``CHECKPOINTS_KEPT``
kept), so memory grows with the
changes, not with steps x graph size, and stepping back never touches torch.

# NOTE [steps on demand]
``Timeline.steps`` is any sequence of steps: a tuple once recorded, or a file's steps made
(decoded and checked) as they are first asked for (``lensfile.steps``), so a big ``.lens``
file opens without making its 13,000 steps first. What the series over every step read (a
step's call, loops and byte counts: :class:`StepHead`) comes from ``heads`` when given,
read up front with the file, so the timeline bar and the memory chart make no step.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeVar

from app.core.model.graph import LoopMark
from app.core.model.values import Values

_T = TypeVar("_T")

__all__ = [
    "CHECKPOINTS_KEPT",
    "CHECKPOINT_EVERY",
    "SlotKey",
    "SlotState",
    "Step",
    "StepHead",
    "StepKind",
    "StepState",
    "Timeline",
]

SlotState = Literal["alive", "retained", "freed", "modified"]
SlotKey = tuple[str, str]  # (node id, slot name)
StepKind = Literal["forward", "node", "recompute", "call_end", "error"]
CHECKPOINT_EVERY = 32
CHECKPOINTS_KEPT = 16

_EMPTY: Mapping[object, object] = MappingProxyType({})
_NO_VERSIONS: Mapping[SlotKey, int] = MappingProxyType({})


@dataclass(frozen=True)
class Step:
    """One moment of the run. Gradients are plain :class:`Values`, never live tensors.

    ``forward`` steps follow a program statement that changed something (nodes
    added or gone, a slot modified, a gradient written, text printed); ``node``
    steps follow one node of an autograd call; a ``recompute`` step, inside a call, follows a
    checkpointed block run again (its forward nodes, made again, are its ``added_nodes``);
    ``call_end`` closes a call; an
    ``error`` step ends the program (``call`` is None when the exception was
    not raised by an autograd call).

    >>> from app.core import load_builtin, record
    >>> step = record(load_builtin("two-losses")).timeline[2]
    >>> step.kind, step.call, step.node, dict(step.slot_changes)
    ('node', 0, 'n0', {('n0', 'self'): 'retained'})
    """

    index: int
    kind: StepKind
    call: int | None
    node: str | None
    slot_changes: Mapping[SlotKey, SlotState]
    grad_changes: Mapping[str, Values | None]
    saved_bytes: int
    device_bytes: int | None = None
    error: str | None = None
    caption: str = ""
    contribution: Mapping[str, Values | None] | None = None  # call_end: this call's share
    result: Mapping[str, Values] | None = None  # call_end of a grad call: what it returned
    added_nodes: tuple[str, ...] = ()  # nodes that joined the graph at this step
    line: int | None = None  # the program line that ran
    loops: tuple[LoopMark, ...] = ()  # enclosing loops and their iteration, outermost first
    printed: tuple[str, ...] = ()  # what print() wrote during this step
    alive_nodes: int = 0  # nodes some value the program holds still reaches
    gone_nodes: tuple[str, ...] = ()  # nodes nothing reaches any more, from this step on
    version_changes: Mapping[SlotKey, int] = field(default_factory=lambda: _NO_VERSIONS)


class StepHead(NamedTuple):
    """What the series over every step read of one step (NOTE [steps on demand])."""

    call: int | None
    loops: tuple[LoopMark, ...]
    saved_bytes: int
    alive_nodes: int
    device_bytes: int | None


@dataclass(frozen=True)
class StepState:
    """Everything true at one step: the step itself plus the replayed full state.

    >>> from app.core import load_builtin, record
    >>> state = record(load_builtin("forgot-retain")).timeline.state(4)
    >>> state.step.kind, dict(state.slots)
    ('call_end', {('n0', 'self'): 'freed'})
    """

    step: Step
    slots: Mapping[SlotKey, SlotState]
    grads: Mapping[str, Values | None]
    visible_nodes: frozenset[str]  # captured so far (gone ones included)
    versions: Mapping[SlotKey, int] = field(default_factory=lambda: _NO_VERSIONS)  # tensor version now
    gone: frozenset[str] = frozenset()  # nodes nothing the program holds reaches any more


@dataclass
class _Full:
    slots: dict[SlotKey, SlotState]
    grads: dict[str, Values | None]
    visible: set[str]
    versions: dict[SlotKey, int]
    gone: set[str]

    def copy(self) -> _Full:
        return _Full(
            dict(self.slots), dict(self.grads), set(self.visible), dict(self.versions), set(self.gone)
        )

    def apply(self, step: Step) -> None:
        self.slots.update(step.slot_changes)
        self.grads.update(step.grad_changes)
        self.visible.update(step.added_nodes)
        self.versions.update(step.version_changes)
        self.gone.update(step.gone_nodes)


@dataclass
class Timeline:
    """Every step of a recording, and the full state at any of them (replayed from checkpoints).

    >>> from app.core import load_builtin, record
    >>> timeline = record(load_builtin("two-losses")).timeline
    >>> len(timeline), timeline.call_starts(), timeline.state(10).grads["x"].tolist()
    (12, (1, 6), [8.0, 16.0])
    """

    steps: Sequence[Step]
    # One per step when ``steps`` makes its steps on demand (NOTE [steps on demand]); else None.
    heads: Sequence[StepHead] | None = field(default=None, repr=False, compare=False)
    # NOTE [checkpoint cache]: at most CHECKPOINTS_KEPT full states, least recently used
    # dropped. Keeping one per CHECKPOINT_EVERY steps forever grew with steps x graph size
    # (175 MB at 5,000 nodes once a learner had stepped through); stepping is local, and a far
    # jump replays from the nearest kept checkpoint (a few changes per step).
    _checkpoints: OrderedDict[int, _Full] = field(default_factory=OrderedDict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    def head(self, index: int) -> StepHead | Step:
        """What the series read of step ``index`` (its call, loops, byte counts), without making
        the step when it is made on demand (NOTE [steps on demand])."""
        return self.steps[index] if self.heads is None else self.heads[index]

    # -- series over every step, made once (the window's worker makes them ahead of the GUI thread) --
    def call_starts(self) -> tuple[int, ...]:
        """The step where each call begins: its ``call`` differs from the step before's."""
        return self._once("call_starts", _call_starts)

    def iteration_starts(self) -> tuple[int, ...]:
        """The first step of each loop iteration: inside a loop, with loop counters that are not those
        of the step before or of a loop around it (leaving an inner loop goes on the same outer
        iteration)."""
        return self._once("iteration_starts", _iteration_starts)

    def memory_series(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
        """Saved bytes, nodes alive and device bytes (None when no step knows them) at every step."""
        return self._once("memory", _memory_series)

    def _once(self, name: str, make: Callable[[Sequence[StepHead | Step]], _T]) -> _T:
        """``make(steps)``, made once per timeline and kept under ``name``.

        >>> t = Timeline(())
        >>> t._once("count", len), t._once("count", lambda steps: -1)
        (0, 0)
        """
        with self._lock:
            if name in self._derived:
                return self._derived[name]  # type: ignore[no-any-return]
        made = make(self.steps if self.heads is None else self.heads)
        with self._lock:
            return self._derived.setdefault(name, made)  # type: ignore[no-any-return]

    def state(self, index: int) -> StepState:
        """The full state at step ``index`` (replayed, O(CHECKPOINT_EVERY))."""
        if not 0 <= index < len(self.steps):
            raise IndexError(f"step {index} is outside 0..{len(self.steps) - 1}")
        base = (index // CHECKPOINT_EVERY) * CHECKPOINT_EVERY
        full = self._checkpoint(base).copy()
        for step in self.steps[base + 1 : index + 1]:
            full.apply(step)
        return StepState(
            self.steps[index],
            MappingProxyType(full.slots),
            MappingProxyType(full.grads),
            frozenset(full.visible),
            MappingProxyType(full.versions),
            frozenset(full.gone),
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
        if start is None:
            start, full = -1, _Full({}, {}, set(), {}, set())
        else:
            full = self._checkpoints[start].copy()
        for step in self.steps[start + 1 : base + 1]:
            full.apply(step)
        return full

    def changed_between(self, a: int, b: int) -> tuple[set[SlotKey], set[str]]:
        """Slots and nodes whose state may differ between steps ``a`` and ``b``."""
        lo, hi = sorted((a, b))
        slots: set[SlotKey] = set()
        nodes: set[str] = set()
        for step in self.steps[lo + 1 : hi + 1]:
            slots.update(step.slot_changes)
            slots.update(step.version_changes)
            nodes.update(step.added_nodes)
            nodes.update(step.gone_nodes)
        return slots, nodes

    def last_set(self, key: SlotKey, state: SlotState, start: int, stop: int) -> Step | None:
        """The last step from ``start`` up to ``stop`` (excluded) that set slot ``key`` to ``state``
        (the step that freed a saved tensor, or wrote into it), or None.

        >>> first = Step(0, "forward", None, None, {}, {}, 0)
        >>> freed = Step(1, "node", 0, "n0", {("n0", "self"): "freed"}, {}, 0)
        >>> Timeline((first, freed)).last_set(("n0", "self"), "freed", 0, 2).index
        1
        >>> Timeline((first, freed)).last_set(("n0", "self"), "freed", 0, 1) is None
        True
        """
        for index in range(stop - 1, start - 1, -1):
            if self.steps[index].slot_changes.get(key) == state:
                return self.steps[index]
        return None

    def call_bounds(self, call: int) -> tuple[int, int]:
        """First and last step index of a call."""
        heads: Sequence[StepHead | Step] = self.steps if self.heads is None else self.heads
        indices = [i for i, s in enumerate(heads) if s.call == call]
        if not indices:
            raise IndexError(f"call {call} was not recorded")
        return indices[0], indices[-1]


def _call_starts(steps: Sequence[StepHead | Step]) -> tuple[int, ...]:
    return tuple(
        i for i, s in enumerate(steps) if s.call is not None and (i == 0 or steps[i - 1].call != s.call)
    )


def _iteration_starts(steps: Sequence[StepHead | Step]) -> tuple[int, ...]:
    starts = []
    before: tuple[LoopMark, ...] = ()
    for i, step in enumerate(steps):
        if step.loops and before[: len(step.loops)] != step.loops:
            starts.append(i)
        before = step.loops
    return tuple(starts)


def _memory_series(
    steps: Sequence[StepHead | Step],
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
    known = [s.device_bytes for s in steps]
    device = tuple(b or 0 for b in known) if any(b is not None for b in known) else None
    return tuple(s.saved_bytes for s in steps), tuple(s.alive_nodes for s in steps), device
