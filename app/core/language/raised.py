"""Python's exceptions in a program: the classes it names, the errors it raises and catches.

# NOTE [caught errors]
An error of the program's own code (PyTorch's or Python's, or one it raises)
is a :class:`~app.core.model.errors.ProgramRaised` that remembers the Python
exception class it stands for (:func:`python_type`), so ``except
RuntimeError as e:`` catches what Python would catch, and ``e`` is a
:class:`RaisedValue`: its text and ``args``, never the exception object, its
traceback or its frames. The language's own limits (loop, statement, call
depth, time, memory, the size guard) are refusals, not ProgramRaised errors: no
``try`` catches them, and no ``finally`` block runs after one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from app.core.language.objects import Checked
from app.core.model.errors import ProgramError, ProgramRaised

__all__ = [
    "EXCEPTION_CLASSES",
    "ExceptionKind",
    "RaisedValue",
    "catches",
    "caught_value",
    "exception_names",
    "python_type",
    "raise_value",
    "raised_error",
]

EXCEPTION_CLASSES: dict[str, type[BaseException]] = {
    cls.__name__: cls
    for cls in (
        Exception,
        ArithmeticError,
        AssertionError,
        AttributeError,
        IndexError,
        KeyError,
        LookupError,
        NotImplementedError,
        OverflowError,
        RuntimeError,
        StopIteration,
        TypeError,
        ValueError,
        ZeroDivisionError,
    )
}


class ExceptionKind(Checked):
    """``RuntimeError`` and the like, as a program names them: to raise, or to catch."""

    def __init__(self, cls: type[BaseException]) -> None:
        self.cls = cls
        self.kind = f"the exception class {cls.__name__}"

    def __repr__(self) -> str:
        return f"<class '{self.cls.__name__}'>"


class RaisedValue(Checked):
    """An exception as a program holds it: its class's name, its text and ``args``."""

    def __init__(
        self, cls: type[BaseException], args: tuple[Any, ...], text: str, frames: tuple[Any, ...] = ()
    ) -> None:
        self.cls = cls
        self.args = args
        self.text = text
        self.frames = frames  # the names of the calls it went through, as a traceback keeps them
        self.kind = f"a {cls.__name__}"

    def get_attribute(self, name: str) -> Any:
        if name == "args":
            return self.args
        raise KeyError(name)

    def members(self) -> list[str]:
        return ["args"]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"{self.cls.__name__}({', '.join(repr(a) for a in self.args)})"


def exception_names() -> dict[str, ExceptionKind]:
    """The exception classes every program can name, by name."""
    return {name: ExceptionKind(cls) for name, cls in EXCEPTION_CLASSES.items()}


def raised_error(cls: type[BaseException], text: str) -> ProgramRaised:
    """The error a program raising ``cls(text)`` ends with, unless a handler catches it."""
    return ProgramRaised(
        f"{cls.__name__}: {text}" if text else cls.__name__, python_type=cls, python_text=text
    )


def python_type(error: ProgramError) -> type[BaseException]:
    """The Python exception class a program error stands for (RuntimeError when unknown)."""
    return error.python_type or RuntimeError


def carry_marks(old: ProgramError, new: ProgramError) -> ProgramError:
    """``new`` with the Python exception ``old`` stood for (a located copy keeps it)."""
    new.python_type, new.python_text = old.python_type, old.python_text
    return new


def raise_value(value: Any, refuse: Callable[[str, ast.AST], ProgramError], node: ast.AST) -> ProgramError:
    """What ``raise value`` raises: a program error, or Python's TypeError for a non-exception."""
    if isinstance(value, ExceptionKind):
        return raised_error(value.cls, "")
    if isinstance(value, RaisedValue):
        return raised_error(value.cls, value.text)
    return raised_error(TypeError, "exceptions must derive from BaseException")


def catches(
    kind: Any, error: ProgramRaised, refuse: Callable[[str, ast.AST], ProgramError], node: ast.AST
) -> bool:
    """Whether ``except kind:`` catches ``error``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for item in kinds:
        if not isinstance(item, ExceptionKind):
            what = getattr(item, "kind", type(item).__name__)
            raise refuse(f"except takes exception classes such as RuntimeError, not {what}", node)
        if issubclass(python_type(error), item.cls):
            return True
    return False


def caught_value(error: ProgramRaised, handler_scope: Any = None) -> RaisedValue:
    """What ``except ... as e`` binds: the exception's class, text and args, and the names of
    the calls it went through and of the handler's own call: as Python's traceback does, it keeps
    their values alive while the program holds it (NOTE [held is reachable])."""
    text = error.message if error.python_text is None else error.python_text
    frames = (*unwound_scopes(error), *([] if handler_scope is None else [handler_scope]))
    return RaisedValue(python_type(error), (text,) if text else (), text, frames)


def unwound_scopes(error: ProgramError) -> list[Any]:
    """The scopes of the calls ``error`` went out of, innermost first (added to as it goes)."""
    return error.unwound
