"""``torch.amp`` and ``torch.cuda.amp`` in programs: ``autocast`` as a ``with`` block and
``GradScaler``, PyTorch's own, as they run where the program runs (NOTE [mixed precision]).

>>> scaler = amp_members("torch.amp")["GradScaler"]("cuda", enabled=False)
>>> loss = torch.ones(())
>>> scaler.scale(loss) is loss, scaler.get_scale(), scaler.is_enabled()
(True, 1.0, False)
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import torch
import torch.cuda.amp.common

from app.core.language.hints import refused
from app.core.language.objects import Checked, GradModeEntry, listed_method
from app.core.language.optimizer_proxies import OptimizerProxy
from app.core.model.errors import ProgramError

__all__ = ["AutocastEntry", "ScalerProxy", "amp_members", "autocast_context"]

# NOTE [mixed precision]
# Training code wraps its forward in ``with autocast():`` and its backward in a ``GradScaler``.
# Both are PyTorch's own objects, made with the program's arguments: ``torch.autocast("cpu",
# dtype=torch.bfloat16)`` runs the block in bfloat16 as in a plain run. Where the program does
# not run on CUDA (``torch.cuda.is_available()`` answers False to it), CUDA's autocast and
# scaler are made as PyTorch makes them on a machine without CUDA: autocast disabled, the scaler
# disabled (``scale`` gives the loss back, ``step`` steps the optimizer, ``get_scale()`` is 1.0),
# each with PyTorch's own warning; ``torch.cuda.amp``'s names warn that they are deprecated, as
# PyTorch's do. The scaler takes the program's optimizer and nothing else of it.

_PLAIN = (str, bool, int, float, torch.dtype, type(None))


@dataclass(frozen=True)
class AutocastEntry(GradModeEntry):
    """``autocast``: usable only as ``with autocast(...):``; ``make`` is PyTorch's own class."""

    make: Callable[..., Any] = torch.autocast


