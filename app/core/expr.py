"""The scenario language: a small, whitelisted subset of Python over PyTorch.

Source text is parsed with :mod:`ast` and walked by :class:`Evaluator`; it is
never handed to ``eval`` or ``exec``. Parsing checks the shape of the code
(:func:`parse`); evaluation checks what each name and attribute resolves to
and predicts the size of every tensor before it is allocated.

>>> from app.core.expr import parse, Evaluator
>>> tree = parse("torch.ones(2) * 3", field="demo", mode="eval")
>>> Evaluator({}, field="demo").evaluate(tree).tolist()
[3.0, 3.0]

# NOTE [tensor size cap]
Every call that can create a tensor first runs on the ``meta`` device, which
computes shapes without allocating. A result whose element count (or storage,
for expanded views) exceeds ``Limits.max_elements`` is refused before the
real call. Ops that cannot run on ``meta`` run for real and are checked after.
"""

from __future__ import annotations

import ast
import operator
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import torch

from .errors import RecordingTimeout, ScenarioError
from .whitelist import DENIED_TENSOR_ATTRS, Namespace, SafeBuiltin, build_namespaces

__all__ = ["MAX_SOURCE_CHARS", "Evaluator", "Limits", "free_names", "parse"]

MAX_SOURCE_CHARS = 100_000
MAX_DEPTH = 100
MAX_SEQUENCE = 1_000_000
MAX_INT_BITS = 100_000

Mode = Literal["eval", "exec"]


@dataclass(frozen=True)
class Limits:
    """Bounds on what one recording may do."""

    max_elements: int = 10_000_000
    time_limit_s: float = 30.0


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
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

_REFUSALS: dict[type[ast.AST], str] = {
    ast.Import: "imports are not part of the scenario language",
    ast.ImportFrom: "imports are not part of the scenario language",
    ast.Lambda: "lambda is not allowed: scenarios contain no functions of their own",
    ast.ListComp: "comprehensions are not allowed: write the values out",
    ast.SetComp: "comprehensions are not allowed: write the values out",
    ast.DictComp: "comprehensions are not allowed: write the values out",
    ast.GeneratorExp: "generator expressions are not allowed: write the values out",
    ast.JoinedStr: "f-strings are not allowed",
    ast.NamedExpr: "the walrus operator := is not allowed: assign on its own line",
    ast.FunctionDef: "defining functions is not allowed",
    ast.AsyncFunctionDef: "defining functions is not allowed",
    ast.ClassDef: "defining classes is not allowed",
    ast.For: "loops are not allowed: write each step out",
    ast.While: "loops are not allowed: write each step out",
    ast.Starred: "star-unpacking is not allowed",
    ast.Dict: "dictionaries are not allowed",
    ast.Set: "sets are not allowed",
    ast.Delete: "del is not allowed",
    ast.Global: "global is not allowed",
    ast.Nonlocal: "nonlocal is not allowed",
}

# Names that are not defined anyway; naming them says why.
_FORBIDDEN_NAMES = frozenset(
    [
        "eval",
        "exec",
        "compile",
        "open",
        "getattr",
        "setattr",
        "delattr",
        "globals",
        "locals",
        "vars",
        "input",
        "breakpoint",
        "help",
        "dir",
        "type",
        "object",
        "super",
        "memoryview",
        "bytearray",
    ]
)


def _position(node: ast.AST) -> tuple[int | None, int | None]:
    line = getattr(node, "lineno", None)
    col = getattr(node, "col_offset", None)
    return line, (col + 1 if col is not None else None)


def _error(message: str, field: str, node: ast.AST) -> ScenarioError:
    line, col = _position(node)
    return ScenarioError(message, field=field, line=line, col=col)


def parse(source: str, *, field: str, mode: Mode) -> ast.AST:
    """Parse and statically check scenario text; raise :class:`ScenarioError`."""
    if not isinstance(source, str):
        raise ScenarioError(f"expected text, got {type(source).__name__}", field=field)
    if len(source) > MAX_SOURCE_CHARS:
        raise ScenarioError(
            f"this text is {len(source):,} characters long; the limit is {MAX_SOURCE_CHARS:,}",
            field=field,
        )
    try:
        tree = ast.parse(source, mode=mode)
    except SyntaxError as exc:
        raise ScenarioError(
            f"this is not valid Python: {exc.msg}", field=field, line=exc.lineno, col=exc.offset
        ) from None
    except (RecursionError, MemoryError):
        raise ScenarioError("this expression is nested too deeply", field=field) from None
    except ValueError as exc:  # e.g. NUL bytes
        raise ScenarioError(f"this is not valid Python: {exc}", field=field) from None
    _check_tree(tree, field)
    return tree


