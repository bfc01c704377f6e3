"""torchviz's own drawing of a program's graph, made at its first backward (or grad) call.

``make_dot`` needs the live graph: ``grad_fn`` objects and the tensors they saved. So the
program runs (checked, as a recording runs it: same seed, same limits) up to its first autograd
call, ``make_dot(outputs, params=..., show_saved=True)`` is drawn on that call's outputs, and the
program stops there. ``params`` are the leaves the program names (``x``, a module's ``lin.weight``),
as a learner would pass them. Untrusted programs run this in the recording child
(``app.child``); only the DOT text comes back. A person's own script, trusted as
``python -m app run`` trusts it, runs here (:func:`script_first_backward_dot`).

>>> from app.core.model.program import Program
>>> code = "x = torch.ones(2, requires_grad=True)\\nx.square().sum().backward()\\n"
>>> dot = first_backward_dot(Program(code))
>>> "PowBackward0" in dot.source and "x\\n (2)" in dot.source and dot.note
''
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import torch
from torch.overrides import TorchFunctionMode

from app.core.devices import resolve_device
from app.core.language.evaluator import Evaluator
from app.core.language.objects import Checked
from app.core.language.parsing import parse
from app.core.model.errors import ProgramError
from app.core.model.program import CallKind, Program
from app.core.recorder.recorder import isolated
from app.core.sizing.limits import Limits

__all__ = [
    "NO_CALL",
    "TorchvizDot",
    "first_backward_dot",
    "load_make_dot",
    "named_leaves",
    "script_first_backward_dot",
]

NO_CALL = "the program makes no backward or grad call: make_dot draws the graph such a call starts from"


class TorchvizDot(NamedTuple):
    """``make_dot``'s DOT text, and a note when it had to leave something out ("" otherwise)."""

    source: str
    note: str


def load_make_dot() -> Callable[..., Any]:
    """torchviz's ``make_dot``, or a one-line :class:`ProgramError` saying why it cannot be imported
    (torchviz 0.0.3 imports ``distutils``, which Python 3.12 no longer has)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from torchviz import make_dot
    except Exception as exc:  # ImportError, or whatever a broken install raises while importing
        fix = (
            "pip install setuptools (it provides distutils)"
            if "distutils" in str(exc)
            else "pip install torchviz"
        )
        raise ProgramError(f"torchviz cannot be imported ({type(exc).__name__}: {exc}); {fix}") from None
    return make_dot  # type: ignore[no-any-return]


class _Reached(BaseException):
    """Raised through the evaluator at the first autograd call: the program stops there."""

    def __init__(self, outputs: list[torch.Tensor], params: dict[str, torch.Tensor] | None = None) -> None:
        super().__init__()
        self.outputs = outputs
        self.params = params or {}


def _outputs(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[torch.Tensor]:
    """The tensors a ``backward`` or ``grad`` call is given as its outputs (its first argument)."""
    first = args[0] if args else kwargs.get("outputs", kwargs.get("tensors"))
    items = [first] if isinstance(first, torch.Tensor) else list(first or ())
    return [t for t in items if isinstance(t, torch.Tensor)]


class _OutputsOf(TorchFunctionMode):
    """Sees the outputs a ``backward`` or ``grad`` call is given, and stops the call before it runs."""

    CALLS = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func not in self.CALLS:
            return func(*args, **kwargs)
        raise _Reached(_outputs(args, kwargs))


class _UntilFirstCall:
    """The evaluator's hooks (``ProgramHooks``): nothing to record, a stop at the first call."""

    def autograd_call(
        self, kind: CallKind, run: Callable[[], Any], node: Any, given: Mapping[str, Any], loops: Any
    ) -> Any:
        with _OutputsOf():
            return run()

    def statement_done(self, statement: Any, loops: Any) -> None:
        pass

    def printed(self, text: str) -> None:
        pass


