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
nodes] in ``alive.py``); a ``forward`` step is taken when anything changed.
For each autograd call the engine observer (``observer.py``) hooks every
captured node; the step for a node is taken at the next node's pre-hook,
once the node has released its buffers. The node that just ran is probed
(its raw saved tensors hold no data once released; otherwise ``_saved_*``
is read, which raises when a tensor was modified in place): running a node
releases its own buffers and no others. Every slot is probed again after a
statement or loss that wrote into a tensor in place (the size guard counts
such writes) and after a call that failed; tests/core/recorder/test_recorder.py checks
all of this against probing every slot at every node.
A trusted script of the user's own feeds the same :class:`Recorder` from
outside the evaluator (NOTE [trusted scripts] in ``script_recorder.py``).

The recorder is made of parts, each in its own module: the slot ledger
(``ledger.py``), leaf naming (``leaves.py``), the grad watch (``grads.py``),
the alive walk (``alive.py``), the steps (``step_log.py``) and the engine
observer (``observer.py``); :class:`Recorder` wires them together around the
capture of the graph (``capture.py``).
"""

from __future__ import annotations

import ast
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

import torch

from app.core.devices import resolve_device
from app.core.language.evaluator import Evaluator
from app.core.language.objects import Checked
from app.core.language.parsing import parse
from app.core.language.positions import SourceText
from app.core.language.python_modules import seeded_random
from app.core.lesson.captions import RECOMPUTED, write_captions
from app.core.model.errors import ProgramRaised, RecordingTimeout
from app.core.model.graph import Graph, LoopMark, StorageNumbers
from app.core.model.program import Call, CallInfo, CallKind, Program
from app.core.model.recording import Recording
from app.core.model.timeline import Step, StepKind, Timeline
from app.core.model.values import Values
from app.core.recorder.alive import AliveWalk, graph_fns
from app.core.recorder.capture import GraphCapture
from app.core.recorder.grads import GradWatch, values_of
from app.core.recorder.leaves import LeafNames
from app.core.recorder.ledger import SlotLedger
from app.core.recorder.observer import EngineObserver
from app.core.recorder.reach import app_internal, held_tensors
from app.core.recorder.step_log import Origin, StepLog
from app.core.sizing.limits import Budget, Limits, timeout_message

__all__ = ["SEED", "ProgramRecorder", "ProgramStopped", "Recorder", "Recording", "isolated", "record"]

SEED = 0  # every recording starts from torch.manual_seed(SEED); the program may seed again
_ERRORS = (RuntimeError, TypeError, ValueError, IndexError)  # what an autograd call raises
Label = tuple[Any, str, tuple[int, int], bool]  # a grad_fn, its text, the lines it spans, a statement's


class ProgramStopped(BaseException):
    """Raised through the program when an autograd call failed: the program ends there."""


class Recorder:
    """Records what a program's statements and autograd calls do to the graph, step by step.

    Whoever runs the program tells it when a statement ends (:meth:`after_statement`) and hands it
    every autograd call (:meth:`autograd_call`); what the program holds is :meth:`held_tensors`,
    and a leaf's name is :meth:`name_of` (both the driver's to say).
    """

    def __init__(
        self, program: Program, device: torch.device, limits: Limits, *, watch_writes: bool = False
    ) -> None:
        self.program = program
        self.device = device
        self.limits = limits
        self.deadline = time.monotonic() + limits.time_limit_s
        self.budget = Budget(limits.max_total_elements)  # one element budget for the whole recording
        self.text = SourceText(program.code)  # split once: labels read it for every value
        self.env: dict[str, Any] = {}  # the names the program holds, by name
        self.capture = GraphCapture()
        self.ledger = SlotLedger(self.capture, watch_writes=watch_writes)
        self.leaves = LeafNames(self.capture, name_of=self.name_of, in_use=self.name_in_use)
        self.ledger.watch_leaves(self.leaves.tensors)
        self.grads = GradWatch(self.leaves)
        self.alive = AliveWalk(self.capture, self.held_roots, self.near_roots)
        self.log = StepLog()
        timed = math.isfinite(self.deadline)  # a trusted script has no time limit
        self.observer = EngineObserver(
            self.capture,
            node_done=self._node_done,
            ran=self.ledger.ran,
            check=self.check_deadline if timed else None,
        )
        self.calls: list[CallInfo] = []
        self.fresh: list[Any] = []  # grad_fns of the tensors made since the last capture
        self.labels: list[Label] = []
        self.loops: tuple[LoopMark, ...] = ()  # the loops around the statement running now
        self.origin: Origin = (None, None)  # what new nodes get; a script sets it before each capture
        self.error: str | None = None
        self.error_line: int | None = None
        self._probed_writes = 0  # budget.writes when every slot was last probed
        self._call_line = 0  # the line of the autograd call running
        self.statement_line: int | None = None  # the line of the statement that just finished
        self.recomputed: list[str] = []  # nodes a checkpoint's recompute made in the running call
        self._recomputing = False
        self._twins: dict[str, str] = {}  # a checkpointed node -> its recomputed twin, until it runs

    # -- what the driver says -----------------------------------------
    def held_tensors(self) -> Iterator[torch.Tensor]:
        """Tensors the program holds now (NOTE [alive nodes])."""
        return iter(())

    def held_roots(self) -> Iterator[Any]:
        """The nodes of what the program holds, and of its leaves' ``.grad``."""
        yield from graph_fns(self.held_tensors())
        yield from graph_fns(self.leaves.tensors.values())

    def near_roots(self) -> Iterator[Any]:
        """Some of :meth:`held_roots`, found without walking what the program's objects hold."""
        return iter(())

    def name_of(self, tensor: torch.Tensor) -> str | None:
        """A name the program holds the leaf by, or None."""
        return None

    def name_in_use(self, name: str) -> bool:
        return name in self.env

    def take_named_leaves(self) -> None:
        """Know the leaves the statement bound, before any graph reaches them."""

    def label(self, fn: Any, text: str, span: tuple[int, int], *, statement: bool) -> None:
        """Label ``fn``'s node with ``text`` when it is captured (a statement's over an expression's)."""
        self.labels.append((fn, text, span, statement))

    def printed(self, text: str) -> None:
        self.log.printed(text)

    # -- after a statement --------------------------------------------
    def after_statement(self, line: int | None) -> None:
        """The statement at ``line`` has finished: capture, let go, probe, and step if anything changed."""
        self.statement_line = line
        self.take_fresh(call=None, line=line)
        for node_id in self.alive.gone():
            self.ledger.let_go(node_id)
            self.capture.forget(node_id)
            self.log.node_gone(node_id)
        self.take_named_leaves()
        written = self.budget.writes != self._probed_writes
        self._probe_if_written(None)
        self.ledger.note_freed_leaves_written()
        grads = self.grads.changes("forward", None, written=written)
        if self.log.waiting or self.ledger.changed or grads:
            self.snapshot("forward", None, None, line=line, grads=grads)

    def take_fresh(self, *, call: int | None, line: int | None) -> list[str]:
        """Capture the graph behind the tensors made since the last look; the new node ids."""
        fresh, self.fresh = self.fresh, []
        if not fresh:
            return []
        new = self.capture.add_roots(fresh, call=call)
        self.apply_labels()
        for node_id in new:
            self.log.node_added(node_id, line=line, loops=self.loops, origin=self.origin)
            variable = self.capture.leaf_variable(node_id)
            if variable is None:
                pass
            elif self._recomputing and self.leaves.name(variable) is None:
                # a reentrant checkpoint's recompute starts from detached copies of the block's
                # inputs: leaves of its own backward, not of the program (no .grad row)
                self.capture.label(self.capture.fns[node_id], "the block's input, detached")
            else:
                self.leaves.name_node(node_id, variable)
            self.ledger.add_node(node_id)
        if call is None:  # a statement's own nodes: held by what it bound, or let go at once
            self.alive.made.extend(self.capture.fns[n] for n in new)
        return new

    def apply_labels(self) -> None:
        owner: dict[int, tuple[int, int]] = {}
        for fn, text, span, is_statement in self.labels:
            if self.capture.id_of(fn) is None:
                continue
            first = owner.get(id(fn))
            if first is None:
                owner[id(fn)] = span
                self.capture.label(fn, text)
            elif is_statement and span[0] <= first[0] <= span[1]:
                self.capture.label(fn, text, override=True)  # "y = x.square()" over "x.square()"
        self.labels.clear()

    def _probe_if_written(self, call: int | None) -> None:
        if self.budget.writes != self._probed_writes:  # the code wrote into a tensor in place
            self.ledger.probe_all(call)
            self._probed_writes = self.budget.writes

    # -- autograd calls -----------------------------------------------
    def autograd_call(
        self,
        kind: CallKind,
        run: Callable[[], Any],
        node: ast.Call,
        given: Mapping[str, Any],
        loops: tuple[LoopMark, ...],
    ) -> Any:
        """Run ``run()``, one autograd call, with a step for every node it runs (NOTE [program hooks])."""
        self.loops = loops
        index = len(self.calls)
        call = self._describe_call(kind, node, given, loops)
        self._made_in_call(self.take_fresh(call=index, line=call.line))
        self._probe_if_written(None)
        grad_graphs = any(_holds_graph(t.grad) for t in self.leaves.tensors.values())
        first = len(self.log)
        start = self.grads.before_call()
        self._call_line = call.line
        error, result = None, None
        try:
            with self.observer.watching(index):
                result = run()
        except RecordingTimeout:
            raise
        except _ERRORS as exc:
            error = str(exc)
        except ProgramRaised as exc:  # the program's own code raised inside the call (a Function's backward)
            error = exc.message
        self.observer.finish()
        self._let_go_recomputed()
        if grad_graphs:  # NOTE [calls that let go]: a .grad with a graph may have been replaced
            self.alive.dirty = True
        if error is not None:
            # NOTE [what a call can change]: a failed call is probed in full: the failing node
            # started and never finished.
            self.ledger.probe_all(index)
            self._probed_writes = self.budget.writes
            failed = self.observer.failed_node()
            step = self.snapshot("error", index, failed, line=call.line, error=error)
            self.calls.append(CallInfo(index, call, first, step.index, error, failed))
            raise ProgramStopped
        # create_graph leaves a graph in .grad, held through the leaves from now on: this call built it
        self.fresh.extend(graph_fns(t for t in self.leaves.tensors.values() if t.grad is not None))
        self._made_in_call(self.take_fresh(call=index, line=call.line))
        grads = self.grads.changes("call_end", None)
        contribution = self.grads.contributions(start) if kind == "backward" else None
        step = self.snapshot(
            "call_end",
            index,
            None,
            line=call.line,
            grads=grads,
            contribution=contribution,
            result=_result_values(result),
        )
        self.calls.append(CallInfo(index, call, first, step.index))
        return result

    def _made_in_call(self, new: list[str]) -> None:
        """Nodes captured for a call are the statement's own too: ``(x * 2).sum().backward()``
        holds its graph on no name once the statement ends, and ``backward(create_graph=True)``
        leaves one in ``.grad`` (NOTE [calls that let go])."""
        self.alive.made.extend(self.capture.fns[n] for n in new)

    # -- checkpointed blocks (NOTE [checkpoint frames]) ----------------
    @contextmanager
    def checkpoint_forward(self, frame: str, line: int | None) -> Iterator[Callable[[Any], None]]:
        """The block's forward: what it makes (and the checkpoint's own node) is drawn in ``frame``."""
        self.take_fresh(call=None, line=line)  # the arguments' graphs stay outside the frame
        before = self.origin
        self.origin = (frame, before[1])

        def outputs(result: Any) -> None:
            self.fresh.extend(graph_fns(_tensors_in(result)))
            self.take_fresh(call=None, line=line)

        try:
            yield outputs
        finally:
            self.origin = before

    def recompute(self, frame: str, run: Callable[[], Any], forward: Any) -> Any:
        """The block run again inside the running call: its nodes are a ``recompute`` step.

        A non-reentrant checkpoint's own nodes (from ``forward``) run and use what the recompute
        saved: each recomputed node's tensors are freed when its twin among them has run.
        """
        before = self.origin
        self.origin = (frame + RECOMPUTED, before[1])
        try:
            result = run()
            self.fresh.extend(graph_fns(_tensors_in(result)))
            index = len(self.calls)
            self._recomputing = True
            new = self.take_fresh(call=index, line=self._call_line)
        finally:
            self.origin, self._recomputing = before, False
        self.recomputed.extend(new)
        self.observer.watch_more(new)  # a reentrant checkpoint's own backward runs them now
        self._twins.update(self._pair(_tensors_in(forward), _tensors_in(result), set(new)))
        self.snapshot("recompute", index, None, line=self._call_line)
        return result

    def _pair(self, forward: list[torch.Tensor], again: list[torch.Tensor], new: set[str]) -> dict[str, str]:
        """Each node of the forward -> its recomputed twin, walking both graphs side by side."""
        ids, twins = self.capture.id_of, {}
        stack = list(zip(graph_fns(forward), graph_fns(again), strict=False))
        while stack:
            first, second = stack.pop()
            mine, theirs = ids(first), ids(second)
            if mine is None or theirs not in new or mine in twins or type(first) is not type(second):
                continue
            twins[mine] = theirs
            stack.extend(zip(_children(first), _children(second), strict=False))
        return twins

    def _let_go_recomputed(self) -> None:
        """The call is over: what its recomputes made (and saved) is gone with it, and so are the
        inputs of a checkpoint whose nodes have all run (NOTE [checkpoint inputs])."""
        for node_id in list(self.capture.frames):
            self.ledger.probe_node(node_id, len(self.calls))
        for node_id in self.recomputed:
            if node_id in self.capture.fns:
                self.ledger.let_go(node_id)
                self.capture.forget(node_id)
                self.log.node_gone(node_id)
        self.recomputed, self._twins = [], {}

    def _node_done(self, node_id: str, call: int) -> None:
        twin = self._twins.pop(node_id, None)
        if twin is not None:  # it used what its recomputed twin saved, and let go of it
            self.ledger.let_go(twin)
        self.ledger.probe_node(node_id, call)
        self.snapshot("node", call, node_id, line=self._call_line)

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

    # -- steps --------------------------------------------------------
    def snapshot(
        self,
        kind: StepKind,
        call: int | None,
        node: str | None,
        *,
        line: int | None,
        grads: dict[str, Values | None] | None = None,
        error: str | None = None,
        contribution: Mapping[str, Values | None] | None = None,
        result: Mapping[str, Values] | None = None,
    ) -> Step:
        """Take a step of ``kind`` with everything that changed since the last one."""
        slots, versions = self.ledger.take_changes()
        return self.log.take(
            kind,
            call,
            node,
            line=line,
            loops=self.loops,
            slots=slots,
            versions=versions,
            grads=self.grads.changes(kind, node) if grads is None else grads,
            saved_bytes=self.ledger.held_bytes,
            device_bytes=None if self.device.type != "cuda" else _device_bytes(self.device),
            alive_nodes=len(self.capture.fns),
            error=error,
            contribution=contribution,
            result=result,
        )

    def failed(self, message: str, line: int | None) -> None:
        """The program's own exception: it ends there, with an ``error`` step."""
        self.error, self.error_line = message, line
        self.snapshot("error", None, None, line=line, error=message)

    def check_deadline(self) -> None:
        if time.monotonic() > self.deadline:
            raise RecordingTimeout(timeout_message(self.limits))

    def result(self) -> Recording:
        """The recording of what ran so far (any driver ends with it)."""
        if not self.log.steps:
            self.snapshot("forward", None, None, line=None)
        graph = self._freeze()
        needed_by = self.observer.needed_by()
        freed_by = MappingProxyType(dict(self.ledger.freed_by))
        steps = write_captions(self.log.steps, graph, self.calls, freed_by, needed_by)
        return Recording(
            program=self.program,
            device=str(self.device),
            torch_version=str(torch.__version__),  # not torch's TorchVersion: a recording is plain data
            graph=graph,
            timeline=Timeline(tuple(steps)),
            leaves=MappingProxyType(dict(self.leaves.nodes)),
            calls=tuple(self.calls),
            freed_by=freed_by,
            needed_by=needed_by,
            error=self.error,
            error_line=self.error_line,
        )

    def _freeze(self) -> Graph:
        # storages numbered as the nodes are made: a recording is a file, which holds no address
        return self.capture.freeze(self.log.node_fields(), saved=StorageNumbers())


