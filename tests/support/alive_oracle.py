"""Which graph nodes are alive, told by PyTorch and CPython alone, on a plain run of a program.

The recorder decides "alive" by following what the program holds. This oracle shares none
of that: it runs the program's text as plain Python and lets the interpreter decide.

* Every node an operation returns is tagged when it is made: a ``TorchFunctionMode``
  sees each torch call's outputs, and a token object goes into their ``grad_fn.metadata`` (and
  into each node below them not tagged yet). The metadata dict is owned by the node, so the
  token dies exactly when PyTorch frees the node, and a ``weakref.finalize`` on it says so.
  The token holds nothing, so it makes no cycle and keeps nothing alive.
* Whenever a line of the program's own code has finished (a frame's next line begins, or
  it returns: every frame, so functions, methods and generators too), ``gc.collect()`` runs
  first (a cycle nothing reaches is freed there, as Python would free it later), then the
  alive tokens are read.

What it can see: every node an operation made that some torch call returned or that such a
node reaches, by PyTorch's class name (not by line: the recorder names a node by the line
that was running when it first saw the node held, which may be a later one).
What it cannot see: ``AccumulateGrad`` (alive exactly while a node above it is, and kept by the
leaf's weak cache otherwise: left out on both sides), and nodes no torch call returned and no
tagged node reaches (a graph ``backward(create_graph=True)`` leaves in ``.grad``).
The objects alive before the program began are frozen (``gc.freeze``) so each collection
walks only what the program made.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from app.core import Recording

__all__ = ["AliveState", "alive_by_python", "alive_by_recording", "compressed"]

AliveState = Counter[str]  # node class name -> how many are alive
_TAG = "alive-oracle"
_UNSEEN = ("AccumulateGrad",)


class _Token:
    __slots__ = ("__weakref__",)


class _Tags:
    """The nodes tagged so far that PyTorch has not freed, each as (class name, line)."""

    def __init__(self) -> None:
        self.alive: dict[int, str] = {}
        self._serial = 0

    def tag_below(self, fn: Any) -> None:
        stack = [fn]
        while stack:
            node = stack.pop()
            if node is None or _TAG in node.metadata:
                continue
            self._serial += 1
            token = _Token()
            node.metadata[_TAG] = token
            if type(node).__name__ not in _UNSEEN:
                self.alive[self._serial] = type(node).__name__
                weakref.finalize(token, self.alive.pop, self._serial, None)
            stack.extend(child for child, _ in node.next_functions)


class _Tagging(TorchFunctionMode):
    def __init__(self, tags: _Tags) -> None:
        super().__init__()
        self.tags = tags

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        for value in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(value, torch.Tensor) and value.grad_fn is not None:
                self.tags.tag_below(value.grad_fn)
        return out


def alive_by_python(code: str, filename: str) -> list[AliveState]:
    """The alive nodes after each line of ``code`` runs as plain Python (``filename`` is its own:
    a script's path, so ``run`` and this oracle name the same lines)."""
    tags = _Tags()
    states: list[AliveState] = []

    def observe() -> None:
        gc.collect()
        states.append(Counter(tags.alive.values()))

    started: set[int] = set()  # frames that began a line: the next line event ends one

    def local(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if event == "return" or (event == "line" and id(frame) in started):
            observe()
        if event == "line":
            started.add(id(frame))
        elif event == "return":
            started.discard(id(frame))
        return local

    def first(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        return local if frame.f_code.co_filename == filename else None

    compiled = compile(code, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": filename}
    with _frozen(), torch.random.fork_rng(), _Tagging(tags), _tracing(first):
        torch.manual_seed(0)
        try:
            exec(compiled, namespace)  # a test's own program text, as plain Python
        except Exception:  # the program ends at its first exception, as recorded
            pass
        finally:
            namespace.clear()
    return compressed(states)


@contextmanager
def _frozen() -> Iterator[None]:
    """Every object alive now out of the collections' reach while the program runs. No collection
    first: a full one walks the whole test process (~0.3-0.7 s, once per program checked), and
    garbage from before is none of this program's (its nodes carry another run's tokens)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def _tracing(trace: Callable[..., Any]) -> Iterator[None]:
    before = sys.gettrace()
    sys.settrace(trace)
    try:
        yield
    finally:
        sys.settrace(before)


def alive_by_recording(recording: Recording) -> list[AliveState]:
    """The alive nodes after each line's step of a recording, in the same terms (a step inside an
    autograd call sees the call's half-computed values, which no line's end sees)."""
    graph = {node.id: node for node in recording.graph.nodes}
    states: list[AliveState] = []
    for index, step in enumerate(recording.timeline.steps):
        if step.kind not in ("forward", "error"):
            continue
        state = recording.timeline.state(index)
        alive = [graph[n] for n in state.visible_nodes - state.gone if n in graph]
        states.append(Counter(n.name for n in alive if n.name not in _UNSEEN))
    return compressed(states)


def compressed(states: list[AliveState]) -> list[AliveState]:
    """The states, each one different from the one before (the empty start left out)."""
    out: list[AliveState] = []
    for state in states:
        if (out and out[-1] == state) or (not out and not state):
            continue
        out.append(state)
    return out


def script_file(directory: Path, code: str) -> Path:
    path = directory / "kept.py"
    path.write_text(code)
    return path
