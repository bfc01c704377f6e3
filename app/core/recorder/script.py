"""Record a trusted script (or a block of one) as it runs as ordinary Python, hooked.


Programs are untrusted and run only in the checked language
(``app.core.recorder.recorder``). A script of the user's own is trusted like
any script they run: :func:`record_script` runs it exactly as ``python
SCRIPT.py`` would, and :class:`BlockRecorder` records a ``with`` block of the
caller's file. Both feed the same recorder as the checked evaluator does, so a
script's recording is the same :class:`Recording` as a program's.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.py"
>>> code = "# Tiny\\nimport torch\\nx = torch.ones(2, requires_grad=True)\\n(x * x).sum().backward()\\n"
>>> _ = path.write_text(code)
>>> run = record_script(path)
>>> run.recording.program.title, [c.call.text for c in run.recording.calls]
('Tiny', ['(x * x).sum().backward()'])
>>> run.recording.grads_at_end(0)["x"].tolist()
[2.0, 2.0]

The recorder they feed is :class:`~app.core.recorder.script_recorder.ScriptRecorder` (NOTE
[trusted scripts] there).

Everything is undone in a ``finally``: patches, the trace function, the
standard output, ``sys.argv`` and ``sys.path[0]``.
"""

from __future__ import annotations

import ast
import linecache
import os
import runpy
import sys
import tokenize
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import torch

from app.core.devices import resolve_device
from app.core.lensfile import code_refusal
from app.core.loading import python_title, stem_name
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.recorder.recorder import ProgramStopped
from app.core.recorder.script_frames import name_in
from app.core.recorder.script_recorder import ScriptRecorder

__all__ = ["BlockRecorder", "ScriptRun", "as_main", "block_lines", "record_script", "script_traceback"]


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
        raise ProgramError(f"{shown} is too long to record: {refusal}")
    name = stem_name(Path(filename))
    program = Program(text, name=name, title=python_title(text, name), path=Path(shown))
    target = resolve_device(device)
    recorder = ScriptRecorder(program, filename, target)
    exception: BaseException | None = None
    exit_code = 0
    with as_main(shown, list(args)), _grad_mode_kept(), recorder.tracing(stdout):
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
def _grad_mode_kept() -> Iterator[None]:
    """Gradient mode as it was before the script ran: a script's ``torch.set_grad_enabled(False)``
    ends with its process under ``python SCRIPT.py``, and must not outlive it here."""
    enabled = torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.set_grad_enabled(enabled)


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


def block_lines(text: str, line: int) -> tuple[int, int] | None:
    """The first and last line of the innermost ``with`` statement of ``text`` on ``line`` (the
    block a ``with lens.record()`` there records), or None when there is none to find.

    >>> block_lines("x = 1\\nwith a:\\n    y = 2\\n    z = 3\\nw = 4\\n", 2)
    (2, 4)
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.With | ast.AsyncWith)
        and node.lineno <= line <= max(node.lineno, node.body[0].lineno - 1)  # on its header
    ]
    return max(spans, default=None)  # one header per line: the one that begins last


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
            raise ProgramError(f"{filename} is too long to record: {refusal}")
        name = stem_name(Path(filename))
        program = Program(text, name=name, title=python_title(text, name), path=Path(filename))
        self.recorder = ScriptRecorder(program, filename, resolve_device(device))
        self.lines = block_lines(text, frame.f_lineno)  # the block's own lines of the file
        self.model = model
        self.recording: Recording | None = None
        self._tracing = self.recorder.tracing()
        self._frame_trace: Any = None

    def start(self) -> None:
        recorder, frame = self.recorder, self.frame
        if self.model is not None:
            recorder.name_module(self.model, name_in(frame, self.model) or "model")
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
