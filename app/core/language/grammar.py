"""What the checked language accepts, and the words it uses to refuse the rest.

Tables only, and the messages built from them: :func:`~app.core.language.parsing.parse`
checks a tree against them, :class:`~app.core.language.evaluator.Evaluator` maps operators
through them. What each name or attribute may reach is ``whitelist.py`` (and ``denials.py``).
"""

from __future__ import annotations

import ast
import difflib
import operator
from collections.abc import Callable
from typing import Any

from app.core.language.denials import REFUSED_TORCH_MEMBERS, denied_attribute
from app.core.language.hints import RUN_HINT, with_run_hint
from app.core.language.objects import is_own_name
from app.core.language.whitelist import Namespace

__all__ = [
    "ALLOWED_NODES",
    "BINOPS",
    "CLASS_METHOD_NAMES",
    "COMPARE",
    "FORBIDDEN_NAMES",
    "INPLACE",
    "REFUSALS",
    "RUN_HINT",
    "UNARY",
    "attribute_refusal",
    "is_own_name",
    "missing_member",
    "with_run_hint",
]

BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
INPLACE: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
    ast.Pow: operator.ipow,
    ast.MatMult: operator.imatmul,
    ast.BitAnd: operator.iand,
    ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,  # of what stand-ins stand for, in evaluation (python_identity.py)
    ast.IsNot: operator.is_not,
    ast.In: lambda item, container: item in container,
    ast.NotIn: lambda item, container: item not in container,
}
ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module,
    ast.Expression,
    ast.Assign,
    ast.AnnAssign,  # x: torch.Tensor = t is x = t; the annotation is never run (unread_children)
    ast.AugAssign,
    ast.Expr,
    ast.For,
    ast.Break,
    ast.Continue,
    ast.If,
    ast.With,
    ast.withitem,
    ast.Delete,
    ast.Del,
    ast.Pass,
    ast.Import,
    ast.ImportFrom,
    ast.alias,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.Compare,
    ast.IfExp,
    ast.Subscript,
    ast.Slice,
    ast.Call,
    ast.keyword,
    ast.Attribute,
    ast.JoinedStr,  # f-strings, with format specs checked in parsing.py
    ast.FormattedValue,
    # functions, classes and the rest of a snippet's Python (NOTE [program functions])
    ast.FunctionDef,
    ast.arguments,
    ast.arg,
    ast.Return,
    ast.Lambda,
    ast.Yield,
    ast.YieldFrom,
    ast.ClassDef,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.comprehension,
    ast.Try,
    ast.ExceptHandler,
    ast.Raise,
    ast.Assert,
    ast.Starred,
    ast.Global,
    ast.Nonlocal,
    ast.Dict,
    ast.Set,
    ast.In,
    ast.NotIn,
    *BINOPS,
    *UNARY,
    *COMPARE,
)

# NOTE [own scripts] in hints.py: every refusal ends with RUN_HINT.
_NO_TRY = f"except* is not part of the checked language: write except with one type; {RUN_HINT}"
_NO_ASYNC = "async code is not part of the checked language"
_REFUSALS_BY_NAME: dict[str, str] = {
    "TemplateStr": "template strings are not allowed: print the values side by side",
    "NamedExpr": "the walrus operator := is not allowed: assign on a line of its own",
    "AsyncFunctionDef": _NO_ASYNC,
    "AsyncFor": _NO_ASYNC,
    "AsyncWith": _NO_ASYNC,
    "TryStar": _NO_TRY,
    "Await": _NO_ASYNC,
    "Match": "match statements are not allowed: use if and elif",
    "TypeAlias": "type aliases are not allowed",
    "LShift": "bit shifts (<< and >>) are not allowed",
    "RShift": "bit shifts (<< and >>) are not allowed",
}
REFUSALS: dict[type[ast.AST], str] = {
    getattr(ast, name): text for name, text in _REFUSALS_BY_NAME.items() if hasattr(ast, name)
}


def _words(text: str) -> list[str]:
    return text.split()


# Python builtins people reach for; none is defined, and naming one says why.
_OUTSIDE = "it would reach outside the checked language"
_ATTRS = "read attributes with a dot, and only public ones"
FORBIDDEN_NAMES: dict[str, str] = {
    "eval": "programs never run text as code",
    "exec": "programs never run text as code",
    "compile": "programs never run text as code",
    "open": "programs cannot read or write files",
    "getattr": _ATTRS,
    "setattr": _ATTRS,
    "delattr": _ATTRS,
    "hasattr": _ATTRS,
    **dict.fromkeys(
        _words("globals locals vars dir memoryview bytearray breakpoint help exit quit issubclass"),
        _OUTSIDE,
    ),
}


# Methods a program's class may define although their names start with _, as PyTorch and Python
# call them by these names; nothing else private is ever defined or reached (NOTE [program classes]).
CLASS_METHOD_NAMES = frozenset(
    ["__init__", "__call__", "__len__", "__getitem__", "__setitem__", "__iter__", "__repr__", "__str__"]
)


# NOTE [own names]
# A program's own names are its own: a name with one leading underscore (``_helper``,
# ``self._momentum``) is allowed where the program defined it, on its own functions, classes,
# objects and modules. Dunder names stay refused everywhere (except the methods a class may
# define, above), and an underscore name of anything the program did not define (a tensor, a
# torch module, a proxy, nn.Module's own ``_parameters``) is refused where it is read.


def attribute_refusal(attr: str, *, own: bool = False) -> str | None:
    """Why ``.attr`` is refused (private, or denied on tensors), or None.

    ``own``: the owner is the program's own (NOTE [own names]), so one leading underscore is allowed.
    """
    if attr.startswith("_") and not (own and is_own_name(attr)):
        return f"attribute '{attr}' is private: names starting with _ are refused"
    reason = denied_attribute(attr)
    if reason is not None:
        return f"'.{attr}' is not allowed in programs: {reason}"
    return None


def missing_member(owner: Namespace, attr: str) -> str:
    """Why ``owner.attr`` is not there, with the closest listed name as a hint."""
    if owner.path == "torch" and attr in REFUSED_TORCH_MEMBERS:
        return with_run_hint(f"torch.{attr} is not available in programs: {REFUSED_TORCH_MEMBERS[attr]}")
    if owner.refusal is not None:  # NOTE [stand-in modules]
        return with_run_hint(f"{owner.path}.{attr} cannot be used: {owner.refusal}")
    close = difflib.get_close_matches(attr, list(owner.members), n=1)
    hint = f" (did you mean {owner.path}.{close[0]}?)" if close else ""
    return with_run_hint(f"{owner.path}.{attr} is not available in programs{hint}")
