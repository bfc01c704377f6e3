"""Record a trusted script (or a block of one) as it runs as ordinary Python, hooked.

Scenarios are untrusted and run only in the checked language
(``app.core.recording.recorder``). A script of the user's own is trusted like
any script they run: :func:`record_script` runs it exactly as ``python
SCRIPT.py`` would, and :class:`BlockRecorder` records a ``with`` block of the
caller's file. Both feed the same recorder as the checked evaluator does, so a
script's recording is the same :class:`Recording` as a scenario's.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.py"
>>> code = "# Tiny\\nimport torch\\nx = torch.ones(2, requires_grad=True)\\n(x * x).sum().backward()\\n"
>>> _ = path.write_text(code)
>>> run = record_script(path)
>>> run.recording.program.title, [c.call.text for c in run.recording.calls]
('Tiny', ['(x * x).sum().backward()'])
>>> run.recording.grads_at_end(0)["x"].tolist()
[2.0, 2.0]

# NOTE [trusted scripts]
The evaluator tells the recorder about each statement and hands it each
autograd call (NOTE [program hooks]); for a script, :class:`_ScriptRecorder`
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
innermost script frame out to the outermost one holds in its locals, and the
script's globals, walked into lists, tuples, dicts, sets, ``nn.Module`` and
optimizer attributes, and instances of the script's own classes; new graph
nodes are captured from those values after each line, and a node none of them
reaches is let go. Each node's line is the script line running when it was
captured (a node made inside torch belongs to the script line that called
it). Leaves are named by the outermost names first: ``model.fc1.weight``
rather than ``self.fc1.weight``. Nodes made while a caller's line is still
running (``bce(D(real)) + bce(D(fake))``) are held by that line's half-computed
expression, where no frame's names show them: they stay until the line ends.

# NOTE [script loops]
A scenario's evaluator knows each loop's iteration; a script's loops are read
from its line events. The parsed script gives every multi-line ``for`` /
``while`` by its header line, with the lines of its body, and for each line
the loops of its own function whose body holds it. CPython reports the header
line each time the loop asks for its next item (on entry, after each pass, and
once more when it ends; a header over several lines may report each of them, and a
decorator in the body runs before its ``def``), so the line event *after* a header
says what that was:
a line of the body starts an iteration (0 on entry, the next one after a pass),
anything else means the loop ended (or never ran). A frame's marks are its
enclosing loops that it entered while recorded, outermost first, after the
marks of the script frame that called it (a ``forward`` of the script's own
runs inside its caller's iteration). A loop entered before the recording began
(a ``lens.record()`` block inside a loop) is not marked: its iteration is not
known. Generator frames carry only their caller's marks: each ``yield``
returns from the frame. The number of iterations is not known beforehand
(``count`` is None).

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

Everything is undone in a ``finally``: patches, the trace function, the
standard output, ``sys.argv`` and ``sys.path[0]``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import math
import os
import runpy
import sys
import threading
import tokenize
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TextIO, TypeVar

import torch
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.utils.hooks import RemovableHandle

from app.core.devices import resolve_device
from app.core.lens import code_refusal
from app.core.loading import python_title, stem_name
from app.core.model.errors import ScenarioError
from app.core.model.graph import LoopMark, SourceRef
from app.core.model.program import CallKind, Program
from app.core.model.recording import Recording
from app.core.recording.alive import graph_fns
from app.core.recording.recorder import ProgramStopped, Recorder
from app.core.sizing.limits import Limits

__all__ = ["BlockRecorder", "ScriptRun", "as_main", "record_script", "script_traceback"]

_UNLIMITED = Limits(time_limit_s=math.inf)  # the user's own script runs as long as it runs
_OWN_FILES = frozenset(str(p) for p in Path(__file__).parent.glob("*.py"))  # the recorder's own frames
_ROOT_ARGUMENTS = ("self", "tensors", "outputs", "gradient", "grad_tensors", "grad_outputs")
_CALL_NAMES = ("backward", "grad")
_NOTHING = object()
T = TypeVar("T")


def _untraced(method: Callable[..., T]) -> Callable[..., T]:
    """``method`` run with no trace function (NOTE [untraced recorder]), the thread's one put back."""

    @functools.wraps(method)
    def untraced(*args: Any, **kwargs: Any) -> T:
        trace = sys.gettrace()
        if trace is None:
            return method(*args, **kwargs)
        sys.settrace(None)
        try:
            return method(*args, **kwargs)
        finally:
            sys.settrace(trace)

    return untraced


