"""The recorder of a trusted script: fed by line events, module hooks and patched autograd calls.

# NOTE [trusted scripts]
The evaluator tells the recorder about each statement and hands it each
autograd call (NOTE [program hooks]); for a script, :class:`ScriptRecorder`
does both from the outside:

* ``sys.settrace`` line events, only in frames whose code is the script's
  file: when a line starts, the line this frame ran before it has finished,
  and a ``forward`` step is taken for it (its loops: NOTE [script loops]); a
  frame's ``return`` finishes its last line (the returned value counted as held). No
  step is taken while an autograd call runs (a custom ``Function`` or a hook
  of the script may run lines during it).
* ``Tensor.backward``, ``torch.autograd.backward`` and ``torch.autograd.grad``
  are patched for the run; the call's ``ast.Call`` is found in the parsed
  script at the caller frame's current instruction (its end position), else
  on its line, preferring a callee named ``...backward`` or ``...grad``.

What the program holds (NOTE [alive nodes]) is what every frame from the
innermost script frame out to the outermost one holds in its locals, the
script's globals and the exception being handled, and everything they reach
by reference (NOTE [held is reachable] in ``reach.py``); new graph
nodes are captured from those values after each line, and a node none of them
reaches is let go. Each node's line is the script line running when it was
captured (a node made inside torch belongs to the script line that called
it). Leaves are named by the outermost names first: ``model.fc1.weight``
rather than ``self.fc1.weight``. Nodes made while a caller's line is still
running (``bce(D(real)) + bce(D(fake))``) are held by that line's half-computed
expression, where no frame's names show them: they stay until the line ends.
Only nodes already captured are kept so: a value a caller's line made that no
name, module hook or later node has shown yet (``stash([x.exp(), Box(v)])``
while ``Box.__init__`` runs) is not seen until something reaches it; the
checked language sees every value as it is made (NOTE [running lines]).


# NOTE [modules and sources]
Global module forward hooks (pre and post, removed with the rest) keep a stack
of the modules whose ``forward`` is running. A module's post-hook captures the
nodes behind its output not seen yet, so they belong to the innermost module
that made them (``G.body.0``); its pre-hook first captures what its inputs
reach, which the caller made. Nodes captured at a line's end belong to the
module whose ``forward`` runs that line, or to none at the top level. A module
is named by the variable holding it (globals first, then the frames, outermost
first) and its ``named_modules`` path. Every node's ``source`` is the
innermost frame in the script's file when it was captured: the line in the
script's own ``forward``, or the line that called a torch module.


# NOTE [written slots]
A line may write into a saved tensor in place (``opt.step()``). Rather than
probing every slot after every line, each held slot's tensors are kept with
their version counters (only while the slot holds them, so no buffer lives
longer than PyTorch keeps it); a node is probed when one of its counters moved.


# NOTE [untraced recorder]
``sys.settrace`` calls the trace function for every Python frame that starts on
the thread, and the recorder's own work is hundreds of small Python calls per
module and per node: each paid a call of ``global_trace`` first, which doubled
what recording a model costs. What runs inside the trace function itself is
never traced (CPython's rule), so a line's step needs nothing; the module hooks
and each autograd call (with the engine hooks it runs) turn tracing off for
their own time and restore what was there. Lines of the script that run inside
an autograd call (a custom ``Function``, a hook) take no step anyway.

"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TextIO

import torch
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.utils import checkpoint as torch_checkpoint
from torch.utils.hooks import RemovableHandle

from app.core.model.graph import SourceRef
from app.core.model.program import CallKind, Program
from app.core.model.recording import Recording
from app.core.recorder.alive import graph_fns
from app.core.recorder.reach import WalkTooLong, app_internal, held_tensors
from app.core.recorder.recorder import ProgramStopped, Recorder
from app.core.recorder.script_checkpoints import patched_checkpoint
from app.core.recorder.script_frames import (
    ModuleNames,
    Printed,
    dunder,
    find_call,
    flat_tensors,
    frames_out_to_script,
    last_line_in,
    script_frame,
    tensors_in,
    untraced,
)
from app.core.recorder.script_loops import FrameLoops, LoopLines
from app.core.sizing.limits import Limits

__all__ = ["ScriptRecorder"]

_UNLIMITED = Limits(time_limit_s=math.inf)  # the user's own script runs as long as it runs
_ROOT_ARGUMENTS = ("self", "tensors", "outputs", "gradient", "grad_tensors", "grad_outputs")
_NOTHING = object()


class ScriptRecorder(Recorder):
    """The recorder, fed by line events and patched autograd calls (NOTE [trusted scripts])."""

    def __init__(self, program: Program, filename: str, device: torch.device) -> None:
        super().__init__(program, device, _UNLIMITED, watch_writes=True)
        self.filename = filename
        self.user_modules: set[str] = set()  # __name__ of the script's globals: its classes are walked
        tree = _parsed(program.code)
        self.call_nodes = [] if tree is None else [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        self.loop_lines = LoopLines(tree)
        self.frame_loops: dict[int, FrameLoops] = {}  # id(frame) -> its loops (NOTE [script loops])
        self.thread = threading.get_ident()
        self.line_of: dict[int, int] = {}  # id(frame) -> the line it is running
        self.line_start: dict[int, int] = {}  # id(frame) -> nodes captured before its line began
        self.kept_from = math.inf  # nodes from this one on may be temporaries of a running line
        self.kept_until = 0  # ... up to this one: those captured before the innermost frame began
        self.entered: dict[int, int] = {}  # id(frame) -> nodes captured before its first line
        self.in_call = False
        self.stopped = False
        self.autograd_error: BaseException | None = None
        # What the frames hold, set for one event and let go right after it.
        self.names: list[tuple[str, Any]] = []  # outermost first
        self.top_names: list[tuple[str, Any]] = []  # the script's globals and outermost frame
        self.tensors: list[torch.Tensor] = []
        self.walk_too_long = False  # NOTE [held is reachable]: every captured node is kept then
        self.unlooked: FrameType | None = None  # a frame whose names are looked at when needed
        self.scanned_modules: dict[str, weakref.ref[torch.nn.Module]] = {}  # name -> module named
        self.source_file = str(program.path or filename)
        self.modules = ModuleNames()
        self.module_stack: list[tuple[int, str | None]] = []  # (id(module), its name), innermost last
        self.hook_nodes: set[str] = set()  # nodes module hooks captured during the running line
        # lens.record(): the tensors and modules the caller's names held when the block began
        self.held_before: dict[int, weakref.ref[Any]] = {}
        # lens.record(): graphs held when the block began by none of the caller's names (another
        # module's data, a test runner's state), by id; held here so no id is reused meanwhile
        self.foreign: dict[int, Any] = {}
        # lens.record(): graphs the caller's names held when the block began, by id, captured (with
        # no line) only once the block's own work reaches them: a file's second block is not its
        # first block's graph, a notebook's `with lens.record(): loss.backward()` is its loss's
        self.before: dict[int, Any] = {}

    # -- what the program holds (overrides) ---------------------------
    def held_tensors(self) -> Iterator[torch.Tensor]:
        return iter(self.tensors)

    def held_roots(self) -> Iterator[Any]:
        """What the frames hold, and the nodes made while a caller's line runs: its half-computed
        expression (``bce(disc(real)) + bce(disc(fake))``) holds them where no name shows it."""
        if self.walk_too_long:
            yield from list(self.capture.fns.values())
        yield from super().held_roots()
        seen = self.log.nodes_seen
        until = min(seen, self.kept_until)
        if self.kept_from < until:
            fns = self.capture.fns
            yield from (fns[n] for n in (f"n{k}" for k in range(int(self.kept_from), until)) if n in fns)

    def name_of(self, tensor: torch.Tensor) -> str | None:
        self._look_if_unlooked()
        known = self.leaves.tensors
        for name, value in self.names:
            if value is tensor and name not in known:
                return name
            if value is tensor and known[name] is not tensor:  # the name holds another leaf now
                self.leaves.rebound_to_leaf(name, tensor, None)
                return name
        for name, value in self.names:
            if isinstance(value, torch.nn.Module):
                path = next((p for p, t in value.named_parameters() if t is tensor), None)
                if path is not None and f"{name}.{path}" not in known:
                    return f"{name}.{path}"
        return None

    def name_in_use(self, name: str) -> bool:
        self._look_if_unlooked()
        return super().name_in_use(name)

    def take_named_leaves(self) -> None:
        known = {id(t) for t in self.leaves.tensors.values()}
        before = self.held_before
        place = self.origin[1]
        line = place.line if place is not None else None
        for name, value in self.top_names:
            self.leaves.rebound(name, value)
            if before and (ref := before.get(id(value))) is not None and ref() is value:
                continue  # held before the block began: named only once a graph reaches it
            if isinstance(value, torch.Tensor):
                if value.is_leaf and value.requires_grad:
                    self.leaves.rebound_to_leaf(name, value, line)
                named = [(name, value)]
            elif isinstance(value, torch.nn.Module):
                # Its parameters are named the first line it is held by this name; one added to it
                # later is named when a graph first reaches it (a walk of every module every line
                # was a twentieth of recording a model).
                scanned = self.scanned_modules.get(name)
                if scanned is not None and scanned() is value:
                    continue
                self.scanned_modules[name] = weakref.ref(value)
                named = [(f"{name}.{path}", p) for path, p in value.named_parameters()]
            else:
                continue
            for leaf_name, tensor in named:
                if tensor.is_leaf and tensor.requires_grad and id(tensor) not in known:
                    self.leaves.known(tensor, leaf_name, line)
                    known.add(id(tensor))

    def name_module(self, module: torch.nn.Module, name: str) -> None:
        """Name ``module``'s parameters ``name.<path>``, and its submodules, from now on."""
        self.modules.add(module, name)
        for path, p in module.named_parameters():
            if p.requires_grad:
                self.leaves.known(p, f"{name}.{path}")

    # -- looking at the frames ----------------------------------------
    def _look_from(self, frame: FrameType, returned: Any = _NOTHING) -> None:
        chain = self._look_at_names(frame)
        callers = [f for f in chain[1:] if f.f_code.co_filename == self.filename]
        self.kept_from = min((self.line_start.get(id(f), math.inf) for f in callers), default=math.inf)
        # What the innermost frame made since it began is held by its names or by nothing: only
        # what was made before it, on its callers' lines, may be on their half-computed stacks.
        self.kept_until = self.entered.get(id(frame), self.log.nodes_seen)
        others = [v for f in chain if f.f_code.co_filename != self.filename for v in f.f_locals.values()]
        extra = [sys.exc_info()[1]] + ([] if returned is _NOTHING else [returned])  # (its traceback)
        self.tensors = self._held([*self.env.values(), *others, *extra])

    def _held(self, roots: list[Any]) -> list[torch.Tensor]:
        """Every tensor the roots reach (NOTE [held is reachable]); every tensor captured so far
        when there are too many objects to walk, so that nothing is let go."""
        try:
            return list(held_tensors(roots, own_modules=self.user_modules, closed=app_internal))
        except WalkTooLong:
            self.walk_too_long = True
            return []

    def _look_at_names(self, frame: FrameType) -> list[FrameType]:
        """The names the script's frames hold, outermost first; returns the frames out from ``frame``."""
        chain = frames_out_to_script(frame, self.filename)
        script_frames = [f for f in chain if f.f_code.co_filename == self.filename]
        outermost = script_frames[-1]
        self.user_modules.add(str(outermost.f_globals.get("__name__")))
        own = [(k, v) for k, v in outermost.f_globals.items() if not dunder(k)]
        frame_names = [
            list(f.f_locals.items()) for f in reversed(script_frames) if f.f_locals is not f.f_globals
        ]
        self.top_names = own + (frame_names[0] if outermost.f_locals is not outermost.f_globals else [])
        self.names = own + [pair for names in frame_names for pair in names]
        self.env = dict(self.names)
        return chain

    def _let_go_of_frames(self) -> None:
        self.names, self.top_names, self.tensors, self.env = [], [], [], {}
        self.walk_too_long = False
        self.kept_from = math.inf

    # -- line events ----------------------------------------------------
    def global_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code.co_filename != self.filename or threading.get_ident() != self.thread:
            return None
        if _in_pack_hook(frame):
            return None
        return self.local_trace

    def local_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        if event == "line":
            if id(frame) not in self.line_of:
                self.entered[id(frame)] = self.log.nodes_seen
            line = frame.f_lineno
            finished, started = self._loops_of(frame).advance(
                self.line_of.get(id(frame)), line, self.loop_lines
            )
            self.loops = finished
            self.line_done(frame)
            self.loops = started
            self.line_of[id(frame)] = line
            self.line_start[id(frame)] = self.log.nodes_seen
        elif event == "return":
            self.line_done(frame, arg)
            self.line_of.pop(id(frame), None)
            self.line_start.pop(id(frame), None)
            self.entered.pop(id(frame), None)
            loops = self.frame_loops.pop(id(frame), None)
            if loops is not None:
                self.loops = loops.outer  # the caller's line goes on in its own iteration
        return self.local_trace

    def _loops_of(self, frame: FrameType) -> FrameLoops:
        """``frame``'s loop marks, made on its first line event after the script frame that called it."""
        loops = self.frame_loops.get(id(frame))
        if loops is None:
            caller = frame.f_back
            while caller is not None and id(caller) not in self.frame_loops:
                caller = caller.f_back
            outer = () if caller is None else self.frame_loops[id(caller)].marks
            resumable = frame.f_code.co_flags & _RESUMABLE != 0
            loops = self.frame_loops[id(frame)] = FrameLoops(outer, track=not resumable)
        return loops

    def made_before(self, frame: FrameType) -> None:
        """The graph the frames hold when a block's recording begins: made by lines not recorded,
        so its nodes have no line (the block's first backward would otherwise claim them). The
        tensors and modules held then get no ``.grad`` row of their own until a graph reaches them:
        a notebook's other leaves are not the block's."""
        self._look_from(frame)
        try:
            self.held_before = {
                id(v): weakref.ref(v)
                for _, v in self.top_names
                if isinstance(v, torch.Tensor | torch.nn.Module)
            }
            # Only the graphs the caller's names hold are the block's; one the walk reaches
            # elsewhere is left out, with its leaves, unless the block's own work reaches it.
            own = {id(fn) for fn in graph_fns(tensors_in([v for _, v in self.top_names], self.user_modules))}
            for fn in graph_fns(self.tensors):
                if id(fn) in own:
                    self.before[id(fn)] = fn
                self.foreign[id(fn)] = fn
        finally:
            self._let_go_of_frames()

    def take_fresh(self, *, call: int | None, line: int | None) -> list[str]:
        """As the recorder's, but the graphs held before the block that the fresh ones reach come
        first, made by no line of the block (NOTE [trusted scripts])."""
        reached = self._before_reached(self.fresh) if self.before and self.fresh else []
        made_before: list[str] = []
        if reached:
            fresh, self.fresh = self.fresh, reached
            made_before = self._take_made_before()
            self.fresh = fresh
        return made_before + super().take_fresh(call=call, line=line)

    def _take_made_before(self) -> list[str]:
        """Capture :attr:`fresh` as made by no line, module or source of the block."""
        origin, self.origin = self.origin, (None, None)
        try:
            return super().take_fresh(call=None, line=None)
        finally:
            self.origin = origin

    def _show_before(self, roots: list[Any]) -> None:
        """A call on a graph made before the block (``loss.backward()`` in a notebook's block): the
        graph is shown first, as it stood, in a step of its own."""
        reached = self._before_reached(roots) if self.before else []
        if reached:
            self.fresh.extend(reached)
            self._take_made_before()
            self.snapshot("forward", None, None, line=None)

    def _before_reached(self, roots: list[Any]) -> list[Any]:
        """The graphs of :attr:`before` that ``roots`` reach through nodes not captured yet (each
        taken out of it: it is captured now)."""
        reached, seen, todo = [], set(), list(roots)
        while todo:
            fn = todo.pop()
            if fn is None or id(fn) in seen or self.capture.id_of(fn) is not None:
                continue
            seen.add(id(fn))
            if self.before.pop(id(fn), None) is not None:
                reached.append(fn)
            todo.extend(next_fn for next_fn, _ in getattr(fn, "next_functions", ()))
        return reached

    def line_done(self, frame: FrameType, returned: Any = _NOTHING) -> None:
        """The line ``frame`` was running has finished: take its ``forward`` step."""
        line = self.line_of.get(id(frame))
        if line is None or self.in_call or self.stopped:
            return
        self._look_from(frame, returned)
        try:
            self.origin = (self._module_now(), SourceRef(self.source_file, line))
            foreign = self.foreign
            self.fresh.extend(fn for fn in graph_fns(self.tensors) if id(fn) not in foreign)
            self._label_new(frame, line)
            self.alive.dirty = True  # NOTE [trusted scripts]: what a line let go of is not known
            self._probe_written()  # nor whether it wrote in place (NOTE [written slots])
            self.after_statement(line)
            self.apply_labels()
        finally:
            self.origin = (None, None)
            self.hook_nodes.clear()
            self._let_go_of_frames()

    def _label_new(self, frame: FrameType, line: int) -> None:
        """A node first seen bound to a name of the frame is labelled with its line's text."""
        text = " ".join(self.program.line(line).split())
        if not text:
            return
        for value in frame.f_locals.values():
            fn = value.grad_fn if isinstance(value, torch.Tensor) else None
            node_id = None if fn is None else self.capture.id_of(fn)
            if fn is not None and (node_id is None or node_id in self.hook_nodes):
                self.label(fn, text, (line, line), statement=True)

    # -- modules (NOTE [modules and sources]) ---------------------------
    @untraced
    def module_entered(self, module: torch.nn.Module, args: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        frame = None if self.in_call or self.stopped else script_frame(sys._getframe(1), self.filename)
        if frame is not None:
            self._capture_made(args, frame)  # what the caller made before the call is the caller's
        name = None if frame is None else self._module_name(module, frame)
        self.module_stack.append((id(module), name))

    @untraced
    def module_left(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if threading.get_ident() != self.thread or not self.module_stack:
            return
        if self.module_stack[-1][0] != id(module):
            return  # entered while another thread or an autograd call ran
        frame = None if self.in_call or self.stopped else script_frame(sys._getframe(1), self.filename)
        if frame is not None:
            self._capture_made(output, frame)
        self.module_stack.pop()

    def _module_now(self) -> str | None:
        return self.module_stack[-1][1] if self.module_stack else None

    def _module_name(self, module: torch.nn.Module, frame: FrameType) -> str | None:
        name = self.modules.get(module)
        if name is None:
            self._look_at_names(frame)
            try:
                self.modules.scan(self.names)
            finally:
                self._let_go_of_frames()
            name = self.modules.get(module)
        return name

    def _capture_made(self, values: Any, frame: FrameType) -> None:
        """Capture the nodes behind ``values`` not seen yet, as made by the running module at the
        innermost script line."""
        roots = list(graph_fns(tensors_in([values], set())))
        if all(self.capture.id_of(fn) is not None for fn in roots):
            return  # nothing new: the walk would stop at each of them (the module's input, mostly)
        self.unlooked = frame  # its names are looked at only to name a leaf not known yet
        try:
            self.origin = (self._module_now(), SourceRef(self.source_file, frame.f_lineno))
            self.fresh.extend(roots)
            self.hook_nodes.update(self.take_fresh(call=None, line=frame.f_lineno))
        finally:
            self.origin = (None, None)
            self.unlooked = None
            self._let_go_of_frames()

    def _look_if_unlooked(self) -> None:
        frame, self.unlooked = self.unlooked, None
        if frame is not None:
            self._look_at_names(frame)

    # -- slots written in place (NOTE [written slots]) ------------------
    def _probe_written(self) -> None:
        """Probe the nodes with a held slot whose tensor's version moved since it was last looked at."""
        for node_id in self.ledger.written_nodes():
            self.ledger.probe_node(node_id, None)

    # -- autograd calls -------------------------------------------------
    def patched(self, kind: CallKind, real: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(real)

        @functools.wraps(real)
        @untraced  # NOTE [untraced recorder]: the engine's hooks run untraced too
        def call(*args: Any, **kwargs: Any) -> Any:
            frame = None
            if not (self.in_call or self.stopped) and threading.get_ident() == self.thread:
                frame = script_frame(sys._getframe(1), self.filename)
            try:
                given = signature.bind(*args, **kwargs).arguments
            except TypeError:
                frame = None  # PyTorch says what is wrong with the arguments
            if frame is None:
                return real(*args, **kwargs)
            self.in_call = True
            try:
                return self._autograd(kind, lambda: real(*args, **kwargs), given, frame)
            finally:
                self.in_call = False

        return call

    def _autograd(
        self, kind: CallKind, run: Callable[[], Any], given: dict[str, Any], frame: FrameType
    ) -> Any:
        self._look_from(frame)
        try:
            self.origin = (self._module_now(), SourceRef(self.source_file, frame.f_lineno))
            self._probe_written()
            roots = [t for name in _ROOT_ARGUMENTS for t in flat_tensors(given.get(name))]
            self._show_before(list(graph_fns(roots)))
            self.fresh.extend(graph_fns(roots))
            self.fresh.extend(self._unseen(graph_fns(roots)))
            node = find_call(self.call_nodes, frame, self.program.lines)
            keywords = {k: v for k, v in given.items() if k not in ("self", "tensors", "outputs")}
            return self.autograd_call(kind, self._keeping_error(run), node, keywords, self.loops)
        except ProgramStopped:
            self.stopped = True
            raise
        finally:
            self.origin = (None, None)
            self._let_go_of_frames()

    def _keeping_error(self, run: Callable[[], Any]) -> Callable[[], Any]:
        def kept() -> Any:
            try:
                return run()
            except Exception as exc:
                self.autograd_error = exc
                raise

        return kept

    def _unseen(self, roots: Iterable[Any]) -> list[Any]:
        """Nodes below known ones that were let go of and are reached again (held where no
        walk looked): captured anew, so the call's hooks go on them too."""
        unseen: list[Any] = []
        stack, walked = list(roots), set()
        while stack:
            fn = stack.pop()
            if id(fn) in walked:
                continue
            walked.add(id(fn))
            children = [c for c, _ in fn.next_functions if c is not None]
            if self.capture.id_of(fn) is not None:
                unseen.extend(c for c in children if self.capture.id_of(c) is None and id(c) not in walked)
                stack.extend(children)
        return unseen

    # -- the end --------------------------------------------------------
    def script_failed(self, exc: BaseException) -> None:
        """The script's own exception: the program ends there, with an ``error`` step."""
        line = last_line_in(exc.__traceback__, self.filename)
        self.failed(traceback.format_exception_only(type(exc), exc)[-1].strip(), line)

    def finished(self) -> Recording:
        return self.result()

    @contextmanager
    def tracing(self, stdout: TextIO | None = None) -> Iterator[None]:
        """Patches, trace function and a copy of the printed text, all removed at the end."""
        patches = [
            (torch.Tensor, "backward", "backward"),
            (torch.autograd, "backward", "backward"),
            (torch.autograd, "grad", "grad"),
        ]
        originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
        real_checkpoint = torch_checkpoint.checkpoint  # NOTE [checkpoint frames]
        before_trace, before_stdout = sys.gettrace(), sys.stdout
        handles: list[RemovableHandle] = []
        try:
            for (owner, name, kind), (_, _, real) in zip(patches, originals, strict=True):
                setattr(owner, name, self.patched(kind, real))  # type: ignore[arg-type]
            torch_checkpoint.checkpoint = patched_checkpoint(self, real_checkpoint)
            handles.append(register_module_forward_pre_hook(self.module_entered))
            handles.append(register_module_forward_hook(self.module_left, always_call=True))
            sys.stdout = Printed(stdout or sys.stdout, self.printed)
            sys.settrace(self.global_trace)
            yield
        finally:
            for handle in handles:
                handle.remove()
            sys.settrace(before_trace)
            printed, sys.stdout = sys.stdout, before_stdout
            if isinstance(printed, Printed):
                printed.close_line()
            for owner, name, real in originals:
                setattr(owner, name, real)
            torch_checkpoint.checkpoint = real_checkpoint


def _in_pack_hook(frame: FrameType) -> bool:
    """Whether ``frame`` is the script's own saved-tensor pack or unpack function running: PyTorch
    calls it in the middle of an operation, before the slot holds what it returns, so none of its
    lines is a line of the script's (NOTE [saved-tensor hooks] in ``capture.py``)."""
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    return hooks is not None and any(getattr(h, "__code__", None) is frame.f_code for h in hooks)


def _parsed(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