def named_leaves(env: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The leaves the program names, a module's by their path (``lin.weight``): make_dot's ``params``."""
    leaves: dict[str, torch.Tensor] = {}
    for name, value in env.items():
        if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
            leaves[name] = value
        elif isinstance(value, torch.nn.Module):  # a script's own module
            leaves.update((f"{name}.{path}", p) for path, p in value.named_parameters() if p.requires_grad)
        elif isinstance(value, Checked):
            leaves.update(
                (f"{name}.{path}", t) for path, t in value.named_tensors() if t.is_leaf and t.requires_grad
            )
    return leaves


def first_backward_dot(program: Program, device: str = "cpu", *, limits: Limits | None = None) -> TorchvizDot:
    """``make_dot``'s DOT for the graph ``program``'s first autograd call starts from.

    Raises :class:`ProgramError` when the program cannot run (its message as a recording would
    give it), makes no autograd call, or torchviz cannot be imported.
    """
    make_dot = load_make_dot()
    limits = limits or Limits()
    env: dict[str, Any] = {}
    evaluator = Evaluator(
        env,
        field="program",
        limits=limits,
        deadline=time.monotonic() + limits.time_limit_s,
        hooks=_UntilFirstCall(),
    )
    with isolated(resolve_device(device)):
        try:
            evaluator.run(parse(program.code, field="program", mode="exec"))
        except _Reached as reached:
            return _drawn(make_dot, [t for t in reached.outputs if t.grad_fn is not None], named_leaves(env))
    raise ProgramError(NO_CALL)


def _drawn(
    make_dot: Callable[..., Any], outputs: list[torch.Tensor], params: dict[str, torch.Tensor]
) -> TorchvizDot:
    if not outputs:
        raise ProgramError("the first backward or grad call is given no tensor with a graph: nothing to draw")
    root: Any = tuple(outputs) if len(outputs) > 1 else outputs[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torchviz 0.0.3's LooseVersion
        try:
            return TorchvizDot(make_dot(root, params=params, show_saved=True).source, "")
        except RuntimeError as exc:  # a saved tensor written in place: show_saved reads it, and raises
            why = str(exc).split(" Hint:")[0].strip() or type(exc).__name__
            note = f"saved tensors left out: make_dot(show_saved=True) raised ({why})"
            return TorchvizDot(make_dot(root, params=params).source, note)


def script_first_backward_dot(path: str, args: Sequence[str] = (), *, device: str = "cpu") -> TorchvizDot:
    """``make_dot``'s DOT at the first autograd call of the script at ``path``, run here as
    ``python path args...`` would run it (trusted). ``params`` are the leaves and modules the
    script's own frames name at that call. The script's own exceptions propagate."""
    import os
    import runpy
    import sys
    from contextlib import nullcontext
    from types import FrameType
    from unittest import mock

    from app.core.recorder.script import as_main

    make_dot = load_make_dot()
    filename = os.path.abspath(path)

    def stop(*args: Any, **kwargs: Any) -> Any:
        frames: list[dict[str, Any]] = []
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == filename:
                frames.append({**frame.f_globals, **frame.f_locals})
            frame = frame.f_back
        names = {k: v for scope in reversed(frames) for k, v in scope.items()}  # the innermost wins
        raise _Reached(_outputs(args, kwargs), named_leaves(names))

    target = resolve_device(device)
    with (
        as_main(path, list(args)),
        mock.patch.object(torch.Tensor, "backward", stop),
        mock.patch.object(torch.autograd, "backward", stop),
        mock.patch.object(torch.autograd, "grad", stop),
        torch.device(target) if target.type != "cpu" else nullcontext(),
    ):
        try:
            runpy.run_path(filename, run_name="__main__")
        except _Reached as reached:
            return _drawn(make_dot, [t for t in reached.outputs if t.grad_fn is not None], reached.params)
        except SystemExit:
            pass
    raise ProgramError(NO_CALL.replace("the program", "the script"))
