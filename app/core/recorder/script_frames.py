"""What a trusted script's frames hold and run: their tensors, their modules' names, the call running.

The frames a script's names are read from (NOTE [trusted scripts] in ``script_recorder.py``;
what they reach is ``reach.py``'s), the tensors a module's inputs and outputs carry; and the two
wrappers the recorder puts around the script's run: :func:`untraced` for its own work,
:class:`Printed` for the printed text.
"""

from __future__ import annotations

import ast
import functools
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TextIO, TypeVar

import torch

from app.core.language.optimizer_proxies import optimizer_without_dynamo

__all__ = [
    "ModuleNames",
    "Printed",
    "dunder",
    "find_call",
    "flat_tensors",
    "frames_out_to_script",
    "last_line_in",
    "name_in",
    "script_frame",
    "tensors_in",
    "untraced",
]

_CALL_NAMES = ("backward", "grad")
_OWN_FILES = frozenset(str(p) for p in Path(__file__).parent.glob("*.py"))  # the recorder's own frames
T = TypeVar("T")


def dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def frames_out_to_script(frame: FrameType, filename: str) -> list[FrameType]:
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


def script_frame(frame: FrameType | None, filename: str) -> FrameType | None:
    while frame is not None and frame.f_code.co_filename != filename:
        frame = frame.f_back
    return frame


def tensors_in(values: Iterable[Any], user_modules: set[str]) -> Iterator[torch.Tensor]:
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
    dicts per module, walked at every line for no tensor): a tensor is never kept there.

    The optimizer is built as a program's is: PyTorch's own ``SGD(...)`` imports Dynamo on first
    use (NOTE [optimizer without Dynamo]), seconds at every import of this module."""
    module = set(vars(torch.nn.Module())) - {"_parameters", "_buffers", "_modules"}
    sgd = optimizer_without_dynamo(torch.optim.SGD, [torch.zeros(1, requires_grad=True)], (), {})
    optimizer = set(vars(sgd)) - {
        "state",
        "param_groups",
        "defaults",
    }
    return frozenset(module | optimizer)


_BOOKKEEPING = _bookkeeping()


def flat_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def find_call(calls: list[ast.Call], frame: FrameType, lines: list[str]) -> ast.Call:
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


def last_line_in(tb: TracebackType | None, filename: str) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def name_in(frame: FrameType, value: Any) -> str | None:
    for names in (frame.f_locals, frame.f_globals):
        found = next((k for k, v in names.items() if v is value and not dunder(k)), None)
        if found is not None:
            return found
    return None


class ModuleNames:
    """Each module's name: the variable that holds it and its ``named_modules`` path (``G.body.0``).

    The first name found wins, so the script's globals name a module before the ``self`` of the
    frame running its ``forward``. A module no name reaches is looked for again only once the
    names holding modules changed.

    >>> body = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> names = ModuleNames()
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


def untraced(method: Callable[..., T]) -> Callable[..., T]:
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


class Printed:
    """The standard output, with each printed line also told to the recorder."""

    def __init__(self, stream: TextIO, on_line: Callable[[str], None]) -> None:
        self._stream = stream
        self._on_line = on_line
        self._pending = ""

    @untraced
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