def _walk_with_depth(tree: ast.AST) -> Iterator[tuple[ast.AST, int]]:
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _check_tree(tree: ast.AST, field: str) -> None:
    for node, depth in _walk_with_depth(tree):
        if depth > MAX_DEPTH:
            raise _error(f"this expression is nested more than {MAX_DEPTH} levels deep", field, node)
        _check_node(node, field)


def _check_node(node: ast.AST, field: str) -> None:
    kind = type(node)
    if kind in _REFUSALS:
        raise _error(_REFUSALS[kind], field, node)
    if not isinstance(node, _ALLOWED_NODES):
        raise _error(f"{kind.__name__} is not part of the scenario language", field, node)
    if isinstance(node, ast.Name):
        _check_name(node, field)
    elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
        raise _error(f"attribute '{node.attr}' is private: names starting with _ are refused", field, node)
    elif isinstance(node, ast.keyword) and node.arg is None:
        raise _error("**keyword unpacking is not allowed", field, node)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        raise _error("bytes literals are not allowed", field, node)
    elif isinstance(node, ast.Assign):
        _check_targets(node.targets, field)
    elif isinstance(node, ast.AugAssign) and not isinstance(node.target, ast.Name):
        raise _error("only a plain name can be updated with an operator like +=", field, node)


def _check_name(node: ast.Name, field: str) -> None:
    if node.id.startswith("_"):
        raise _error(f"name '{node.id}' is private: names starting with _ are refused", field, node)
    if node.id in _FORBIDDEN_NAMES:
        raise _error(f"'{node.id}' is not available in scenarios", field, node)


def _check_targets(targets: list[ast.expr], field: str) -> None:
    for target in targets:
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        for name in names:
            if not isinstance(name, ast.Name):
                raise _error("only plain names can be assigned (y = ..., or a, b = ...)", field, name)


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


