"""Run a program for real and record what autograd does, statement by statement and node by node.

>>> from app.core.loading import load_builtin
>>> rec = record(load_builtin("two-losses"))
>>> rec.grads_at_end(1)["x"].tolist()
[8.0, 16.0]

# NOTE [what a step observes]
The program runs in the checked evaluator, which tells the recorder after
every simple statement and hands it every autograd call (NOTE [program
hooks]). After a statement, the graph behind every tensor the statement
made is captured, slots are probed if something was written in place, and
nodes nothing the program holds can reach any more are let go (NOTE [alive
nodes]); a ``forward`` step is taken when anything changed.
For each autograd call, a pre-hook and a post-hook go on every captured node
and are removed in a ``finally``. The engine frees a node's buffers right
after the node runs (after its post-hooks), so the state a node *left
behind* is visible at the next node's pre-hook: that is where the step for
the node before is taken. The node that just ran is probed (its raw saved
tensors hold no data once released; otherwise ``_saved_*`` is read, which
raises when a tensor was modified in place): running a node releases its
own buffers and no others. Every slot is probed again after a statement or
loss that wrote into a tensor in place (the size guard counts such writes)
and after a call that failed; tests/test_recorder.py checks all of this
against probing every slot at every node.
When a call raises, the failing node is the one whose pre-hook fired and
whose post-hook did not.
A trusted script of the user's own feeds the same recorder from outside the
evaluator (NOTE [trusted scripts] in ``script.py``).

# NOTE [alive nodes]
``Node`` objects cannot be weakly referenced, so what is alive is found by
walking ``next_functions`` from the values the program still holds: every
name's tensor (in lists and tuples too), the tensors of modules and
optimizers, and each leaf's ``.grad``. The walk runs only after a statement
that could have let go of a graph (a name re-bound or deleted, an assignment
into a list or an attribute, an autograd call); a captured node it does not
reach is gone: the capture drops its ``grad_fn``, so Python frees it and its
buffers, and its held slots become ``freed``.

# NOTE [walks not repeated]
A script's every line may have let go of a graph, so the walk from what the
program holds ran after every line. It is skipped when the roots are the same
captured nodes as at the last walk and nothing was captured or let go since:
a captured node is held by the capture (its ``id`` is its own), and a node's
``next_functions`` never change, so the walk would find what it found then,
which is every node still captured.
"""

from __future__ import annotations

import ast
import ctypes
import math
import struct
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from types import MappingProxyType
from typing import Any

import torch

from app.core.devices import resolve_device
from app.core.language.evaluator import Evaluator
from app.core.language.objects import Checked
from app.core.language.parsing import parse
from app.core.language.positions import SourceText
from app.core.lesson.captions import write_captions
from app.core.model.errors import ProgramError, RecordingTimeout
from app.core.model.graph import Graph, LoopMark, SavedSlot, SourceRef, StorageRef
from app.core.model.program import Call, CallInfo, CallKind, Program
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, SlotState, Step, StepKind, Timeline
from app.core.model.values import PackedNumbers, Values
from app.core.recording.capture import RAW_PREFIX, SAVED_PREFIX, GraphCapture, raw_saved_tensors, storage_ref
from app.core.sizing.limits import Budget, Limits, timeout_message

__all__ = ["Recording", "isolated", "probe_slot", "record", "values_of"]

FREED_MARK = "freed"  # part of PyTorch's message for an access after release
MODIFIED_MARK = "modified by an inplace operation"
_HOLDING = frozenset(("alive", "retained", "modified"))  # states whose slot keeps its storage
SEED = 0  # every recording starts from torch.manual_seed(SEED); the program may seed again
_NOTHING: Mapping[Any, Any] = MappingProxyType({})  # shared by the many steps that change nothing
_ERRORS = (RuntimeError, TypeError, ValueError, IndexError)  # what an autograd call raises


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
    if not isinstance(raw, (list, tuple)):
        return raw is None or raw.data is None
    return bool(raw) and all(r is None or r.data is None for r in raw)


