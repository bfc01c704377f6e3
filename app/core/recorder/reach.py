"""What a program holds, as Python defines it: the tensors its roots reach by references.

# NOTE [held is reachable]
A node is alive while some value the program holds reaches it; "holds" is
Python's own word: an object is kept while a reference chain from a root
reaches it. The roots are the program's namespace and every live frame's
locals (a script's frames out to its outermost one, and the exception being
handled; a checked program's names and the scope of every call under way,
a caught exception keeping the scopes it went through as a traceback keeps
frames); from them :func:`held_tensors` follows every
reference the garbage collector follows (``gc.get_referents``: the items of
any container, an instance's ``__dict__`` and ``__slots__``, a closure's
cells, a generator's suspended frame, an exception's traceback and the
frames in it, a bound method's ``self``), so nothing the program can reach
is missed. The walk is complete with four exceptions, each made for cost,
none of them a place a program keeps its values in by itself:

* a class is entered only when it is the program's own (its ``__module__``
  is one of the program's modules): a library class keeps no tensor of the
  program unless the program wrote one into it;
* a library module (``torch``, ``math``) is entered only for its data: its
  tensors and containers (``math.kept = t`` is found), not its functions,
  classes, submodules and dunder names, which are the library's; which of its
  names hold data is remembered until it gains or loses a name (a library
  function's name re-bound to a tensor is missed);
* a function is entered for its closure, defaults and ``__dict__``, not its
  globals: a program function's globals are a root already;
* the interpreter's import tables (``sys.modules``, ``sys.path_importer_cache``,
  ``sys.meta_path``, ``sys.path_hooks``) are not entered: they reach every module
  ever imported (a program that imports ``sys`` would walk all of torch on every
  line), and a module the program imports is bound to one of its names, so it
  is a root already;
* what the recorder itself is made of (its capture holds every node) and
  program text (``ast`` nodes) are never entered.

A value on a running line's half-computed expression is on no frame's names;
the script recorder keeps what its callers' lines made until they end (NOTE
[trusted scripts]). The tests hold this walk to an oracle that shares none of
it: a token in each node's metadata, finalized when PyTorch frees the node.

Nodes themselves are not Python-reachable objects (a tensor holds its
``grad_fn`` in C++): the walk gives the tensors, and the alive walk follows
``next_functions`` from their nodes (NOTE [alive nodes] in ``alive.py``).
The walk stops after ``_MOST_OBJECTS`` objects; then everything captured is
kept (nothing is let go on a walk that did not finish).

>>> import torch
>>> x = torch.ones(2, requires_grad=True)
>>> def make():
...     t = x.exp()
...     return lambda: t
>>> kept = {"fn": make()}
>>> [t.grad_fn.name() for t in held_tensors([kept], own_modules={__name__})]
['ExpBackward0']
"""

from __future__ import annotations

import ast
import functools
import gc
import sys
import types
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import torch

from app.core.language.objects import Checked
from app.core.language.optimizer_proxies import optimizer_without_dynamo
from app.core.language.scopes import Scope

__all__ = ["WalkTooLong", "app_internal", "held_tensors"]

_MOST_OBJECTS = 2_000_000  # a walk that meets more objects than this keeps every node


class WalkTooLong(Exception):
    """The program holds more objects than one walk may visit (NOTE [held is reachable])."""


_ATOMS = frozenset(
    (int, float, complex, bool, str, bytes, type(None), range, slice, torch.dtype, torch.device, torch.Size)
)
_DATA = (torch.Tensor, list, tuple, dict, set, frozenset)  # what a library module is entered for
_CLOSED = (types.BuiltinFunctionType, types.CodeType, ast.AST, types.MethodWrapperType)