@dataclass(frozen=True)
class ScriptRun:
    """A script's recording and how the script ended.

    ``exception`` is the script's own exception (an autograd call's error is
    the recording's ``error`` step instead, and the script just ends there);
    ``exit_code`` is what ``python SCRIPT.py`` would have exited with.
    """

    recording: Recording
    exception: BaseException | None = None
    exit_code: int = 0


class _ScriptRecorder(Recorder):
    """The recorder, fed by line events and patched autograd calls (NOTE [trusted scripts])."""

    def __init__(self, program: Program, filename: str, device: torch.device) -> None:
        super().__init__(program, device, _UNLIMITED, watch_writes=True)
        self.filename = filename
        self.user_modules: set[str] = set()  # __name__ of the script's globals: its classes are walked
        tree = _parsed(program.code)
        self.call_nodes = [] if tree is None else [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        self.loop_lines = _LoopLines(tree)
        self.frame_loops: dict[int, _FrameLoops] = {}  # id(frame) -> its loops (NOTE [script loops])
        self.thread = threading.get_ident()
        self.line_of: dict[int, int] = {}  # id(frame) -> the line it is running
        self.line_start: dict[int, int] = {}  # id(frame) -> nodes captured before its line began
        self.kept_from = math.inf  # nodes from this one on may be temporaries of a running line
        self.in_call = False
        self.stopped = False
        self.autograd_error: BaseException | None = None
        # What the frames hold, set for one event and let go right after it.
        self.names: list[tuple[str, Any]] = []  # outermost first
        self.top_names: list[tuple[str, Any]] = []  # the script's globals and outermost frame
        self.tensors: list[torch.Tensor] = []
        self.unlooked: FrameType | None = None  # a frame whose names are looked at when needed
        self.scanned_modules: dict[str, weakref.ref[torch.nn.Module]] = {}  # name -> module named
        self.source_file = str(program.path or filename)
        self.modules = _ModuleNames()
        self.module_stack: list[tuple[int, str | None]] = []  # (id(module), its name), innermost last
        self.hook_nodes: set[str] = set()  # nodes module hooks captured during the running line
        # lens.record(): the tensors and modules the caller's names held when the block began
        self.held_before: dict[int, weakref.ref[Any]] = {}

    # -- what the program holds (overrides) ---------------------------
    def held_tensors(self) -> Iterator[torch.Tensor]:
        return iter(self.tensors)

    def held_roots(self) -> Iterator[Any]:
        """What the frames hold, and the nodes made while a caller's line runs: its half-computed
        expression (``bce(disc(real)) + bce(disc(fake))``) holds them where no name shows it."""
        yield from super().held_roots()
        seen = self.log.nodes_seen
        if self.kept_from < seen:
            fns = self.capture.fns
            yield from (fns[n] for n in (f"n{k}" for k in range(int(self.kept_from), seen)) if n in fns)

    def name_of(self, tensor: torch.Tensor) -> str | None:
        self._look_if_unlooked()
        known = self.leaves.tensors
        for name, value in self.names:
            if value is tensor and name not in known:
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
        for name, value in self.top_names:
            if before and (ref := before.get(id(value))) is not None and ref() is value:
                continue  # held before the block began: named only once a graph reaches it
            if isinstance(value, torch.Tensor):
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
                    self.leaves.known(tensor, leaf_name)
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
        others = [v for f in chain if f.f_code.co_filename != self.filename for v in f.f_locals.values()]
        extra = [] if returned is _NOTHING else [returned]
        self.tensors = list(_tensors_in([*self.env.values(), *others, *extra], self.user_modules))

    def _look_at_names(self, frame: FrameType) -> list[FrameType]:
        """The names the script's frames hold, outermost first; returns the frames out from ``frame``."""
        chain = _frames_out_to_script(frame, self.filename)
        script_frames = [f for f in chain if f.f_code.co_filename == self.filename]
        outermost = script_frames[-1]
        self.user_modules.add(str(outermost.f_globals.get("__name__")))
        own = [(k, v) for k, v in outermost.f_globals.items() if not _dunder(k)]
        frame_names = [
            list(f.f_locals.items()) for f in reversed(script_frames) if f.f_locals is not f.f_globals
        ]
        self.top_names = own + (frame_names[0] if outermost.f_locals is not outermost.f_globals else [])
        self.names = own + [pair for names in frame_names for pair in names]
        self.env = dict(self.names)
        return chain

    def _let_go_of_frames(self) -> None:
        self.names, self.top_names, self.tensors, self.env = [], [], [], {}
        self.kept_from = math.inf

    # -- line events ----------------------------------------------------
    def global_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code.co_filename != self.filename or threading.get_ident() != self.thread:
            return None
        return self.local_trace

    def local_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        if event == "line":
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
            loops = self.frame_loops.pop(id(frame), None)
            if loops is not None:
                self.loops = loops.outer  # the caller's line goes on in its own iteration
        return self.local_trace

    def _loops_of(self, frame: FrameType) -> _FrameLoops:
        """``frame``'s loop marks, made on its first line event after the script frame that called it."""
        loops = self.frame_loops.get(id(frame))
        if loops is None:
            caller = frame.f_back
            while caller is not None and id(caller) not in self.frame_loops:
                caller = caller.f_back
            outer = () if caller is None else self.frame_loops[id(caller)].marks
            resumable = frame.f_code.co_flags & _RESUMABLE != 0
            loops = self.frame_loops[id(frame)] = _FrameLoops(outer, track=not resumable)
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
            self.fresh.extend(graph_fns(self.tensors))
            self.take_fresh(call=None, line=None)
            if self.log.pending_nodes:
                self.snapshot("forward", None, None, line=None)
        finally:
            self._let_go_of_frames()

    def line_done(self, frame: FrameType, returned: Any = _NOTHING) -> None:
        """The line ``frame`` was running has finished: take its ``forward`` step."""
        line = self.line_of.get(id(frame))
        if line is None or self.in_call or self.stopped:
            return
        self._look_from(frame, returned)
        try:
            self.origin = (self._module_now(), SourceRef(self.source_file, line))
            self.fresh.extend(graph_fns(self.tensors))
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
    @_untraced
    def module_entered(self, module: torch.nn.Module, args: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        frame = None if self.in_call or self.stopped else _script_frame(sys._getframe(1), self.filename)
        if frame is not None:
            self._capture_made(args, frame)  # what the caller made before the call is the caller's
        name = None if frame is None else self._module_name(module, frame)
        self.module_stack.append((id(module), name))

    @_untraced
    def module_left(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if threading.get_ident() != self.thread or not self.module_stack:
            return
        if self.module_stack[-1][0] != id(module):
            return  # entered while another thread or an autograd call ran
        frame = None if self.in_call or self.stopped else _script_frame(sys._getframe(1), self.filename)
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
        roots = list(graph_fns(_tensors_in([values], set())))
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
        @_untraced  # NOTE [untraced recorder]: the engine's hooks run untraced too
        def call(*args: Any, **kwargs: Any) -> Any:
            frame = None
            if not (self.in_call or self.stopped) and threading.get_ident() == self.thread:
                frame = _script_frame(sys._getframe(1), self.filename)
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
            roots = [t for name in _ROOT_ARGUMENTS for t in _flat_tensors(given.get(name))]
            self.fresh.extend(graph_fns(roots))
            self.fresh.extend(self._unseen(graph_fns(roots)))
            node = _find_call(self.call_nodes, frame, self.program.lines)
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
        line = _last_line_in(exc.__traceback__, self.filename)
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
        before_trace, before_stdout = sys.gettrace(), sys.stdout
        handles: list[RemovableHandle] = []
        try:
            for (owner, name, kind), (_, _, real) in zip(patches, originals, strict=True):
                setattr(owner, name, self.patched(kind, real))  # type: ignore[arg-type]
            handles.append(register_module_forward_pre_hook(self.module_entered))
            handles.append(register_module_forward_hook(self.module_left, always_call=True))
            sys.stdout = _Printed(stdout or sys.stdout, self.printed)
            sys.settrace(self.global_trace)
            yield
        finally:
            for handle in handles:
                handle.remove()
            sys.settrace(before_trace)
            printed, sys.stdout = sys.stdout, before_stdout
            if isinstance(printed, _Printed):
                printed.close_line()
            for owner, name, real in originals:
                setattr(owner, name, real)


def record_script(
    path: str | os.PathLike[str],
    args: Iterable[str] = (),
    *,
    device: str = "cpu",
    stdout: TextIO | None = None,
) -> ScriptRun:
    """Run the script at ``path`` as ``python path args...`` would, and record its autograd calls.

    ``stdout`` takes the script's printed text instead of the standard output
    (it is recorded either way).
    """
    shown = os.fspath(path)
    filename = os.path.abspath(shown)
    with tokenize.open(filename) as f:
        text = f.read()
    refusal = code_refusal(text)
    if refusal is not None:  # before it runs: its recording could not be opened
        raise ScenarioError(f"{shown} is too long to record: {refusal}")
    name = stem_name(Path(filename))
    program = Program(text, name=name, title=python_title(text, name), path=Path(shown))
    target = resolve_device(device)
    recorder = _ScriptRecorder(program, filename, target)
    exception: BaseException | None = None
    exit_code = 0
    with as_main(shown, list(args)), recorder.tracing(stdout):
        try:
            with torch.device(target) if target.type != "cpu" else nullcontext():
                runpy.run_path(filename, run_name="__main__")
        except ProgramStopped:
            pass
        except SystemExit as exc:
            exit_code = _exit_code(exc)
        except Exception as exc:
            recorder.script_failed(exc)
            exception, exit_code = exc, 1
    return ScriptRun(recorder.finished(), exception, exit_code)


@contextmanager
def as_main(shown: str, args: list[str]) -> Iterator[None]:
    """``sys.argv`` and ``sys.path[0]`` as ``python SCRIPT.py ARGS...`` sets them."""
    argv, path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [shown, *args]
    folder = os.path.dirname(os.path.abspath(shown))
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    try:
        yield
    finally:
        sys.argv = argv
        if path0 is not None and sys.path:
            sys.path[0] = path0


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)  # sys.exit("message"), as Python shows it
    return 1


def script_traceback(exc: BaseException, path: str | os.PathLike[str]) -> str:
    """The script's traceback as Python prints it, from the script's first frame on."""
    filename = os.path.abspath(os.fspath(path))
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


class BlockRecorder:
    """Records the autograd calls a ``with`` block of ``frame``'s file makes, line by line.

    ``app.lens.record()`` is the public face of this.
    """

    def __init__(
        self, frame: FrameType, *, model: torch.nn.Module | None = None, device: str = "cpu"
    ) -> None:
        self.frame = frame
        filename = frame.f_code.co_filename
        text = "".join(linecache.getlines(filename, frame.f_globals))
        refusal = code_refusal(text)
        if refusal is not None:  # its recording could not be opened
            raise ScenarioError(f"{filename} is too long to record: {refusal}")
        name = stem_name(Path(filename))
        program = Program(text, name=name, title=python_title(text, name), path=Path(filename))
        self.recorder = _ScriptRecorder(program, filename, resolve_device(device))
        self.model = model
        self.recording: Recording | None = None
        self._tracing = self.recorder.tracing()
        self._frame_trace: Any = None

    def start(self) -> None:
        recorder, frame = self.recorder, self.frame
        if self.model is not None:
            recorder.name_module(self.model, _name_in(frame, self.model) or "model")
        self._tracing.__enter__()
        recorder.made_before(frame)
        self._frame_trace = frame.f_trace
        frame.f_trace = recorder.local_trace  # the caller's frame is running already

    def stop(self, exc: BaseException | None) -> BaseException | None:
        """End the recording; return the exception the block should raise instead of ``exc``."""
        recorder = self.recorder
        try:
            if not isinstance(exc, ProgramStopped):
                recorder.line_done(self.frame)
        finally:
            self.frame.f_trace = self._frame_trace
            self._tracing.__exit__(None, None, None)
            self.frame = None  # type: ignore[assignment]  # hold no frame (it holds the block's values)
        if isinstance(exc, ProgramStopped):
            self.recording = recorder.finished()
            return recorder.autograd_error
        if isinstance(exc, Exception):
            recorder.script_failed(exc)
        self.recording = recorder.finished()
        return None


# -- helpers -------------------------------------------------------------------------------


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _frames_out_to_script(frame: FrameType, filename: str) -> list[FrameType]:
    """``frame`` and its callers, out to the outermost frame of the script (ours left out)."""
    chain: list[FrameType] = []
    last_script = 0
    current: FrameType | None = frame
    while current is not None:
        if current.f_code.co_filename == filename:
            last_script = len(chain)
        if current.f_code.co_filename not in _OWN_FILES:
            chain.append(current)
        current = current.f_back
    return chain[: last_script + 1]


def _script_frame(frame: FrameType | None, filename: str) -> FrameType | None:
    while frame is not None and frame.f_code.co_filename != filename:
        frame = frame.f_back
    return frame


def _tensors_in(values: Iterable[Any], user_modules: set[str]) -> Iterator[torch.Tensor]:
    """Every tensor in ``values``: in containers, modules, optimizers, the script's own objects."""
    stack = list(values)
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if type(value) in _ATOMS or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, torch.nn.Module):
            stack.extend([v for k, v in vars(value).items() if k not in _BOOKKEEPING])
        elif isinstance(value, torch.optim.Optimizer):
            # Its state (exp_avg, momentum_buffer: a few tensors per parameter) is made with grad
            # off unless the optimizer is differentiable, so then it holds no graph and no leaf.
            skip = _BOOKKEEPING if _differentiable(value) else _BOOKKEEPING | {"state"}
            stack.extend([v for k, v in vars(value).items() if k not in skip])
        elif type(value).__module__ in user_modules and not isinstance(value, type):
            stack.extend(getattr(value, "__dict__", {}).values())


def _differentiable(optimizer: torch.optim.Optimizer) -> bool:
    return any(group.get("differentiable", False) for group in optimizer.param_groups)


_ATOMS = frozenset((int, float, complex, bool, str, bytes, type(None)))


def _bookkeeping() -> frozenset[str]:
    """The attributes torch gives every module and optimizer for its hooks and flags (a dozen
    dicts per module, walked at every line for no tensor): a tensor is never kept there."""
    module = set(vars(torch.nn.Module())) - {"_parameters", "_buffers", "_modules"}
    optimizer = set(vars(torch.optim.SGD([torch.zeros(1, requires_grad=True)]))) - {
        "state",
        "param_groups",
        "defaults",
    }
    return frozenset(module | optimizer)


_BOOKKEEPING = _bookkeeping()


def _flat_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []


def _parsed(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class _LoopLines:
    """The script's multi-line loops by header line, and the loops around each line of its own
    frame (NOTE [script loops]).

    >>> code = "for a in x:\\n    while (b\\n           > 0):\\n        b -= 1\\n    c = 2\\nd = 3\\n"
    >>> lines = _LoopLines(ast.parse(code))
    >>> lines.body, lines.header_of, lines.around[4], lines.around[5], lines.around[6]
    ({1: (2, 5), 2: (4, 4)}, {1: 1, 2: 2, 3: 2}, (1, 2), (1,), ())
    """

    def __init__(self, tree: ast.Module | None) -> None:
        self.body: dict[int, tuple[int, int]] = {}  # header line -> (first, last) line of its body
        self.header_of: dict[int, int] = {}  # a line of a loop's header (before its body) -> its first
        # line -> the headers of the loops around it, outermost first
        self.around: dict[int, tuple[int, ...]] = {}
        if tree is not None:
            self._statements(tree.body, ())

    def _statements(self, statements: list[ast.stmt], loops: tuple[int, ...]) -> None:
        for stmt in statements:
            for line in range(_first_line(stmt), (stmt.end_lineno or stmt.lineno) + 1):
                self.around[line] = loops  # its nested statements' lines are marked again below
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)) and stmt.body[0].lineno > stmt.lineno:
                first, last = _first_line(stmt.body[0]), stmt.body[-1]
                self.body[stmt.lineno] = (first, last.end_lineno or last.lineno)
                for line in range(stmt.lineno, first):  # a target or a condition over several lines
                    self.header_of[line] = stmt.lineno
                self._statements(stmt.body, (*loops, stmt.lineno))
                self._statements(stmt.orelse, loops)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._statements(stmt.body, ())  # runs in a frame of its own
            else:
                for field in ("body", "orelse", "finalbody"):
                    nested = getattr(stmt, field, [])
                    if isinstance(nested, list):
                        self._statements(nested, loops)
                for part in [*getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])]:
                    self._statements(part.body, loops)