class ProgramRecorder(Recorder):
    """The recorder of a checked program: the evaluator runs it and tells it every statement."""

    def __init__(self, program: Program, device: torch.device, limits: Limits) -> None:
        super().__init__(program, device, limits)
        self.evaluator: Evaluator | None = None
        # NOTE [running lines]: the grad_fns made on each line still running, by call depth
        self.running_lines: list[list[Any]] = []

    def run(self) -> Recording:
        tree = parse(self.program.code, field="program", mode="exec")
        with isolated(self.device):
            evaluator = self.evaluator = Evaluator(
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
            except ProgramStopped:
                pass
            except ProgramRaised as exc:
                self.after_statement(exc.line)
                self.failed(exc.message, exc.line)
            return self.result()

    # -- what the evaluator tells us (NOTE [program hooks]) -----------
    def statement_done(self, statement: ast.stmt, loops: tuple[LoopMark, ...]) -> None:
        self.loops = loops
        evaluator = self.evaluator
        let_go = evaluator is not None and evaluator.let_go
        if evaluator is not None:
            evaluator.let_go = False
            self._line_ended(statement, evaluator.functions.depth)
        self.alive.note_rebinding(statement, self.env, let_go=let_go)
        self.after_statement(statement.lineno)

    def _on_value(self, node: ast.AST, value: Any) -> None:
        fn = value.grad_fn
        if fn is None:
            return
        self.fresh.append(fn)
        if self.evaluator is not None:
            depth = self.evaluator.functions.depth
            lines = self.running_lines
            if len(lines) <= depth:
                lines.extend([] for _ in range(depth + 1 - len(lines)))
            lines[depth].append(fn)
        if isinstance(node, ast.Name):
            return
        text = self.text.segment(node) or ""
        span = (getattr(node, "lineno", 0), getattr(node, "end_lineno", 0))
        self.label(fn, " ".join(text.split()), span, statement=isinstance(node, ast.Assign))

    def _line_ended(self, statement: ast.stmt, depth: int) -> None:
        """Let go of what the line at ``depth`` (and the calls it made) made; what a ``return``
        made goes on the caller's line, as its value (NOTE [running lines])."""
        lines = self.running_lines
        returned = lines[depth] if isinstance(statement, ast.Return) and 0 < depth < len(lines) else []
        del lines[depth:]
        if returned:
            lines.extend([] for _ in range(depth - len(lines)))
            lines[depth - 1].extend(returned)

    # -- what the program holds ---------------------------------------
    def held_roots(self) -> Iterator[Any]:
        """As the recorder's, and the values made on lines still running (NOTE [running lines]).

        # NOTE [running lines]
        In ``keep([x.exp(), Box(x.exp())])`` the first ``x.exp()`` is on no name while
        ``Box.__init__`` runs: it is held by the half-built list of the line that called it,
        as CPython holds it on that frame's value stack. The values each running line made are
        kept, by the depth of the call that runs it, until that line ends; a ``return`` line's
        go to the line that called it, whose value they now are.
        """
        yield from super().held_roots()
        for made in self.running_lines:
            yield from made

    def near_roots(self) -> Iterator[Any]:
        """The nodes of the tensors the program's names hold themselves, of its leaves' ``.grad``
        and of its running lines (NOTE [walks not repeated] in ``alive.py``)."""
        yield from graph_fns(value for value in self.env.values() if isinstance(value, torch.Tensor))
        yield from graph_fns(self.leaves.tensors.values())
        for made in self.running_lines:
            yield from made

    def held_tensors(self) -> Iterator[torch.Tensor]:
        """Tensors the program's names and its calls under way reach (NOTE [held is reachable])."""
        scopes = [] if self.evaluator is None else self.evaluator.functions.live_scopes()
        return held_tensors([*self.env.values(), *scopes], own_modules=(), closed=app_internal)

    def name_of(self, tensor: torch.Tensor) -> str | None:
        """A name the program holds the leaf by: ``x``, or a module parameter's path ``lin.weight``."""
        known = self.leaves.tensors
        for name, value in self.env.items():
            if value is tensor and name not in known:
                return name
            if value is tensor and known[name] is not tensor:  # the name holds another leaf now
                self.leaves.rebound_to_leaf(name, tensor, self.statement_line)
                return name
        for name, value in self.env.items():
            if isinstance(value, Checked):
                path = next((p for p, t in value.named_tensors() if t is tensor), None)
                if path is not None and f"{name}.{path}" not in known:
                    return f"{name}.{path}"
        return None

    def take_named_leaves(self) -> None:
        """Leaves the program binds get a ``.grad`` row from then on, before any graph reaches them."""
        for name in self.alive.just_bound:
            value = self.env.get(name)
            if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
                self.leaves.rebound_to_leaf(name, value, self.statement_line)
                self.leaves.known(value, name, self.statement_line)
            elif isinstance(value, Checked):
                for path, tensor in value.named_tensors():
                    if tensor.is_leaf and tensor.requires_grad:
                        self.leaves.known(tensor, f"{name}.{path}")
        self.alive.just_bound = []


def _holds_graph(grad: torch.Tensor | None) -> bool:
    return grad is not None and grad.grad_fn is not None


def _children(fn: Any) -> list[Any]:
    return [child for child, _ in fn.next_functions if child is not None]


def _tensors_in(result: Any) -> list[torch.Tensor]:
    """The tensors a block returned: one, or a tuple or list of them."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [t for t in items if isinstance(t, torch.Tensor)]


def _result_values(result: Any) -> Mapping[str, Values] | None:
    if not isinstance(result, tuple):
        return None
    shown = {"result" if len(result) == 1 else f"result[{i}]": t for i, t in enumerate(result)}
    return MappingProxyType({k: values_of(v) for k, v in shown.items() if isinstance(v, torch.Tensor)})


@contextmanager
def isolated(device: torch.device) -> Iterator[None]:
    """Seeded, with the caller's random streams and grad mode untouched afterwards."""
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), torch.enable_grad(), seeded_random(SEED):
        torch.manual_seed(SEED)
        if device.type == "cpu":
            yield
        else:
            with torch.device(device):
                yield


def _device_bytes(device: torch.device) -> int:
    """Bytes the CUDA caching allocator holds on ``device`` (a CUDA device only)."""
    return int(torch.cuda.memory_allocated(device))


def record(program: Program, device: str = "cpu", *, limits: Limits | None = None) -> Recording:
    """Run ``program`` on ``device`` and return its recorded timeline.

    >>> from app.core.loading import load_builtin
    >>> rec = record(load_builtin("forgot-retain"))
    >>> rec.calls[1].error.startswith("Trying to backward through the graph a second time")
    True
    >>> rec.calls[1].failed_node, rec.graph.node("n0").name
    ('n0', 'PowBackward0')
    """
    return ProgramRecorder(program, resolve_device(device), limits or Limits()).run()
