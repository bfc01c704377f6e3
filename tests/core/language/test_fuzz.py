"""Fuzzing the language: random text, random syntax trees and mutated real programs.

Whatever the input, parsing and evaluating it either works or raises a
ProgramError; nothing else escapes, no sentinel (files, processes,
serialisation, eval/import from our code) is reached, every attribute the
evaluator reads by name is public and allowed, and every value a program can
hold is one of a few harmless kinds.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core import ProgramError, builtin_names, load_builtin
from app.core.language import members
from app.core.language.denials import denied_attribute
from app.core.language.evaluator import Evaluator
from app.core.language.members import listed_callables
from app.core.language.objects import Checked
from app.core.language.parsing import Mode, parse
from app.core.language.safe_builtins import SafeBuiltin
from app.core.language.whitelist import Namespace, build_namespaces
from app.core.sizing.limits import Limits
from tests.support.hostile_cases import install_sentinels, warm_up

SMALL = Limits(max_elements=10_000, max_work=10_000_000, max_total_elements=1_000_000, time_limit_s=5)
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)

NAMES = ["x", "w", "n", "s", "lin", "torch", "F", "nn", "len", "max", "round", "int", "range", "zip", "list"]
NAMES += ["open", "eval", "exec", "getattr", "__import__", "_x", "__builtins__", "print", "os", "undefined"]
ATTRS = ["sum", "exp", "T", "shape", "grad", "data", "values", "tolist", "item", "mean", "expand"]
ATTRS += ["repeat", "view", "new_ones", "float", "max", "add_", "nn", "functional", "relu", "ones", "zeros"]
ATTRS += ["save", "load", "hub", "ops", "numpy", "tofile", "grad_fn", "register_hook", "untyped_storage"]
ATTRS += ["__class__", "__bases__", "__subclasses__", "__globals__", "_version", "__dict__", "mro"]
ATTRS += ["weight", "parameters", "zero_grad", "append", "backward", "autograd", "no_grad", "Linear"]
ATTRS += ["_parameters", "_modules", "state_dict", "register_forward_hook", "apply", "new_empty", "to"]


# -- what must hold for every input ---------------------------------------------------------


def allowed_value(value: Any, depth: int = 0) -> bool:
    """The kinds of value a program can ever hold: no modules, functions, classes or frames,
    except the functions and classes the language lists (``act = nn.ReLU``)."""
    views = (type({}.keys()), type({}.values()), type({}.items()), type(iter([])))
    plain = (int, float, complex, bool, str, type(None), type(Ellipsis), slice, range, enumerate, zip, *views)
    torch_values = (torch.Tensor, torch.dtype, torch.device, torch.Size, torch.Generator, torch.layout)
    if isinstance(value, (*plain, *torch_values, Namespace, SafeBuiltin, Checked)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return depth < 40 and all(allowed_value(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return depth < 40 and all(allowed_value(v, depth + 1) for v in (*value, *value.values()))
    return id(value) in listed_callables()


class Watch:
    """Sentinels plus a record of every attribute read by name, active only around one attempt
    (Hypothesis and pytest open files of their own between examples)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.read: list[str] = []

    @contextmanager
    def active(self) -> Iterator[None]:
        real = members.read_public_attribute

        def watched(owner: Any, name: str) -> Any:
            self.read.append(name)
            return real(owner, name)

        with pytest.MonkeyPatch.context() as patch:
            self.hits += install_sentinels(patch)
            patch.setattr(members, "read_public_attribute", watched)
            yield

    def check(self) -> None:
        assert self.hits == []
        bad = [n for n in self.read if n.startswith("_") or denied_attribute(n) is not None]
        assert bad == []


@pytest.fixture
def watch() -> Iterator[Watch]:
    warm_up()
    watching = Watch()
    yield watching
    watching.check()


def env() -> dict[str, Any]:
    return {
        "x": torch.tensor([1.0, -2.0, 3.0], requires_grad=True),
        "w": torch.tensor([[0.5, 1.0, -1.0], [2.0, 0.0, 1.5]], requires_grad=True),
        "n": 3,
        "s": [1.0, 2.0],
        "lin": build_namespaces()["nn"].members["Linear"](3, 2),
    }


def attempt(text: str, mode: Mode, watch: Watch) -> None:
    """Parse and evaluate ``text``: it works or raises a ProgramError, and nothing leaks."""
    names = env()
    try:
        with watch.active():
            tree = parse(text, field="fuzz", mode=mode)
            evaluator = Evaluator(names, field="fuzz", limits=SMALL, deadline=time.monotonic() + 5)
            result = evaluator.run(tree) if mode == "exec" else evaluator.evaluate(tree)
    except ProgramError as err:
        assert err.field == "fuzz"
        assert "\n" not in err.message
        return
    finally:
        watch.check()
    assert allowed_value(result), (text, result)
    assert all(allowed_value(v) for v in names.values()), text


# -- random text -------------------------------------------------------------------------