def _first_line(stmt: ast.stmt) -> int:
    """The first line that runs of ``stmt``: a decorator's, before its ``def`` or ``class``."""
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)])


class _FrameLoops:
    """One script frame's loop marks, line by line (NOTE [script loops])."""

    __slots__ = ("at_header", "index", "marks", "outer", "track")

    def __init__(self, outer: tuple[LoopMark, ...], *, track: bool) -> None:
        self.outer = outer  # the marks of the caller's line
        self.track = track
        self.index: dict[int, int] = {}  # header -> the iteration running, of loops entered while recorded
        self.at_header: tuple[int, bool] | None = None  # the header running, and whether it is an entry
        self.marks = outer  # the marks of the line running

    def advance(
        self, previous: int | None, line: int, lines: _LoopLines
    ) -> tuple[tuple[LoopMark, ...], tuple[LoopMark, ...]]:
        """The marks of ``previous``, the line that has just finished, and of ``line``, which starts."""
        if not self.track:
            return self.outer, self.outer
        header_now = lines.header_of.get(line)
        if self.at_header is not None and header_now == self.at_header[0]:
            return self.marks, self.marks  # another line of the same header: it has not decided yet
        finished = self.marks
        if self.at_header is not None:  # the header asked for the next item: did an iteration start?
            header, entry = self.at_header
            self.at_header = None
            first, last = lines.body[header]
            if not first <= line <= last:
                self.index.pop(header, None)  # it ended, or never ran
            elif entry:
                self.index[header] = 0
            elif header in self.index:  # else entered before the recording began: not known
                self.index[header] += 1
            finished = self._marks((*lines.around.get(header, ()), header))
        around = lines.around.get(line, ())
        if header_now is not None:
            first, last = lines.body[header_now]
            back = previous is not None and first <= previous <= last
            self.at_header = (header_now, not back)
        for header in [h for h in self.index if h not in around and h != header_now]:
            del self.index[header]  # left: a break, a return, an exception
        self.marks = self._marks(around)
        return finished, self.marks

    def _marks(self, headers: Iterable[int]) -> tuple[LoopMark, ...]:
        index = self.index
        return self.outer + tuple(LoopMark(h, index[h], None) for h in headers if h in index)


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _find_call(calls: list[ast.Call], frame: FrameType, lines: list[str]) -> ast.Call:
    """The script's call running in ``frame``: matched by the instruction's end position, else
    the calls on its line; a callee named ``...backward`` / ``...grad`` first."""
    line = frame.f_lineno
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    end = positions[index][1::2] if 0 <= index < len(positions) else (None, None)
    exact = [c for c in calls if (c.end_lineno, c.end_col_offset) == end]
    on_line = [c for c in calls if c.lineno <= line <= (c.end_lineno or c.lineno)]
    for group in (exact, on_line):
        named = [c for c in group if _callee(c).endswith(_CALL_NAMES)]
        best = named or group
        if best:
            return min(best, key=lambda c: ((c.end_lineno or 0) - c.lineno, -c.col_offset))
    return _whole_line(lines, line)


