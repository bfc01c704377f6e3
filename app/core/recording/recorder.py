"""Run a scenario for real and record what autograd does, node by node.

>>> from app.core.loading import load_builtin
>>> rec = record(load_builtin("two-losses"))
>>> rec.grads_at_end(1)["x"].tolist()
[8.0, 16.0]

# NOTE [what a step observes]
For each call, a pre-hook and a post-hook go on every node of the graph and
are removed in a ``finally``. The engine frees a node's buffers right after
the node runs (after its post-hooks), so the state a node *left behind* is
visible at the next node's pre-hook: that is where the step for the node
before is taken. The node that just ran is probed (its raw saved tensors
hold no data once released; otherwise ``_saved_*`` is read, which raises
when a tensor was modified in place): running a node releases its own
buffers and no others. Every slot of the graph is probed again before a call
whose loss code wrote into a tensor in place (the size guard counts such
writes) and after a call that failed; tests/test_recorder.py checks all of
this against probing every slot at every node.
When a call raises, the failing node is the one whose pre-hook fired and
whose post-hook did not.
"""

from __future__ import annotations

import ast
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import torch

from app.core.devices import resolve_device
from app.core.language.expr import Budget, Evaluator, Limits, parse
from app.core.language.limits import timeout_message
from app.core.language.positions import SourceText
from app.core.lesson.captions import write_captions
from app.core.loading import Call, Scenario
from app.core.model.errors import RecordingTimeout, ScenarioError
from app.core.model.timeline import SlotKey, SlotState, Step, StepKind, Timeline
from app.core.pacing import pace
from app.core.recording.capture import RAW_PREFIX, SAVED_PREFIX, Graph, GraphCapture, SavedSlot

__all__ = ["CallInfo", "Recording", "probe_slot", "record"]

FREED_MARK = "freed"  # part of PyTorch's message for an access after release
MODIFIED_MARK = "modified by an inplace operation"
_HOLDING = frozenset(("alive", "retained", "modified"))  # states whose slot keeps its storage


@dataclass(frozen=True)
class CallInfo:
    index: int
    call: Call
    first_step: int
    last_step: int
    error: str | None = None
    failed_node: str | None = None


@dataclass(frozen=True)
class Recording:
    """A finished run: pure data, holding no graph objects or live tensors."""

    scenario: Scenario
    device: str
    torch_version: str
    graph: Graph
    timeline: Timeline
    leaves: Mapping[str, str]  # leaf name -> its AccumulateGrad node id
    calls: tuple[CallInfo, ...]
    freed_by: Mapping[SlotKey, int] = field(default_factory=dict)  # slot -> call that freed it
    needed_by: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # node -> calls reaching it

    def grads_at_end(self, call: int) -> Mapping[str, torch.Tensor | None]:
        return self.timeline.state(self.calls[call].last_step).grads

    @property
    def failed(self) -> CallInfo | None:
        return next((c for c in self.calls if c.error is not None), None)


def probe_slot(fn: Any, name: str, has_run: bool) -> SlotState:
    """The state of one tensor slot, read from PyTorch (never assumed)."""
    if _released(fn, name):
        return "freed"
    try:
        getattr(fn, SAVED_PREFIX + name)
    except RuntimeError as exc:
        text = str(exc)
        if MODIFIED_MARK in text:
            return "modified"
        return "freed"
    return "retained" if has_run else "alive"


def _released(fn: Any, name: str) -> bool:
    """True when the slot's raw saved tensors hold no data: PyTorch released them.

    Asking ``_saved_<name>`` of a released slot says the same by raising, but a
    C++ error with its long message costs ~10 us, and a backward call without
    retain_graph releases every slot it passes (most probes of a recording).
    """
    try:
        raw = getattr(fn, RAW_PREFIX + name)
    except (AttributeError, RuntimeError):
        return False
    raws = raw if isinstance(raw, (list, tuple)) else [raw]
    return bool(raws) and all(r is None or r.data is None for r in raws)


