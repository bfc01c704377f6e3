"""The scenario language: a small, whitelisted subset of Python over PyTorch.

Source text is parsed with :mod:`ast` and walked by :class:`Evaluator`; it is
never handed to ``eval`` or ``exec``. Parsing checks the shape of the code
(:func:`parse`); evaluation checks what each name and attribute resolves to,
and :class:`SizeGuard` checks what every operation will cost before it runs.

>>> from app.core.expr import parse, Evaluator
>>> tree = parse("torch.ones(2) * 3", field="demo", mode="eval")
>>> Evaluator({}, field="demo").evaluate(tree).tolist()
[3.0, 3.0]
>>> huge = parse("torch.ones(10**12)", field="demo", mode="eval")
>>> try:
...     Evaluator({}, field="demo").evaluate(huge)
... except ScenarioError as exc:
...     print(exc.where(), "|", exc.message)
demo, line 1, column 1 | this would make a tensor of 1,000,000,000,000 elements; the limit is 10,000,000

# NOTE [size guard]
Nothing a scenario asks for is computed before its cost is known. Every call
the language makes (a torch function, a tensor method, an operator, reading a
tensor property) runs under a :class:`SizeGuard`: a ``TorchDispatchMode``
that sees each ATen operation *before* it runs, including the ones that
composite functions such as ``F.one_hot`` or ``torch.einsum`` decompose into.
For each one the guard first works out its output sizes: directly for
pointwise ops, reductions, ``cat``, ``mv`` and ``dot`` (many of their meta
kernels are Python references whose first use imports Dynamo, seconds), and
otherwise by running it on ``meta`` copies of its arguments, which computes
shapes without allocating (every ``device=`` is replaced by ``meta``, so an
explicit device cannot dodge it). It refuses the operation when
- an output, view or not, would have more than ``Limits.max_elements``
  elements (an expanded view is refused too: summing it would still touch
  every element),
- the work (multiply-adds for matmul and convolution, window size for
  pooling, n**3 for linear algebra, elements touched otherwise) summed over
  one call of the language would pass ``Limits.max_work``,
- the elements allocated so far would pass the :class:`Budget`,
- it would split a tensor into more than ``MAX_PIECES`` tensors.
Operations whose output size depends on the values (tagged
``dynamic_output_shape``: nonzero, unique, bincount, boolean masks ...) cannot
run on meta; for those a bound is computed from the real inputs, and one
without a known bound (or without a meta kernel) is refused. When the meta run rejects the arguments
(a shape mismatch), the real call runs so that the learner sees PyTorch's own
message; real outputs are checked again after every operation.
Plain Python values are bounded as well, because ``[0] * 10**9``, ``9**9**9``
or ``'%*d' % (10**9, 1)`` never reach PyTorch: lists and text hold at most
``MAX_SEQUENCE`` items nested ``MAX_NESTING`` deep, integers ``MAX_INT_BITS``
bits, text constants ``MAX_TEXT`` characters.
"""

from __future__ import annotations

import ast
import difflib
import math
import operator
import re
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from .errors import RecordingTimeout, ScenarioError
from .whitelist import (
    DENIED_TENSOR_ATTRS,
    REFUSED_TORCH_MEMBERS,
    Namespace,
    SafeBuiltin,
    build_namespaces,
    result_fields,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_NESTING",
    "MAX_PIECES",
    "MAX_SEQUENCE",
    "MAX_SOURCE_CHARS",
    "MAX_TEXT",
    "Budget",
    "Evaluator",
    "Limits",
    "SizeGuard",
    "assigned_names",
    "free_names",
    "node_position",
    "parse",
    "read_public_attribute",
]

MAX_SOURCE_CHARS = 100_000  # characters in one field's text
MAX_DEPTH = 100  # levels of the syntax tree
MAX_TEXT = 1_000  # characters in one text constant
MAX_SEQUENCE = 1_000_000  # items in a list or tuple (nested lists count every item), characters in text
MAX_NESTING = 32  # lists inside lists
MAX_INT_BITS = 100_000  # bits of a Python integer
MAX_PIECES = 10_000  # tensors one operation may return or take in a list
MAX_OPS_PER_CALL = 20_000  # ATen operations one call of the language may run

Mode = Literal["eval", "exec"]
SOURCE_ATTR = "lens_source"  # parse() leaves the text on the tree, for columns in characters


@dataclass(frozen=True)
class Limits:
    """Bounds on what one recording may do."""

    max_elements: int = 10_000_000  # per tensor, including intermediates and views
    time_limit_s: float = 30.0
    max_work: int = 10_000_000_000  # multiply-adds (or elements touched) per call of the language
    max_total_elements: int = 100_000_000  # allocated per Budget (per Evaluator unless shared)


