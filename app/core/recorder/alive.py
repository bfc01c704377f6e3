"""The alive walk: which captured nodes nothing the program holds can reach any more.

# NOTE [alive nodes]
``Node`` objects cannot be weakly referenced, so what is alive is found by
walking ``next_functions`` from the values the program still holds: every
tensor its roots reach by reference (NOTE [held is reachable] in
``reach.py``), and each leaf's ``.grad``. The walk runs only after a statement
that could have let go of a graph (a name re-bound or deleted, an assignment
into a list or an attribute, a call that lets go); a captured node it does not
reach is gone: the capture drops its ``grad_fn``, so Python frees it and its
buffers, and its held slots become ``freed``.

# NOTE [calls that let go]
A call lets go of a value only by running code that drops a reference: the
end of a program function (its names go), a proxy's method other than those
that step, read or switch modes, a container's removing methods
(``held.pop()``), a tensor method that cuts or replaces its own graph
(``detach_``, ``requires_grad_``, ``resize_``, ``set_``), ``next`` on a
generator, the end of an ``except`` block (the traceback's scopes). The
evaluator raises ``let_go`` at each. ``zero_grad()`` drops its parameters'
``.grad`` only: it lets go when one of them has a graph (``create_graph``); a
gradient without one reaches no node. An autograd call runs the program's code
only through its hooks and functions (whose ends raise ``let_go``); the engine
itself lets go of a graph only by replacing a ``.grad`` that has one, so the
walk follows a call only when a leaf's ``.grad`` had a graph as it began, and
what the call's statement made (``(x * 2).sum().backward()``) is settled with
the rest of what it made. A training loop's ``opt.zero_grad()`` and
``loss.backward()`` walk nothing. A statement whose calls are only torch's
functions and other tensor methods (``h = torch.tanh(h @ w)``) makes new
values and drops none, so what it re-binds is settled by the short walk
below, not by a walk over every captured node.

# NOTE [walks not repeated]
A script's every line may have let go of a graph, so the walk from what the
program holds ran after every line. It is skipped when the roots are the same
captured nodes as at the last walk and nothing was captured or let go since:
a captured node is held by the capture (its ``id`` is its own), and a node's
``next_functions`` never change, so the walk would find what it found then,
which is every node still captured. Nor is there a walk while nothing is
captured: a program building a deep model before its first forward pass
(2,000 nested ``nn.Sequential``) would walk all of it after every statement.
And the graphs of the tensors the program's names hold themselves (``y``, not
``head.w``), of its leaves' ``.grad`` and of its running lines are followed
first: when they reach every captured node, none is gone, and what the names
reach through objects (a chain of 400 of them, re-bound on every line) is not
walked.

>>> import torch
>>> from app.core.recorder.capture import GraphCapture
>>> x = torch.ones(2, requires_grad=True)
>>> held = {"y": x.exp()}
>>> capture = GraphCapture()
>>> _ = capture.add_roots(graph_fns(held.values()))
>>> walk = AliveWalk(capture, lambda: graph_fns(held.values()))
>>> walk.dirty = True
>>> walk.gone()
[]
>>> held["y"] = x * 2  # the exp node is held by nothing now; x's AccumulateGrad still is
>>> walk.dirty = True
>>> walk.gone()
['n0']
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import torch

from app.core.recorder.capture import GraphCapture
from app.core.recorder.reach import WalkTooLong

__all__ = ["AliveWalk", "graph_fns"]

_SHORT_WALK = 256  # nodes a short walk may visit before the full one is taken instead


def graph_fns(values: Iterable[Any]) -> Iterator[Any]:
    """The ``grad_fn`` of each tensor, and of its ``.grad`` when that has a graph (create_graph)."""
    for value in values:
        if isinstance(value, torch.Tensor):
            if value.grad_fn is not None:
                yield value.grad_fn
            grad = value.grad if value.is_leaf else None
            if grad is not None and grad.grad_fn is not None:
                yield grad.grad_fn


class AliveWalk:
    """What a statement may have let go of, and the walk that settles it (NOTE [alive nodes]).

    ``held_roots`` gives the nodes of every value the program holds now.
    """

    def __init__(
        self,
        capture: GraphCapture,
        held_roots: Callable[[], Iterable[Any]],
        near_roots: Callable[[], Iterable[Any]] | None = None,
    ) -> None:
        self.capture = capture
        self._held_roots = held_roots
        self._near_roots = near_roots  # some of held_roots, found without a walk over objects
        self.dirty = False  # the current statement may have let go of a graph
        self.just_bound: list[str] = []  # names the current statement bound
        self.made: list[Any] = []  # grad_fns of the nodes the current statement added
        self._bound: dict[str, Any] = {}  # name -> the graph-holding value bound to it
        self._dropped: list[torch.Tensor] = []  # values a statement re-bound a name away from
        self._last_walk: tuple[int, frozenset[int]] | None = None  # NOTE [walks not repeated]

    def note_rebinding(self, statement: ast.stmt, env: Mapping[str, Any], *, let_go: bool = False) -> None:
        """Note what the statement may have let go of (NOTE [alive nodes]); ``let_go``: whether a
        call it made may have (NOTE [calls that let go])."""
        if isinstance(statement, ast.Delete) or let_go:
            self.dirty = True  # (a write in place keeps every graph it had)
        for target in _targets(statement):
            if not isinstance(target, ast.Name):
                self.dirty = True
                continue
            value = env.get(target.id)
            self.just_bound.append(target.id)
            old = self._bound.pop(target.id, None)
            if old is not None and old is not value:
                if isinstance(old, torch.Tensor):
                    self._dropped.append(old)
                else:
                    self.dirty = True
            if value is not None and _holds_graph(value):
                self._bound[target.id] = value

    def gone(self) -> list[str]:
        """The captured nodes no held value reaches any more, if the statement may have let go of
        any; the caller forgets them."""
        dropped, self._dropped = self._dropped, []
        made, self.made = self.made, []
        if self.dirty or ((dropped or made) and not self._still_reached([*graph_fns(dropped), *made])):
            return self._unreachable()
        return []

    def _still_reached(self, fns: list[Any]) -> bool:
        """Whether the values this statement bound reach every graph in ``fns``.

        ``h = torch.tanh(h @ w)`` drops the old ``h`` but the new one reaches its graph two
        nodes down, and the nodes it made are the new ``h``'s own: a short walk from the new
        values settles it without walking everything. Nodes a statement made and bound to no
        name (``h = (w * 2).detach()``, ``print(y.sum())``) are not reached, and the full walk
        lets them go.
        """
        targets = {id(fn) for fn in fns}
        if not targets:
            return True
        roots = [fn for name in self.just_bound for fn in graph_fns([self._bound.get(name)])]
        walked: set[int] = set()
        while roots and targets and len(walked) < _SHORT_WALK:
            fn = roots.pop()
            if id(fn) in walked:
                continue
            walked.add(id(fn))
            targets.discard(id(fn))
            roots.extend(child for child, _ in fn.next_functions if child is not None)
        return not targets

    def _unreachable(self) -> list[str]:
        self.dirty = False
        capture = self.capture
        if not capture.fns:  # nothing captured, nothing to let go: no walk (NOTE [walks not repeated])
            return []
        walked: dict[int, Any] = {}
        alive: set[str] = set()
        if self._near_roots is not None:
            alive.update(capture.reachable_from(self._near_roots(), walked))
            if len(alive) == len(capture.fns):  # every captured node is reached: none is gone
                return []
        try:
            roots = list(self._held_roots())
        except WalkTooLong:  # NOTE [held is reachable]: nothing is let go on an unfinished walk
            return []
        walk = (capture.changes, frozenset(map(id, roots)))
        if walk == self._last_walk and all(capture.id_of(fn) is not None for fn in roots):
            return []  # NOTE [walks not repeated]
        self._last_walk = walk
        alive.update(capture.reachable_from_all([fn for fn in roots if id(fn) not in walked]))
        return [n for n in capture.fns if n not in alive]


def _targets(statement: ast.stmt) -> list[ast.expr]:
    """What a statement binds or deletes: names, subscripts, attributes (tuples opened)."""
    if isinstance(statement, ast.Assign):
        raw = list(statement.targets)
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        raw = [statement.target]
    elif isinstance(statement, ast.Delete):
        raw = list(statement.targets)
    elif isinstance(statement, ast.For):
        raw = [statement.target]
    else:
        return []
    out: list[ast.expr] = []
    while raw:
        target = raw.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            raw.extend(target.elts)
        else:
            out.append(target)
    return out


def _holds_graph(value: Any) -> bool:
    """Whether ``value`` may hold a graph: a tensor with one, or anything that can hold a tensor."""
    if isinstance(value, torch.Tensor):
        return value.grad_fn is not None or (value.grad is not None and value.grad.grad_fn is not None)
    return not isinstance(value, (int, float, complex, bool, str, bytes))