class _Recorder:
    def __init__(self, scenario: Scenario, device: torch.device, limits: Limits) -> None:
        self.scenario = scenario
        self.device = device
        self.limits = limits
        self.deadline = time.monotonic() + limits.time_limit_s
        self.budget = Budget(limits.max_total_elements)  # one element budget for the whole recording
        self.probed_writes = 0  # budget.writes when every slot was last probed
        self.capture = GraphCapture()
        self.env: dict[str, Any] = {}
        self.inputs: dict[str, torch.Tensor] = {}  # as created, before forward code may rebind a name
        self.steps: list[Step] = []
        self.states: dict[SlotKey, SlotState] = {}
        self.held: Counter[tuple[str, int]] = Counter()  # (device, pointer) -> slots holding it
        self.bytes_of: dict[tuple[str, int], int] = {}
        self.held_bytes = 0  # sum of bytes_of over the storages held now
        self.has_run: set[str] = set()
        self.pending: dict[SlotKey, SlotState] = {}
        self.pending_nodes: list[str] = []
        self.grad_marks: dict[str, tuple[torch.Tensor, int] | None] = {}
        self.leaves: dict[str, str] = {}  # leaf name -> node id
        self.leaf_names: dict[str, str] = {}  # node id -> leaf name
        self.unread_leaves: dict[str, None] = {}  # leaves whose .grad no step has read yet
        self.calls: list[CallInfo] = []
        self.freed_by: dict[SlotKey, int] = {}
        self.reached: dict[str, set[int]] = {}
        self._labels: list[tuple[Any, str, tuple[int, int], bool]] = []

    # -- forward ------------------------------------------------------
    def run(self) -> Recording:
        with _on_device(self.device):
            self._forward()
            for index, call in enumerate(self.scenario.calls):
                if not self._run_call(index, call):
                    break
        graph = self.capture.freeze()
        steps = write_captions(
            self.steps,
            graph,
            self.calls,
            self.freed_by,
            self._needed_by(),
            total_calls=len(self.scenario.calls),
        )
        return Recording(
            scenario=self.scenario,
            device=str(self.device),
            torch_version=torch.__version__,
            graph=graph,
            timeline=Timeline(tuple(steps)),
            leaves=MappingProxyType(dict(self.leaves)),
            calls=tuple(self.calls),
            freed_by=MappingProxyType(dict(self.freed_by)),
            needed_by=self._needed_by(),
        )

    def _needed_by(self) -> Mapping[str, tuple[int, ...]]:
        return MappingProxyType({k: tuple(sorted(v)) for k, v in self.reached.items()})

    def _evaluator(self, field: str, source: str) -> Evaluator:
        evaluator = Evaluator(
            self.env, field=field, limits=self.limits, deadline=self.deadline, budget=self.budget
        )
        evaluator.on_value = self._labeller(source)
        return evaluator

    def _labeller(self, source: str) -> Callable[[ast.AST, Any], None]:
        text_of = SourceText(source)  # split once: this runs for every value the code makes

        def on_value(node: ast.AST, value: Any) -> None:
            if isinstance(node, ast.Name) or value.grad_fn is None:
                return
            text = text_of.segment(node) or ""
            span = (getattr(node, "lineno", 0), getattr(node, "end_lineno", 0))
            self._labels.append((value.grad_fn, " ".join(text.split()), span, isinstance(node, ast.Assign)))

        return on_value

    def _apply_labels(self) -> None:
        owner: dict[int, tuple[int, int]] = {}
        for fn, text, span, is_statement in self._labels:
            node_id = self.capture.id_of(fn)
            if node_id is None:
                continue
            first = owner.get(id(fn))
            if first is None:
                owner[id(fn)] = span
                self.capture.label(fn, text)
            elif is_statement and span[0] <= first[0] <= span[1]:
                self.capture.label(fn, text, override=True)  # "y = x.square()" over "x.square()"
        self._labels.clear()

    def _forward(self) -> None:
        for name, expr in self.scenario.inputs:
            where = f"inputs.{name}"
            value = self._evaluator(where, expr).evaluate(parse(expr, field=where, mode="eval"))
            if not isinstance(value, torch.Tensor):
                raise ScenarioError(
                    f"an input must be a tensor, not {type(value).__name__}", field=where, line=1, col=1
                )
            self.env[name] = value
            self.inputs[name] = value
        self._evaluator("forward.code", self.scenario.forward).run(
            parse(self.scenario.forward, field="forward.code", mode="exec")
        )
        roots = [v.grad_fn for v in self.env.values() if isinstance(v, torch.Tensor)]
        self._add_nodes(self.capture.add_roots(roots))
        self._snapshot("forward", None, None)

    def _add_nodes(self, new: list[str]) -> None:
        self._apply_labels()
        for node_id in new:
            variable = self.capture.leaf_variable(node_id)
            if variable is not None:
                name = self._name_of(variable) or self._unused_leaf_name()
                self.leaves[name] = node_id
                self.leaf_names[node_id] = name
                self.unread_leaves[name] = None
                self.capture.labels.setdefault(node_id, name)
            for slot in self.capture.node(node_id).tensor_slots:
                key = (node_id, slot.name)
                # Read a moment ago by the capture: what a probe would say unless the read raised.
                readable = key not in self.capture.unreadable and node_id not in self.has_run
                self._set_state(key, "alive" if readable else self._probe(*key), slot)
        self.pending_nodes.extend(new)

    def _name_of(self, tensor: torch.Tensor) -> str | None:
        """The input name of a leaf (even if forward code rebound it), else any name bound to it."""
        for names in (self.inputs, self.env):
            name = next((k for k, v in names.items() if v is tensor), None)
            if name is not None and name not in self.leaves:
                return name
        return None

    def _unused_leaf_name(self) -> str:
        """``leaf<k>`` for a leaf made inline (no name), clashing with no name in use."""
        k = len(self.leaves)
        while f"leaf{k}" in self.leaves or f"leaf{k}" in self.env:
            k += 1
        return f"leaf{k}"

    # -- probing and bookkeeping -------------------------------------
    def _slot(self, key: SlotKey) -> SavedSlot:
        node = self.capture.node(key[0])
        return next(s for s in node.saved if s.name == key[1])

    def _probe(self, node_id: str, slot: str) -> SlotState:
        return probe_slot(self.capture.fns[node_id], slot, node_id in self.has_run)

    def _set_state(self, key: SlotKey, state: SlotState, slot: SavedSlot | None = None) -> None:
        old = self.states.get(key)
        if old == state:
            return
        slot = slot or self._slot(key)
        change = (state in _HOLDING) - (old in _HOLDING)
        for ref in slot.storages:  # a storage is held while any slot holding it is
            storage = ref.device, ref.pointer
            before, old_bytes = self.held[storage], self.bytes_of.get(storage, 0)
            self.held[storage] = after = before + change
            self.bytes_of[storage] = ref.nbytes
            # A running total: summing every storage on every step was O(steps x storages).
            self.held_bytes += (ref.nbytes if after > 0 else 0) - (old_bytes if before > 0 else 0)
        self.states[key] = state
        self.pending[key] = state

    def _probe_node(self, node_id: str, call: int | None) -> None:
        for slot in self.capture.node(node_id).tensor_slots:
            key = (node_id, slot.name)
            state = self._probe(node_id, slot.name)
            if state == "freed" and self.states.get(key) != "freed" and call is not None:
                self.freed_by[key] = call
            self._set_state(key, state, slot)

    def _grad_changes(self, kind: StepKind, node: str | None) -> dict[str, torch.Tensor | None]:
        """Leaves whose ``.grad`` is another tensor, or the same one changed in place, since last time.

        The mark holds the grad tensor itself, not its ``id()``: create_graph makes
        AccumulateGrad replace ``.grad`` out of place, and a new tensor can reuse
        a dead one's id with the same version number.

        Inside a call only a leaf's own AccumulateGrad writes its ``.grad``, so a node's step
        reads that leaf (and leaves never read yet); the other steps read every leaf. Reading
        all of them at every step cost steps x leaves.
        """
        names: Iterable[str] = self.leaves
        if kind == "node":
            leaf = self.leaf_names.get(node or "")
            names = dict.fromkeys([*([leaf] if leaf else []), *self.unread_leaves])
        changes: dict[str, torch.Tensor | None] = {}
        for name in names:
            self.unread_leaves.pop(name, None)
            grad = self._leaf_grad(name)
            if name not in self.grad_marks or not _unchanged(self.grad_marks[name], grad):
                self.grad_marks[name] = None if grad is None else (grad, grad._version)
                changes[name] = None if grad is None else grad.detach().to("cpu", copy=True)
        return changes

    def _snapshot(self, kind: StepKind, call: int | None, node: str | None, **extra: Any) -> Step:
        step = Step(
            index=len(self.steps),
            kind=kind,
            call=call,
            node=node,
            slot_changes=MappingProxyType(dict(self.pending)),
            grad_changes=MappingProxyType(self._grad_changes(kind, node)),
            saved_bytes=self.held_bytes,
            device_bytes=_device_bytes(self.device),
            added_nodes=tuple(self.pending_nodes),
            **extra,
        )
        self.pending.clear()
        self.pending_nodes.clear()
        self.steps.append(step)
        return step

    # -- calls ----------------------------------------------------------
    def _run_call(self, index: int, call: Call) -> bool:
        where = f"calls[{index}]"
        loss = self._evaluator(f"{where}.loss", call.loss).evaluate(
            parse(call.loss, field=f"{where}.loss", mode="eval")
        )
        if not isinstance(loss, torch.Tensor):
            raise ScenarioError(
                f"the loss must be a tensor, not {type(loss).__name__}",
                field=f"{where}.loss",
                line=1,
                col=1,
            )
        self._add_nodes(self.capture.add_roots([loss.grad_fn], call=index))
        if self.budget.writes != self.probed_writes:  # the loss code wrote into a tensor in place
            self._probe_all(None)
        self._mark_reached(loss.grad_fn, index)
        first = len(self.steps)
        start = {name: self._grad_copy(name) for name in self.leaves}
        observer = _CallObserver(self, index)
        error, result = None, None
        try:
            with observer.hooks():
                result = self._invoke(call, loss)
        except RecordingTimeout:
            raise
        except (RuntimeError, TypeError, ValueError) as exc:
            error = str(exc)
        observer.finish(error)
        # NOTE [what a call can change]: the engine releases the buffers of the nodes it runs,
        # and each of those was probed as its step closed. A failed call is probed in full: the
        # failing node started and never finished.
        if error is not None:
            self._probe_all(index)
            step = self._snapshot("error", index, observer.failed_node(), error=error)
            self.calls.append(CallInfo(index, call, first, step.index, error, observer.failed_node()))
            return False
        bound = self._bind(index, call, result)
        contribution = {name: _difference(self._grad_copy(name), before) for name, before in start.items()}
        step = self._snapshot(
            "call_end",
            index,
            None,
            contribution=MappingProxyType(contribution) if call.kind == "backward" else None,
            result=bound,
        )
        self.calls.append(CallInfo(index, call, first, step.index))
        return True

    def _mark_reached(self, root: Any, index: int) -> None:
        for node_id in self.capture.reachable_from(root):
            self.reached.setdefault(node_id, set()).add(index)

    def _invoke(self, call: Call, loss: torch.Tensor) -> Any:
        inputs = [self.env[name] for name in call.inputs]
        if call.kind == "grad":
            return torch.autograd.grad(
                loss, inputs, retain_graph=call.retain_graph, create_graph=call.create_graph
            )
        loss.backward(retain_graph=call.retain_graph, create_graph=call.create_graph, inputs=inputs or None)
        return None

    def _bind(self, index: int, call: Call, result: Any) -> Mapping[str, torch.Tensor] | None:
        if call.kind != "grad" or result is None:
            return None
        value = result[0] if len(result) == 1 else tuple(result)
        if call.bind is not None:
            self.env[call.bind] = value
            self._label_bound(index, result)
        name = call.bind or "result"
        shown = {f"{name}[{i}]" if len(result) > 1 else name: t for i, t in enumerate(result)}
        return MappingProxyType(
            {k: v.detach().to("cpu", copy=True) for k, v in shown.items() if v is not None}
        )

    def _label_bound(self, index: int, result: Any) -> None:
        """A create_graph result has a graph of its own: label its top node with the call's code.

        Its nodes join the graph when a later loss reaches them (``_add_nodes``).
        """
        lines, where = self.scenario.to_python()
        text = lines[where[index]]
        for value in result:
            if isinstance(value, torch.Tensor) and value.grad_fn is not None:
                self._labels.append((value.grad_fn, text, (0, 0), True))

    def _leaf_grad(self, name: str) -> torch.Tensor | None:
        variable = self.capture.leaf_variable(self.leaves[name])
        return None if variable is None else variable.grad

    def _grad_copy(self, name: str) -> torch.Tensor | None:
        grad = self._leaf_grad(name)
        return None if grad is None else grad.detach().to("cpu", copy=True)

    def _probe_all(self, call: int | None) -> None:
        for node_id in self.capture.fns:
            pace()
            self._probe_node(node_id, call)
        self.probed_writes = self.budget.writes

    def check_deadline(self) -> None:
        pace()  # NOTE [pacing]: runs at every node the engine starts
        if time.monotonic() > self.deadline:
            raise RecordingTimeout(timeout_message(self.limits))