ValueHook = Callable[[ast.AST, Any], None]
_TORCH_ERRORS = (
    RuntimeError,
    TypeError,
    ValueError,
    IndexError,
    NotImplementedError,
    OverflowError,
    ZeroDivisionError,
    ArithmeticError,
)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class Evaluator:
    """Walks checked trees over an environment of names.

    ``on_value`` is told of every tensor an expression node produces, so a
    recorder can label graph nodes with the source text that made them.
    """

    def __init__(
        self,
        env: dict[str, Any],
        *,
        field: str,
        limits: Limits | None = None,
        deadline: float | None = None,
        on_value: ValueHook | None = None,
    ) -> None:
        self.env = env  # assignments land here, so the caller sees them
        self.builtins = build_namespaces()
        self.field = field
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_value = on_value

    # -- entry points -------------------------------------------------
    def evaluate(self, tree: ast.AST) -> Any:
        if not isinstance(tree, ast.Expression):
            raise ScenarioError("expected a single expression", field=self.field)
        return self._eval(tree.body)

    def run(self, tree: ast.AST) -> None:
        if not isinstance(tree, ast.Module):
            raise ScenarioError("expected statements", field=self.field)
        for statement in tree.body:
            self._exec(statement)

    # -- statements ---------------------------------------------------
    def _exec(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            value = self._eval(node.value)
            for target in node.targets:
                self._assign(target, value, node)
        elif isinstance(node, ast.AugAssign):
            assert isinstance(node.target, ast.Name)
            current = self._lookup(node.target)
            update = _INPLACE[type(node.op)]
            value = self._apply(update, [current, self._eval(node.value)], {}, node)
            self._assign(node.target, value, node)
        elif isinstance(node, ast.Expr):
            self._eval(node.value)
        else:  # pragma: no cover - _check_tree refuses everything else
            raise _error(f"{type(node).__name__} is not allowed", self.field, node)

    def _assign(self, target: ast.expr, value: Any, statement: ast.stmt) -> None:
        if isinstance(target, ast.Tuple):
            values = self._unpack(value, len(target.elts), target)
            for elt, item in zip(target.elts, values, strict=True):
                self._assign(elt, item, statement)
            return
        assert isinstance(target, ast.Name)
        if target.id in self.builtins:
            raise _error(f"'{target.id}' is a built-in name and cannot be assigned", self.field, target)
        self.env[target.id] = value
        if self.on_value is not None and isinstance(value, torch.Tensor):
            self.on_value(statement, value)

    def _unpack(self, value: Any, count: int, node: ast.AST) -> list[Any]:
        if isinstance(value, torch.Tensor):
            items = list(value.unbind(0)) if value.dim() > 0 and len(value) == count else None
        elif isinstance(value, (list, tuple)) and len(value) == count:
            items = list(value)
        else:
            items = None
        if items is None:
            raise _error(f"cannot unpack this value into {count} names", self.field, node)
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
            items = [self._eval(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
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
            index = self._index(node.slice)
            return self._apply(operator.getitem, [self._eval(node.value), index], {}, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        raise _error(f"{type(node).__name__} is not allowed", self.field, node)

    def _constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, str) and len(node.value) > 1000:
            raise _error("text constants are limited to 1,000 characters", self.field, node)
        return node.value

    def _lookup(self, node: ast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        try:
            return self.builtins[node.id]
        except KeyError:
            raise _error(f"name '{node.id}' is not defined", self.field, node) from None

    def _index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*(None if p is None else self._eval(p) for p in parts))
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e) for e in node.elts)
        return self._eval(node)

    def _truth(self, node: ast.expr) -> bool:
        value = self._eval(node)
        try:
            return bool(value)
        except _TORCH_ERRORS as exc:
            raise _error(f"PyTorch says: {_first_line(exc)}", self.field, node) from None

    def _boolop(self, node: ast.BoolOp) -> Any:
        want = isinstance(node.op, ast.Or)
        value: Any = None
        for operand in node.values:
            value = self._eval(operand)
            if self._truth_of(value, operand) == want:
                return value
        return value

    def _truth_of(self, value: Any, node: ast.AST) -> bool:
        try:
            return bool(value)
        except _TORCH_ERRORS as exc:
            raise _error(f"PyTorch says: {_first_line(exc)}", self.field, node) from None

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
        _check_python_arith(node.op, left, right, self.field, node)
        return self._apply(_BINOPS[type(node.op)], [left, right], {}, node)

    def _attribute(self, node: ast.Attribute) -> Any:
        owner = self._eval(node.value)
        if isinstance(owner, Namespace):
            member = self._member(owner, node)
            if callable(member) and not isinstance(member, (Namespace, torch.dtype)):
                raise _error(f"{owner.path}.{node.attr} is a function: call it", self.field, node)
            return member
        if isinstance(owner, torch.Tensor):
            self._check_tensor_attr(node)
            value = self._apply(_getattr_of(node.attr), [owner], {}, node)
            if callable(value):
                raise _error(f"'{node.attr}' is a method: call it, as in x.{node.attr}()", self.field, node)
            return value
        raise _error(
            f"attributes can only be read from tensors, torch and F, not from a {type(owner).__name__}",
            self.field,
            node,
        )

    def _member(self, owner: Namespace, node: ast.Attribute) -> Any:
        try:
            return owner.member(node.attr)
        except KeyError:
            raise _error(
                f"{owner.path}.{node.attr} is not available in scenarios (only a listed set of functions is)",
                self.field,
                node,
            ) from None

    def _check_tensor_attr(self, node: ast.Attribute) -> None:
        if node.attr in DENIED_TENSOR_ATTRS:
            raise _error(
                f"tensor.{node.attr} is not allowed in scenarios: it reaches files, raw memory, "
                "NumPy or the autograd engine itself",
                self.field,
                node,
            )
        if not hasattr(torch.Tensor, node.attr):
            raise _error(f"tensors have no attribute '{node.attr}'", self.field, node)

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = self._eval(func.value)
            args, kwargs = self._arguments(node)
            if isinstance(owner, Namespace):
                fn = self._member(owner, func)
                if isinstance(fn, (Namespace, torch.dtype)) or not callable(fn):
                    raise _error(f"{owner.path}.{func.attr} is not a function", self.field, func)
                return self._apply(fn, args, kwargs, node)
            if isinstance(owner, torch.Tensor):
                self._check_tensor_attr(func)
                if not callable(getattr(torch.Tensor, func.attr)):
                    raise _error(f"'{func.attr}' is not a method: drop the ()", self.field, func)
                return self._apply(_method(func.attr), [owner, *args], kwargs, node)
            raise _error(
                f"methods can only be called on tensors, torch and F, not on a {type(owner).__name__}",
                self.field,
                func,
            )
        if isinstance(func, ast.Name):
            fn = self._lookup(func)
            args, kwargs = self._arguments(node)
            if isinstance(fn, SafeBuiltin):
                return self._apply(fn.fn, args, kwargs, node)
            raise _error(f"'{func.id}' is not a function", self.field, func)
        raise _error("only named functions and methods can be called", self.field, func)

    def _arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args = [self._eval(a) for a in node.args]
        kwargs = {k.arg: self._eval(k.value) for k in node.keywords if k.arg is not None}
        return args, kwargs

    # -- guarded application -----------------------------------------
    def _apply(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        """Call ``fn`` after predicting its result size on the meta device."""
        if _has_tensor(args) or _creates_tensor(fn):
            self._predict_size(fn, args, kwargs, node)
        try:
            result = fn(*args, **kwargs)
        except ScenarioError:
            raise
        except _TORCH_ERRORS as exc:
            raise _error(f"PyTorch says: {_first_line(exc)}", self.field, node) from None
        self._check_size(result, node)
        return result

    def _predict_size(
        self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> None:
        meta_kwargs = {k: ("meta" if k == "device" else _to_meta(v)) for k, v in kwargs.items()}
        try:
            with torch.device("meta"):
                predicted = fn(*_to_meta(args), **meta_kwargs)
        except Exception:
            return
        self._check_size(predicted, node)

    def _check_size(self, value: Any, node: ast.AST) -> None:
        for tensor in _tensors_in(value):
            elements = max(tensor.numel(), _storage_elements(tensor))
            if elements > self.limits.max_elements:
                raise _error(
                    f"this would make a tensor of {elements:,} elements; "
                    f"the limit is {self.limits.max_elements:,}",
                    self.field,
                    node,
                )

    def _tick(self, node: ast.AST) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            line, col = _position(node)
            raise RecordingTimeout(
                f"the recording ran longer than {self.limits.time_limit_s:g} s and was stopped",
                field=self.field,
                line=line,
                col=col,
            )


def _method(name: str) -> Callable[..., Any]:
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(obj, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _getattr_of(name: str) -> Callable[[Any], Any]:
    return operator.attrgetter(name)


_FACTORIES = frozenset(
    ["tensor", "zeros", "ones", "full", "eye", "arange", "linspace", "logspace", "rand", "randn", "randint"]
)


def _creates_tensor(fn: Callable[..., Any]) -> bool:
    return getattr(fn, "__name__", "") in _FACTORIES


def _has_tensor(value: Any) -> bool:
    return any(True for _ in _tensors_in(value))


def _tensors_in(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)


def _to_meta(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    if isinstance(value, list):
        return [_to_meta(v) for v in value]
    if isinstance(value, tuple) and not isinstance(value, torch.Size):
        return tuple(_to_meta(v) for v in value)
    return value


def _storage_elements(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage().nbytes() // max(tensor.element_size(), 1)
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return tensor.numel()


def _sequence_len(value: Any) -> int | None:
    return len(value) if isinstance(value, (list, tuple, str)) else None


def _check_python_arith(op: ast.operator, left: Any, right: Any, field: str, node: ast.AST) -> None:
    """Bound plain-Python arithmetic: ``[0] * 10**9`` or ``9**9**9`` would hang the window."""
    if isinstance(op, ast.Mult):
        for seq, count in ((left, right), (right, left)):
            n = _sequence_len(seq)
            if n is not None and isinstance(count, int) and n * count > MAX_SEQUENCE:
                raise _error(f"this would build a sequence of {n * count:,} items", field, node)
    if isinstance(op, ast.Add):
        n, m = _sequence_len(left), _sequence_len(right)
        if n is not None and m is not None and n + m > MAX_SEQUENCE:
            raise _error("this would build a sequence that is too long", field, node)
    if isinstance(left, int) and isinstance(right, int):
        bits = max(abs(left).bit_length(), 1)
        if isinstance(op, ast.Pow) and right > 0 and bits * right > MAX_INT_BITS and abs(left) > 1:
            raise _error("this power is too large to compute", field, node)
        if isinstance(op, ast.Mult) and bits + abs(right).bit_length() > MAX_INT_BITS:
            raise _error("this product is too large to compute", field, node)