def values_of(tensor: torch.Tensor) -> Values:
    """A detached CPU copy of ``tensor`` as plain :class:`Values` (floats packed: NOTE [packed values]).

    A sparse tensor (the gradient of ``gather(..., sparse_grad=True)`` or ``embedding(...,
    sparse=True)``) is shown with its zeros, as the dense tensor it stands for; a tensor on the
    meta device, which has no values (a script's: programs stop where they make one), as NaN.
    """
    if tensor.is_meta:  # 4 bytes an element, as the real tensor would have taken
        return Values(tuple(tensor.shape), PackedNumbers(struct.pack("f", math.nan) * tensor.numel(), "f"))
    data = tensor.detach().to("cpu")
    if data.layout != torch.strided:
        data = data.to_dense()
    if data.is_complex():
        data = data.abs()
    dtype = str(data.dtype).removeprefix("torch.")
    if not data.is_floating_point() or data.numel() == 0:
        return Values(tuple(data.shape), tuple(data.reshape(-1).tolist()), dtype)
    if data.dtype not in _PACKED:  # float16, bfloat16: every one of their values is a float32
        data = data.float()
    data = data.contiguous()
    raw = ctypes.string_at(data.data_ptr(), data.numel() * data.element_size())  # `data` holds it
    return Values(tuple(data.shape), PackedNumbers(raw, _PACKED[data.dtype]), dtype)


_PACKED = {torch.float32: "f", torch.float64: "d"}  # struct's codes for them, in the machine's order


class _ProgramStopped(BaseException):
    """Raised through the evaluator when an autograd call failed: the program ends there."""


