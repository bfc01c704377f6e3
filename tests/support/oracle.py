"""PyTorch as the oracle for recordings: the program's own text, run as plain Python.

Tests may ``exec`` trusted program text; the app never does. Both runs below
execute the program under ``torch.random.fork_rng`` with seed 0, as the
recorder runs it, with ``Tensor.backward``, ``torch.autograd.backward`` and
``torch.autograd.grad`` patched to see each top-level autograd call; the first
exception ends the program, as Python would.

* :func:`run_plainly` logs each call: its error text, the ``.grad`` of every
  leaf the program names after it (module parameters as ``lin.weight``), a
  grad call's result, and the nodes the engine entered and finished (hooks
  that change nothing).
* :func:`run_probed` puts pre- and post-hooks of its own on every node
  reachable from a call's outputs; at each pre-hook every ``_saved_*`` slot of
  every node seen so far is read (the naive, full probe), and what the program
  still holds is found by walking from its names. Engine order, slot states,
  tensor versions and saved bytes after each node are known without any of
  the recorder's bookkeeping.

:func:`check_against_plain` and :func:`check_against_probes` compare a
recording with them; the two graphs are matched by walking both from each
call's root along ``next_functions``, so node ids are never assumed.
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import torch

from app.core import Recording
from app.core.model.values import Values

__all__ = [
    "PlainCall",
    "PlainRun",
    "ProbedRun",
    "as_tensor",
    "check_against_plain",
    "check_against_probes",
    "children",
    "leaf_values",
    "match_nodes",
    "run_plainly",
    "run_probed",
    "same",
    "walk",
]

PROGRAM_FILE = "<program>"

# -- values ---------------------------------------------------------------------------------


def as_tensor(values: Values | None) -> torch.Tensor | None:
    """A recorded :class:`Values` back as a CPU tensor of its dtype."""
    if values is None:
        return None
    dtype = getattr(torch, values.dtype)
    return torch.tensor(values.flat, dtype=dtype).reshape(values.shape)


def same(a: Values | torch.Tensor | None, b: Values | torch.Tensor | None) -> bool:
    """Equal shape, dtype and elements (NaN equal to NaN)."""
    x = as_tensor(a) if isinstance(a, Values) else a
    y = as_tensor(b) if isinstance(b, Values) else b
    if x is None or y is None:
        return x is None and y is None
    x, y = x.detach().cpu(), y.detach().cpu()
    return x.shape == y.shape and x.dtype == y.dtype and torch.equal(x.nan_to_num(7.0), y.nan_to_num(7.0))


# -- graphs ---------------------------------------------------------------------------------


def children(fn: Any) -> list[Any]:
    """Distinct ``next_functions`` in order (a node used twice is one edge)."""
    out: list[Any] = []
    for child, _ in fn.next_functions:
        if child is not None and all(child is not c for c in out):
            out.append(child)
    return out


def walk(roots: Iterable[Any]) -> Iterator[Any]:
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        yield fn
        stack.extend(children(fn))


def slot_names(fn: Any) -> list[str]:
    return [a.removeprefix("_saved_") for a in dir(fn) if a.startswith("_saved_")]


def raw_tensors(fn: Any, slot: str) -> list[torch.Tensor]:
    """The tensors a slot holds, read without the version check; [] once freed."""
    raw = getattr(fn, "_raw_saved_" + slot)
    raws = raw if isinstance(raw, (list, tuple)) else [raw]
    return [t for t in (r.data for r in raws) if isinstance(t, torch.Tensor)]


def probe(fn: Any, slot: str, ran: bool) -> str | None:
    """Independent probe: None for a slot that holds no tensor."""
    raw = getattr(fn, "_raw_saved_" + slot, None)
    if raw is not None and not isinstance(raw, (list, tuple)) and raw.unpack_hook is not None:
        # A saved-tensor hook (a non-reentrant checkpoint's): reading _saved_ would run its unpack,
        # the checkpoint's recompute. PyTorch empties the raw slot when it frees it.
        return "freed" if raw.data is None else ("retained" if ran else "alive")
    try:
        value = getattr(fn, "_saved_" + slot)
    except RuntimeError as exc:
        return "modified" if "modified by an inplace operation" in str(exc) else "freed"
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or not all(isinstance(v, torch.Tensor) for v in values):
        return None
    return "retained" if ran else "alive"


# -- what the program names -------------------------------------------------------------------


def program_globals() -> dict[str, Any]:
    """What a program starts with: torch, F, nn and optim are bound even without imports."""
    return {"torch": torch, "F": torch.nn.functional, "nn": torch.nn, "optim": torch.optim}


def named_leaves(names: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Leaves the program names, module parameters by their path (``lin.weight``)."""
    leaves: dict[str, torch.Tensor] = {}
    for name, value in names.items():
        if isinstance(value, torch.nn.Module):
            leaves.update((f"{name}.{path}", p) for path, p in value.named_parameters())
        elif isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
            leaves[name] = value
    return leaves


