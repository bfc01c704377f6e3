"""How a def, a class, a decorator and super() may be written, checked before anything runs.

The static checks of ``parsing.py`` ask these for the forms a program defines
(NOTE [program functions], NOTE [program classes]): a name starting with ``_``
only for the method names a class may define, listed decorators only, one
base and no ``metaclass=``, ``super()`` in its two plain spellings.
"""

from __future__ import annotations

import ast

from app.core.language.grammar import CLASS_METHOD_NAMES, FORBIDDEN_NAMES, RUN_HINT, is_own_name

__all__ = [
    "DECORATOR_REFUSAL",
    "FIXED_NAMES",
    "FUNCTION_ONLY",
    "bound_names",
    "call_refusal",
    "definition_refusal",
    "own_names",
    "reached_through_super",
    "unread_children",
]

Refusal = tuple[str, ast.AST]  # what is refused, and where

FUNCTION_ONLY = (ast.Return, ast.Nonlocal, ast.Yield, ast.YieldFrom)
DECORATOR_REFUSAL = (
    "the decorators programs take are @staticmethod, @torch.no_grad(), @torch.enable_grad() and "
    "@dataclass on a class; " + RUN_HINT
)


def _listed_decorator(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "staticmethod"
    return (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and _dotted(node.func) in ("torch.no_grad", "torch.enable_grad")
    )


def reached_through_super(node: ast.Attribute) -> bool:
    """``super().__init__``: a listed method name on super(), as a class's own methods call it."""
    value = node.value
    return (
        node.attr in CLASS_METHOD_NAMES
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def unread_children(node: ast.AST) -> set[int]:
    """Parts of a node that are never run, so never checked: annotations (``x: torch.Tensor``)."""
    if isinstance(node, ast.arg) and node.annotation is not None:
        return {id(node.annotation)}
    if isinstance(node, ast.FunctionDef) and node.returns is not None:
        return {id(node.returns)}
    if isinstance(node, ast.AnnAssign):
        return {id(node.annotation)}
    return set()


def call_refusal(node: ast.Call) -> Refusal | None:
    """Why a call is refused as written (what it calls, or a super() spelt otherwise), or None."""
    if not isinstance(node.func, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Lambda)):
        return "only named functions and methods can be called", node.func
    if isinstance(node.func, ast.Name) and node.func.id == "super":
        plain = all(isinstance(a, ast.Name) for a in node.args) and len(node.args) in (0, 2)
        if not plain or node.keywords:
            return "super() is written super() or super(ClassName, self)", node
    return None


def definition_refusal(node: ast.FunctionDef | ast.ClassDef) -> Refusal | None:
    """Why a def or a class is refused: its name, a decorator, its bases; or None."""
    if node.name.startswith("_") and not is_own_name(node.name) and node.name not in CLASS_METHOD_NAMES:
        listed = ", ".join(sorted(CLASS_METHOD_NAMES))
        return f"name '{node.name}' is private: a class may define only these names with _: {listed}", node
    if node.name in FORBIDDEN_NAMES or node.name in FIXED_NAMES:
        return f"'{node.name}' is a built-in name and cannot be defined", node
    for decorator in node.decorator_list:
        as_dataclass = isinstance(node, ast.ClassDef) and _dotted(decorator) in (
            "dataclass",
            "dataclasses.dataclass",
        )
        if not as_dataclass and not _listed_decorator(decorator):  # NOTE [program dataclasses]
            return DECORATOR_REFUSAL, decorator
    if isinstance(node, ast.ClassDef):
        for keyword in node.keywords:
            return "a class takes its bases only, no keywords such as metaclass=", keyword
        if len(node.bases) > 1:
            return "a class here has one base: nn.Module, torch.autograd.Function or a class of yours", node
    return None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "..."


# NOTE [shadowed builtins]
# Python's introspection builtins are left out of the language (``vars``, ``dir``, ``globals``), but
# real code names its own values after them: MAML's ``def forward(self, x, vars=None)``. A name the
# program binds (an argument, an assignment, a def) is its own wherever it binds it; where it is
# read unbound, it is not defined, never the builtin, which no program can reach.
SHADOWABLE = frozenset(
    ["vars", "dir", "memoryview", "bytearray", "breakpoint", "help", "exit", "quit", "issubclass"]
)


# NOTE [own names over built-in ones]
# The names every program starts with (``optim``, ``F``, ``nn``, ``sum``, ``max``, ``list``, ``type``)
# are the program's to re-bind, as in Python: ``optim = torch.optim.SGD(...)``, ``sum = 0.0``. What
# it binds is its own value wherever it is bound, found before the built-in one (scope, then the
# program's names, then the built-in names: ``expressions.lookup``), and a name the program binds
# anywhere is never read as a torch module by the static checks (``parsing._static_namespace``):
# what it names is checked where it runs, as every value is. Two names stay fixed, since the static
# checks read them by name: ``torch`` (``@torch.no_grad()``, ``torch.__version__``) and ``super``.
FIXED_NAMES = frozenset(["torch", "super"])


def bound_names(tree: ast.AST) -> frozenset[str]:
    """Every name the program binds somewhere: assigned, an argument, a def, a class, an import,
    an ``except ... as`` (NOTE [own names over built-in ones]).

    >>> sorted(bound_names(ast.parse("import torch.optim as optim\\ndef f(len):\\n    sum = 1")))
    ['f', 'len', 'optim', 'sum']
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.ExceptHandler):  # except ValueError as err
            found.update([node.name] if node.name else [])
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(found)


def shadowed_names(tree: ast.AST) -> frozenset[str]:
    """The left-out builtins the program binds as its own names (NOTE [shadowed builtins]).

    >>> sorted(shadowed_names(ast.parse("def f(x, vars=None):\\n    dir = 1\\ny = eval")))
    ['dir', 'vars']
    """
    return bound_names(tree) & SHADOWABLE


def own_names(tree: ast.AST) -> frozenset[str]:
    """The underscore names a program defines (NOTE [own names]): what it assigns as an attribute
    (``self._m = ...``) or a name (``_count = 0`` in a class body), the functions and classes it
    defines (``def _init_weights``).

    >>> sorted(own_names(ast.parse("self._m = 1\\ndef _f(): pass\\ny = x._version")))
    ['_f', '_m']
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
    return frozenset(name for name in found if is_own_name(name))
