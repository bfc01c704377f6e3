"""The program language: a small, whitelisted subset of Python over PyTorch.

A program is statements (assignment, ``for``, ``if``, ``with torch.no_grad():``,
``del``, imports of torch's modules, ``print``) over tensors, numbers, lists and
checked objects (NOTE [checked objects] in ``objects.py``). Source text is
parsed with :mod:`ast` and walked by :class:`Evaluator`; it is never handed to
``eval`` or ``exec``. Parsing checks the shape of the code (:func:`parse`);
evaluation checks what each name and attribute resolves to, and
:class:`SizeGuard` checks what every operation will cost before it runs (see
NOTE [size guard] in ``guard.py``). Autograd calls, finished statements and
printed text go to the recorder (NOTE [program hooks]).

>>> from app.core.language.evaluator import Evaluator
>>> from app.core.language.parsing import parse
>>> tree = parse("torch.ones(2) * 3", field="demo", mode="eval")
>>> Evaluator({}, field="demo").evaluate(tree).tolist()
[3.0, 3.0]
>>> huge = parse("torch.ones(10**12)", field="demo", mode="eval")
>>> try:
...     Evaluator({}, field="demo").evaluate(huge)
... except ProgramError as exc:
...     print(exc.where(), "|", exc.message)
demo, line 1, column 1 | this would make a tensor of 1,000,000,000,000 elements; the limit is 10,000,000;
to record a script of your own with full Python, run: python -m app run SCRIPT.py

The evaluator is its state and every call made under the size guard
(``evaluation.py``), and one part per shape of code, each a class of its own
that holds the evaluation; this module puts them together:
- ``statements.py``: what statements do (assignment, loops, ``with``, ``del``);
- ``expressions.py``: what expressions are worth (names, operators, f-strings);
- ``calls.py``: calls of functions, builtins, methods and autograd;
- ``members.py``: reading and assigning attributes, through proxies for objects.
Around them:
- ``limits.py``: :class:`Limits`, :class:`Budget` and the fixed bounds;
- ``positions.py``: lines and columns in characters;
- ``grammar.py``: allowed syntax, operators, and the words of refusals;
- ``parsing.py``: :func:`parse` and the static checks, imports included;
- ``python_values.py``: bounds on lists, text, integers and ranges;
- ``whitelist.py``: what names reach, with ``torch_names.py``, ``denials.py`` and
  ``safe_builtins.py`` (the builtins);
- ``objects.py``: the proxies' base and the hooks' protocol;
- ``guard.py``: :class:`SizeGuard`, with ``op_costs.py``, ``op_bounds.py``
  and ``aten_calls.py`` for what one ATen operation would cost.
"""

from __future__ import annotations

import ast
from typing import Any

from app.core.language.calls import Calls
from app.core.language.classes import Classes
from app.core.language.evaluation import Evaluation, ValueHook
from app.core.language.expressions import Expressions
from app.core.language.functions import Functions
from app.core.language.members import Members
from app.core.language.objects import ProgramHooks
from app.core.language.parsing import SOURCE_ATTR
from app.core.language.statements import Statements
from app.core.model.errors import ProgramError
from app.core.sizing.limits import Budget, Limits

__all__ = ["Evaluator"]


class Evaluator(Evaluation):
    """Walks checked trees over an environment of names.

    ``on_value`` is told of every tensor an expression node produces, so a
    recorder can label graph nodes with the source text that made them.
    ``budget`` counts the elements allocated; pass one :class:`Budget` to all
    the evaluators of a recording so the limit holds for the whole of it.
    ``hooks`` hears of every autograd call, finished statement and printed
    line (NOTE [program hooks]). Warnings PyTorch gives while evaluating are
    kept in ``warnings``.

    >>> from app.core.language.parsing import parse
    >>> env = {}
    >>> program = "w = torch.ones(2, requires_grad=True)\\nfor i in range(3):\\n    (w * i).sum().backward()"
    >>> Evaluator(env, field="program").run(parse(program, field="program", mode="exec"))
    >>> env["w"].grad.tolist()
    [3.0, 3.0]
    """

    def __init__(
        self,
        env: dict[str, Any],
        *,
        field: str,
        limits: Limits | None = None,
        deadline: float | None = None,
        on_value: ValueHook | None = None,
        budget: Budget | None = None,
        hooks: ProgramHooks | None = None,
    ) -> None:
        super().__init__(
            env, field=field, limits=limits, deadline=deadline, on_value=on_value, budget=budget, hooks=hooks
        )
        self.functions = Functions(self)
        self.classes = Classes(self)
        self.statements = statements = Statements(self)
        self.calls = Calls(self)
        self.members = Members(self)
        self.expressions = expressions = Expressions(self)
        self.eval = expressions.eval
        self.block = statements.block

    # -- entry points -------------------------------------------------
    def evaluate(self, tree: ast.AST) -> Any:
        """The value of a single expression (``parse(..., mode="eval")``)."""
        if not isinstance(tree, ast.Expression):
            raise ProgramError("expected a single expression", field=self.field)
        self.source = getattr(tree, SOURCE_ATTR, None)
        return self.eval(tree.body)

    def run(self, tree: ast.AST) -> None:
        """Run a program (``parse(..., mode="exec")``); the statement count starts again at 0."""
        if not isinstance(tree, ast.Module):
            raise ProgramError("expected statements", field=self.field)
        self.source = getattr(tree, SOURCE_ATTR, None)
        self.statement_count = 0
        self.loops = []
        self.block(tree.body)