class _Recorder:
    def __init__(self, program: Program, device: torch.device, limits: Limits) -> None:
        self.program = program
        self.device = device
        self.limits = limits
        self.deadline = time.monotonic() + limits.time_limit_s
        self.budget = Budget(limits.max_total_elements)  # one element budget for the whole recording
        self.probed_writes = 0  # budget.writes when every slot was last probed
        self.capture = GraphCapture()
        self.env: dict[str, Any] = {}
        self.text = SourceText(program.code)  # split once: labels read it for every value
        self.steps: list[Step] = []
        self.states: dict[SlotKey, SlotState] = {}
        self.versions: dict[SlotKey, int] = {}
        self.held: dict[tuple[str, int], int] = {}  # (device, pointer) -> slots holding it
        self.bytes_of: dict[tuple[str, int], int] = {}
        self.held_bytes = 0  # sum of bytes_of over the storages held now
        self.has_run: set[str] = set()
        self.pending: dict[SlotKey, SlotState] = {}
        self.pending_versions: dict[SlotKey, int] = {}
        self.pending_nodes: list[str] = []
        self.pending_gone: list[str] = []
        self.pending_printed: list[str] = []
        self.grad_marks: dict[str, tuple[torch.Tensor, int] | None] = {}
        self.grad_values: dict[str, Values | None] = {}  # each leaf's .grad as its last step read it
        self.leaves: dict[str, str] = {}  # leaf name -> its latest AccumulateGrad node id
        self.leaf_tensors: dict[str, torch.Tensor] = {}  # leaf name -> the leaf itself
        self.leaf_names: dict[str, str] = {}  # node id -> leaf name
        self.unread_leaves: dict[str, None] = {}  # leaves whose .grad no step has read yet
        # NOTE [freed leaves written]: freed slots that had saved a leaf, with the leaf's version
        self.freed_leaves: dict[SlotKey, tuple[torch.Tensor, int]] = {}
        self._leaf_storages: tuple[int, dict[StorageRef, torch.Tensor]] = (0, {})
        self.calls: list[CallInfo] = []
        self.freed_by: dict[SlotKey, int] = {}
        self.reached: dict[str, set[int]] = {}
        self.node_line: dict[str, tuple[int | None, tuple[LoopMark, ...], int]] = {}
        # The module and user source line that new nodes get; a script sets it before each capture.
        self.origin: tuple[str | None, SourceRef | None] = (None, None)
        self.node_origin: dict[str, tuple[str | None, SourceRef | None]] = {}
        self.gone_at: dict[str, int] = {}
        self.fresh: list[Any] = []  # grad_fns of the tensors the current statement made
        self.dirty = False  # the current statement may have let go of a graph
        self._last_walk: tuple[int, frozenset[int]] | None = None  # NOTE [walks not repeated]
        self.bound: dict[str, Any] = {}  # name -> the graph-holding value bound to it
        self.dropped: list[torch.Tensor] = []  # values a statement re-bound a name away from
        self.made: list[Any] = []  # grad_fns of the nodes the current statement added
        self._labels: list[tuple[Any, str, tuple[int, int], bool]] = []
        self._just_bound: list[str] = []  # names the current statement bound
        self._loops: tuple[LoopMark, ...] = ()  # the loops around the statement running now
        self.error: str | None = None
        self.error_line: int | None = None

    # -- the run ------------------------------------------------------
    def run(self) -> Recording:
        tree = parse(self.program.code, field="program", mode="exec")
        with isolated(self.device):
            evaluator = Evaluator(
                self.env,
                field="program",
                limits=self.limits,
                deadline=self.deadline,
                on_value=self._on_value,
                budget=self.budget,
                hooks=self,
            )
            try:
                evaluator.run(tree)
            except _ProgramStopped:
                pass
            except ProgramError as exc:
                self._program_failed(exc)
            return self._result()

    def _result(self) -> Recording:
        """The recording of what ran so far (any driver ends with it)."""
        if not self.steps:
            self._snapshot("forward", None, None, line=None)
        graph = self._freeze()
        steps = write_captions(self.steps, graph, self.calls, self.freed_by, self._needed_by())
        return Recording(
            program=self.program,
            device=str(self.device),
            torch_version=str(torch.__version__),  # not torch's TorchVersion: a recording is plain data
            graph=graph,
            timeline=Timeline(tuple(steps)),
            leaves=MappingProxyType(dict(self.leaves)),
            calls=tuple(self.calls),
            freed_by=MappingProxyType(dict(self.freed_by)),
            needed_by=self._needed_by(),
            error=self.error,
            error_line=self.error_line,
        )

    def _program_failed(self, exc: ProgramError) -> None:
        """An exception of the program's own code: the program ends there, with an error step."""
        self._after_statement(exc.line, self._loops)
        self.error, self.error_line = exc.message, exc.line
        self._snapshot("error", None, None, line=exc.line, error=exc.message)

    def _freeze(self) -> Graph:
        return self.capture.freeze(
            {
                node_id: {
                    "line": line,
                    "loops": loops,
                    "created_at_step": step,
                    "gone_at_step": self.gone_at.get(node_id),
                    "module": self.node_origin.get(node_id, (None, None))[0],
                    "source": self.node_origin.get(node_id, (None, None))[1],
                }
                for node_id, (line, loops, step) in self.node_line.items()
            }
        )

    def _needed_by(self) -> Mapping[str, tuple[int, ...]]:
        return MappingProxyType({k: tuple(sorted(v)) for k, v in self.reached.items()})

    # -- what the evaluator tells us (NOTE [program hooks]) -----------
    def statement_done(self, statement: ast.stmt, loops: tuple[LoopMark, ...]) -> None:
        self._loops = loops
        self._note_rebinding(statement)
        self._after_statement(statement.lineno, loops)

    def printed(self, text: str) -> None:
        self.pending_printed.append(text)

    def autograd_call(
        self,
        kind: CallKind,
        run: Callable[[], Any],
        node: ast.Call,
        given: Mapping[str, Any],
        loops: tuple[LoopMark, ...],
    ) -> Any:
        self._loops = loops
        index = len(self.calls)
        call = self._describe_call(kind, node, given, loops)
        self._take_fresh(call=index, line=call.line)
        if self.budget.writes != self.probed_writes:  # the loss code wrote into a tensor in place
            self._probe_all(None)
        first = len(self.steps)
        start = {name: _grad_clone(self.leaf_tensors[name]) for name in self.leaves}
        observer = _CallObserver(self, index, call.line, loops)
        error, result = None, None
        try:
            with observer.hooks():
                result = run()
        except RecordingTimeout:
            raise
        except _ERRORS as exc:
            error = str(exc)
        observer.finish()
        self.dirty = True
        if error is not None:
            # NOTE [what a call can change]: a failed call is probed in full: the failing node
            # started and never finished.
            self._probe_all(index)
            failed = observer.failed_node()
            step = self._snapshot("error", index, failed, line=call.line, error=error)
            self.calls.append(CallInfo(index, call, first, step.index, error, failed))
            raise _ProgramStopped
        # create_graph leaves a graph in .grad, held through the leaves from now on: this call built it
        self.fresh.extend(_graph_fns(t for t in self.leaf_tensors.values() if t.grad is not None))
        self._take_fresh(call=index, line=call.line)
        grads = self._grad_changes("call_end", None)
        contribution = None
        if kind == "backward":
            contribution = MappingProxyType({name: self._contribution(name, start[name]) for name in start})
        step = self._snapshot(
            "call_end",
            index,
            None,
            line=call.line,
            grads=grads,
            contribution=contribution,
            result=self._result_values(result),
        )
        self.calls.append(CallInfo(index, call, first, step.index))
        return result

    def _contribution(self, name: str, before: torch.Tensor | None) -> Values | None:
        """What the call added to the leaf's ``.grad``; all of it when it had none before, which
        its last step has read already (the copy is shared: a model's grads are large)."""
        if before is None and self.leaf_tensors[name].grad is not None:
            return self.grad_values.get(name)
        return _contribution(self.leaf_tensors[name], before)

    def _describe_call(
        self, kind: CallKind, node: ast.Call, given: Mapping[str, Any], loops: tuple[LoopMark, ...]
    ) -> Call:
        keywords = {k.arg: self.text.segment(k.value) or "" for k in node.keywords if k.arg is not None}
        retain = given.get("retain_graph")
        return Call(
            kind=kind,
            line=node.lineno,
            col=self._column(node.lineno, node.col_offset),
            end_line=node.end_lineno or node.lineno,
            end_col=self._column(node.end_lineno or node.lineno, node.end_col_offset or 0),
            text=" ".join((self.text.segment(node) or "").split()),
            keywords=MappingProxyType(keywords),
            retain_graph=None if retain is None else bool(retain),
            create_graph=bool(given.get("create_graph", False)),
            loops=loops,
        )

    def _column(self, line: int, byte_offset: int) -> int:
        """1-based column in characters of a UTF-8 byte offset on ``line`` (as ``ast`` gives them)."""
        text = self.program.line(line)
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "ignore")) + 1

    def _result_values(self, result: Any) -> Mapping[str, Values] | None:
        if not isinstance(result, tuple):
            return None
        shown = {"result" if len(result) == 1 else f"result[{i}]": t for i, t in enumerate(result)}
        return MappingProxyType({k: values_of(v) for k, v in shown.items() if isinstance(v, torch.Tensor)})

    # -- after each statement -----------------------------------------
    def _on_value(self, node: ast.AST, value: Any) -> None:
        fn = value.grad_fn
        if fn is None:
            return
        self.fresh.append(fn)
        if isinstance(node, ast.Name):
            return
        text = self.text.segment(node) or ""
        span = (getattr(node, "lineno", 0), getattr(node, "end_lineno", 0))
        self._labels.append((fn, " ".join(text.split()), span, isinstance(node, ast.Assign)))

    def _after_statement(self, line: int | None, loops: tuple[LoopMark, ...]) -> None:
        self._take_fresh(call=None, line=line)
        self._let_go_if_dropped()
        self._take_named_leaves()
        if self.budget.writes != self.probed_writes:
            self._probe_all(None)
        if self.freed_leaves:
            self._note_freed_leaves_written()
        grads = self._grad_changes("forward", None)
        changed = (
            self.pending_nodes
            or self.pending_gone
            or self.pending
            or self.pending_versions
            or self.pending_printed
            or grads
        )
        if changed:
            self._snapshot("forward", None, None, line=line, grads=grads)

    def _take_fresh(self, *, call: int | None, line: int | None) -> None:
        """Capture the graph behind the tensors made since the last look."""
        fresh, self.fresh = self.fresh, []
        if fresh:
            new = self.capture.add_roots(fresh, call=call)
            self._add_nodes(new, line)
            if call is None:  # a statement's own nodes: held by what it bound, or let go at once
                self.made.extend(self.capture.fns[n] for n in new)

    def _take_named_leaves(self) -> None:
        """Leaves the program binds get a ``.grad`` row from then on, before any graph reaches them."""
        for name in self._just_bound:
            value = self.env.get(name)
            if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
                self._known_leaf(value, name)
            elif isinstance(value, Checked):
                for path, tensor in value.named_tensors():
                    if tensor.is_leaf and tensor.requires_grad:
                        self._known_leaf(tensor, f"{name}.{path}")
        self._just_bound = []

    def _known_leaf(self, tensor: torch.Tensor, name: str) -> str:
        known = next((k for k, v in self.leaf_tensors.items() if v is tensor), None)
        if known is not None:
            return known
        if name in self.leaf_tensors:  # the name now holds another leaf: keep both rows apart
            name = self._unused_leaf_name(name)
        self.leaf_tensors[name] = tensor
        self.leaves.setdefault(name, "")
        self.unread_leaves[name] = None
        return name

    def _note_rebinding(self, statement: ast.stmt) -> None:
        """Note what the statement may have let go of (NOTE [alive nodes])."""
        if isinstance(statement, ast.Delete):  # (a write in place keeps every graph it had)
            self.dirty = True
        for target in _targets(statement):
            if not isinstance(target, ast.Name):
                self.dirty = True
                continue
            value = self.env.get(target.id)
            self._just_bound.append(target.id)
            old = self.bound.pop(target.id, None)
            if old is not None and old is not value:
                if isinstance(old, torch.Tensor):
                    self.dropped.append(old)
                else:
                    self.dirty = True
            if value is not None and _holds_graph(value):
                self.bound[target.id] = value

    def _let_go_if_dropped(self) -> None:
        dropped, self.dropped = self.dropped, []
        made, self.made = self.made, []
        if self.dirty or ((dropped or made) and not self._still_reached([*_graph_fns(dropped), *made])):
            self._let_go_of_unreachable()

    def _still_reached(self, fns: list[Any]) -> bool:
        """Whether the values this statement bound reach every graph in ``fns``.

        ``h = torch.tanh(h @ w)`` drops the old ``h`` but the new one reaches its graph two
        nodes down, and the nodes it made are the new ``h``'s own: a short walk from the new
        values settles it without walking everything. Nodes a statement made and bound to no
        name (``h = (w * 2).detach()``, ``print(y.sum())``) are not reached, and the full walk
        lets them go.
        """
        targets = {id(fn) for fn in fns}
        if not targets:
            return True
        roots = [fn for name in self._just_bound for fn in _graph_fns([self.bound.get(name)])]
        walked: set[int] = set()
        while roots and targets and len(walked) < _SHORT_WALK:
            fn = roots.pop()
            if id(fn) in walked:
                continue
            walked.add(id(fn))
            targets.discard(id(fn))
            roots.extend(child for child, _ in fn.next_functions if child is not None)
        return not targets

    def _let_go_of_unreachable(self) -> None:
        self.dirty = False
        roots = list(self._held_roots())
        walk = (self.capture.changes, frozenset(map(id, roots)))
        if walk == self._last_walk and all(self.capture.id_of(fn) is not None for fn in roots):
            return  # NOTE [walks not repeated]
        self._last_walk = walk
        alive = set(self.capture.reachable_from_all(roots))
        for node_id in [n for n in self.capture.fns if n not in alive]:
            for slot in self.capture.tensor_slots(node_id):
                key = (node_id, slot.name)
                if self.states.get(key) in _HOLDING:
                    self._set_state(key, "freed", slot)
            self.capture.forget(node_id)
            self.gone_at[node_id] = len(self.steps)
            self.pending_gone.append(node_id)

    def _held_roots(self) -> Iterator[Any]:
        yield from _graph_fns(self._held_tensors())
        yield from _graph_fns(self.leaf_tensors.values())

    def _held_tensors(self) -> Iterator[torch.Tensor]:
        """Tensors the program holds by name, in lists and tuples too."""
        stack: list[Any] = list(self.env.values())
        seen: set[int] = set()
        while stack:
            value = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, torch.Tensor):
                yield value
            elif isinstance(value, (list, tuple)):
                stack.extend(value)
            # A module's or optimizer's tensors are leaves and state made without a graph; the
            # graphs of their .grad (create_graph) are reached through the known leaves.

    # -- capture and leaves -------------------------------------------
    def _add_nodes(self, new: list[str], line: int | None) -> None:
        self._apply_labels()
        step = len(self.steps)
        origin = self.origin
        for node_id in new:
            self.node_line[node_id] = (line, self._loops, step)
            if origin != (None, None):
                self.node_origin[node_id] = origin
            variable = self.capture.leaf_variable(node_id)
            if variable is not None:
                self._name_leaf(node_id, variable)
            for slot in self.capture.tensor_slots(node_id):
                key = (node_id, slot.name)
                # Read a moment ago by the capture: what a probe would say unless the read raised.
                readable = key not in self.capture.unreadable and node_id not in self.has_run
                self._set_state(key, "alive" if readable else self._probe(*key), slot)
                if slot.saved_version is not None:  # the version read with it, unless the read raised
                    now = None if readable else self._version_now(key)
                    self._set_version(key, slot.saved_version if now is None else now)
        self.pending_nodes.extend(new)

    def _name_leaf(self, node_id: str, variable: torch.Tensor) -> None:
        name = next((k for k, v in self.leaf_tensors.items() if v is variable), None)
        if name is None:
            name = self._known_leaf(variable, self._name_of(variable) or self._unused_leaf_name())
        self.leaves[name] = node_id
        self.leaf_names[node_id] = name
        self.capture.labels.setdefault(node_id, name)

    def _name_of(self, tensor: torch.Tensor) -> str | None:
        """A name the program holds the leaf by: ``x``, or a module parameter's path ``lin.weight``."""
        for name, value in self.env.items():
            if value is tensor and name not in self.leaf_tensors:
                return name
        for name, value in self.env.items():
            if isinstance(value, Checked):
                path = next((p for p, t in value.named_tensors() if t is tensor), None)
                if path is not None and f"{name}.{path}" not in self.leaf_tensors:
                    return f"{name}.{path}"
        return None

    def _unused_leaf_name(self, base: str = "leaf") -> str:
        """``leaf<k>`` for a leaf made inline (no name), clashing with no name in use."""
        k = len(self.leaf_tensors)
        while f"{base}{k}" in self.leaf_tensors or f"{base}{k}" in self.env:
            k += 1
        return f"{base}{k}"

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

    # -- probing and bookkeeping -------------------------------------
    def _slot(self, key: SlotKey) -> SavedSlot:
        return next(s for s in self.capture.tensor_slots(key[0]) if s.name == key[1])

    def _probe(self, node_id: str, slot: str) -> SlotState:
        return probe_slot(self.capture.fns[node_id], slot, node_id in self.has_run)

    def _version_now(self, key: SlotKey) -> int | None:
        fn = self.capture.fns.get(key[0])
        tensors = raw_saved_tensors(fn, key[1]) if fn is not None else []
        return tensors[0]._version if len(tensors) == 1 else None

    def _set_version(self, key: SlotKey, version: int | None) -> None:
        if version is not None and self.versions.get(key) != version:
            self.versions[key] = version
            self.pending_versions[key] = version

    def _set_state(self, key: SlotKey, state: SlotState, slot: SavedSlot | None = None) -> None:
        old = self.states.get(key)
        if old == state:
            return
        slot = slot or self._slot(key)
        change = (state in _HOLDING) - (old in _HOLDING)
        for ref in slot.storages:  # a storage is held while any slot holding it is
            storage = ref.device, ref.pointer
            before, old_bytes = self.held.get(storage, 0), self.bytes_of.get(storage, 0)
            self.held[storage] = after = before + change
            self.bytes_of[storage] = ref.nbytes
            # A running total: summing every storage on every step was O(steps x storages).
            self.held_bytes += (ref.nbytes if after > 0 else 0) - (old_bytes if before > 0 else 0)
        self.states[key] = state
        self.pending[key] = state
        if state == "freed":
            self._watch_freed_leaf(key, slot)
        elif old == "freed":
            self.freed_leaves.pop(key, None)

    # NOTE [freed leaves written]
    # A slot freed by a backward can no longer be read, nor its version: PyTorch let go of it. When
    # what it had saved is a leaf the program holds (a weight), the leaf itself still tells its
    # version; an optimizer step that writes it in place before a second backward through the same
    # graph is then a version change of the freed slot, on the step of the line that wrote it. The
    # fixes read it: retain_graph=True alone would trade the freed error for the version error.
    def _watch_freed_leaf(self, key: SlotKey, slot: SavedSlot) -> None:
        if len(slot.storages) != 1:
            return
        known, by_storage = self._leaf_storages
        if known != len(self.leaf_tensors):  # leaves are only ever added
            by_storage = {storage_ref(t): t for t in self.leaf_tensors.values()}
            self._leaf_storages = (len(self.leaf_tensors), by_storage)
        leaf = by_storage.get(slot.storages[0])  # the slot's own storage ref, made the same way
        if leaf is not None:
            self.freed_leaves[key] = (leaf, leaf._version)

    def _note_freed_leaves_written(self) -> None:
        for key, (leaf, version) in list(self.freed_leaves.items()):
            if key[0] not in self.capture.fns:  # the node is gone: no backward can reach it
                del self.freed_leaves[key]
            elif leaf._version != version:
                self.freed_leaves[key] = (leaf, leaf._version)
                self._set_version(key, leaf._version)

    def _probe_node(self, node_id: str, call: int | None) -> None:
        fn = self.capture.fns.get(node_id)
        if fn is None:
            return
        has_run = node_id in self.has_run
        for slot in self.capture.tensor_slots(node_id):
            key = (node_id, slot.name)
            state = probe_slot(fn, slot.name, has_run)
            if state == "freed" and call is not None and self.states.get(key) != "freed":
                self.freed_by[key] = call
            self._set_state(key, state, slot)
            if state in _HOLDING:
                self._set_version(key, self._version_now(key))

    def _probe_all(self, call: int | None) -> None:
        for node_id in list(self.capture.fns):
            self._probe_node(node_id, call)
        self.probed_writes = self.budget.writes

    def _grad_changes(self, kind: StepKind, node: str | None) -> dict[str, Values | None]:
        """Leaves whose ``.grad`` is another tensor, or the same one changed in place, since last time.

        The mark holds the grad tensor itself, not its ``id()``: create_graph makes
        AccumulateGrad replace ``.grad`` out of place, and a new tensor can reuse
        a dead one's id with the same version number.

        Inside a call only a leaf's own AccumulateGrad writes its ``.grad``, so a node's step
        reads that leaf (and leaves never read yet); the other steps read every leaf.
        """
        names: Iterable[str] = self.leaf_tensors
        if kind == "node":
            leaf = self.leaf_names.get(node or "")
            if leaf is None and not self.unread_leaves:
                return {}  # most node steps: an operation's node writes no .grad
            names = dict.fromkeys([*([leaf] if leaf else []), *self.unread_leaves])
        changes: dict[str, Values | None] = {}
        for name in names:
            self.unread_leaves.pop(name, None)
            grad = self.leaf_tensors[name].grad
            if name not in self.grad_marks and grad is None:  # None from the start: nothing changed
                self.grad_marks[name] = None
            elif name not in self.grad_marks or not _unchanged(self.grad_marks[name], grad):
                self.grad_marks[name] = None if grad is None else (grad, grad._version)
                changes[name] = self.grad_values[name] = None if grad is None else values_of(grad)
        return changes

    def _snapshot(
        self,
        kind: StepKind,
        call: int | None,
        node: str | None,
        *,
        line: int | None,
        grads: dict[str, Values | None] | None = None,
        **extra: Any,
    ) -> Step:
        changes = self._grad_changes(kind, node) if grads is None else grads
        slots, versions = self.pending, self.pending_versions
        step = Step(
            index=len(self.steps),
            kind=kind,
            call=call,
            node=node,
            slot_changes=MappingProxyType(slots) if slots else _NOTHING,  # handed over, not copied
            grad_changes=MappingProxyType(changes) if changes else _NOTHING,
            saved_bytes=self.held_bytes,
            device_bytes=None if self.device.type != "cuda" else _device_bytes(self.device),
            added_nodes=tuple(self.pending_nodes),
            line=line,
            loops=self._loops,
            printed=tuple(self.pending_printed),
            alive_nodes=len(self.capture.fns),
            gone_nodes=tuple(self.pending_gone),
            version_changes=MappingProxyType(versions) if versions else _NOTHING,
            **extra,
        )
        if slots:
            self.pending = {}
        if versions:
            self.pending_versions = {}
        if self.pending_nodes:
            self.pending_nodes.clear()
        if self.pending_gone:
            self.pending_gone.clear()
        if self.pending_printed:
            self.pending_printed.clear()
        self.steps.append(step)
        return step

    def check_deadline(self) -> None:
        if time.monotonic() > self.deadline:
            raise RecordingTimeout(timeout_message(self.limits))