TOKENS = [*NAMES, *(f".{a}" for a in ATTRS), "(", ")", "[", "]", ",", ":", " ", "=", "\n", "."]
TOKENS += [
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "@",
    "<",
    "==",
    "&",
    "|",
    "~",
    "not ",
    " and ",
    " if ",
    " else ",
]
TOKENS += [
    "0",
    "1",
    "2",
    "10**12",
    "9**9**9",
    "1.5",
    "'a'",
    "'%*d'",
    "True",
    "None",
    "...",
    "dim=",
    "device='cpu'",
]
TOKENS += ["lambda: ", "import ", "for ", " in ", ":=", "f'{", "}'", "*", "**", "{", "}", "\x00", "é", "\\"]
TOKENS += ["with ", "torch.no_grad()", "    ", "break", "del ", " is ", "None", "range(", "print(", "lin("]

token_text = st.lists(st.sampled_from(TOKENS), max_size=25).map("".join)
raw_text = st.text(max_size=60)
plausible = st.from_regex(
    r"\A(x|w|torch|F|s|n)(\.(sum|exp|T|__class__|numpy|relu|ones|view|_version)(\((x|1|10\*\*12|dim=0)?\))?){0,3}"
    r"( ?[-+*@/] ?(x|w|2|\(x\)))?\Z"
)


def test_random_text_as_an_expression(watch: Watch) -> None:
    @FUZZ
    @given(st.one_of(token_text, raw_text, plausible))
    def check(text: str) -> None:
        attempt(text, "eval", watch)

    check()


def test_random_text_as_statements(watch: Watch) -> None:
    @FUZZ
    @given(st.lists(st.one_of(token_text, plausible.map(lambda e: f"y = {e}")), max_size=4).map("\n".join))
    def check(text: str) -> None:
        attempt(text, "exec", watch)

    check()


# -- random syntax trees --------------------------------------------------------------------

BINOPS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult]
BINOPS += [ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift]
CMPOPS = [ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn]
UNARY = [ast.USub, ast.UAdd, ast.Not, ast.Invert]
constants = st.one_of(
    st.integers(-3, 12),
    st.sampled_from([10**12, 2**63, -(10**9), 9**9]),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.just(...),
    st.binary(max_size=3),
).map(lambda v: ast.Constant(value=v))
names = st.sampled_from(NAMES).map(lambda n: ast.Name(id=n, ctx=ast.Load()))
leaves = st.one_of(constants, names)


def _lambda(body: ast.expr) -> ast.expr:
    args = ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    return ast.Lambda(args=args, body=body)


def _comprehension(elt: ast.expr, source: ast.expr) -> ast.expr:
    target = ast.Name(id="v", ctx=ast.Store())
    return ast.ListComp(
        elt=elt, generators=[ast.comprehension(target=target, iter=source, ifs=[], is_async=0)]
    )


def _call(draw: st.DrawFn, children: st.SearchStrategy[ast.expr]) -> ast.expr:
    func = draw(st.one_of(names, st.builds(_attribute, children, st.sampled_from(ATTRS))))
    args = draw(st.lists(st.one_of(children, children.map(lambda c: ast.Starred(c, ast.Load()))), max_size=3))
    keys = st.sampled_from(["dim", "device", "dtype", "requires_grad", "key", "out", None])
    keywords = draw(st.lists(st.builds(ast.keyword, keys, children), max_size=2))
    return ast.Call(func=func, args=args, keywords=keywords)


def _attribute(value: ast.expr, attr: str) -> ast.expr:
    return ast.Attribute(value=value, attr=attr, ctx=ast.Load())


