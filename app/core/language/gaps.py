"""The evaluator's own gaps, told apart from the program's exceptions.

# NOTE [evaluator gaps]
A call the language makes can fail because of the program (PyTorch's or Python's own error,
which a plain run raises too, shown as the program's exception) or because of the evaluator:
a proxy called with arguments it does not take, Python meeting one of the language's own
objects where a plain run would hold a torch or Python object ("'ContainerProxy' object is not
iterable"). Those are no outcome of the program: a plain run would not say them. They are
refusals at the line, pointing to ``run``, never a recorded exception.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from app.core.language.hints import with_run_hint

__all__ = ["evaluator_gap"]

_LANGUAGE = "app.core.language"
_PACKAGE_DIR = str(Path(__file__).resolve().parents[2])  # the app package: code of ours
_QUOTED = re.compile(r"'(\w+)'")
# Python names a type unquoted too ("expected str, bytes or os.PathLike object, not ProgramObject",
# "must be Tensor, not ContainerProxy"); only CamelCase words are taken, so that an English word
# at the start of a message (Return, Reduce) is never mistaken for one of ours.
_CAMEL = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b")


def _own_class_names() -> frozenset[str]:
    """Names of the classes the language defines (proxies, markers, namespaces)."""
    names: set[str] = set()
    for name, module in list(sys.modules.items()):
        if name.startswith(_LANGUAGE) and module is not None:
            names.update(n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == name)
    return frozenset(names)


def _code_file(fn: Callable[..., Any]) -> str:
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return code.co_filename if code is not None else ""


def _last_frame(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def evaluator_gap(cause: BaseException | None, fn: Callable[..., Any]) -> str | None:
    """The refusal to show when ``cause`` (what calling ``fn`` raised) is the evaluator's own gap.

    >>> import app.core.language.module_proxies  # the classes are named once their modules are loaded
    >>> evaluator_gap(TypeError("'ContainerProxy' object is not iterable"), len) is not None
    True
    >>> evaluator_gap(RuntimeError("mat1 and mat2 shapes cannot be multiplied"), len) is None
    True
    >>> evaluator_gap(TypeError("expected str or os.PathLike object, not ContainerProxy"), len) is not None
    True
    >>> evaluator_gap(TypeError("Return value must be a Tensor, not list"), len) is None
    True
    """
    if not isinstance(cause, (TypeError, AttributeError)):
        return None
    text = str(cause)
    own = _own_class_names()
    if any(name in own for name in _QUOTED.findall(text)):
        return with_run_hint("the checked language cannot run this call as written")
    last = _last_frame(cause.__traceback__)
    ours = _code_file(fn).startswith(_PACKAGE_DIR)
    if (
        isinstance(cause, TypeError)
        and ours
        and last is not None
        and last.tb_frame.f_code.co_name == "guarded_call"
    ):
        name = getattr(fn, "__name__", "this")
        return with_run_hint(f"{name}(...) takes other arguments in the checked language")
    if any(name in own for name in _CAMEL.findall(text)):
        return with_run_hint("the checked language cannot run this call as written")
    return None