class Budget:
    """Elements allocated so far. Share one between the evaluators of a recording.

    >>> b = Budget(10)
    >>> b.charge(4), b.charge(7), b.used
    (True, False, 11)
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def charge(self, elements: int) -> bool:
        self.used += elements
        return self.used <= self.limit


# -- positions ------------------------------------------------------------


def _lines(source: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", source)


def node_position(source: str | None, node: ast.AST) -> tuple[int | None, int | None]:
    """1-based line and column (in characters, not UTF-8 bytes) of ``node``."""
    line = getattr(node, "lineno", None)
    byte_col = getattr(node, "col_offset", None)
    if line is None or byte_col is None:
        return line, None
    lines = _lines(source) if source else []
    if 0 < line <= len(lines):
        return line, len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore")) + 1
    return line, byte_col + 1


def _index_position(source: str, index: int) -> tuple[int, int]:
    """1-based line and column of the character at ``index``."""
    before = source[:index]
    line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
    return len(_lines(before)), index - line_start + 1


# -- parsing and static checks -------------------------------------------

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
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
_INPLACE: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
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
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module,
    ast.Expression,
    ast.Assign,
    ast.AugAssign,
    ast.Expr,
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
    *_BINOPS,
    *_UNARY,
    *_COMPARE,
)

_NO_LOOPS = "loops are not allowed: write each step out"
_NO_COMPREHENSIONS = "comprehensions are not allowed: write the values out, e.g. [1., 2., 3.]"
_NO_FUNCTIONS = "defining functions is not allowed: scenarios are straight-line code"
_REFUSALS_BY_NAME: dict[str, str] = {
    "Import": "imports are not allowed: torch and F are already there",
    "ImportFrom": "imports are not allowed: torch and F are already there",
    "Lambda": "lambda is not allowed: scenarios define no functions of their own",
    "ListComp": _NO_COMPREHENSIONS,
    "SetComp": _NO_COMPREHENSIONS,
    "DictComp": _NO_COMPREHENSIONS,
    "GeneratorExp": _NO_COMPREHENSIONS,
    "JoinedStr": "f-strings are not allowed: scenarios need no formatted text",
    "TemplateStr": "template strings are not allowed: scenarios need no formatted text",
    "NamedExpr": "the walrus operator := is not allowed: assign on a line of its own",
    "FunctionDef": _NO_FUNCTIONS,
    "AsyncFunctionDef": _NO_FUNCTIONS,
    "ClassDef": "defining classes is not allowed: scenarios are straight-line code",
    "For": _NO_LOOPS,
    "AsyncFor": _NO_LOOPS,
    "While": _NO_LOOPS,
    "If": "if statements are not allowed: use 'a if condition else b', or torch.where",
    "Starred": "star-unpacking (*) is not allowed: pass each value on its own",
    "Dict": "dictionaries are not allowed: scenarios work with tensors, numbers and lists",
    "Set": "sets are not allowed: scenarios work with tensors, numbers and lists",
    "Delete": "del is not allowed",
    "Global": "global is not allowed",
    "Nonlocal": "nonlocal is not allowed",
    "With": "with blocks are not allowed",
    "AsyncWith": "with blocks are not allowed",
    "Try": "try blocks are not allowed: a failing line is shown to you as it is",
    "TryStar": "try blocks are not allowed: a failing line is shown to you as it is",
    "Raise": "raise is not allowed",
    "Assert": "assert is not allowed",
    "Return": "return is not allowed: scenarios define no functions",
    "Yield": "yield is not allowed: scenarios define no functions",
    "YieldFrom": "yield is not allowed: scenarios define no functions",
    "Await": "await is not allowed",
    "Match": "match statements are not allowed",
    "AnnAssign": "type annotations are not allowed: write name = value",
    "TypeAlias": "type aliases are not allowed",
    "Pass": "pass is not needed in scenarios",
    "Break": _NO_LOOPS,
    "Continue": _NO_LOOPS,
    "Is": "'is' compares object identity; compare values with ==",
    "IsNot": "'is not' compares object identity; compare values with !=",
    "In": "'in' is not part of the scenario language",
    "NotIn": "'not in' is not part of the scenario language",
    "LShift": "bit shifts (<< and >>) are not allowed",
    "RShift": "bit shifts (<< and >>) are not allowed",
}
_REFUSALS: dict[type[ast.AST], str] = {
    getattr(ast, name): text for name, text in _REFUSALS_BY_NAME.items() if hasattr(ast, name)
}


def _words(text: str) -> list[str]:
    return text.split()


# Python builtins people reach for; none is defined, and naming one says why.
_OUTSIDE = "it would reach outside the scenario language"
_ATTRS = "read attributes with a dot, and only public ones"
_FORBIDDEN_NAMES: dict[str, str] = {
    "eval": "scenarios never run text as code",
    "exec": "scenarios never run text as code",
    "compile": "scenarios never run text as code",
    "open": "scenarios cannot read or write files",
    "print": "the program shows every value itself",
    "os": "scenarios cannot reach the system",
    "sys": "scenarios cannot reach the system",
    "getattr": _ATTRS,
    "setattr": _ATTRS,
    "delattr": _ATTRS,
    "hasattr": _ATTRS,
    **dict.fromkeys(
        _words(
            "globals locals vars dir type object super memoryview bytearray breakpoint help exit quit "
            "isinstance issubclass"
        ),
        _OUTSIDE,
    ),
}


def _error(message: str, field: str, node: ast.AST, source: str | None) -> ScenarioError:
    line, col = node_position(source, node)
    return ScenarioError(message, field=field, line=line, col=col)


def parse(source: str, *, field: str, mode: Mode) -> ast.AST:
    """Parse and statically check scenario text; raise :class:`ScenarioError`.

    >>> try:
    ...     parse("x.__class__", field="calls[0].loss", mode="eval")
    ... except ScenarioError as exc:
    ...     print(exc.where(), "|", exc.message)
    calls[0].loss, line 1, column 1 | attribute '__class__' is private: names starting with _ are refused
    """
    if not isinstance(source, str):
        raise ScenarioError(f"expected text, got {type(source).__name__}", field=field)
    if len(source) > MAX_SOURCE_CHARS:
        line, col = _index_position(source, MAX_SOURCE_CHARS)
        raise ScenarioError(
            f"this text is {len(source):,} characters long; the limit is {MAX_SOURCE_CHARS:,}",
            field=field,
            line=line,
            col=col,
        )
    if mode == "eval" and not source.strip():
        raise ScenarioError("this is empty: write an expression, e.g. y.sum()", field=field, line=1, col=1)
    tree = _parse_python(source, field, mode)
    _StaticChecker(source, field).check(tree)
    setattr(tree, SOURCE_ATTR, source)
    return tree


def _parse_python(source: str, field: str, mode: Mode) -> ast.AST:
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not for learners
            warnings.simplefilter("ignore")
            return ast.parse(source, mode=mode)
    except SyntaxError as exc:
        line, col = exc.lineno, exc.offset
        if line is None and "\x00" in source:
            line, col = _index_position(source, source.index("\x00"))
        line, col = (None if n is None else max(n, 1) for n in (line, col))  # Python says 0 at the very end
        message = _syntax_message(exc.msg)
        raise ScenarioError(message, field=field, line=line, col=col) from None
    except (RecursionError, MemoryError):
        line, col = _deep_line(source)
        message = f"this is nested too deeply to read (the limit is {MAX_DEPTH} levels)"
        raise ScenarioError(message, field=field, line=line, col=col) from None
    except ValueError as exc:  # NUL bytes on older Pythons, integers over 4300 digits
        raise ScenarioError(f"this is not valid Python: {exc}", field=field) from None


def _syntax_message(msg: str) -> str:
    if "null bytes" in msg:
        return "this text contains a NUL character (\\0), which is not allowed"
    return f"this is not valid Python: {msg}"


def _deep_line(source: str) -> tuple[int | None, int | None]:
    """The first line that is too deep on its own (Python's parser gives no position)."""
    for number, text in enumerate(_lines(source), start=1):
        stripped = text.strip()
        try:
            ast.parse(stripped)
        except (RecursionError, MemoryError):
            return number, len(text) - len(text.lstrip()) + 1
        except Exception:  # an incomplete line on its own: expected, skip it
            continue
    return None, None


class _StaticChecker:
    """Everything that can be refused without running anything."""

    def __init__(self, source: str, field: str) -> None:
        self.source = source
        self.field = field
        self.builtins = build_namespaces()

    def error(self, message: str, node: ast.AST) -> ScenarioError:
        return _error(message, self.field, node, self.source)

    def check(self, tree: ast.AST) -> None:
        # Iterative, so a deep tree cannot overflow our own stack. Operators and
        # contexts carry no position: they are reported at their expression.
        stack: list[tuple[ast.AST, int, ast.AST]] = [(tree, 0, tree)]
        while stack:
            node, depth, anchor = stack.pop()
            anchor = node if hasattr(node, "lineno") else anchor
            if depth > MAX_DEPTH and node is anchor:  # operators and contexts are leaves: not counted
                raise self.error(f"this is nested more than {MAX_DEPTH} levels deep: split it up", anchor)
            self.check_node(node, anchor)
            children = list(ast.iter_child_nodes(node))
            stack.extend((child, depth + 1, anchor) for child in reversed(children))

    def check_node(self, node: ast.AST, anchor: ast.AST) -> None:
        kind = type(node)
        if kind in _REFUSALS:
            raise self.error(_REFUSALS[kind], anchor)
        if not isinstance(node, _ALLOWED_NODES):
            raise self.error(f"{kind.__name__} is not part of the scenario language", anchor)
        if isinstance(node, ast.Name):
            self.check_name(node)
        elif isinstance(node, ast.Attribute):
            self.check_attribute(node)
        elif isinstance(node, ast.keyword) and node.arg is None:
            raise self.error("**keyword unpacking is not allowed: pass each keyword on its own", node)
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.Assign):
            self.check_targets(node.targets)
        elif isinstance(node, ast.AugAssign) and not isinstance(node.target, ast.Name):
            raise self.error("only a plain name can be updated with an operator like +=", node)
        elif isinstance(node, ast.Call) and not isinstance(node.func, (ast.Name, ast.Attribute)):
            raise self.error("only named functions and methods can be called", node.func)

    def check_name(self, node: ast.Name) -> None:
        if node.id.startswith("_"):
            raise self.error(f"name '{node.id}' is private: names starting with _ are refused", node)
        if node.id in _FORBIDDEN_NAMES:
            raise self.error(f"'{node.id}' is not available in scenarios: {_FORBIDDEN_NAMES[node.id]}", node)
        if isinstance(node.ctx, ast.Store) and node.id in self.builtins:
            raise self.error(f"'{node.id}' is a built-in name and cannot be assigned", node)

    def check_attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            raise self.error(f"attribute '{node.attr}' is private: names starting with _ are refused", node)
        if node.attr in DENIED_TENSOR_ATTRS:
            reason = DENIED_TENSOR_ATTRS[node.attr]
            raise self.error(f"'.{node.attr}' is not allowed in scenarios: {reason}", node)
        owner = _static_namespace(node.value, self.builtins)
        if owner is not None and node.attr not in owner.members:
            raise self.error(_missing_member(owner, node.attr), node)

    def check_constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes):
            raise self.error("bytes literals are not allowed", node)
        if isinstance(node.value, str) and len(node.value) > MAX_TEXT:
            raise self.error(f"text constants are limited to {MAX_TEXT:,} characters", node)

    def check_targets(self, targets: list[ast.expr]) -> None:
        for target in targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            for name in names:
                if not isinstance(name, ast.Name):
                    message = "only plain names can be assigned (y = ..., or a, b = ...)"
                    raise self.error(message, name)