class _CallObserver:
    """The hooks of one call: engine order, and which node failed."""

    def __init__(self, recorder: _Recorder, call: int, line: int, loops: tuple[LoopMark, ...]) -> None:
        self.recorder = recorder
        self.call = call
        self.line = line
        self.loops = loops
        self.started: list[str] = []
        self.finished: set[str] = set()
        self.timed = math.isfinite(recorder.deadline)  # a trusted script has no time limit

    @contextmanager
    def hooks(self) -> Iterator[None]:
        handles = []
        pre, post = self._on_pre, self._on_post
        try:
            for node_id, fn in self.recorder.capture.fns.items():
                handles.append(fn.register_prehook(partial(pre, node_id)))
                handles.append(fn.register_hook(partial(post, node_id)))
            yield
        finally:
            for handle in handles:
                handle.remove()

    def _on_pre(self, node_id: str, grad_outputs: Any) -> None:
        recorder = self.recorder
        if self.timed:
            recorder.check_deadline()
        self._close_previous()
        self.started.append(node_id)
        calls = recorder.reached.get(node_id)
        if calls is None:
            recorder.reached[node_id] = {self.call}
        else:
            calls.add(self.call)

    def _on_post(self, node_id: str, grad_inputs: Any, grad_outputs: Any) -> None:
        self.finished.add(node_id)
        self.recorder.has_run.add(node_id)

    def _close_previous(self) -> None:
        """Take the step of the node that ran last, now that it released its buffers."""
        if self.started and self.started[-1] in self.finished:
            node_id = self.started[-1]
            self.recorder._probe_node(node_id, self.call)
            self.recorder._snapshot("node", self.call, node_id, line=self.line)

    def finish(self) -> None:
        self._close_previous()

    def failed_node(self) -> str | None:
        running = [n for n in self.started if n not in self.finished]
        return running[-1] if running else None