class _CallObserver:
    """The hooks of one call: engine order, and which node failed."""

    def __init__(self, recorder: _Recorder, call: int) -> None:
        self.recorder = recorder
        self.call = call
        self.started: list[str] = []
        self.finished: set[str] = set()

    @contextmanager
    def hooks(self) -> Iterator[None]:
        handles = []
        try:
            for node_id, fn in self.recorder.capture.fns.items():
                handles.append(fn.register_prehook(self._pre(node_id)))
                handles.append(fn.register_hook(self._post(node_id)))
            yield
        finally:
            for handle in handles:
                handle.remove()

    def _pre(self, node_id: str) -> Callable[..., None]:
        def hook(grad_outputs: Any) -> None:
            self.recorder.check_deadline()
            self._close_previous()
            self.started.append(node_id)

        return hook

    def _post(self, node_id: str) -> Callable[..., None]:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            self.finished.add(node_id)
            self.recorder.has_run.add(node_id)

        return hook

    def _close_previous(self) -> None:
        """Take the step of the node that ran last, now that it released its buffers."""
        if self.started and self.started[-1] in self.finished:
            node_id = self.started[-1]
            self.recorder._probe_node(node_id, self.call)
            self.recorder._snapshot("node", self.call, node_id)

    def finish(self, error: str | None) -> None:
        self._close_previous()

    def failed_node(self) -> str | None:
        running = [n for n in self.started if n not in self.finished]
        return running[-1] if running else None


@contextmanager
def _on_device(device: torch.device) -> Iterator[None]:
    if device.type == "cpu":
        yield
        return
    with torch.device(device):
        yield


def _device_bytes(device: torch.device) -> int | None:
    if device.type == "cuda":
        return int(torch.cuda.memory_allocated(device))
    return None


def _unchanged(mark: tuple[torch.Tensor, int] | None, grad: torch.Tensor | None) -> bool:
    if mark is None or grad is None:
        return mark is None and grad is None
    return mark[0] is grad and mark[1] == grad._version


def _difference(after: torch.Tensor | None, before: torch.Tensor | None) -> torch.Tensor | None:
    if after is None:
        return None
    return after if before is None else after - before


def record(scenario: Scenario, device: str = "cpu", *, limits: Limits | None = None) -> Recording:
    """Run ``scenario`` on ``device`` and return its recorded timeline."""
    return _Recorder(scenario, resolve_device(device), limits or Limits()).run()