def grads_of(leaves: dict[str, torch.Tensor]) -> dict[str, torch.Tensor | None]:
    return {name: None if t.grad is None else t.grad.detach().clone() for name, t in leaves.items()}


def held_tensors(names: dict[str, Any], *, grads: bool = True) -> Iterator[torch.Tensor]:
    """Every tensor the program's names hold: in lists and tuples, in modules and optimizers,
    and (``grads``) the ``.grad`` of each leaf among them."""
    stack: list[Any] = [v for k, v in names.items() if k != "__builtins__"]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            yield value
            if grads and value.is_leaf and value.grad is not None:
                yield value.grad
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, torch.nn.Module):
            stack.extend(value.parameters())
            stack.extend(value.buffers())
        elif isinstance(value, torch.optim.Optimizer):
            stack.extend(p for group in value.param_groups for p in group["params"])


def call_outputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    first = args[0] if args else kwargs.get("outputs", kwargs.get("tensors"))
    items = [first] if isinstance(first, torch.Tensor) else list(first or [])
    return [t for t in items if isinstance(t, torch.Tensor)]


# -- running the program --------------------------------------------------------------------


@dataclass
class Hooked:
    """What one top-level autograd call is about to do, handed to the run's observer."""

    kind: str
    keywords: dict[str, Any]
    outputs: list[torch.Tensor]


@contextlib.contextmanager
def patched_autograd(observe: Callable[[Hooked, Callable[[], Any]], Any]) -> Iterator[None]:
    """Every top-level autograd call goes through ``observe`` (``Tensor.backward`` goes on to
    ``autograd.backward``: the inner call runs as it is)."""
    depth = 0

    def wrapped(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal depth
            if depth:
                return real(*args, **kwargs)
            depth += 1
            try:
                hooked = Hooked(kind, dict(kwargs), call_outputs(args, kwargs))
                return observe(hooked, lambda: real(*args, **kwargs))
            finally:
                depth -= 1

        return call

    with (
        mock.patch.object(torch.Tensor, "backward", wrapped("backward", torch.Tensor.backward)),
        mock.patch.object(torch.autograd, "backward", wrapped("backward", torch.autograd.backward)),
        mock.patch.object(torch.autograd, "grad", wrapped("grad", torch.autograd.grad)),
    ):
        yield


@dataclass
class Executed:
    error: Exception | None  # what ended the program, as Python would have raised it
    error_line: int | None
    names: dict[str, Any]
    printed: str


def execute(
    code: str,
    observe: Callable[[Hooked, Callable[[], Any]], Any],
    names: dict[str, Any],
    between_statements: Callable[[], None] | None = None,
) -> Executed:
    """Run trusted program text under seed 0 (the caller's random stream untouched).

    ``between_statements`` runs before each line of the program starts (so after the one
    before it ended), and once more at the end.
    """
    printed = io.StringIO()
    error: Exception | None = None
    line: int | None = None
    with (
        torch.random.fork_rng(),
        patched_autograd(observe),
        contextlib.redirect_stdout(printed),
        traced_lines(between_statements),
    ):
        torch.manual_seed(0)
        try:
            exec(compile(code, PROGRAM_FILE, "exec"), names)
        except Exception as exc:
            error = exc
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == PROGRAM_FILE]
            line = frames[-1].lineno if frames else None
    if between_statements is not None:
        between_statements()
    names.pop("__builtins__", None)
    return Executed(error, line, names, printed.getvalue())