def _whole_line(lines: list[str], line: int) -> ast.Call:
    """A stand-in call spanning the text of ``line`` (when no call of the script is found)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = len(text) - len(text.lstrip())
    node = ast.Call(func=ast.Name(id="", ctx=ast.Load()), args=[], keywords=[])
    node.lineno, node.end_lineno = line, line
    node.col_offset = len(text[:start].encode("utf-8"))
    node.end_col_offset = len(text.rstrip().encode("utf-8"))
    return node


def _last_line_in(tb: TracebackType | None, filename: str) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _name_in(frame: FrameType, value: Any) -> str | None:
    for names in (frame.f_locals, frame.f_globals):
        found = next((k for k, v in names.items() if v is value and not _dunder(k)), None)
        if found is not None:
            return found
    return None


class _ModuleNames:
    """Each module's name: the variable that holds it and its ``named_modules`` path (``G.body.0``).

    The first name found wins, so the script's globals name a module before the ``self`` of the
    frame running its ``forward``. A module no name reaches is looked for again only once the
    names holding modules changed.

    >>> body = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> names = _ModuleNames()
    >>> names.scan([("G", body), ("self", body[0])])
    >>> names.get(body[0]), names.get(body)
    ('G.0', 'G')
    """

    def __init__(self) -> None:
        self._names: dict[int, tuple[weakref.ref[torch.nn.Module], str]] = {}
        self._scanned: tuple[int, ...] = ()  # ids of the values that held modules at the last scan

    def get(self, module: torch.nn.Module) -> str | None:
        entry = self._names.get(id(module))
        return entry[1] if entry is not None and entry[0]() is module else None

    def add(self, module: torch.nn.Module, name: str) -> None:
        for path, sub in module.named_modules():
            if self.get(sub) is None:
                self._names[id(sub)] = (weakref.ref(sub), f"{name}.{path}" if path else name)

    def scan(self, names: Iterable[tuple[str, Any]]) -> None:
        """Name the modules ``names`` hold (outermost first), in lists, tuples and dicts too."""
        found = [(name, v) for name, v in names if isinstance(v, torch.nn.Module | list | tuple | dict)]
        held = tuple(id(v) for _, v in found)
        if held == self._scanned:
            return
        self._scanned = held
        for name, value in found:
            if isinstance(value, torch.nn.Module):
                self.add(value, name)
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(item, torch.nn.Module):
                    self.add(item, f"{name}[{key!r}]")


class _Printed:
    """The standard output, with each printed line also told to the recorder."""

    def __init__(self, stream: TextIO, on_line: Callable[[str], None]) -> None:
        self._stream = stream
        self._on_line = on_line
        self._pending = ""

    @_untraced
    def write(self, text: str) -> int:
        written = self._stream.write(text)
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._on_line(line)
        return written

    def close_line(self) -> None:
        if self._pending:
            self._on_line(self._pending)
            self._pending = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
