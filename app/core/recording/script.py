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
  and a ``forward`` step is taken for it (loops left empty); a frame's
  ``return`` finishes its last line (the returned value counted as held). No
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
rather than ``self.fc1.weight``. An in-place write is not counted here as the
size guard counts it, so every slot is probed after every line.

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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TextIO

import torch

from app.core.devices import resolve_device
from app.core.loading import python_title, stem_name
from app.core.model.program import CallKind, Program
from app.core.model.recording import Recording
from app.core.recording.recorder import _graph_fns, _ProgramStopped, _Recorder
from app.core.sizing.limits import Limits

__all__ = ["BlockRecorder", "ScriptRun", "record_script", "script_traceback"]

_UNLIMITED = Limits(time_limit_s=math.inf)  # the user's own script runs as long as it runs
_OWN_FILES = frozenset({__file__, sys.modules[_Recorder.__module__].__file__})
_ROOT_ARGUMENTS = ("self", "tensors", "outputs", "gradient", "grad_tensors", "grad_outputs")
_CALL_NAMES = ("backward", "grad")
_NOTHING = object()


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


class _ScriptRecorder(_Recorder):
    """The recorder, fed by line events and patched autograd calls (NOTE [trusted scripts])."""

    def __init__(self, program: Program, filename: str, device: torch.device) -> None:
        super().__init__(program, device, _UNLIMITED)
        self.filename = filename
        self.user_modules: set[str] = set()  # __name__ of the script's globals: its classes are walked
        self.call_nodes = _call_nodes(program.code)
        self.thread = threading.get_ident()
        self.line_of: dict[int, int] = {}  # id(frame) -> the line it is running
        self.in_call = False
        self.stopped = False
        self.autograd_error: BaseException | None = None
        # What the frames hold, set for one event and let go right after it.
        self.names: list[tuple[str, Any]] = []  # outermost first
        self.top_names: list[tuple[str, Any]] = []  # the script's globals and outermost frame
        self.tensors: list[torch.Tensor] = []

    # -- what the program holds (overrides) ---------------------------
    def _held_tensors(self) -> Iterator[torch.Tensor]:
        return iter(self.tensors)

    def _name_of(self, tensor: torch.Tensor) -> str | None:
        for name, value in self.names:
            if value is tensor and name not in self.leaf_tensors:
                return name
        for name, value in self.names:
            if isinstance(value, torch.nn.Module):
                path = next((p for p, t in value.named_parameters() if t is tensor), None)
                if path is not None and f"{name}.{path}" not in self.leaf_tensors:
                    return f"{name}.{path}"
        return None

    def _take_named_leaves(self) -> None:
        known = {id(t) for t in self.leaf_tensors.values()}
        for name, value in self.top_names:
            if isinstance(value, torch.Tensor):
                named = [(name, value)]
            elif isinstance(value, torch.nn.Module):
                named = [(f"{name}.{path}", p) for path, p in value.named_parameters()]
            else:
                continue
            for leaf_name, tensor in named:
                if tensor.is_leaf and tensor.requires_grad and id(tensor) not in known:
                    self._known_leaf(tensor, leaf_name)
                    known.add(id(tensor))

    def name_module(self, module: torch.nn.Module, name: str) -> None:
        """Name ``module``'s parameters ``name.<path>`` from now on."""
        for path, p in module.named_parameters():
            if p.requires_grad:
                self._known_leaf(p, f"{name}.{path}")

    # -- looking at the frames ----------------------------------------
    def _look_from(self, frame: FrameType, returned: Any = _NOTHING) -> None:
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
        others = [v for f in chain if f.f_code.co_filename != self.filename for v in f.f_locals.values()]
        extra = [] if returned is _NOTHING else [returned]
        self.tensors = list(_tensors_in([*self.env.values(), *others, *extra], self.user_modules))

    def _let_go_of_frames(self) -> None:
        self.names, self.top_names, self.tensors, self.env = [], [], [], {}

    # -- line events ----------------------------------------------------
    def global_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code.co_filename != self.filename or threading.get_ident() != self.thread:
            return None
        return self.local_trace

    def local_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        if event == "line":
            self.line_done(frame)
            self.line_of[id(frame)] = frame.f_lineno
        elif event == "return":
            self.line_done(frame, arg)
            self.line_of.pop(id(frame), None)
        return self.local_trace

    def line_done(self, frame: FrameType, returned: Any = _NOTHING) -> None:
        """The line ``frame`` was running has finished: take its ``forward`` step."""
        line = self.line_of.get(id(frame))
        if line is None or self.in_call or self.stopped:
            return
        self._look_from(frame, returned)
        try:
            self.fresh.extend(_graph_fns(self.tensors))
            self._label_new(frame, line)
            self.dirty = True  # NOTE [trusted scripts]: what a line let go of is not known
            if self.capture.fns:
                self.budget.writes += 1  # nor whether it wrote in place: probe every slot
            self._after_statement(line, ())
        finally:
            self._let_go_of_frames()

    def _label_new(self, frame: FrameType, line: int) -> None:
        """A node first seen bound to a name of the frame is labelled with its line's text."""
        lines = self.program.lines
        text = " ".join(lines[line - 1].split()) if 0 < line <= len(lines) else ""
        for value in frame.f_locals.values():
            fn = value.grad_fn if isinstance(value, torch.Tensor) else None
            if fn is not None and self.capture.id_of(fn) is None and text:
                self._labels.append((fn, text, (line, line), True))

    # -- autograd calls -------------------------------------------------
    def patched(self, kind: CallKind, real: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(real)

        @functools.wraps(real)
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
            roots = [t for name in _ROOT_ARGUMENTS for t in _flat_tensors(given.get(name))]
            self.fresh.extend(_graph_fns(roots))
            self.fresh.extend(self._unseen(_graph_fns(roots)))
            node = _find_call(self.call_nodes, frame, self.program.lines)
            keywords = {k: v for k, v in given.items() if k not in ("self", "tensors", "outputs")}
            return self.autograd_call(kind, self._keeping_error(run), node, keywords, ())
        except _ProgramStopped:
            self.stopped = True
            raise
        finally:
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
        message = traceback.format_exception_only(type(exc), exc)[-1].strip()
        self.error, self.error_line = message, line
        self._snapshot("error", None, None, line=line, error=message)

    def finished(self) -> Recording:
        return self._result()

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
        try:
            for (owner, name, kind), (_, _, real) in zip(patches, originals, strict=True):
                setattr(owner, name, self.patched(kind, real))  # type: ignore[arg-type]
            sys.stdout = _Printed(stdout or sys.stdout, self.printed)
            sys.settrace(self.global_trace)
            yield
        finally:
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
    name = stem_name(Path(filename))
    program = Program(text, name=name, title=python_title(text, name), path=Path(shown))
    target = resolve_device(device)
    recorder = _ScriptRecorder(program, filename, target)
    exception: BaseException | None = None
    exit_code = 0
    with _as_main(shown, list(args)), recorder.tracing(stdout):
        try:
            with torch.device(target) if target.type != "cpu" else nullcontext():
                runpy.run_path(filename, run_name="__main__")
        except _ProgramStopped:
            pass
        except SystemExit as exc:
            exit_code = _exit_code(exc)
        except Exception as exc:
            recorder.script_failed(exc)
            exception, exit_code = exc, 1
    return ScriptRun(recorder.finished(), exception, exit_code)


@contextmanager
def _as_main(shown: str, args: list[str]) -> Iterator[None]:
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
        self._frame_trace = frame.f_trace
        frame.f_trace = recorder.local_trace  # the caller's frame is running already

    def stop(self, exc: BaseException | None) -> BaseException | None:
        """End the recording; return the exception the block should raise instead of ``exc``."""
        recorder = self.recorder
        try:
            if not isinstance(exc, _ProgramStopped):
                recorder.line_done(self.frame)
        finally:
            self.frame.f_trace = self._frame_trace
            self._tracing.__exit__(None, None, None)
            self.frame = None  # type: ignore[assignment]  # hold no frame (it holds the block's values)
        if isinstance(exc, _ProgramStopped):
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
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (torch.nn.Module, torch.optim.Optimizer)) or (
            type(value).__module__ in user_modules and not isinstance(value, type)
        ):
            stack.extend(getattr(value, "__dict__", {}).values())


def _flat_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []


def _call_nodes(code: str) -> list[ast.Call]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


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


class _Printed:
    """The standard output, with each printed line also told to the recorder."""

    def __init__(self, stream: TextIO, on_line: Callable[[str], None]) -> None:
        self._stream = stream
        self._on_line = on_line
        self._pending = ""

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