def _targets(statement: ast.stmt) -> list[ast.expr]:
    """What a statement binds or deletes: names, subscripts, attributes (tuples opened)."""
    if isinstance(statement, ast.Assign):
        raw = list(statement.targets)
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        raw = [statement.target]
    elif isinstance(statement, ast.Delete):
        raw = list(statement.targets)
    elif isinstance(statement, ast.For):
        raw = [statement.target]
    else:
        return []
    out: list[ast.expr] = []
    while raw:
        target = raw.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            raw.extend(target.elts)
        else:
            out.append(target)
    return out


_SHORT_WALK = 256  # nodes a short walk may visit before the full one is taken instead


def _graph_fns(values: Iterable[Any]) -> Iterator[Any]:
    """The ``grad_fn`` of each tensor, and of its ``.grad`` when that has a graph (create_graph)."""
    for value in values:
        if isinstance(value, torch.Tensor):
            if value.grad_fn is not None:
                yield value.grad_fn
            grad = value.grad if value.is_leaf else None
            if grad is not None and grad.grad_fn is not None:
                yield grad.grad_fn


def _holds_graph(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.grad_fn is not None or (value.grad is not None and value.grad.grad_fn is not None)
    return isinstance(value, (list, tuple, Checked))


@contextmanager
def isolated(device: torch.device) -> Iterator[None]:
    """Seeded, with the caller's random streams and grad mode untouched afterwards."""
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), torch.enable_grad():
        torch.manual_seed(SEED)
        if device.type == "cpu":
            yield
        else:
            with torch.device(device):
                yield