@contextlib.contextmanager
def traced_lines(on_line: Callable[[], None] | None) -> Iterator[None]:
    """Call ``on_line`` at each line event of the program's own frame (nothing when None)."""
    if on_line is None:
        yield
        return

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            on_line()
        return local

    def outer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == PROGRAM_FILE else None

    before = sys.gettrace()
    sys.settrace(outer)
    try:
        yield
    finally:
        sys.settrace(before)


def hooks_on(fns: Iterable[Any], pre: Callable[[Any], Any], post: Callable[[Any], Any]) -> list[Any]:
    handles = []
    for fn in fns:
        handles.append(fn.register_prehook(lambda grad_outputs, fn=fn: pre(fn)))
        handles.append(fn.register_hook(lambda grad_inputs, grad_outputs, fn=fn: post(fn)))
    return handles


# -- the plain run ----------------------------------------------------------------------------


@dataclass
class PlainCall:
    kind: str
    keywords: dict[str, Any]
    error: str | None = None
    grads: dict[str, torch.Tensor | None] = field(default_factory=dict)
    result: tuple[Any, ...] | None = None
    entered: list[str] = field(default_factory=list)  # node names, in the order the engine ran them
    failed_node: str | None = None  # the node that started and never finished


@dataclass
class PlainRun:
    calls: list[PlainCall]
    error: Exception | None
    error_line: int | None
    names: dict[str, Any]
    printed: str

    @property
    def failed(self) -> int | None:
        return next((i for i, call in enumerate(self.calls) if call.error is not None), None)


def run_plainly(code: str) -> PlainRun:
    """The program with no probing: what PyTorch alone says, call by call."""
    names = program_globals()
    calls: list[PlainCall] = []

    def observe(hooked: Hooked, run: Callable[[], Any]) -> Any:
        entry = PlainCall(hooked.kind, hooked.keywords)
        calls.append(entry)
        started: list[Any] = []
        finished: set[int] = set()
        fns = list(walk(t.grad_fn for t in hooked.outputs))
        handles = hooks_on(fns, started.append, lambda fn: finished.add(id(fn)))
        try:
            result = run()
        except Exception as exc:
            entry.error = str(exc)
            running = [fn for fn in started if id(fn) not in finished]
            entry.failed_node = type(running[-1]).__name__ if running else None
            raise
        else:
            entry.result = tuple(result) if isinstance(result, tuple) else None
            return result
        finally:
            for handle in handles:
                handle.remove()
            entry.entered = [type(fn).__name__ for fn in started]
            entry.grads = grads_of(named_leaves(names))

    done = execute(code, observe, names)
    return PlainRun(calls, done.error, done.error_line, done.names, done.printed)


