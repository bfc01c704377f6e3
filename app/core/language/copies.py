"""``copy`` in programs: ``copy.deepcopy`` and ``copy.copy`` of what a program may copy.

# NOTE [program copies]
An EMA teacher is ``copy.deepcopy(model)``; a best model is ``copy.deepcopy(model.state_dict())``.
What may be copied is closed: tensors, numbers, text, None, lists, tuples and dicts of them,
the modules and optimizers a program holds (its own module classes too) and its own objects.
Anything else (a function, a class, a torch module's namespace, a loader, a builtin) is refused
before Python's ``deepcopy`` sees it, so no copy ever walks into the evaluator. A program's
module is copied by PyTorch (``Module.__deepcopy__`` is ``object``'s: its ``__dict__``,
parameters and buffers); its class and methods are the program's and shared, not copied, and
the copy gets its own proxy. Every tensor the copy makes goes through the size guard as one
call of the language.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from app.core.language.hints import refused
from app.core.language.instances import (
    ProgramModule,
    ProgramModuleProxy,
    ProgramObject,
    wrap_module,
)
from app.core.language.module_proxies import ModuleProxy
from app.core.language.objects import Checked
from app.core.language.optimizer_proxies import OptimizerProxy
from app.core.language.stand_ins import ParsedArguments

__all__ = ["copy_members", "copyable_refusal"]

_PLAIN = (torch.Tensor, int, float, bool, str, complex, type(None), torch.dtype, torch.device, torch.Size)
MAX_COPY_DEPTH = 8


def copyable_refusal(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` may not be copied (NOTE [program copies]), or None.

    >>> copyable_refusal([torch.ones(2), {"a": 1}]) is None, copyable_refusal(print) is None
    (True, False)
    """
    if depth > MAX_COPY_DEPTH:
        return "it is nested too deeply"
    if isinstance(value, _PLAIN):
        return None
    if isinstance(value, (list, tuple, set, frozenset)):
        return next((r for r in (copyable_refusal(v, depth + 1) for v in value) if r), None)
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
        return next((r for r in (copyable_refusal(v, depth + 1) for v in items) if r), None)
    if isinstance(value, ModuleProxy):
        return _module_refusal(value.module, depth)
    if isinstance(value, OptimizerProxy):
        return None
    if isinstance(value, (ProgramObject, ParsedArguments)):  # the program's values, by name
        return next((r for r in (copyable_refusal(v, depth + 1) for v in value.values.values()) if r), None)
    kind = value.kind if isinstance(value, Checked) else type(value).__name__
    return f"{kind} cannot be copied: copy tensors, modules, optimizers, lists and dicts"


def _module_refusal(module: nn.Module, depth: int) -> str | None:
    """Why a module may not be copied: a value the program set on it (or in it) that may not be."""
    for inner in module.modules():
        for name, held in inner.__dict__.items():
            # _modules holds the modules inside, walked here themselves; any object of the
            # language's own (a namespace, a builtin) is checked, as are containers
            ours = type(held).__module__.startswith("app.")
            if name not in ("lens_proxy", "_modules") and (
                ours or isinstance(held, (list, tuple, dict, set))
            ):
                refusal = copyable_refusal(held, depth + 1)
                if refusal is not None:
                    return refusal
    return None


def _copied(value: Any, deep: bool) -> Any:
    refusal = copyable_refusal(value)
    if refusal is not None:
        raise refused(f"copy.{'deepcopy' if deep else 'copy'}: {refusal}")
    if isinstance(value, ModuleProxy):
        return _copied_module(value.module, deep)
    if isinstance(value, ProgramObject):
        twin = ProgramObject(value.cls)
        twin.values = copy.deepcopy(value.values) if deep else dict(value.values)
        return twin
    return copy.deepcopy(value) if deep else copy.copy(value)


def _copied_module(module: nn.Module, deep: bool) -> ModuleProxy:
    """PyTorch's copy of ``module``; every program module in it gets a proxy of its own."""
    proxies = {id(m): m.__dict__.pop("lens_proxy") for m in module.modules() if isinstance(m, ProgramModule)}
    try:
        twin = copy.deepcopy(module) if deep else copy.copy(module)
    finally:
        for m in module.modules():
            if id(m) in proxies:
                m.__dict__["lens_proxy"] = proxies[id(m)]
    for m in twin.modules():
        if isinstance(m, ProgramModule) and "lens_proxy" not in m.__dict__:
            ProgramModuleProxy(m)
    return wrap_module(twin)


def _deepcopy(value: Any, memo: Any = None) -> Any:
    if memo is not None:
        raise refused("copy.deepcopy(...) takes the value only here")
    return _copied(value, deep=True)


def _copy(value: Any) -> Any:
    return _copied(value, deep=False)


_deepcopy.__name__, _deepcopy.__module__ = "deepcopy", "copy"
_copy.__name__, _copy.__module__ = "copy", "copy"


def copy_members() -> dict[str, Any]:
    """``copy``: ``deepcopy`` and ``copy`` (NOTE [program copies])."""
    return {"deepcopy": _deepcopy, "copy": _copy}
