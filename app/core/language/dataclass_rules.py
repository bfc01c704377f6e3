"""``@dataclass`` on a program's class: its ``__init__`` from its annotated fields.

# NOTE [program dataclasses]
Training scripts keep their settings in a dataclass::

    @dataclass
    class Config:
        lr: float = 1e-3
        hidden: list = field(default_factory=list)

A class of the program's own (no base) decorated ``@dataclass`` (imported from ``dataclasses``)
gets what Python's makes that a program can see: ``Config(lr=0.1)`` binds the annotated fields in
order, by position or name, each without a value taking its default (``field(default=...)``,
``field(default_factory=list)``, called for each object); a missing one is Python's TypeError;
printing it shows ``Config(lr=0.1, hidden=[])``. A class that defines its own ``__init__`` keeps
it. Nothing else of ``dataclasses`` is listed (``asdict``, ``fields``, ``replace``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from app.core.language.hints import refused
from app.core.language.objects import Checked

__all__ = ["DATACLASS", "DataclassMarker", "Field", "dataclass_fields", "dataclasses_members"]


class DataclassMarker(Checked):
    """``dataclasses.dataclass``, as a decorator only."""

    kind = "the decorator dataclasses.dataclass"

    def __repr__(self) -> str:
        return "<function dataclass>"

    def call(self, *args: Any, **kwargs: Any) -> Any:
        raise refused("dataclass is used as @dataclass above a class")


DATACLASS = DataclassMarker()
_MISSING = object()


@dataclass(frozen=True)
class Field:
    """``field(default=...)`` or ``field(default_factory=...)``: what a field starts as."""

    default: Any = _MISSING
    default_factory: Any = None


def _field(*, default: Any = _MISSING, default_factory: Any = None, **settings: Any) -> Field:
    if settings:  # the language's limit, not the program's error: a refusal
        raise refused("field() takes default= or default_factory= here")
    if default is not _MISSING and default_factory is not None:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory)


_field.__name__ = "field"
_field.__module__ = "dataclasses"


def dataclasses_members() -> dict[str, Any]:
    """``dataclasses``: the decorator and ``field``."""
    return {"dataclass": DATACLASS, "field": _field}


def dataclass_fields(node: ast.ClassDef) -> list[str]:
    """The names of the annotated fields of a class body, in order.

    >>> dataclass_fields(ast.parse("class C:\\n    a: int = 1\\n    b: list\\n    c = 3").body[0])
    ['a', 'b']
    """
    return [
        item.target.id
        for item in node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.simple
    ]