def check_against_plain(rec: Recording, run: PlainRun | None = None) -> PlainRun:
    """Calls, errors and their texts, failing nodes, grads after each call, grad results, the end."""
    run = run if run is not None else run_plainly(rec.program.code)
    assert [c.call.kind for c in rec.calls] == [c.kind for c in run.calls], "the calls the program made"
    for info, call in zip(rec.calls, run.calls, strict=True):
        index = info.index
        assert info.error == call.error, f"error of call {index}"
        if call.error is not None:
            got = None if info.failed_node is None else rec.graph.node(info.failed_node).name
            assert got == call.failed_node, f"failing node of call {index}"
        grads = rec.grads_at_end(index)
        for name, grad in call.grads.items():
            assert name in rec.leaves, f"{name} is not a leaf of the recording"
            assert same(grads.get(name), grad), f"{name}.grad after call {index}"  # absent: never set
        last = rec.timeline[info.last_step]
        assert last.kind == ("error" if call.error else "call_end")
        assert last.error == call.error
        if call.result is not None:
            assert last.result is not None
            expected = {
                ("result" if len(call.result) == 1 else f"result[{i}]"): t
                for i, t in enumerate(call.result)
                if isinstance(t, torch.Tensor)
            }
            assert set(last.result) == set(expected)
            assert all(same(last.result[k], v) for k, v in expected.items()), f"result of call {index}"
    if run.error is None or run.failed is not None:
        assert rec.error is None and rec.error_line is None
    else:
        assert rec.error is not None and str(run.error) in rec.error, rec.error
        assert rec.error_line == run.error_line
        assert rec.timeline[-1].kind == "error" and rec.timeline[-1].line == run.error_line
    printed = "".join(text + "\n" for step in rec.timeline.steps for text in step.printed)
    assert printed == run.printed
    return run


# -- the probed run ---------------------------------------------------------------------------

SlotStates = dict[tuple[int, str], str]  # (position in discovery, slot) -> state


@dataclass
class Snapshot:
    states: SlotStates
    versions: dict[tuple[int, str], int]
    saved_bytes: int
    grads: dict[str, torch.Tensor | None]


@dataclass
class ProbedCall:
    order: list[int]  # discovery positions, in the order the pre-hooks fired
    finished: list[int]  # positions whose post-hook fired, in that order
    snapshots: list[Snapshot]  # [before anything ran, after node 1, ..., after the call]
    error: str | None
    root: int | None  # the position of the node the engine started at


@dataclass(frozen=True)
class Gone:
    """A node nothing reached any more: we let go of it, as the program did (see ProbedRun)."""

    name: str
    tensor_slots: tuple[str, ...]


