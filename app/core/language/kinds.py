"""``isinstance`` in a program: a value against the types the language names (NOTE [program types]).

# NOTE [program types]
Snippets check ``isinstance(m, nn.Linear)`` to initialise layers and ``isinstance(x,
torch.Tensor)`` before calling ``.item()``. The second argument is never a Python class the
program holds: it is one of the language's own markers (``torch.Tensor``, a layer's factory,
``nn.Module``, a class of the program, a listed builtin such as ``int``), or a tuple of them,
and the answer is computed from what the marker stands for. Anything else is refused, so
``isinstance`` reaches no class, metaclass or ``__instancecheck__`` of the program's choosing.
"""

from __future__ import annotations

from typing import Any

import torch

from app.core.language.instances import (
    MODULE_BASE,
    BaseMarker,
    ProgramClass,
    ProgramModuleProxy,
    ProgramObject,
    _ContainerFactory,
)
from app.core.language.module_proxies import ModuleFactory, ModuleProxy
from app.core.language.objects import Checked
from app.core.language.raised import ExceptionKind, RaisedValue
from app.core.language.safe_builtins import SafeBuiltin
from app.core.language.whitelist import TensorType
from app.core.model.errors import ProgramError

__all__ = ["TYPE_REFUSAL", "is_instance", "type_of"]

TYPE_REFUSAL = (
    "isinstance(...) takes torch.Tensor, an nn layer such as nn.Linear, nn.Module, a class of the "
    "program, an exception class, or int, float, bool, str, list, tuple, dict, set (or a tuple of these)"
)
# The listed builtins that name a Python type, by the name a program calls them.
_PYTHON_TYPES: dict[str, type] = {
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
    "list": list,
    "tuple": tuple,
    "dict": dict,
    "set": set,
}


def is_instance(value: Any, marker: Any) -> bool:
    """``isinstance(value, marker)`` for a marker the language names; a refusal for any other.

    >>> tensor = TensorType("torch.Tensor", torch.Tensor)
    >>> is_instance(torch.ones(1), tensor), is_instance(1, (tensor, SafeBuiltin("int", int)))
    (True, True)
    """
    if isinstance(marker, tuple):
        return any(is_instance(value, m) for m in marker)
    if isinstance(marker, TensorType):
        return isinstance(value, marker.cls)  # torch's own check (torch.FloatTensor: the dtype)
    if isinstance(marker, SafeBuiltin) and marker.name == "object":  # NOTE [object]: every value is one
        return True
    if isinstance(marker, SafeBuiltin) and marker.name in _PYTHON_TYPES:
        return not isinstance(value, Checked) and isinstance(value, _PYTHON_TYPES[marker.name])
    if isinstance(marker, (ModuleFactory, _ContainerFactory)):
        cls: type[torch.nn.Module] = marker._cls
        return isinstance(value, ModuleProxy) and isinstance(value.module, cls)
    if isinstance(marker, BaseMarker):  # nn.Module, or Dataset: the base of the program's own class
        if marker is MODULE_BASE:
            return isinstance(value, ModuleProxy)
        return isinstance(value, ProgramObject) and value.cls.root is marker
    if isinstance(marker, ExceptionKind):  # except Exception as e: if isinstance(e, ValueError)
        return isinstance(value, RaisedValue) and issubclass(value.cls, marker.cls)
    if isinstance(marker, ProgramClass):
        if not isinstance(value, (ProgramObject, ProgramModuleProxy)):
            return False
        cls_at: Any = value.cls
        while isinstance(cls_at, ProgramClass):
            if cls_at is marker:
                return True
            cls_at = cls_at.base
        return False
    raise ProgramError(TYPE_REFUSAL)


def type_of(value: Any, names: dict[str, Any]) -> Any:
    """``type(value)``: the marker the program names that type by (``tuple``, ``torch.Tensor``,
    ``nn.Linear``, a class of its own), from ``names`` (what the program starts with), so that
    ``type(h) == tuple`` compares as Python compares; a refusal for anything else (NOTE [program types]).
    """
    if isinstance(value, (ProgramObject, ProgramModuleProxy)):
        return value.cls
    if isinstance(value, torch.nn.Parameter):
        return names["nn"].members["Parameter"]
    if type(value) is torch.Tensor:
        return names["torch"].members["Tensor"]
    if isinstance(value, ModuleProxy) and type(value.module).__name__ in names["nn"].members:
        return names["nn"].members[type(value.module).__name__]
    found = next((name for name, cls in _PYTHON_TYPES.items() if type(value) is cls), None)
    if found is None or isinstance(value, Checked):
        raise ProgramError(
            "type(...) names the types of numbers, text, lists, dicts, tensors and modules here"
        )
    return names[found]
