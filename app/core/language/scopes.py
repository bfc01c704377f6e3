"""Where a name lives: the program's own names, a function's locals, a class body, a closure.

# NOTE [program scopes]
At the top of a program every name is one of the program's own (``env``, which
the recorder reads), then a built-in one. Inside a function Python decides from
the text which names are local: those the body binds (assignment, ``for``,
``def``, ``import``, ``except ... as``, its arguments), unless declared
``global`` or ``nonlocal``. :func:`local_names` reads them the same way, once
per definition; a :class:`Scope` holds one call's values. A name that is not
local is looked up in the enclosing functions (closures, which keep their
scope alive), then the program's names, then the built-ins. A class body is a
scope of its own that functions defined in it do not see, as in Python. A
comprehension is a scope holding its loop names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

__all__ = ["MISSING", "Scope", "UnboundName", "local_names", "own_nodes"]

MISSING: Any = object()  # "not found in any function's scope": look in the program's names


class UnboundName(Exception):
    """A local name read before it was bound (Python's UnboundLocalError)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class Scope:
    """One call's (or class body's, or comprehension's) names (NOTE [program scopes])."""

    __slots__ = ("declared_global", "is_class", "local", "parent", "values")

    def __init__(
        self,
        local: frozenset[str],
        *,
        declared_global: frozenset[str] = frozenset(),
        parent: Scope | None = None,
        is_class: bool = False,
    ) -> None:
        self.values: dict[str, Any] = {}
        self.local = local
        self.declared_global = declared_global
        self.parent = parent
        self.is_class = is_class

    def find(self, name: str) -> Any:
        """The value ``name`` has in this scope or an enclosing one, or :data:`MISSING`."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if name in scope.declared_global:
                return MISSING
            if scope.is_class:
                if first and name in scope.values:
                    return scope.values[name]
            elif name in scope.local:
                try:
                    return scope.values[name]
                except KeyError:
                    raise UnboundName(name) from None
            first = False
            scope = scope.parent
        return MISSING

    def owner_of(self, name: str) -> Scope | None:
        """The scope an assignment to ``name`` goes to; None for the program's own names."""
        if name in self.declared_global:
            return None
        if self.is_class or name in self.local:
            return self
        scope = self.parent  # nonlocal: the nearest enclosing function that binds it
        while scope is not None:
            if not scope.is_class and name in scope.local:
                return scope
            scope = scope.parent
        return None

    def function_scope(self) -> Scope | None:
        """The nearest scope that is not a class body: where closures defined here look."""
        scope: Scope | None = self
        while scope is not None and scope.is_class:
            scope = scope.parent
        return scope


def local_names(body: list[ast.stmt], arguments: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(local names, names declared global) of a function with this body and these arguments."""
    bound: set[str] = set(arguments)
    declared_global: set[str] = set()
    declared_nonlocal: set[str] = set()
    for node in own_nodes(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            declared_global.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            declared_nonlocal.update(node.names)
    return frozenset(bound - declared_global - declared_nonlocal), frozenset(declared_global)


def own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a body that belong to its own scope: not inside nested defs, classes, lambdas
    or comprehensions (their names are theirs), though a def's or class's name is the body's."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stack.extend(node.decorator_list)
            if isinstance(node, ast.FunctionDef):
                stack.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
            else:
                stack.extend(node.bases)
        elif isinstance(node, ast.Lambda):
            stack.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.append(node.generators[0].iter)  # the first iterable is read in the enclosing scope
        else:
            stack.extend(ast.iter_child_nodes(node))
