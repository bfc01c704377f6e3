"""The recorded steps of a run, stored as changes and replayed on demand.

# NOTE [compact timeline]
A step stores only what changed since the step before it: slot states, slot
versions, leaf gradients, nodes added and nodes gone. :meth:`Timeline.state`
rebuilds the full state of any step by replaying from the nearest checkpoint
(one every ``CHECKPOINT_EVERY`` steps, built lazily, at most ``CHECKPOINTS_KEPT``
kept), so memory grows with the
changes, not with steps x graph size, and stepping back never touches torch.

# NOTE [states share their checkpoint]
A checkpoint is read-only once made, and a :class:`StepState` is its checkpoint's mappings
with the few changes since on top (``_Overlay``), not copies of them: copying every saved
value's state, gradient and version made each step of a 5,000-node graph cost a millisecond.
Its node sets are frozensets shared while no step changes them: the checkpoint's, or the one
made for the last step that added (or lost) nodes, so stepping through a backward pass makes
no set, and what compares a set by identity (``ShownStates._every_visible``) compares once.

# NOTE [steps on demand]
``Timeline.steps`` is any sequence of steps: a tuple once recorded, or a file's steps made
(decoded and checked) as they are first asked for (``lensfile.steps``), so a big ``.lens``
file opens without making its 13,000 steps first. What the series over every step read (a
step's call, loops and byte counts: :class:`StepHead`) comes from ``heads`` when given,
read up front with the file, so the timeline bar and the memory chart make no step.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeVar

from app.core.model.graph import LoopMark
from app.core.model.values import Values

_T = TypeVar("_T")
_K = TypeVar("_K")
_V = TypeVar("_V")

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
CHECKPOINTS_ON_THE_WAY = CHECKPOINTS_KEPT // 2  # kept when a far replay passes them

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


class _Overlay(Mapping[_K, _V]):
    """A read-only mapping: ``base`` (a checkpoint's, never changed once made) with ``delta``
    (the few changes of the steps since) on top, iterated in the order a dict updated with
    them would be (NOTE [states share their checkpoint])."""

    __slots__ = ("_base", "_delta")

    def __init__(self, base: Mapping[_K, _V], delta: dict[_K, _V]) -> None:
        self._base, self._delta = base, delta

    def __getitem__(self, key: _K) -> _V:
        delta = self._delta
        return delta[key] if key in delta else self._base[key]

    def get(self, key: _K, default: Any = None) -> Any:
        delta = self._delta
        return delta[key] if key in delta else self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._delta or key in self._base

    def __iter__(self) -> Iterator[_K]:
        base = self._base
        yield from base
        yield from (key for key in self._delta if key not in base)

    def __len__(self) -> int:
        base = self._base
        return len(base) + sum(1 for key in self._delta if key not in base)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"


def _over(base: dict[_K, _V], delta: dict[_K, _V]) -> Mapping[_K, _V]:
    return _Overlay(base, delta) if delta else MappingProxyType(base)


@dataclass(frozen=True)
class _Full:
    """The full state at a checkpoint, read-only once made: every state after it shares it."""

    slots: dict[SlotKey, SlotState]
    grads: dict[str, Values | None]
    visible: frozenset[str]
    versions: dict[SlotKey, int]
    gone: frozenset[str]

    def then(self, steps: Sequence[Step]) -> _Full:
        """The full state after ``steps``, as a new checkpoint (this one unchanged); a node set
        no step changed stays the same object (``ShownStates`` compares it by identity)."""
        changed = _Since(steps, 0)
        return _Full(
            {**self.slots, **changed.slots},
            {**self.grads, **changed.grads},
            self.visible.union(*changed.added) if changed.added else self.visible,
            {**self.versions, **changed.versions},
            self.gone.union(*changed.gone) if changed.gone else self.gone,
        )


class _Since:
    """What ``steps`` (numbered from ``first``) changed, gathered: the later change of a key wins,
    in the order a dict updated step by step would keep; the nodes each step added or lost, and
    the number of the last step that added and that lost any (``first - 1``: none did)."""

    __slots__ = ("added", "gone", "grads", "last_added", "last_gone", "slots", "versions")

    def __init__(self, steps: Sequence[Step], first: int) -> None:
        self.slots: dict[SlotKey, SlotState] = {}
        self.grads: dict[str, Values | None] = {}
        self.versions: dict[SlotKey, int] = {}
        self.added: list[tuple[str, ...]] = []
        self.gone: list[tuple[str, ...]] = []
        self.last_added = self.last_gone = first - 1
        for at, step in enumerate(steps, first):
            if step.slot_changes:  # most changes are empty, and updating a dict with an empty
                self.slots.update(step.slot_changes)  # read-only mapping costs a microsecond
            if step.grad_changes:
                self.grads.update(step.grad_changes)
            if step.version_changes:
                self.versions.update(step.version_changes)
            if step.added_nodes:
                self.added.append(step.added_nodes)
                self.last_added = at
            if step.gone_nodes:
                self.gone.append(step.gone_nodes)
                self.last_gone = at


_START = _Full({}, {}, frozenset(), {}, frozenset())


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
    # The node sets last made by ``state`` (NOTE [states share their checkpoint]), by kind.
    _node_sets: dict[str, tuple[int, frozenset[str]]] = field(default_factory=dict, repr=False, compare=False)

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

    def grads_set_between(self, after: int, index: int) -> list[int]:
        """The forward steps ``after + 1 .. index`` that set a ``.grad`` (``opt.zero_grad()``), in
        order. Each step past ``after`` is looked at once, however often this is asked: the
        gradients panel asks at every step, for every leaf, and a scan back to the last call's
        end at each was O(steps) a step (~2 ms of a step of the 5,000-node chain's second call).

        >>> from app.core import load_builtin, record
        >>> t = record(load_builtin("two-losses")).timeline
        >>> t.grads_set_between(0, len(t) - 1)
        []
        """
        with self._lock:
            scans: dict[int, tuple[int, tuple[int, ...]]] = self._derived.setdefault("grads_set", {})
            upto, found = scans.get(after, (after, ()))
        if index > upto:
            more = []
            for i in range(upto + 1, index + 1):
                step = self.steps[i]
                if step.kind == "forward" and step.grad_changes:
                    more.append(i)
            found, upto = found + tuple(more), index
            with self._lock:
                if scans.get(after, (after, ()))[0] < upto:
                    scans[after] = (upto, found)
        return list(found[: bisect_right(found, index)])

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
        """The full state at step ``index``: the nearest checkpoint and the changes of the steps
        since, O(CHECKPOINT_EVERY) (NOTE [states share their checkpoint])."""
        if not 0 <= index < len(self.steps):
            raise IndexError(f"step {index} is outside 0..{len(self.steps) - 1}")
        base = (index // CHECKPOINT_EVERY) * CHECKPOINT_EVERY
        full = self._checkpoint(base)
        changed = _Since(self.steps[base + 1 : index + 1], base + 1)
        return StepState(
            self.steps[index],
            _over(full.slots, changed.slots),
            _over(full.grads, changed.grads),
            self._nodes_after("visible", changed.last_added, full.visible, changed.added),
            _over(full.versions, changed.versions),
            self._nodes_after("gone", changed.last_gone, full.gone, changed.gone),
        )

    def _nodes_after(
        self, kind: str, last: int, base: frozenset[str], changes: list[tuple[str, ...]]
    ) -> frozenset[str]:
        """``base`` with ``changes`` (those of the steps up to ``last``, the last that changed
        this set): ``base`` itself when none did, else the set made for ``last`` before, if it
        was the last made (a step that adds no node shares the step before's set)."""
        if not changes:
            return base
        known = self._node_sets.get(kind)  # one read and one write: a race only makes it twice
        if known is not None and known[0] == last:
            return known[1]
        made = base.union(*changes)
        self._node_sets[kind] = (last, made)
        return made

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
        """The checkpoint at ``base``, replayed from the nearest kept one before it. The
        ``CHECKPOINTS_ON_THE_WAY`` checkpoints just before ``base`` are kept too: stepping back
        asks for them next, and each would otherwise replay from that far checkpoint (or step 0)
        again, a pause every ``CHECKPOINT_EVERY`` steps back."""
        start = max((b for b in self._checkpoints if b < base), default=-1)
        full = _START if start < 0 else self._checkpoints[start]
        on_the_way = range(base - CHECKPOINTS_ON_THE_WAY * CHECKPOINT_EVERY, base, CHECKPOINT_EVERY)
        for mark in [m for m in on_the_way if m > start]:
            full = self._checkpoints[mark] = full.then(self.steps[start + 1 : mark + 1])
            start = mark
        return full.then(self.steps[start + 1 : base + 1])

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