def held_tensors(
    roots: Iterable[Any],
    *,
    own_modules: Collection[str],
    closed: Callable[[Any], bool] | None = None,
) -> Iterator[torch.Tensor]:
    """Every tensor ``roots`` reach (NOTE [held is reachable]). ``own_modules`` are the
    ``__module__`` of the program's own classes; ``closed(value)`` says what is never entered.
    Types are asked of ``type(value)``, never of ``value`` (a library's lazy object may answer
    ``__class__`` with a warning)."""
    stack = list(roots)
    seen: set[int] = set()
    bookkeeping = _bookkeeping()
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _ATOMS or id(value) in seen:
            continue
        seen.add(id(value))
        if len(seen) > _MOST_OBJECTS:
            raise WalkTooLong
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            stack.extend(value)
        elif kind is dict:
            stack.extend(value.values())
            stack.extend(value)
        elif issubclass(kind, torch.Tensor):
            yield value
            if kind is not torch.Tensor and kind is not torch.nn.Parameter:
                stack.extend(getattr(value, "__dict__", {}).values())
        elif issubclass(kind, torch.nn.Module):
            stack.extend([v for k, v in vars(value).items() if k not in bookkeeping])
        elif issubclass(kind, torch.optim.Optimizer):
            # Its state (exp_avg, momentum_buffer) is made with grad off unless the optimizer is
            # differentiable, so then it holds no graph.
            skip = bookkeeping if _differentiable(value) else bookkeeping | {"state"}
            stack.extend([v for k, v in vars(value).items() if k not in skip])
        elif issubclass(kind, type):
            if value.__module__ in own_modules:
                stack.extend(vars(value).values())
        elif issubclass(kind, types.ModuleType):
            stack.extend(_module_data(value))
        elif kind is types.FunctionType:
            stack.extend(value.__closure__ or ())
            stack.extend(value.__defaults__ or ())
            stack.extend((value.__kwdefaults__ or {}).values())
            stack.extend(value.__dict__.values())
        elif kind is types.FrameType:
            stack.extend(value.f_locals.values())  # a frame a traceback or a generator keeps
        elif issubclass(kind, _CLOSED) or (closed is not None and closed(value)):
            continue
        else:
            stack.extend(gc.get_referents(value))


def _module_data(module: types.ModuleType) -> list[Any]:
    """A module's tensors and containers (not its dunder names: ``__all__``, ``__builtins__``).

    Which names hold them is remembered while the module has as many names (``torch`` has
    ~1,400, looked at on every line otherwise); a name added (``math.kept = t``) is seen at once.
    """
    names = vars(module)
    known = _MODULE_DATA.get(id(module))
    if known is None or known[0] != len(names) or known[2]() is not module:
        skip = _IMPORT_TABLES if module is sys else frozenset()
        data = tuple(
            k for k, v in names.items() if issubclass(type(v), _DATA) and not _dunder(k) and k not in skip
        )
        known = _MODULE_DATA[id(module)] = (len(names), data, weakref.ref(module))
    return [names.get(k) for k in known[1]]


_IMPORT_TABLES = frozenset(("modules", "path_importer_cache", "meta_path", "path_hooks"))
_MODULE_DATA: dict[int, tuple[int, tuple[str, ...], weakref.ref[types.ModuleType]]] = {}


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def app_internal(value: Any) -> bool:
    """Whether ``value`` is part of this application rather than a value of the program: the
    recorder, its capture and the evaluator (the program's values are ``Checked`` proxies and
    scopes of the checked language, and anything not the application's)."""
    kind = type(value)
    if not kind.__module__.startswith("app."):
        return False
    return not issubclass(kind, (Checked, Scope))


def _differentiable(optimizer: torch.optim.Optimizer) -> bool:
    return any(group.get("differentiable", False) for group in optimizer.param_groups)


@functools.cache
def _bookkeeping() -> frozenset[str]:
    """The attributes torch gives every module and optimizer for its hooks and flags (a dozen
    dicts per module, walked at every line for no tensor): a tensor is never kept there.

    Found at the first walk, and from an optimizer built as a program's is: PyTorch's own
    ``SGD(...)`` imports Dynamo on first use (NOTE [optimizer without Dynamo])."""
    module = set(vars(torch.nn.Module())) - {"_parameters", "_buffers", "_modules"}
    sgd = optimizer_without_dynamo(torch.optim.SGD, [torch.zeros(1, requires_grad=True)], (), {})
    optimizer = set(vars(sgd)) - {
        "state",
        "param_groups",
        "defaults",
    }
    return frozenset(module | optimizer)