def extend(children: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    """Mostly the language's own constructs; now and then one it refuses."""
    op = st.sampled_from
    refused = st.one_of(
        st.builds(_lambda, children),
        st.builds(_comprehension, children, children),
        st.builds(lambda k, v: ast.Dict([k], [v]), children, children),
        st.builds(lambda v: ast.Set([v]), children),
        st.builds(lambda v: ast.JoinedStr([ast.FormattedValue(v, -1, None)]), children),
        st.builds(lambda v: ast.NamedExpr(ast.Name("z", ast.Store()), v), children),
        st.builds(ast.Await, children),
    )
    return st.one_of(
        st.builds(ast.BinOp, children, op(BINOPS).map(lambda o: o()), children),
        st.builds(ast.UnaryOp, op(UNARY).map(lambda o: o()), children),
        st.builds(lambda a, o, b: ast.Compare(a, [o()], [b]), children, op(CMPOPS), children),
        st.builds(lambda vs: ast.BoolOp(ast.And(), vs), st.lists(children, min_size=2, max_size=3)),
        st.builds(ast.IfExp, children, children, children),
        st.builds(_attribute, children, op(ATTRS)),
        st.builds(lambda v, i: ast.Subscript(v, i, ast.Load()), children, children),
        st.builds(
            lambda v, a, b: ast.Subscript(v, ast.Slice(a, b, None), ast.Load()), children, children, children
        ),
        st.builds(lambda es: ast.List(es, ast.Load()), st.lists(children, max_size=3)),
        st.builds(lambda es: ast.Tuple(es, ast.Load()), st.lists(children, max_size=3)),
        st.composite(lambda draw: _call(draw, children))(),
        st.composite(lambda draw: _call(draw, children))(),
        refused,
    )


trees = st.recursive(leaves, extend, max_leaves=10)


def _target(kind: str, value: ast.expr) -> ast.expr:
    if kind == "name":
        return ast.Name(id="y", ctx=ast.Store())
    if kind == "private":
        return ast.Name(id="_y", ctx=ast.Store())
    if kind == "builtin":
        return ast.Name(id="torch", ctx=ast.Store())
    if kind == "attribute":
        return ast.Attribute(value=ast.Name("x", ast.Load()), attr="grad", ctx=ast.Store())
    names = [ast.Name(id=n, ctx=ast.Store()) for n in ("a", "b")]
    return ast.Tuple(elts=names, ctx=ast.Store())


TARGETS = ["name", "name", "private", "builtin", "attribute", "tuple"]
statements = st.one_of(
    st.builds(lambda k, v: ast.Assign([_target(k, v)], v, lineno=1), st.sampled_from(TARGETS), trees),
    st.builds(lambda v, o: ast.AugAssign(ast.Name("x", ast.Store()), o(), v), trees, st.sampled_from(BINOPS)),
    st.builds(ast.Expr, trees),
    st.just(ast.Import(names=[ast.alias(name="os")])),
    st.sampled_from(["torch.nn", "torch.utils", "torch.autograd", "torch"]).map(
        lambda m: ast.Import(names=[ast.alias(name=m, asname="m")])
    ),
    st.builds(lambda v: ast.For(ast.Name("i", ast.Store()), v, [ast.Expr(v), ast.Break()], []), trees),
    st.builds(lambda v: ast.If(v, [ast.Expr(v)], [ast.Continue()]), trees),
    st.builds(lambda v: ast.Delete([ast.Name("x", ast.Del())]), trees),
    st.builds(lambda v, i: ast.Assign([ast.Subscript(v, i, ast.Store())], i, lineno=1), trees, trees),
    st.builds(lambda v: ast.With([ast.withitem(v, None)], [ast.Expr(v)]), trees),
    st.builds(lambda v: ast.While(v, [ast.Expr(v)], []), trees),
)


def unparse(node: ast.AST) -> str | None:
    try:
        return ast.unparse(ast.fix_missing_locations(node))
    except Exception:  # a tree Python cannot even write out is not an input
        return None


def test_random_expression_trees(watch: Watch) -> None:
    @FUZZ
    @given(trees)
    def check(tree: ast.expr) -> None:
        text = unparse(ast.Expression(body=tree))
        if text is not None:
            attempt(text, "eval", watch)

    check()


def test_random_statement_trees(watch: Watch) -> None:
    @FUZZ
    @given(st.lists(statements, min_size=1, max_size=4))
    def check(body: list[ast.stmt]) -> None:
        text = unparse(ast.Module(body=body, type_ignores=[]))
        if text is not None:
            attempt(text, "exec", watch)

    check()


# -- real programs, mutated --------------------------------------------------------------


def real_texts() -> list[tuple[str, Mode]]:
    return [(load_builtin(name).code, "exec") for name in builtin_names()]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Mode]:
    text, mode = draw(st.sampled_from(real_texts()))
    chars = list(text)
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(chars)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from([*TOKENS, *"()[]._*+-,0129 xyw"]))
        if action == "insert" or not chars:
            chars[where:where] = list(piece)
        elif action == "delete":
            del chars[min(where, len(chars) - 1)]
        else:
            chars[min(where, len(chars) - 1)] = piece
    return "".join(chars), mode


def test_mutated_builtin_programs(watch: Watch) -> None:
    @FUZZ
    @given(mutated())
    def check(item: tuple[str, Mode]) -> None:
        text, mode = item
        extra = {"y": torch.ones(3, requires_grad=True) * 2, "loss": torch.ones(()), "g": torch.ones(3)}
        names = env() | extra
        try:
            with watch.active():
                tree = parse(text, field="fuzz", mode=mode)
                evaluator = Evaluator(names, field="fuzz", limits=SMALL, deadline=time.monotonic() + 5)
                evaluator.run(tree) if mode == "exec" else evaluator.evaluate(tree)
        except ProgramError:
            pass
        finally:
            watch.check()

    check()


def test_the_watch_sees_a_forbidden_attribute() -> None:
    """If a check above the attribute reader were lost, the watch would catch the read."""
    watching = Watch()
    with watching.active(), pytest.raises(ProgramError):
        members.read_public_attribute(torch.ones(1), "__class__")
    assert watching.read == ["__class__"]
    with pytest.raises(AssertionError):
        watching.check()


def test_allowed_value_refuses_escapes() -> None:
    assert allowed_value([torch.ones(1), (1, "a", None)])
    escapes: list[Callable[..., Any] | type | object] = [print, torch.save, type, ast, torch.Tensor.sum]
    assert not any(allowed_value(e) for e in escapes)
    assert allowed_value(torch.ones)  # listed: a program may hold it, to call later