@dataclass
class ProbedRun:
    """Every node seen so far, by position in discovery, probed at every node of every call.

    Nodes are held only while the program reaches them: between statements, those it no longer
    reaches are let go of (a :class:`Gone` stands in their place). Holding them longer would
    change what PyTorch does: a leaf's AccumulateGrad lives only while a graph holds it, and a
    graph built after it died gets a new one.
    """

    names: dict[str, Any] = field(default_factory=program_globals)
    fns: list[Any] = field(default_factory=list)
    where: dict[int, int] = field(default_factory=dict)  # id(fn) -> position, for the fns we hold
    kinds: list[str] = field(default_factory=list)  # position -> PyTorch's class name
    kids: list[list[int]] = field(default_factory=list)  # position -> its children's positions
    calls: list[ProbedCall] = field(default_factory=list)
    ran: set[int] = field(default_factory=set)
    roots: list[Any] = field(default_factory=list)  # the grad_fns of the running call's outputs
    error: Exception | None = None

    def add(self, roots: Iterable[Any]) -> None:
        new = []
        for fn in walk(roots):
            if id(fn) not in self.where:
                self.where[id(fn)] = len(self.fns)
                self.fns.append(fn)
                self.kinds.append(type(fn).__name__)
                self.kids.append([])
                new.append(fn)
        for fn in new:
            self.kids[self.where[id(fn)]] = [self.where[id(c)] for c in children(fn)]

    def position(self, fn: Any) -> int:
        return self.where[id(fn)]

    def alive(self) -> set[int]:
        """Nodes some value the program holds reaches (the running call's outputs included)."""
        tensors = list(held_tensors(self.names))
        tensors += [fn.variable for fn in self.fns if hasattr(fn, "variable")]
        roots = [t.grad_fn for t in tensors] + [
            t.grad.grad_fn for t in tensors if t.is_leaf and t.grad is not None
        ]
        return {self.where[id(fn)] for fn in walk([*roots, *self.roots]) if id(fn) in self.where}

    def let_go(self) -> None:
        """Between statements: stop holding the nodes nothing the program holds reaches."""
        alive = self.alive()
        for i, fn in enumerate(self.fns):
            if i not in alive and not isinstance(fn, Gone):
                tensors = tuple(slot for slot in slot_names(fn) if probe(fn, slot, False) is not None)
                self.fns[i] = Gone(type(fn).__name__, tensors)
                del self.where[id(fn)]

    def snapshot(self) -> Snapshot:
        alive = self.alive()
        states: SlotStates = {}
        versions: dict[tuple[int, str], int] = {}
        storages: dict[tuple[str, int], int] = {}
        for i, fn in enumerate(self.fns):
            if isinstance(fn, Gone):
                states.update(((i, slot), "freed") for slot in fn.tensor_slots)
                continue
            for slot in slot_names(fn):
                state = probe(fn, slot, i in self.ran)
                if state is None:
                    continue
                if i not in alive:
                    state = "freed"  # nothing reaches it: it is gone, and so are its buffers
                states[(i, slot)] = state
                if state == "freed":
                    continue
                held = raw_tensors(fn, slot)
                if len(held) == 1:
                    versions[(i, slot)] = held[0]._version
                for t in held:
                    s = t.untyped_storage()
                    storages[(str(t.device), s.data_ptr() or id(s))] = s.nbytes()
        return Snapshot(states, versions, sum(storages.values()), grads_of(named_leaves(self.names)))

    def observe(self, hooked: Hooked, run: Callable[[], Any]) -> Any:
        self.roots = [t.grad_fn for t in hooked.outputs if t.grad_fn is not None]
        self.add(self.roots)
        self.add(t.grad_fn for t in held_tensors(self.names, grads=False))
        reachable = list(walk(self.roots))
        order: list[int] = []
        finished: list[int] = []
        snaps: list[Snapshot] = []

        def pre(fn: Any) -> None:
            snaps.append(self.snapshot())
            order.append(self.position(fn))

        def post(fn: Any) -> None:
            finished.append(self.position(fn))
            self.ran.add(self.position(fn))

        error: str | None = None
        handles = hooks_on(reachable, pre, post)
        del reachable
        try:
            return run()
        except Exception as exc:
            error = str(exc)
            raise
        finally:
            for handle in handles:
                handle.remove()
            snaps.append(self.snapshot())  # after the last node ran
            # A leaf's .grad made with create_graph=True has a graph of its own, held from now on:
            # the call's end shows it.
            leaves = [fn.variable for fn in self.fns if hasattr(fn, "variable")]
            self.add(t.grad.grad_fn for t in leaves if t.grad is not None and t.grad.grad_fn is not None)
            snaps.append(self.snapshot())
            root = self.position(self.roots[0]) if self.roots else None
            self.calls.append(ProbedCall(order, finished, snaps, error, root))
            self.roots = []


def run_probed(code: str) -> ProbedRun:
    """The program with pre-hooks of our own that probe every slot of every node seen so far."""
    run = ProbedRun()
    done = execute(code, run.observe, run.names, between_statements=run.let_go)
    run.error = done.error
    return run


def match_nodes(rec: Recording, run: ProbedRun) -> dict[int, str]:
    """Our discovery positions -> recorder ids, by walking both graphs from each call's root."""
    edges: dict[str, list[str]] = {}
    for e in rec.graph.edges:
        edges.setdefault(e.src, []).append(e.dst)
    mapping: dict[int, str] = {}
    for info, call in zip(rec.calls, run.calls, strict=False):
        steps = [rec.timeline[i] for i in range(info.first_step, info.last_step + 1)]
        first = next((s.node for s in steps if s.node is not None), None)
        if not call.order or first is None:
            continue
        stack = [(call.order[0], first)]
        while stack:
            mine, theirs = stack.pop()
            if mine in mapping:
                assert mapping[mine] == theirs
                continue
            assert run.kinds[mine] == rec.graph.node(theirs).name
            mapping[mine] = theirs
            kids = run.kids[mine]
            assert len(kids) == len(edges.get(theirs, [])), f"edges of {theirs}"
            stack.extend(zip(kids, edges.get(theirs, []), strict=True))
    return mapping