class _Evaluating(Protocol):
    def apply(
        self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any: ...
    def eval(self, node: ast.expr) -> Any: ...
    def error(self, message: str, node: ast.AST) -> ProgramError: ...


def autocast_context(
    ev: _Evaluating, entry: AutocastEntry, node: ast.expr
) -> contextlib.AbstractContextManager[Any]:
    """PyTorch's autocast for ``with <entry>(...):``, made with the program's plain arguments."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        raise ev.error(f"with {entry.name}(...): calls it with its arguments written out", node)
    if any(k.arg is None for k in node.keywords):
        raise ev.error(f"with {entry.name}(...): takes its arguments written out, not **", node)
    args = [ev.eval(a) for a in node.args]
    kwargs = {k.arg: ev.eval(k.value) for k in node.keywords if k.arg is not None}
    if not all(isinstance(v, _PLAIN) for v in (*args, *kwargs.values())):
        raise ev.error(f"{entry.name}(...) takes a device name, a dtype and True or False here", node)
    context: contextlib.AbstractContextManager[Any] = ev.apply(
        _made_where_run(entry.make), args, kwargs, node
    )
    return context


def _made_where_run(make: Callable[..., Any]) -> Callable[..., Any]:
    """``make`` called as on a machine without CUDA where the program does not run on CUDA."""

    def made(*args: Any, **kwargs: Any) -> Any:
        with _as_without_cuda():
            return make(*args, **kwargs)

    made.__module__ = "torch"  # its errors are PyTorch's (a device type it does not know)
    return made


@contextlib.contextmanager
def _as_without_cuda() -> Iterator[None]:
    """PyTorch's own check of whether CUDA's mixed precision can run, answered as the program sees
    CUDA (``torch.cuda.is_available()``, NOTE [mixed precision])."""
    common = torch.cuda.amp.common
    real = common.amp_definitely_not_available
    if torch.get_default_device().type == "cuda":
        yield
        return
    common.amp_definitely_not_available = lambda: True
    try:
        yield
    finally:
        common.amp_definitely_not_available = real


class ScalerProxy(Checked):
    """A ``GradScaler`` as a program holds it: its methods, given tensors and the program's optimizer."""

    METHODS = (
        "scale",
        "unscale_",
        "step",
        "update",
        "get_scale",
        "is_enabled",
        "state_dict",
        "load_state_dict",
    )
    kind = "a GradScaler"

    def __init__(self, scaler: torch.amp.GradScaler) -> None:
        self._scaler = scaler

    def __repr__(self) -> str:
        """PyTorch's own text for the scaler (its address taken out where it is printed)."""
        return repr(self._scaler)

    def method(self, name: str) -> Callable[..., Any]:
        """One of :attr:`METHODS`, bound to this proxy."""
        return listed_method(self, name, self.METHODS)

    def members(self) -> list[str]:
        """The listed methods."""
        return list(self.METHODS)

    def scale(self, outputs: Any) -> Any:
        """The loss times the scale (the loss itself when the scaler is disabled)."""
        if not _tensors(outputs):
            raise refused("scaler.scale(...) takes a tensor, or a list or tuple of tensors")
        return self._scaler.scale(outputs)

    def unscale_(self, optimizer: Any) -> None:
        self._scaler.unscale_(_optimizer_of(optimizer).optimizer)

    def step(self, optimizer: Any) -> None:
        """The optimizer's step, as PyTorch's scaler takes it (skipped on inf or NaN when enabled)."""
        proxy = _optimizer_of(optimizer)
        if not self._scaler.is_enabled():
            proxy.step()  # what a disabled scaler does: optimizer.step()
            return
        self._scaler.step(proxy.optimizer)

    def update(self, new_scale: float | None = None) -> None:
        if new_scale is not None and not isinstance(new_scale, (int, float)):
            raise refused("scaler.update(...) takes a number here")
        self._scaler.update(new_scale)

    def get_scale(self) -> float:
        return self._scaler.get_scale()

    def is_enabled(self) -> bool:
        return self._scaler.is_enabled()

    def state_dict(self) -> dict[str, Any]:
        return self._scaler.state_dict()

    def load_state_dict(self, state: Any) -> None:
        if not isinstance(state, dict) or not all(isinstance(v, _PLAIN) for v in state.values()):
            raise refused("scaler.load_state_dict(...) takes what state_dict() gave")
        self._scaler.load_state_dict(state)


def _tensors(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_tensors(v) for v in value)
    return isinstance(value, torch.Tensor)


def _optimizer_of(value: Any) -> OptimizerProxy:
    if not isinstance(value, OptimizerProxy):
        raise refused("a GradScaler steps an optimizer of torch.optim")
    return value


def _scaler_factory(make: Callable[..., torch.amp.GradScaler]) -> Callable[..., ScalerProxy]:
    def grad_scaler(*args: Any, **kwargs: Any) -> ScalerProxy:
        if not all(isinstance(v, _PLAIN) for v in (*args, *kwargs.values())):
            raise refused("GradScaler(...) takes a device name, numbers and True or False")
        with _as_without_cuda():
            return ScalerProxy(make(*args, **kwargs))

    grad_scaler.__name__ = "GradScaler"
    grad_scaler.__module__ = "torch"  # its errors are PyTorch's (a growth factor under 1)
    return grad_scaler


def amp_members(path: str) -> dict[str, Any]:
    """``torch.amp`` or ``torch.cuda.amp``: ``autocast`` and ``GradScaler``."""
    if path == "torch.cuda.amp":
        return {
            "autocast": AutocastEntry("autocast", enabled=None, make=torch.cuda.amp.autocast),
            "GradScaler": _scaler_factory(torch.cuda.amp.GradScaler),
        }
    return {
        "autocast": AutocastEntry("autocast", enabled=None, make=torch.amp.autocast),
        "GradScaler": _scaler_factory(torch.amp.GradScaler),
    }