def _device_bytes(device: torch.device) -> int:
    """Bytes the CUDA caching allocator holds on ``device`` (a CUDA device only)."""
    return int(torch.cuda.memory_allocated(device))


def _unchanged(mark: tuple[torch.Tensor, int] | None, grad: torch.Tensor | None) -> bool:
    if mark is None or grad is None:
        return mark is None and grad is None
    return mark[0] is grad and mark[1] == grad._version


def _grad_clone(leaf: torch.Tensor) -> torch.Tensor | None:
    """A copy of ``leaf.grad`` as a call starts (the call may add to it in place)."""
    grad = leaf.grad
    return None if grad is None else grad.detach().clone()


def _contribution(leaf: torch.Tensor, before: torch.Tensor | None) -> Values | None:
    """What a call added to ``leaf.grad``: subtracted by torch, in the grad's dtype (one copy out,
    where subtracting two copies in Python took longer than the call on a model's weights)."""
    after = leaf.grad
    if after is None:
        return None
    if before is None or before.shape != after.shape:
        return values_of(after)
    if after.is_complex() or before.dtype != after.dtype:  # shown by magnitude: |after| - |before|
        return values_of(after) - values_of(before)
    return values_of(after.detach() - before)


def record(program: Program, device: str = "cpu", *, limits: Limits | None = None) -> Recording:
    """Run ``program`` on ``device`` and return its recorded timeline."""
    return _Recorder(program, resolve_device(device), limits or Limits()).run()