def _static_namespace(node: ast.expr, builtins: dict[str, Any]) -> Namespace | None:
    """The module ``node`` names, when that is known without running anything."""
    if isinstance(node, ast.Name):
        value = builtins.get(node.id)
        return value if isinstance(value, Namespace) else None
    if isinstance(node, ast.Attribute):
        owner = _static_namespace(node.value, builtins)
        member = owner.members.get(node.attr) if owner is not None else None
        return member if isinstance(member, Namespace) else None
    return None


def _missing_member(owner: Namespace, attr: str) -> str:
    if owner.path == "torch" and attr in REFUSED_TORCH_MEMBERS:
        return f"torch.{attr} is not available in scenarios: {REFUSED_TORCH_MEMBERS[attr]}"
    close = difflib.get_close_matches(attr, list(owner.members), n=1)
    hint = f" (did you mean {owner.path}.{close[0]}?)" if close else ""
    return f"{owner.path}.{attr} is not available in scenarios{hint}; only a listed set of functions is"


def free_names(tree: ast.AST) -> Iterator[ast.Name]:
    """Names read by ``tree`` (in source order)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield node


def assigned_names(statement: ast.stmt) -> list[str]:
    """Names a statement binds."""
    if isinstance(statement, ast.Assign):
        out: list[str] = []
        for target in statement.targets:
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            out.extend(e.id for e in elts if isinstance(e, ast.Name))
        return out
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []


# -- evaluation -----------------------------------------------------------

ValueHook = Callable[[ast.AST, Any], None]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class Evaluator:
    """Walks checked trees over an environment of names.

    ``on_value`` is told of every tensor an expression node produces, so a
    recorder can label graph nodes with the source text that made them.
    ``budget`` counts the elements allocated; pass one :class:`Budget` to all
    the evaluators of a recording so the limit holds for the whole of it.
    Warnings PyTorch gives while evaluating are kept in ``warnings``.
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
    ) -> None:
        self.env = env  # assignments land here, so the caller sees them
        self.builtins = build_namespaces()
        self.field = field
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_value = on_value
        self.budget = budget or Budget(self.limits.max_total_elements)
        self.warnings: list[str] = []
        self._source: str | None = None
        self._sizes = _PySizes()

    # -- entry points -------------------------------------------------
    def evaluate(self, tree: ast.AST) -> Any:
        if not isinstance(tree, ast.Expression):
            raise ScenarioError("expected a single expression", field=self.field)
        self._source = getattr(tree, SOURCE_ATTR, None)
        return self._eval(tree.body)

    def run(self, tree: ast.AST) -> None:
        if not isinstance(tree, ast.Module):
            raise ScenarioError("expected statements", field=self.field)
        self._source = getattr(tree, SOURCE_ATTR, None)
        for statement in tree.body:
            self._exec(statement)

    def _error(self, message: str, node: ast.AST) -> ScenarioError:
        return _error(message, self.field, node, self._source)

    # -- statements ---------------------------------------------------
    def _exec(self, node: ast.stmt) -> None:
        self._tick(node)
        if isinstance(node, ast.Assign):
            value = self._eval(node.value)
            for target in node.targets:
                self._assign(target, value, node)
        elif isinstance(node, ast.AugAssign):
            self._augassign(node)
        elif isinstance(node, ast.Expr):
            self._eval(node.value)
        else:  # pragma: no cover - the static checks refuse everything else
            raise self._error(f"{type(node).__name__} is not allowed", node)

    def _augassign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):  # pragma: no cover - refused by the static checks
            raise self._error("only a plain name can be updated with an operator like +=", node)
        current = self._lookup(node.target)
        value = self._eval(node.value)
        if isinstance(current, torch.Tensor):  # in place, as in Python: the version counter moves
            result = self._apply(_INPLACE[type(node.op)], [current, value], {}, node)
        else:  # numbers, lists, text: a new value, under the same bounds as a plain operator
            result = self._python_binop(node.op, current, value, node)
        self._assign(node.target, result, node)

    def _assign(self, target: ast.expr, value: Any, statement: ast.stmt) -> None:
        if isinstance(target, ast.Tuple):
            values = self._unpack(value, len(target.elts), target)
            for elt, item in zip(target.elts, values, strict=True):
                self._assign(elt, item, statement)
            return
        if not isinstance(target, ast.Name):  # pragma: no cover - refused by the static checks
            raise self._error("only plain names can be assigned", target)
        if target.id in self.builtins:
            raise self._error(f"'{target.id}' is a built-in name and cannot be assigned", target)
        self.env[target.id] = value
        if self.on_value is not None and isinstance(value, torch.Tensor):
            self.on_value(statement, value)

    def _unpack(self, value: Any, count: int, node: ast.AST) -> list[Any]:
        items: list[Any] | None = None
        if isinstance(value, torch.Tensor):
            if value.dim() > 0 and len(value) == count:
                items = list(self._apply(torch.Tensor.unbind, [value, 0], {}, node))
        elif isinstance(value, (list, tuple)) and len(value) == count:
            items = list(value)
        if items is None:
            raise self._error(f"cannot unpack this value into {count} names", node)
        return items

    # -- expressions --------------------------------------------------
    def _eval(self, node: ast.expr) -> Any:
        self._tick(node)
        value = self._eval_node(node)
        if self.on_value is not None and isinstance(value, torch.Tensor):
            self.on_value(node, value)
        return value

    def _eval_node(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self._lookup(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._sequence(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.UnaryOp):
            return self._apply(_UNARY[type(node.op)], [self._eval(node.operand)], {}, node)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.IfExp):
            return self._eval(node.body) if self._truth(node.test) else self._eval(node.orelse)
        if isinstance(node, ast.Subscript):
            owner, index = self._eval(node.value), self._index(node.slice)
            return self._apply(operator.getitem, [owner, index], {}, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        raise self._error(f"{type(node).__name__} is not part of the scenario language", node)

    def _constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bytes) or (isinstance(node.value, str) and len(node.value) > MAX_TEXT):
            raise self._error(f"text constants are limited to {MAX_TEXT:,} characters", node)
        return node.value

    def _lookup(self, node: ast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        try:
            return self.builtins[node.id]
        except KeyError:
            raise self._error(f"name '{node.id}' is not defined", node) from None

    def _sequence(self, node: ast.List | ast.Tuple) -> Any:
        items = [self._eval(e) for e in node.elts]
        value = items if isinstance(node, ast.List) else tuple(items)
        self._check_python_value(value, node)
        return value

    def _index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*(None if p is None else self._eval(p) for p in parts))
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e) for e in node.elts)
        return self._eval(node)

    def _truth(self, node: ast.expr) -> bool:
        return self._truth_of(self._eval(node), node)

    def _truth_of(self, value: Any, node: ast.AST) -> bool:
        return bool(self._apply(bool, [value], {}, node))

    def _boolop(self, node: ast.BoolOp) -> Any:
        want = isinstance(node.op, ast.Or)
        value: Any = None
        for operand in node.values:
            value = self._eval(operand)
            if self._truth_of(value, operand) == want:
                return value
        return value

    def _compare(self, node: ast.Compare) -> Any:
        left = self._eval(node.left)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self._eval(right_node)
            result = self._apply(_COMPARE[type(op)], [left, right], {}, node)
            if len(node.ops) > 1 and not self._truth_of(result, node):
                return result
            left = right
        return result

    def _binop(self, node: ast.BinOp) -> Any:
        left, right = self._eval(node.left), self._eval(node.right)
        return self._python_binop(node.op, left, right, node)

    def _python_binop(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any:
        refusal = _python_arith_refusal(op, left, right, self._sizes)
        if refusal is not None:
            raise self._error(refusal, node)
        result = self._apply(_BINOPS[type(op)], [left, right], {}, node)
        return result

    def _attribute(self, node: ast.Attribute) -> Any:
        owner = self._eval(node.value)
        if isinstance(owner, Namespace):
            member = self._member(owner, node)
            if callable(member) and not isinstance(member, (Namespace, torch.dtype)):
                raise self._error(f"{owner.path}.{node.attr} is a function: call it", node)
            return member
        if isinstance(owner, torch.Tensor):
            self._check_tensor_attr(node)
            value = self._apply(_reader(node.attr), [owner], {}, node)
            if callable(value):
                raise self._error(f"'{node.attr}' is a method: call it, as in x.{node.attr}()", node)
            return value
        if node.attr in result_fields(owner):
            return read_public_attribute(owner, node.attr)
        raise self._error(
            f"attributes can only be read from tensors and from torch or F, not from {_kind(owner)}", node
        )

    def _member(self, owner: Namespace, node: ast.Attribute) -> Any:
        try:
            return owner.member(node.attr)
        except KeyError:
            raise self._error(_missing_member(owner, node.attr), node) from None

    def _check_tensor_attr(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):  # refused statically too; checked again here on purpose
            raise self._error(f"attribute '{node.attr}' is private: names starting with _ are refused", node)
        if node.attr in DENIED_TENSOR_ATTRS:
            reason = DENIED_TENSOR_ATTRS[node.attr]
            raise self._error(f"'.{node.attr}' is not allowed in scenarios: {reason}", node)
        if not hasattr(torch.Tensor, node.attr):
            close = difflib.get_close_matches(node.attr, _tensor_members(), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self._error(f"tensors have no attribute '{node.attr}'{hint}", node)

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._call_attribute(node, func)
        if isinstance(func, ast.Name):
            fn = self._lookup(func)
            if not isinstance(fn, SafeBuiltin):
                raise self._error(f"'{func.id}' is {_kind(fn)}, not a function: it cannot be called", func)
            args, kwargs = self._arguments(node)
            return self._apply(fn.fn, args, kwargs, node)
        raise self._error("only named functions and methods can be called", func)

    def _call_attribute(self, node: ast.Call, func: ast.Attribute) -> Any:
        owner = self._eval(func.value)
        if isinstance(owner, Namespace):
            fn = self._member(owner, func)
            if isinstance(fn, (Namespace, torch.dtype)) or not callable(fn):
                raise self._error(f"{owner.path}.{func.attr} is not a function", func)
            args, kwargs = self._arguments(node)
            return self._apply(fn, args, kwargs, node)
        if isinstance(owner, torch.Tensor):
            self._check_tensor_attr(func)
            if not callable(read_public_attribute(torch.Tensor, func.attr)):
                raise self._error(f"'{func.attr}' is not a method: drop the ()", func)
            if func.attr == "tolist" and owner.numel() > MAX_SEQUENCE:
                raise self._error(f"tolist() is limited to tensors of {MAX_SEQUENCE:,} elements", node)
            args, kwargs = self._arguments(node)
            return self._apply(_method(func.attr), [owner, *args], kwargs, node)
        raise self._error(
            f"methods can only be called on tensors and on torch or F, not on {_kind(owner)}", func
        )

    def _arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args = [self._eval(a) for a in node.args]
        kwargs = {k.arg: self._eval(k.value) for k in node.keywords if k.arg is not None}
        return args, kwargs

    # -- guarded application -----------------------------------------
    def _apply(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        """Call ``fn`` under a :class:`SizeGuard`; turn every failure into a :class:`ScenarioError`."""
        self._check_arguments(args, kwargs, node)
        guard = SizeGuard(self.limits, self.budget, deadline=self.deadline)
        try:
            with warnings.catch_warnings(record=True) as caught, guard:
                warnings.simplefilter("always")
                result = fn(*args, **kwargs)
        except ScenarioError as exc:
            raise self._located(exc, node) from None
        except MemoryError:
            raise self._located(guard.refusal or _out_of_memory(), node) from None
        except Exception as exc:
            if guard.refusal is not None:
                raise self._located(guard.refusal, node) from None
            raise self._error(f"{_who(fn, args, kwargs)} says: {_first_line(exc)}", node) from None
        if guard.refusal is not None:  # raised inside PyTorch and swallowed there
            raise self._located(guard.refusal, node)
        self._note_warnings(caught, node)
        self._check_result(result, node)
        return result

    def _located(self, exc: ScenarioError, node: ast.AST) -> ScenarioError:
        if exc.field is not None and exc.line is not None:
            return exc
        line, col = node_position(self._source, node)
        return type(exc)(exc.message, field=self.field, line=line, col=col)

    def _note_warnings(self, caught: list[warnings.WarningMessage], node: ast.AST) -> None:
        line, col = node_position(self._source, node)
        for item in caught:
            said = " ".join(str(item.message).split())
            text = f"{self.field}, line {line}, column {col}: PyTorch warns: {said}"
            if text not in self.warnings:
                self.warnings.append(text)

    def _check_arguments(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, (list, tuple)):
                self._check_python_value(value, node)

    def _check_python_value(self, value: Any, node: ast.AST) -> None:
        items, depth = self._sizes.measure(value)
        if depth > MAX_NESTING:
            raise self._error(f"lists can be nested at most {MAX_NESTING} deep", node)
        if items > MAX_SEQUENCE:
            raise self._error(f"this would hold {items:,} items; the limit is {MAX_SEQUENCE:,}", node)

    def _check_result(self, value: Any, node: ast.AST) -> None:
        if isinstance(value, (list, tuple, str)) and not isinstance(value, torch.Size):
            self._check_python_value(value, node)
            if not self.budget.charge(len(value)):
                raise self._error(_budget_message(self.budget), node)
        for tensor in _tensors_in(value):
            elements = max(tensor.numel(), _storage_elements(tensor))
            if elements > self.limits.max_elements:
                raise self._error(_too_big(elements, self.limits), node)

    def _tick(self, node: ast.AST) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            line, col = node_position(self._source, node)
            raise RecordingTimeout(_timeout_message(self.limits), field=self.field, line=line, col=col)


def _kind(value: Any) -> str:
    """How a learner would name a value's type, with an article."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a bool (True/False)"
    if isinstance(value, int):
        return "an int"
    if isinstance(value, torch.Tensor):
        return "a tensor"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Namespace):
        return "a module"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _who(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> str:
    module = getattr(fn, "__module__", None) or ""
    touches_torch = module.startswith("torch") or any(
        True for _ in _tensors_in([args, list(kwargs.values())])
    )
    return "PyTorch" if touches_torch else "Python"


def _too_big(elements: int, limits: Limits) -> str:
    return f"this would make a tensor of {elements:,} elements; the limit is {limits.max_elements:,}"


def _budget_message(budget: Budget) -> str:
    return (
        f"this scenario has now made {budget.used:,} tensor elements and list items; "
        f"the limit is {budget.limit:,}"
    )


def _timeout_message(limits: Limits) -> str:
    return f"the recording ran longer than {limits.time_limit_s:g} s and was stopped"


def _out_of_memory() -> ScenarioError:
    return ScenarioError("this ran out of memory: make the tensors smaller")


def read_public_attribute(owner: Any, name: str) -> Any:
    """The one place the language reads an attribute by name.

    Callers check the name first; this checks again, so that no path can
    reach a private or denied member even if a check above is lost.
    """
    if name.startswith("_") or name in DENIED_TENSOR_ATTRS:
        raise ScenarioError(f"'{name}' is not available in scenarios")
    return getattr(owner, name)


def _reader(name: str) -> Callable[[Any], Any]:
    def read(obj: Any) -> Any:
        return read_public_attribute(obj, name)

    read.__name__ = name
    read.__module__ = "torch"
    return read


def _method(name: str) -> Callable[..., Any]:
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return read_public_attribute(obj, name)(*args, **kwargs)

    call.__name__ = name
    call.__module__ = "torch"
    return call


_TENSOR_MEMBERS: list[str] = []


def _tensor_members() -> list[str]:
    if not _TENSOR_MEMBERS:
        _TENSOR_MEMBERS.extend(
            n for n in dir(torch.Tensor) if not n.startswith("_") and n not in DENIED_TENSOR_ATTRS
        )
    return _TENSOR_MEMBERS


def _tensors_in(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)


def _storage_elements(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage().nbytes() // max(tensor.element_size(), 1)
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return tensor.numel()


# -- plain Python values --------------------------------------------------


class _PySizes:
    """Items and nesting depth of lists, tuples and text.

    The language never changes a list once made (no list methods, no item
    assignment, ``+=`` makes a new list), so sizes are remembered by identity;
    the values are kept alive with them so an id is never reused.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, int, int]] = {}

    def measure(self, value: Any) -> tuple[int, int]:
        """(items counted through every nested list, nesting depth)."""
        if isinstance(value, str):
            return len(value), 0
        if not isinstance(value, (list, tuple)):
            return 1, 0
        known = self._known.get(id(value))
        if known is not None:
            return known[1], known[2]
        items, depth = 0, 0
        for item in value:
            if isinstance(item, (list, tuple)):
                sub_items, sub_depth = self.measure(item)
            else:
                sub_items, sub_depth = 1, 0
            items += sub_items
            depth = max(depth, sub_depth)
        self._known[id(value)] = (value, items, depth + 1)
        return items, depth + 1


def _python_arith_refusal(op: ast.operator, left: Any, right: Any, sizes: _PySizes) -> str | None:
    """Why plain-Python arithmetic would be too big (``[0] * 10**9``, ``9**9**9``), or None."""
    sequences = (list, tuple, str)
    if isinstance(left, sequences) or isinstance(right, sequences):
        return _sequence_refusal(op, left, right, sizes)
    if isinstance(left, int) and isinstance(right, int):
        return _int_refusal(op, left, right)
    return None


def _sequence_refusal(op: ast.operator, left: Any, right: Any, sizes: _PySizes) -> str | None:
    if isinstance(op, ast.Mod) and isinstance(left, str):
        return "text formatting with % is not part of the scenario language"
    if isinstance(op, ast.Mult):
        seq, count = (left, right) if isinstance(left, (list, tuple, str)) else (right, left)
        if not isinstance(count, int):
            return f"a list or text can only be repeated a whole number of times, not by {_kind(count)}"
        total = sizes.measure(seq)[0] * max(count, 0)
        if total > MAX_SEQUENCE:
            return f"this would build a sequence of {total:,} items; the limit is {MAX_SEQUENCE:,}"
    if isinstance(op, ast.Add) and type(left) is type(right):
        total = sizes.measure(left)[0] + sizes.measure(right)[0]
        if total > MAX_SEQUENCE:
            return f"this would build a sequence of {total:,} items; the limit is {MAX_SEQUENCE:,}"
    return None


def _int_refusal(op: ast.operator, left: int, right: int) -> str | None:
    bits = max(abs(left).bit_length(), 1)
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1 and bits * right > MAX_INT_BITS:
        return f"this power would have more than {MAX_INT_BITS:,} bits: it is too large to compute"
    if isinstance(op, ast.Mult) and bits + abs(right).bit_length() > MAX_INT_BITS:
        return f"this product would have more than {MAX_INT_BITS:,} bits: it is too large to compute"
    return None


# -- the size guard (see NOTE [size guard]) -------------------------------

_META = torch.device("meta")
_aten = torch.ops.aten


class SizeGuard(TorchDispatchMode):
    """Checks every ATen operation on meta before it runs; see NOTE [size guard].

    A refusal is kept in ``refusal`` (a :class:`ScenarioError` without a
    position) and raised, so the caller can report it even when PyTorch
    swallows the exception on its way out.

    >>> with SizeGuard(Limits(max_elements=100)) as guard:
    ...     torch.ones(10, 1) + torch.ones(1, 20)
    Traceback (most recent call last):
    ...
    app.core.errors.ScenarioError: this would make a tensor of 200 elements; the limit is 100
    """

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # The default wraps __torch_dispatch__ in torch._dynamo.disable, which
        # imports Dynamo (seconds) for a mode that is never compiled.
        return False

    def __init__(
        self, limits: Limits, budget: Budget | None = None, *, deadline: float | None = None
    ) -> None:
        super().__init__()
        self.limits = limits
        self.budget = budget or Budget(limits.max_total_elements)
        self.deadline = deadline
        self.work = 0
        self.ops = 0
        self.refusal: ScenarioError | None = None

    def __torch_dispatch__(
        self,
        func: torch._ops.OpOverload,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if self.refusal is None:
            self.refusal = self._refusal(func, args, kwargs)
        if self.refusal is not None:
            raise self.refusal
        out = func(*args, **kwargs)
        for tensor in _flat_tensors(out):
            if tensor.numel() > self.limits.max_elements:
                self.refusal = ScenarioError(_too_big(tensor.numel(), self.limits))
                raise self.refusal
        return out

    def _refusal(
        self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ScenarioError | None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            return RecordingTimeout(_timeout_message(self.limits))
        message = self._check(func, args, kwargs)
        return None if message is None else ScenarioError(message)

    def _check(
        self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> str | None:
        self.ops += 1
        if self.ops > MAX_OPS_PER_CALL:
            return f"this runs more than {MAX_OPS_PER_CALL:,} operations at once: make it smaller"
        pieces = _pieces_in(func, args, kwargs)
        if pieces > MAX_PIECES:
            return f"this would make or take {pieces:,} separate tensors; the limit is {MAX_PIECES:,}"
        if _has_exotic_tensor(args, kwargs):
            return "only ordinary (dense) tensors can be used in scenarios"
        try:
            cost = _quick_cost(func, args) or self._meta_cost(func, args, kwargs)
        except _ArgumentsRejected:
            return None  # the real call raises PyTorch's own message
        except NotImplementedError:
            return f"PyTorch cannot size {_op_name(func)} before running it, so it is refused"
        return self._check_cost(cost)

    def _meta_cost(self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Cost:
        """Run ``func`` on meta copies; fall back to a bound for value-dependent sizes."""
        try:
            meta_args, meta_kwargs = _to_meta(func, args, kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = func(*meta_args, **meta_kwargs)
        except Exception as exc:
            if torch.Tag.dynamic_output_shape in func.tags:  # nonzero, unique, x[mask] ...
                return _dynamic_cost(func, args, kwargs)
            if isinstance(exc, NotImplementedError):
                raise
            raise _ArgumentsRejected from None
        outputs = list(_flat_tensors(out))
        return _Cost(
            largest=max((t.numel() for t in outputs), default=0),
            count=len(outputs),
            new=_new_elements(func, out),
            work=_work(func, meta_args, out),
            scratch=_scratch_elements(func, meta_args, out),
        )

    def _check_cost(self, cost: _Cost) -> str | None:
        limit = self.limits.max_elements
        if cost.count > MAX_PIECES:
            return f"this would make {cost.count:,} separate tensors; the limit is {MAX_PIECES:,}"
        if cost.largest > limit:
            return _too_big(cost.largest, self.limits)
        if cost.scratch > limit:
            return f"this needs a scratch buffer of {cost.scratch:,} elements; the limit is {limit:,}"
        self.work += cost.work
        if self.work > self.limits.max_work:
            return (
                f"this would take about {self.work:,} operations; the limit is {self.limits.max_work:,}: "
                "make the tensors smaller"
            )
        return None if self.budget.charge(cost.new) else _budget_message(self.budget)


@dataclass(frozen=True)
class _Cost:
    """What one ATen operation would make and do."""

    largest: int  # elements of its largest output
    count: int  # tensors it returns
    new: int  # elements it allocates (outputs that are not views or in-place)
    work: int  # multiply-adds, or elements touched
    scratch: int = 0  # elements of temporary buffers


class _ArgumentsRejected(Exception):
    """The meta run refused the arguments (a shape mismatch, a bad dim)."""


def _has_exotic_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return any(
        t.layout != torch.strided or t.is_quantized or t.is_nested for t in _flat_tensors((args, kwargs))
    )


def _quick_cost(func: torch._ops.OpOverload, args: tuple[Any, ...]) -> _Cost | None:
    """Sizes of pointwise ops, reductions and cat without a meta run.

    Many meta kernels are Python references whose first use imports Dynamo
    (seconds); these common ops need none.
    """
    tensors = list(_flat_tensors(args))
    touched = sum(t.numel() for t in tensors)
    aliased = func._schema.returns and func._schema.returns[0].alias_info is not None
    name = _op_name(func)
    if torch.Tag.pointwise in func.tags:
        largest = math.prod(_broadcast([tuple(t.shape) for t in tensors]))
        return _Cost(largest, 1, 0 if aliased else largest, touched + largest)
    if torch.Tag.reduction in func.tags:  # every output is no bigger than the input
        largest = max((t.numel() for t in tensors), default=1)
        count = len(func._schema.returns)
        return _Cost(largest, count, 0 if aliased else largest * count, touched + largest)
    if name == "cat":
        return _Cost(touched, 1, 0 if aliased else touched, 2 * touched)
    if name in ("mv", "dot") and len(tensors) == 2:
        rows = tensors[0].shape[0] if name == "mv" and tensors[0].dim() == 2 else 1
        return _Cost(rows, 1, 0 if aliased else rows, touched + rows)
    return None


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """``torch.broadcast_shapes`` without its symbolic-shape machinery (which imports sympy)."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for shape in shapes:
        for i, size in enumerate(shape, start=rank - len(shape)):
            if size != 1 and out[i] not in (1, size):
                raise _ArgumentsRejected
            out[i] = size if size != 1 else out[i]
    return tuple(out)


def _dynamic_cost(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Cost:
    bound = _dynamic_bound(func, args, kwargs)
    if bound is None:
        raise NotImplementedError(_op_name(func))
    touched = sum(t.numel() for t in _flat_tensors(args))
    return _Cost(largest=bound, count=len(func._schema.returns), new=bound, work=touched + bound)


def _op_name(func: torch._ops.OpOverload) -> str:
    return func._schema.name.split("::")[-1]


def _flat_tensors(value: Any) -> Iterator[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return (leaf for leaf in leaves if isinstance(leaf, torch.Tensor))


def _meta_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.device.type == "meta":
        return tensor
    if tensor.storage_offset() == 0:
        return torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=_META)
    storage = tensor.untyped_storage().nbytes() // max(tensor.element_size(), 1)
    base = torch.empty(storage, dtype=tensor.dtype, device=_META)
    return base.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def _meta_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return _meta_tensor(value)
    if isinstance(value, torch.device):
        return _META
    return value


def _to_meta(
    func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    meta_args, meta_kwargs = tree_map(_meta_value, (args, kwargs))
    names = {a.name for a in func._schema.arguments if a.kwarg_only}
    if "device" in names:  # a factory: without this, device=None would mean the CPU
        meta_kwargs["device"] = _META
    if "pin_memory" in names:
        meta_kwargs["pin_memory"] = False
    if "generator" in meta_kwargs:
        meta_kwargs["generator"] = None
    return meta_args, meta_kwargs


def _bind(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Schema argument name -> value (defaults filled in)."""
    bound: dict[str, Any] = {}
    positional = iter(args)
    for argument in func._schema.arguments:
        if not argument.kwarg_only:
            value = next(positional, _MISSING)
            if value is not _MISSING:
                bound[argument.name] = value
                continue
        if argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
    return bound


_MISSING = object()


def _dim_size(tensor: Any, dim: Any) -> int:
    if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0 or not isinstance(dim, int):
        return 1
    return int(tensor.shape[dim % tensor.dim()])


def _pieces_in(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """How many tensors ``func`` takes in one list argument or returns, known before it runs."""
    lists = [a for a in args if isinstance(a, (list, tuple))]
    taken = max((sum(isinstance(t, torch.Tensor) for t in a) for a in lists), default=0)
    name = _op_name(func)
    if name not in _SPLITS:
        return taken
    b = _bind(func, args, kwargs)
    size = _dim_size(b.get("self"), b.get("dim", 0))
    if name == "unbind":
        return size
    if name in ("split", "unsafe_split"):
        step = b.get("split_size")
        return -(-size // step) if isinstance(step, int) and step > 0 else size
    if name in ("chunk", "unsafe_chunk"):
        return int(b.get("chunks", 1))
    if name in ("split_with_sizes", "unsafe_split_with_sizes"):
        return len(b.get("split_sizes", ()))
    return _tensor_split_pieces(b)


_SPLITS = frozenset(
    _words(
        "unbind split unsafe_split chunk unsafe_chunk split_with_sizes unsafe_split_with_sizes tensor_split"
    )
)


def _tensor_split_pieces(b: dict[str, Any]) -> int:
    for key in ("sections", "indices", "tensor_indices_or_sections"):
        value = b.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, (list, tuple)):
            return len(value) + 1
        if isinstance(value, torch.Tensor):
            return int(value.item()) if value.dim() == 0 else value.numel() + 1
    return 1


def _dynamic_bound(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """Most elements a value-dependent op can return, from its real inputs; None if unknown."""
    bound = _DYNAMIC_BOUNDS.get(_op_name(func))
    return None if bound is None else bound(_bind(func, args, kwargs))


def _numel(value: Any) -> int:
    return value.numel() if isinstance(value, torch.Tensor) else 0


def _top(value: Any) -> int:
    """One more than the largest value (the classes or bins it needs)."""
    return int(value.max().item()) + 1 if _numel(value) else 0


def _masked_bound(b: dict[str, Any]) -> int:
    shapes = [tuple(t.shape) for t in (b.get("self"), b.get("mask")) if isinstance(t, torch.Tensor)]
    return math.prod(_broadcast(shapes))


def _index_bound(b: dict[str, Any]) -> int:
    indices = [t for t in b.get("indices", ()) if isinstance(t, torch.Tensor) and t.dtype != torch.bool]
    return _numel(b.get("self")) * math.prod(t.numel() for t in indices)


def _repeat_bound(b: dict[str, Any]) -> int | None:
    size, repeats = b.get("output_size"), b.get("repeats")
    if isinstance(size, int):
        return size
    return int(repeats.sum().item()) if isinstance(repeats, torch.Tensor) else None


def _one_hot_bound(b: dict[str, Any]) -> int:
    classes = int(b.get("num_classes", -1))
    return _numel(b.get("self")) * (classes if classes >= 0 else _top(b.get("self")))


def _nonzero_bound(b: dict[str, Any]) -> int:
    self_ = b.get("self")
    return _numel(self_) * max(self_.dim() if isinstance(self_, torch.Tensor) else 1, 1)


def _unique_bound(b: dict[str, Any]) -> int:
    return _numel(b.get("self"))


def _bincount_bound(b: dict[str, Any]) -> int:
    return max(_top(b.get("self")), int(b.get("minlength", 0)))


_DYNAMIC_BOUNDS: dict[str, Callable[[dict[str, Any]], int | None]] = {
    **dict.fromkeys(
        _words("_unique _unique2 unique_consecutive unique_dim unique_dim_consecutive"), _unique_bound
    ),
    "nonzero": _nonzero_bound,
    "argwhere": _nonzero_bound,
    "masked_select": _masked_bound,
    "index": _index_bound,
    "bincount": _bincount_bound,
    "repeat_interleave": _repeat_bound,
    "one_hot": _one_hot_bound,
}


def _new_elements(func: torch._ops.OpOverload, out: Any) -> int:
    """Elements ``func`` allocates: outputs that are not views or in-place results."""
    returns = func._schema.returns
    outputs = out if isinstance(out, (list, tuple)) and len(returns) > 1 else (out,)
    total = 0
    for index, value in enumerate(outputs):
        alias = returns[index].alias_info if index < len(returns) else None
        if alias is None:
            total += sum(t.numel() for t in _flat_tensors(value))
    return total


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(value.shape) if isinstance(value, torch.Tensor) else ()


def _work(func: torch._ops.OpOverload, args: tuple[Any, ...], out: Any) -> int:
    """Rough cost: multiply-adds where known, else the elements the op touches."""
    name = _op_name(func)
    out_numel = sum(t.numel() for t in _flat_tensors(out))
    touched = out_numel + sum(t.numel() for t in _flat_tensors(args))
    special = _SPECIAL_WORK.get(name)
    if special is not None:
        return max(touched, special(args, out))
    if name.lstrip("_").startswith("linalg_") or name.lstrip("_") in _CUBIC:
        matrices = [t for t in _flat_tensors(args) if t.dim() >= 2]
        return max(touched, sum(t.numel() * t.shape[-1] * _LINALG_FACTOR for t in matrices))
    if name.startswith(("max_pool", "avg_pool")) and len(args) > 1 and isinstance(args[1], (list, tuple)):
        return max(touched, out_numel * _window(name, args[1]))
    return touched


_LINALG_FACTOR = 64  # scaling-and-squaring and iterative solvers repeat n**3 steps many times
_CUBIC = frozenset(
    _words(
        "triangular_solve cholesky cholesky_solve cholesky_inverse geqrf ormqr orgqr lu_solve lu_with_info "
        "lu_unpack symeig eig svd qr inverse det logdet slogdet matrix_exp pinverse"
    )
)


def _window(name: str, kernel: list[int] | tuple[int, ...]) -> int:
    dims = next((int(c) for c in name if c.isdigit()), len(kernel))
    sizes = list(kernel) * dims if len(kernel) == 1 else list(kernel)
    return math.prod(max(int(k), 1) for k in sizes)


def _matmul_work(args: tuple[Any, ...], out: Any) -> int:
    a, b = [t for t in args if isinstance(t, torch.Tensor) and t.dim() >= 2][-2:]
    return math.prod(_shape(a)) * int(_shape(b)[-1])


def _conv_work(args: tuple[Any, ...], out: Any) -> int:
    x, weight = args[0], args[1]
    per_output = int(weight.numel()) // max(int(weight.shape[0]), 1)
    transposed = bool(args[6]) if len(args) > 6 else False
    return (_numel(x) if transposed else sum(t.numel() for t in _flat_tensors(out))) * per_output


def _cdist_work(args: tuple[Any, ...], out: Any) -> int:
    return sum(t.numel() for t in _flat_tensors(out)) * int(_shape(args[0])[-1] or 1)


def _trilinear_work(args: tuple[Any, ...], out: Any) -> int:
    shapes = []
    for tensor, expand in zip(args[:3], args[3:6], strict=False):
        shape = list(_shape(tensor))
        for dim in sorted(expand):
            shape.insert(dim, 1)
        shapes.append(tuple(shape))
    return math.prod(_broadcast(shapes))


_SPECIAL_WORK: dict[str, Callable[[tuple[Any, ...], Any], int]] = {
    "mm": _matmul_work,
    "addmm": _matmul_work,
    "bmm": _matmul_work,
    "baddbmm": _matmul_work,
    "convolution": _conv_work,
    "_convolution": _conv_work,
    "_cdist_forward": _cdist_work,
    "_trilinear": _trilinear_work,
}


def _scratch_elements(func: torch._ops.OpOverload, args: tuple[Any, ...], out: Any) -> int:
    """The largest temporary an op is known to need (im2col columns for convolution)."""
    if _op_name(func) not in ("convolution", "_convolution"):
        return 0
    x, weight = args[0], args[1]
    outputs = list(_flat_tensors(out))
    spatial = math.prod(outputs[0].shape[2:]) if outputs else 1
    return int(x.shape[1]) * math.prod(weight.shape[2:]) * spatial if x.dim() > 1 else 0