def check_against_probes(rec: Recording, run: ProbedRun | None = None) -> ProbedRun:
    """Engine order, slot states, versions and saved bytes after every node of every call."""
    run = run if run is not None else run_probed(rec.program.code)
    mapping = match_nodes(rec, run)
    assert len(run.calls) == len(rec.calls)
    for info, call in zip(rec.calls, run.calls, strict=True):
        steps = [rec.timeline[i] for i in range(info.first_step, info.last_step + 1)]
        node_steps = [s for s in steps if s.kind == "node"]
        done = set(call.finished)
        ran = [mapping[p] for p in call.order if p in done]
        assert [s.node for s in node_steps] == ran, f"engine order of call {info.index}"
        running = [p for p in call.order if p not in done]
        if call.error is not None:
            assert info.failed_node == (mapping[running[-1]] if running else None)
            assert steps[-1].node == info.failed_node
        # snapshots[k] is the state after k nodes of this call ran
        for k, step in enumerate(node_steps, start=1):
            check_step(rec, step.index, call.snapshots[k], mapping)
        check_step(rec, steps[-1].index, call.snapshots[-1], mapping)
    return run


def check_step(rec: Recording, index: int, snap: Snapshot, mapping: dict[int, str]) -> None:
    state = rec.timeline.state(index)
    expected = {(mapping[i], slot): s for (i, slot), s in snap.states.items() if i in mapping}
    ours = set(mapping.values())
    got = {k: v for k, v in state.slots.items() if k[0] in ours and k[1] != INPUTS}
    assert got == expected, f"slot states at step {index}"
    again = {n.id for n in rec.graph.nodes if (n.module or "").endswith(", recomputed")}
    for key, s in state.slots.items():
        if key[0] not in ours and key[0] not in again:  # no call reached this node: never run
            assert s in ({"freed"} if key[0] in state.gone else {"alive", "modified"}), (key, s)
    assert {k[0] for k in expected} <= state.visible_nodes
    versions = {(mapping[i], slot): v for (i, slot), v in snap.versions.items() if i in mapping}
    for key, version in versions.items():
        assert state.versions.get(key) == version, f"version of {key} at step {index}"
    recomputed = recomputed_bytes(rec, state.slots)  # no plain run holds those nodes: see there
    assert state.step.saved_bytes - recomputed == snap.saved_bytes, f"saved bytes at step {index}"
    for name, grad in snap.grads.items():
        if name in rec.leaves:
            assert same(state.grads.get(name), grad), f"{name}.grad at step {index}"


INPUTS = "checkpoint inputs"  # the slot that shows what a non-reentrant checkpoint keeps


def recomputed_bytes(rec: Recording, slots: Mapping[tuple[str, str], str]) -> int:
    """Bytes only a checkpoint's recomputed nodes, or the inputs it keeps, hold. The plain run
    drops the recomputed nodes at once (PyTorch keeps their tensors for the checkpoint's own nodes
    to unpack), and the inputs are kept by the checkpoint, in no node: no node probe sees them.
    ``tests/core/test_checkpoints.py`` checks both against PyTorch's own pack hooks."""
    held = {"alive", "retained", "modified"}
    again = {n.id for n in rec.graph.nodes if (n.module or "").endswith(", recomputed")}
    others, theirs = set(), {}
    for (node_id, name), state in slots.items():
        if state not in held:
            continue
        for ref in next(s for s in rec.graph.node(node_id).saved if s.name == name).storages:
            if node_id in again or name == INPUTS:
                theirs[(ref.device, ref.pointer)] = ref.nbytes
            else:
                others.add((ref.device, ref.pointer))
    return sum(n for key, n in theirs.items() if key not in others)


def leaf_values(code: str, name: str) -> torch.Tensor:
    """The value ``name`` held when the program ended, detached."""
    value = run_plainly(code).names[name]
    assert isinstance(value, torch.Tensor)
    return value.detach()
