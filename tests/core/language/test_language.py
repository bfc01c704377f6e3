"""The program language: what it allows (PyTorch is the oracle) and what it refuses, where and why.

Every refusal is a ProgramError naming the field, the 1-based line and the
1-based column (in characters), with a message a learner can act on.

Programs in the checked language: statements, loops, autograd calls and objects.

PyTorch is the oracle: each program runs twice, once through the Evaluator and
once as plain Python (``exec`` here, in the tests only: the program itself never
runs code that way), and both must leave the same values, gradients and errors.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import subprocess
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.language.evaluator import Evaluator
from app.core.language.hints import with_run_hint
from app.core.language.objects import Checked
from app.core.language.parsing import Mode, assigned_names, free_names, parse
from app.core.language.positions import node_position
from app.core.language.safe_builtins import PRINT_LIMIT
from app.core.language.whitelist import build_namespaces
from app.core.model.errors import ProgramError, ProgramRaised
from app.core.model.graph import LoopMark
from app.core.sizing.limits import MAX_DEPTH, MAX_TEXT, Limits

FIELD = "forward.code"


def leaves() -> dict[str, Any]:
    return {
        "x": torch.tensor([1.0, 2.0, 3.0], requires_grad=True),
        "w": torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True),
    }


def run(code: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
    env = leaves() if env is None else env
    Evaluator(env, field=FIELD).run(parse(code, field=FIELD, mode="exec"))
    return env


def value(expr: str, env: dict[str, Any] | None = None) -> Any:
    env = leaves() if env is None else env
    return Evaluator(env, field=FIELD).evaluate(parse(expr, field=FIELD, mode="eval"))


def refusal(text: str, mode: Mode = "exec", *, evaluate: bool = False) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        tree = parse(text, field=FIELD, mode=mode)
        if evaluate:
            evaluator = Evaluator(leaves(), field=FIELD)
            evaluator.run(tree) if mode == "exec" else evaluator.evaluate(tree)
    return info.value


# -- what the language allows, checked against plain PyTorch -------------------


def test_arithmetic_matmul_comparison_and_unary_ops_equal_torch() -> None:
    env = run("a = (x * 2 + 1) / 3 - x ** 2\nb = w @ x\nc = -x\nd = x > 1.5\ne = ~d\nf = (x >= 2) & (x < 3)")
    x, w = leaves()["x"], leaves()["w"]
    assert torch.equal(env["a"], (x * 2 + 1) / 3 - x**2)
    assert torch.equal(env["b"], w @ x)
    assert torch.equal(env["c"], -x)
    assert torch.equal(env["d"], x > 1.5) and torch.equal(env["e"], ~(x > 1.5))
    assert torch.equal(env["f"], (x >= 2) & (x < 3))


def test_subscripts_slices_and_ellipsis_equal_torch() -> None:
    env = run("a = w[0]\nb = w[:, ::2]\nc = w[..., -1]\nd = x[1:]\ne = w[1, 0:2]")
    w, x = leaves()["w"], leaves()["x"]
    for name, expected in {"a": w[0], "b": w[:, ::2], "c": w[..., -1], "d": x[1:], "e": w[1, 0:2]}.items():
        assert torch.equal(env[name], expected), name


def test_torch_and_functional_calls_with_keywords_equal_torch() -> None:
    env = run(
        "a = torch.softmax(w, dim=1)\nb = F.relu(w - 1)\nc = torch.nn.functional.mse_loss(w[0], x)\n"
        "d = torch.zeros(2, 3, dtype=torch.float64)\ne = torch.cat([x, x], dim=0)"
    )
    w, x = leaves()["w"], leaves()["x"]
    assert torch.equal(env["a"], torch.softmax(w, dim=1))
    assert torch.equal(env["b"], F.relu(w - 1))
    assert torch.equal(env["c"], F.mse_loss(w[0], x))
    assert env["d"].dtype == torch.float64 and env["d"].shape == (2, 3)
    assert torch.equal(env["e"], torch.cat([x, x]))


def test_tensor_methods_properties_and_named_results() -> None:
    env = run("a = w.sum(dim=0, keepdim=True)\nb = w.max(dim=1).values\nc = w.T\nn = w.shape[1]\nk = w.dtype")
    w = leaves()["w"]
    assert torch.equal(env["a"], w.sum(dim=0, keepdim=True))
    assert torch.equal(env["b"], w.max(dim=1).values)
    assert torch.equal(env["c"], w.T)
    assert env["n"] == 3 and env["k"] is torch.float32


def test_in_place_method_and_plus_equals_change_the_tensor_itself() -> None:
    env = run("y = x * 2\nz = y\ny += 1\ny.mul_(3)")
    assert env["y"] is env["z"]  # += on a tensor is in place, as in Python
    assert env["y"]._version == 2
    assert torch.equal(env["y"], (leaves()["x"] * 2 + 1) * 3)


def test_plus_equals_on_numbers_and_lists_makes_new_values() -> None:
    env = run("n = 2\nn += 3\nn **= 2\nk = [1]\nm = k\nk += [2]")
    assert env["n"] == 25
    assert env["k"] == [1, 2] and env["m"] == [1]


def test_tuple_unpacking_ifexp_boolop_and_chained_comparison() -> None:
    env = run("a, b = x[:2]\nc = 1 if 2 > 1 else 0\nd = 0 or 5\ne = 1 < 2 < 3\nf, g = torch.ones(2), [1]")
    x = leaves()["x"]
    assert torch.equal(env["a"], x[0]) and torch.equal(env["b"], x[1])
    assert (env["c"], env["d"], env["e"]) == (1, 5, True)
    assert env["g"] == [1]


def test_safe_builtins() -> None:
    env = run(
        "a = len(w)\nb = max(2, 7)\nc = round(2.567, 2)\nd = abs(-3)\ne = float(x[0])\nf = int(x.sum())"
    )
    assert (env["a"], env["b"], env["c"], env["d"], env["e"], env["f"]) == (2, 7, 2.57, 3, 1.0, 6)


def test_pytorch_warnings_are_kept_not_raised() -> None:
    env = leaves()
    evaluator = Evaluator(env, field=FIELD)
    evaluator.run(parse("y = x * 2\ng = y.grad", field=FIELD, mode="exec"))
    assert env["g"] is None
    assert len(evaluator.warnings) == 1
    assert evaluator.warnings[0].startswith(
        "forward.code, line 2, column 5: PyTorch warns: The .grad attribute"
    )


def test_columns_count_characters_not_utf8_bytes() -> None:
    err = refusal("é = 1\nö = é + x._version")
    assert (err.line, err.col) == (2, 9)
    tree = ast.parse("ö = x._version")
    attribute = tree.body[0].value  # type: ignore[attr-defined]
    assert attribute.col_offset == 5  # bytes: 'ö' is two
    assert node_position("ö = x._version", attribute) == (1, 5)


# -- refused when parsed: (text, line, column, words in the message) --------------------

PARSE_REFUSALS = [
    ("import subprocess", 1, 1, "'subprocess' cannot be imported: a program can import torch, torch.nn"),
    ("from os import system", 1, 1, "os.system cannot be used: programs reach no files, processes"),
    ("y = __import__('os')", 1, 5, "name '__import__' is private"),
    ("y = x.__class__", 1, 5, "attribute '__class__' is private"),
    ("y = ().__class__.__bases__", 1, 5, "attribute '__bases__' is private"),
    ("y = x._version", 1, 5, "attribute '_version' is private"),
    ("__y = x", 1, 1, "name '__y' is private"),
    ("y = open('/etc/passwd')", 1, 5, "'open' is not available in programs: programs cannot read or write"),
    ("y = eval('1')", 1, 5, "'eval' is not available in programs: programs never run text as code"),
    ("y = exec('1')", 1, 5, "never run text as code"),
    ("y = getattr(x, 'grad')", 1, 5, "'getattr' is not available in programs: read attributes with a dot"),
    (
        "y = torch.save(x, 'f.pt')",
        1,
        5,
        "torch.save is not available in programs: programs cannot read or write",
    ),
    (
        "y = torch.load('f.pt')",
        1,
        5,
        "torch.load is not available in programs: programs cannot read or write",
    ),
    (
        "y = torch.hub.load('a', 'b')",
        1,
        5,
        "torch.hub is not available in programs: programs cannot download",
    ),
    ("y = torch.ops.aten.add(x, x)", 1, 5, "torch.ops is not available in programs"),
    ("y = torch.autograd.gradx(x, x)", 1, 5, "torch.autograd.gradx is not available in programs"),
    ("y = torch.smu(x)", 1, 5, "torch.smu is not available in programs (did you mean torch.sum?)"),
    ("y = F.relux(x)", 1, 5, "torch.nn.functional.relux is not available in programs (did you mean"),
    ("y = x.numpy()", 1, 5, "'.numpy' is not allowed in programs: NumPy is not part of programs"),
    ("y = x.tofile('f')", 1, 5, "'.tofile' is not allowed in programs: programs cannot read or write"),
    ("y = x.untyped_storage()", 1, 5, "it reaches raw memory"),
    ("y = x.register_hook", 1, 5, "it would run Python code of its own"),
    ("y = x.new_empty_strided((3,), (1,))", 1, 5, "it holds whatever was in memory"),
    ("y = (x * 2).grad_fn.register_hook", 1, 5, "it would run Python code of its own"),
    ("def __f():\n    pass", 1, 1, "name '__f' is private: a class may define only these names with _"),
    ("def f(__a):\n    pass", 1, 7, "argument '__a' is private or reserved"),
    ("def f():\n    global __x", 2, 5, "name '__x' is private or reserved"),
    ("y = f(_k=1)", 1, 7, "keyword '_k' is private"),
    (
        "@property\ndef f():\n    pass",
        1,
        2,
        "the decorators programs take are @staticmethod, @torch.no_grad()",
    ),
    ("class A(B, C):\n    pass", 1, 1, "a class here has one base"),
    ("class A(metaclass=B):\n    pass", 1, 9, "a class takes its bases only, no keywords such as metaclass="),
    ("y = super(1)", 1, 5, "super() is written super() or super(ClassName, self)"),
    ("y = x.__init__", 1, 5, "attribute '__init__' is private"),
    ("y = 1\nyield y", 2, 1, "'yield' outside function"),
    ("try:\n    y = x\nexcept* Exception:\n    y = 0", 1, 1, "except* is not part of the checked language"),
    ("y = [v async for v in x]", 1, 5, "async comprehensions are not part of the checked language"),
    ("y = f'{x:>1000}'", 1, 5, "f-string widths and precisions are limited to 100"),
    ("y = f'{x:{n}}'", 1, 5, "a format spec is written out in f-strings here"),
    ("y = (z := x)", 1, 6, "the walrus operator := is not allowed"),
    ("for x[0] in x:\n    y = 1", 1, 5, "a for loop names its items with plain names"),
    ("with x:\n    y = x", 1, 6, "only with torch.no_grad(): and with torch.enable_grad():"),
    ("with torch.no_grad() as g:\n    y = x", 1, 25, "with ... as is not needed"),
    ("del torch", 1, 5, "'torch' is a built-in name and cannot be deleted"),
    ("break", 1, 1, "break can only be used inside a for loop"),
    ("y: int = 1 << 2", 1, 10, "bit shifts (<< and >>) are not allowed"),  # an annotated value is checked
    ("y = 1 << 100000", 1, 5, "bit shifts (<< and >>) are not allowed"),
    ("y = b'bytes'", 1, 5, "bytes literals are not allowed"),
    ("y = '" + "a" * (MAX_TEXT + 1) + "'", 1, 5, "text constants are limited to 1,000 characters"),
    ("torch.pi = 3", 1, 1, "torch.pi is not available in programs"),
    ("F.relu = 3", 1, 1, "torch.nn.functional.relu cannot be assigned"),
    ("x.sum() += 1", 1, 1, "'function call' is an illegal expression for augmented assignment"),
    ("torch = 1", 1, 1, "'torch' is a built-in name and cannot be assigned"),
    ("y = [x][0].__class__", 1, 5, "attribute '__class__' is private"),
    ("y = (x + ", 1, 5, "this is not valid Python: '(' was never closed"),
    ("y = x\x00", 1, 6, "this text contains a NUL character"),
]


@pytest.mark.parametrize(
    ("text", "line", "col", "words"), PARSE_REFUSALS, ids=[t[0][:30] for t in PARSE_REFUSALS]
)
def test_refused_when_parsed(text: str, line: int, col: int, words: str) -> None:
    err = refusal(text)
    assert (err.field, err.line, err.col) == (FIELD, line, col), err
    assert words in err.message
    assert str(err).startswith(f"{FIELD}, line {line}, column {col}: ")


def test_nesting_deeper_than_the_limit_is_refused_at_the_first_level_too_deep() -> None:
    text = "y = " + "-" * (MAX_DEPTH + 5) + "x"
    err = refusal(text)
    assert (err.line, err.col) == (1, 4 + MAX_DEPTH)  # the unary minus at depth MAX_DEPTH + 1
    assert f"nested more than {MAX_DEPTH} levels deep" in err.message
    run("y = " + "-" * (MAX_DEPTH - 10) + "x")  # below the limit: fine


def test_python_own_nesting_limits_still_name_the_line() -> None:
    err = refusal("y = 1\ny = " + "(" * 10_000 + "x" + ")" * 10_000)
    assert (err.line, err.col) == (2, 205)
    assert "too many nested parentheses" in err.message
    err = refusal("y = 1\n\ny = " + "-" * 50_000 + "x")
    assert (err.line, err.col) == (3, 1)
    assert "nested too deeply" in err.message


def test_text_over_the_source_limit_names_where_it_passes_it() -> None:
    err = refusal("y = x\n" + "#" * 200_000)
    assert (err.line, err.col) == (2, 100_000 - 6 + 1)
    assert "200,006 characters long; the limit is 100,000" in err.message


@pytest.mark.parametrize("text", ["", "  \n "])
def test_an_empty_expression_says_so_at_line_1_column_1(text: str) -> None:
    err = refusal(text, mode="eval")
    assert (err.field, err.line, err.col) == (FIELD, 1, 1)
    assert err.message == "this is empty: write an expression, e.g. y.sum()"


def test_a_syntax_error_at_the_end_never_reports_column_0() -> None:
    err = refusal("y = (", mode="exec")
    assert err.line is not None and err.col is not None and err.line >= 1 and err.col >= 1


# -- refused when evaluated: names resolve, but not to something usable --------------

EVAL_REFUSALS = [
    ("y = z * 2", 1, 5, "name 'z' is not defined"),
    (
        "y = (1).real",
        1,
        5,
        "attributes can only be read from tensors, nn modules, optimizers, torch and F, not from an int",
    ),
    ("y = 'abc'.encode()", 1, 5, "'encode' is not a method programs call on text; they call capitalize"),
    ("y = x.sum()()", 1, 5, "this is a tensor, not a function: it cannot be called"),
    ("y = x.shape.count(3)", 1, 5, "not on a Size"),
    ("y = x(2)", 1, 5, "'x' is a tensor, not a function: it cannot be called"),
    ("y = torch(2)", 1, 5, "'torch' is a module, not a function"),
    ("y = x.sum", 1, 5, "'sum' is a method: call it, as in x.sum()"),
    ("y = x.shape()", 1, 5, "'torch.Size' object is not callable"),  # Python's own error
    ("y = torch.float32(x)", 1, 5, "torch.float32 is not a function"),
    ("y = x.sumx()", 1, 5, "'Tensor' object has no attribute 'sumx'"),
    (
        "y = x.grad.sum()",  # NOTE [missing attributes]: Python's own error, as a plain run's
        1,
        5,
        "Python says: 'NoneType' object has no attribute 'sum'",
    ),
    ("y = x.max(dim=0).count", 1, 5, "not from a max"),
    ("y = x @ x @ w", 1, 5, "PyTorch says: "),
    ("y = x.view(7)", 1, 5, "PyTorch says: shape '[7]' is invalid for input of size 3"),
    ("y = 1 / 0", 1, 5, "Python says: division by zero"),
    ("a, b = x", 1, 1, "cannot unpack this value into 2 names"),
    ("del len", 1, 5, "'len' is a built-in name and cannot be deleted"),
    ("y = x.add_(1)", 1, 5, "PyTorch says: a leaf Variable that requires grad is being used in an in-place"),
]


@pytest.mark.parametrize(("text", "line", "col", "words"), EVAL_REFUSALS, ids=[t[0] for t in EVAL_REFUSALS])
def test_refused_when_evaluated(text: str, line: int, col: int, words: str) -> None:
    err = refusal(text, evaluate=True)
    assert (err.field, err.line, err.col) == (FIELD, line, col), err
    assert words in err.message


def test_pytorch_messages_are_pytorchs_own() -> None:
    x = leaves()["x"]
    with pytest.raises(RuntimeError) as plain:
        x.view(7)
    err = refusal("y = x.view(7)", evaluate=True)
    assert err.message == f"PyTorch says: {plain.value}"


def test_a_deadline_in_the_past_stops_evaluation_with_a_position() -> None:
    from app.core.model.errors import RecordingTimeout

    evaluator = Evaluator(leaves(), field=FIELD, limits=Limits(time_limit_s=1), deadline=0.0)
    with pytest.raises(RecordingTimeout) as info:
        evaluator.run(parse("y = x * 2", field=FIELD, mode="exec"))
    assert (info.value.field, info.value.line, info.value.col) == (FIELD, 1, 1)
    assert "ran longer than 1 s and was stopped" in info.value.message


def test_meta_cost_memo_keys_on_everything_a_meta_run_sees() -> None:
    """A remembered cost is reused only for the same op, shapes, strides, dtypes and scalar types."""
    from app.core.sizing import op_costs

    mm = torch.ops.aten.mm.default
    a, b = torch.ones(3, 4), torch.ones(4, 5)
    first = op_costs.meta_cost(mm, (a, b), {})
    assert op_costs.meta_cost(mm, (torch.zeros(3, 4), torch.zeros(4, 5)), {}) is first
    wider = op_costs.meta_cost(mm, (a, torch.ones(4, 7)), {})
    assert (first.largest, wider.largest) == (15, 21)
    assert op_costs.meta_cost(mm, (a.t().contiguous().t(), b), {}) is not first  # other strides
    # value-dependent ops are never remembered: their bound reads the values
    nonzero = torch.ops.aten.nonzero.default
    assert op_costs._signature(nonzero, (a,), {}) is None
    assert op_costs._signature(torch.ops.aten.add.Scalar, (a, 1), {}) != op_costs._signature(
        torch.ops.aten.add.Scalar, (a, True), {}
    )


def test_flat_tensors_finds_what_pytree_finds() -> None:
    """The guard's own walk over ATen values agrees with torch.utils._pytree on every shape it sees."""
    from torch.utils._pytree import tree_flatten

    from app.core.sizing.aten_calls import flat_tensors

    a, b, c = torch.ones(1), torch.ones(2), torch.ones(3)
    values = [
        a,
        (a, [b, None, 3], {"k": c}),
        torch.max(torch.ones(2, 3), dim=1),  # a torch.return_types tuple
        [[], (), {}, 1.5, "s", torch.Size([2])],
        {"out": [a, (b,)], "dim": 0},
    ]
    for value in values:
        expected = [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]
        found = list(flat_tensors(value))
        assert len(found) == len(expected) and all(x is y for x, y in zip(found, expected, strict=True))


SHAPE_RULE_CASES = [
    ("native_layer_norm", lambda: (torch.ones(4, 8), [8], torch.ones(8), torch.zeros(8), 1e-5)),
    ("native_layer_norm", lambda: (torch.ones(2, 3, 4), [3, 4], None, None, 1e-5)),
    ("native_batch_norm", lambda: (torch.ones(5, 3), None, None, None, None, True, 0.1, 1e-5)),
    (
        "native_batch_norm",
        lambda: (torch.ones(2, 3, 4), torch.ones(3), None, torch.zeros(3), torch.ones(3), False, 0.1, 1e-5),
    ),
    ("stack", lambda: ([torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3)], 1)),
    ("_softmax", lambda: (torch.ones(2, 5), 1, False)),
    ("_log_softmax", lambda: (torch.ones(2, 5), 0, False)),
    ("cumsum", lambda: (torch.ones(3, 4), 1)),
    ("tril", lambda: (torch.ones(4, 4), -1)),
    ("triu", lambda: (torch.ones(3, 5),)),
    ("eye", lambda: (3,)),
    ("eye.m", lambda: (3, 7)),
    ("mse_loss", lambda: (torch.ones(4, 3), torch.zeros(3), 0)),
    ("mse_loss", lambda: (torch.ones(4, 3), torch.zeros(4, 3), 1)),
    ("nll_loss_forward", lambda: (torch.ones(5, 3), torch.zeros(5, dtype=torch.long), None, 1, -100)),
    ("nll_loss_forward", lambda: (torch.ones(5, 3), torch.zeros(5, dtype=torch.long), None, 0, -100)),
    ("binary_cross_entropy", lambda: (torch.full((6,), 0.5), torch.ones(6), None, 0)),
    ("binary_cross_entropy", lambda: (torch.full((6,), 0.5), torch.ones(6))),
]


@pytest.mark.parametrize(("op", "make"), SHAPE_RULE_CASES, ids=[c[0] for c in SHAPE_RULE_CASES])
def test_shape_rules_agree_with_a_meta_run(op: str, make: Any) -> None:
    """The closed-form costs (which spare a Dynamo import) say what a meta run says."""
    from app.core.sizing import op_costs

    name, _, overload = op.partition(".")
    func = getattr(getattr(torch.ops.aten, name), overload or "default")
    args = make()
    quick = op_costs.quick_cost(func, args)
    meta = op_costs._run_on_meta(func, args, {})
    assert quick is not None
    assert (quick.largest, quick.count) == (meta.largest, meta.count)
    assert quick.new >= meta.new and quick.work >= meta.work and quick.scratch >= meta.scratch


# -- long programs are parsed in pieces: the same tree, the same errors ------------
PIECE_CASES = {
    "statements": "a = 1\nb = a + 2\n\n# note\nc = [a,\nb]\n",
    "blocks": "if a:\n    b = 1\nelse:\n    b = 2\nfor i in x:\n    y = i\n\ny = 3\n",
    "strings across lines": 's = """\nx = 1\n"""\nt = (\n"a"\n)\nu = \\\n  2\n',
    "form feed in a comment": "a = 1  # one\x0cb = 2\nc = 3\n",
    "decorated and nested": "@d\ndef f():\n    return 1\nclass C:\n    x = 1\n\nz = f()\n",
    "no final newline": "a = 1\nb = 2",
}


@pytest.mark.parametrize("source", PIECE_CASES.values(), ids=PIECE_CASES)
def test_a_long_program_parsed_in_pieces_is_the_whole_parse(source: str, monkeypatch) -> None:
    from app.core.language import parsing

    monkeypatch.setattr(parsing, "PARSE_PIECE_CHARS", 1)  # a cut before every line in column 0
    tree = parsing._parse_in_pieces(source)
    whole = ast.parse(source)
    if tree is not None:  # None: some piece failed alone, and parse() parses the whole text
        assert ast.dump(tree, include_attributes=True) == ast.dump(whole, include_attributes=True)
    cut = parsing._parse_python(source, "forward", "exec")
    assert ast.dump(cut, include_attributes=True) == ast.dump(whole, include_attributes=True)


def test_the_benchmark_sized_program_is_cut_and_parses_as_a_whole() -> None:
    from app.core.language import parsing

    source = "".join(f"h{i} = torch.tanh(h{i - 1} @ W)\n" for i in range(1, 3000))
    assert len(source) > 4 * parsing.PARSE_PIECE_CHARS
    tree = parsing._parse_in_pieces(source)
    assert tree is not None
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(source), include_attributes=True)


@pytest.mark.parametrize("bad", ["x = (1,\n", "else:\n    y = 2\n", "y = 1 +\n"])
def test_a_syntax_error_in_a_long_program_is_reported_where_python_reports_it(bad: str) -> None:
    from app.core.language.parsing import PARSE_PIECE_CHARS

    good = "a = 1\n" * (PARSE_PIECE_CHARS // 6 + 10)
    source = good + bad + good
    with pytest.raises(SyntaxError) as python:
        ast.parse(source)
    with pytest.raises(ProgramError) as ours:
        parse(source, field="forward", mode="exec")
    assert ours.value.line == python.value.lineno


PROGRAM_FIELD = "program"
RUN_HINT = "to record a script of your own with full Python, run: python -m app run SCRIPT.py"


def program_leaves() -> dict[str, Any]:
    return {
        "w": torch.tensor([0.5, -1.0, 2.0], requires_grad=True),
        "v": torch.tensor([1.0, 2.0, 3.0]),
    }


class Hooks:
    """Remembers everything the evaluator tells it, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def autograd_call(
        self,
        kind: str,
        run: Callable[[], Any],
        node: ast.Call,
        given: Mapping[str, Any],
        loops: tuple[LoopMark, ...],
    ) -> Any:
        self.events.append(("call", kind, node.lineno, dict(given), loops))
        return run()

    def statement_done(self, statement: ast.stmt, loops: tuple[LoopMark, ...]) -> None:
        self.events.append(("done", statement.lineno, loops))

    def printed(self, text: str) -> None:
        self.events.append(("print", text))


def ours(
    code: str, env: dict[str, Any] | None = None, *, hooks: Hooks | None = None, limits: Limits | None = None
) -> dict[str, Any]:
    env = program_leaves() if env is None else env
    Evaluator(env, field=PROGRAM_FIELD, hooks=hooks, limits=limits).run(
        parse(code, field=PROGRAM_FIELD, mode="exec")
    )
    return env


def plain(code: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
    """The same program as plain Python, with what a program starts with bound (trusted test code)."""
    names = program_leaves() if env is None else env
    names.update(torch=torch, F=F, nn=torch.nn, optim=torch.optim)
    exec(compile(code, "<program>", "exec"), names)
    return names


def program_refusal(code: str, **kwargs: Any) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        ours(code, **kwargs)
    return info.value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.requires_grad != b.requires_grad:
            return False
        if not torch.equal(a.isnan(), b.isnan()) or not torch.equal(a.nan_to_num(), b.nan_to_num()):
            return False
        if not a.is_leaf:  # .grad of a non-leaf is never filled (and reading it warns)
            return not b.is_leaf
        return (a.grad is None) == (b.grad is None) and (a.grad is None or same(a.grad, b.grad))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def assert_agree(code: str) -> dict[str, Any]:
    """Run ``code`` both ways; every name the evaluator bound holds what Python's run holds."""
    mine, theirs = ours(code), plain(code)
    for name, value in mine.items():
        assert same(value, theirs[name]), (name, value, theirs[name])
    return mine


# -- every statement kind, checked against plain Python ------------------------------------

PROGRAMS = {
    "subscript assignment": """
b = w.sigmoid().clone()
b[1] = 2.0
b[0:2] = v[1:]
""",
    "attribute assignment": """
y = (w * w).sum()
y.backward()
g = w.grad.clone()
w.grad = None
u = v * 1
u.requires_grad = True
""",
    "tuple targets": """
a, (b, c) = 1, (2.0, w)
[d, e] = v[:2]
f, g = w.max(dim=0)
""",
    "augmented assignment": """
n = 2
n += 3
b = v * 1
b -= w.detach()
b[0] *= 4
m = [1, 2]
m[1] += 5
y = (w ** 2).sum()
y.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
w.grad += 1
""",
    "for over range, list, tuple, tensor": """
t = 0
for i in range(2, 9, 3):
    t += i
for s in [1.5, 2.5]:
    t = t + s
for r in (w, v):
    t = t + r.sum()
for row in torch.ones(3, 2):
    t = t + row
""",
    "enumerate and zip": """
acc = []
for i, (a, b) in enumerate(zip(w, v)):
    acc.append(a * b + i)
for k, x in enumerate([4, 5], start=10):
    acc.append(k * x)
""",
    "break, continue, for-else": """
seen = []
for i in range(10):
    if i == 1:
        continue
    if i == 4:
        break
    seen.append(i)
else:
    seen.append(-1)
for j in range(2):
    pass
else:
    seen.append(99)
""",
    "if, elif, else": """
out = []
for i in range(4):
    if i == 0:
        out.append('a')
    elif i < 3:
        out.append('b')
    else:
        out.append('c')
if w.grad is None and v is not None:
    out.append('none')
""",
    "grad modes": """
with torch.no_grad():
    a = w * 2
    with torch.enable_grad():
        b = w * 2
c = w * 2
flags = [a.requires_grad, b.requires_grad, c.requires_grad]
""",
    "del": """
a = w * 2
b = [1, 2, 3]
del a
del b[0], b[-1]
""",
    "imports": """
import torch
import torch.nn as nn
from torch import nn, optim
import torch.nn.functional as F
import torch.optim as optim
from torch.nn import functional as F
import torch.nn
y = F.relu(w) + torch.nn.functional.relu(v)
""",
    "builtins": """
a = sum([w, v, w])
b = sum(range(5))
c = min(3, 1, 2)
d = max([w.sum(), v.sum()])
e = abs(-2.5)
f = round(2.345, 2)
g = float(w[0])
h = int(v.sum())
k = bool(w[0] > 0)
m = len(list(range(4)))
n = w.sum().item()
p = list(zip([1, 2], [3, 4]))
q = list(enumerate(v))
""",
    "f-strings": """
loss = (w * v).sum()
t = f"loss {loss:.4f} {loss.item():>10.3e} {[1, 'a', w]} {'x'!r:^7} {w!s} {3:05d} {'é'!a} {{}} {v}"
""",
    "leaf gradients": """
for i in range(3):
    loss = (w * v * i).sum()
    loss.backward()
g1 = w.grad.clone()
w.grad.zero_()
g2 = w.grad.clone()
""",
}


@pytest.mark.parametrize("code", PROGRAMS.values(), ids=list(PROGRAMS))
def test_each_statement_kind_agrees_with_plain_python(code: str) -> None:
    assert_agree(code)


def test_del_removes_the_binding() -> None:
    env = ours("a = 1\ndel a")
    assert "a" not in env
    assert program_refusal("del a").message == with_run_hint("name 'a' is not defined")


def test_imports_bind_the_checked_namespaces_the_program_starts_with() -> None:
    start = build_namespaces()
    env = ours("from torch import autograd as ag\nimport torch.nn as nn\nfrom torch.autograd import grad")
    assert env["ag"] is start["torch"].members["autograd"]
    assert env["grad"] is start["torch"].members["autograd"].members["grad"]
    assert "nn" not in env  # nn is bound from the start, to the very same object


def test_assigned_and_free_names_of_statements() -> None:
    tree = ast.parse(
        "for i, (a, b) in enumerate(z):\n    if a:\n        c = b\n    c.grad = None\nimport torch.nn as nn"
    )
    assert assigned_names(tree.body[0]) == ["i", "a", "b", "c"]
    assert assigned_names(tree.body[1]) == ["nn"]
    assert [n.id for n in free_names(tree.body[0])] == ["enumerate", "z", "a", "b", "c"]


# -- what the hooks hear ---------------------------------------------------------------------


def test_hooks_hear_each_statement_with_its_loops_each_autograd_call_and_each_print() -> None:
    code = (
        "for i in range(2):\n"  # 1
        "    for j in [10, 20]:\n"  # 2
        "        y = (w * j).sum()\n"  # 3
        "    y.backward(retain_graph=True)\n"  # 4
        "    print('it', i, y.item())\n"  # 5
        "g, = torch.autograd.grad((w * w).sum(), [w], create_graph=True)\n"  # 6
        "torch.autograd.backward([y], grad_tensors=[torch.tensor(2.0)], inputs=[w])\n"  # 7
        "for k, x in enumerate(zip(v, v)):\n"  # 8
        "    break\n"  # 9
    )
    hooks = Hooks()
    ours(code, hooks=hooks)

    def outer(i: int) -> LoopMark:
        return LoopMark(1, i, 2)

    def inner(i: int, j: int) -> tuple[LoopMark, LoopMark]:
        return outer(i), LoopMark(2, j, 2)

    expected: list[tuple[Any, ...]] = []
    for i in range(2):
        expected += [("done", 3, inner(i, 0)), ("done", 3, inner(i, 1))]
        expected += [("call", "backward", 4, {"retain_graph": True}, (outer(i),)), ("done", 4, (outer(i),))]
        expected += [("print", f"it {i} {(w_value() * 20).sum().item()}"), ("done", 5, (outer(i),))]
    expected += [("call", "grad", 6, {"create_graph": True}, ()), ("done", 6, ())]
    calls = [e for e in hooks.events if e[0] == "call"]
    assert calls[-1][1:3] == ("backward", 7) and set(calls[-1][3]) == {"grad_tensors", "inputs"}
    expected += [calls[-1], ("done", 7, ())]
    expected += [("done", 9, (LoopMark(8, 0, 3),))]
    assert hooks.events == expected


def w_value() -> torch.Tensor:
    return program_leaves()["w"].detach()


def test_autograd_keywords_pass_through_and_results_agree_with_pytorch() -> None:
    code = (
        "a = w * w * v\n"
        "u = torch.ones(3, requires_grad=True)\n"
        "g1, g2 = torch.autograd.grad(a, [w, u], grad_outputs=torch.ones(3), allow_unused=True, "
        "retain_graph=True)\n"
        "h, = torch.autograd.grad(outputs=[a.sum()], inputs=[w], create_graph=True, only_inputs=True)\n"
        "p = ((h - 1) ** 2).sum()\n"
        "p.backward(inputs=[w])\n"
        "a.backward(gradient=torch.tensor([1.0, 0.0, 2.0]))\n"
    )
    env = assert_agree(code)
    assert env["g2"] is None


def test_pytorchs_warning_from_an_autograd_call_is_kept_with_its_line() -> None:
    """In a fresh process: PyTorch gives this warning once per process, and other tests may have had it."""
    code = (
        "import torch\n"
        "from app.core.language.evaluator import Evaluator\n"
        "from app.core.language.parsing import parse\n"
        "class Hooks:\n"
        "    def autograd_call(self, kind, run, node, given, loops): return run()\n"
        "    def statement_done(self, statement, loops): pass\n"
        "    def printed(self, text): pass\n"
        "env = {'w': torch.tensor([1., 2.], requires_grad=True)}\n"
        "ev = Evaluator(env, field='program', hooks=Hooks())\n"
        "ev.run(parse('y = (w * w).sum()\\ny.backward(create_graph=True)', field='program', mode='exec'))\n"
        "print(repr(ev.warnings))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    warned = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert len(warned) == 1
    assert warned[0].startswith("program, line 2, column 1: PyTorch warns: Using backward() with")


def test_a_second_backward_fails_with_pytorchs_message_at_its_line() -> None:
    code = "y = (w * w).sum()\ny.backward()\ny.backward()"
    with pytest.raises(RuntimeError) as plain_error:
        plain(code)
    err = program_refusal(code)
    assert isinstance(err, ProgramRaised)
    assert (err.field, err.line, err.col) == (PROGRAM_FIELD, 3, 1)
    assert err.message == "PyTorch says: " + str(plain_error.value).splitlines()[0]


def test_with_hooks_an_autograd_error_reaches_the_recorder_unchanged() -> None:
    with pytest.raises(RuntimeError, match="second time"):
        ours("y = (w * w).sum()\ny.backward()\ny.backward()", hooks=Hooks())


def test_print_gives_pythons_text_to_the_hooks_and_nothing_to_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = "print('loss', w, [1, 'a', (2,)], None, 2.5, sep=' | ')\nprint()\nprint(w.sum(), end='')"
    hooks = Hooks()
    ours(code, hooks=hooks)
    ours(code)  # without hooks the text goes nowhere
    assert capsys.readouterr().out == ""
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        plain(code)
    printed = [e[1] for e in hooks.events if e[0] == "print"]
    assert "\n".join(printed) == expected.getvalue()


def test_long_print_text_is_cut_with_an_ellipsis() -> None:
    hooks = Hooks()
    ours("a = list(range(100000))\nprint('x', a)", hooks=hooks)
    text = hooks.events[-2][1]
    assert len(text) == PRINT_LIMIT and text.startswith("x [0, 1, 2") and text.endswith("\u2026")


# -- limits -----------------------------------------------------------------------------


def test_a_loop_stops_at_its_iteration_limit_naming_its_line() -> None:
    err = program_refusal("y = 0\nfor i in range(10**12):\n    y = y + 1", limits=Limits(max_iterations=50))
    assert (err.line, err.col) == (2, 1)
    assert err.message == with_run_hint("this loop ran 50 times; the limit is 50")
    ours("for i in range(50):\n    pass", limits=Limits(max_iterations=50))  # exactly the limit: fine


def test_a_cheap_scalar_loop_of_two_hundred_thousand_rounds_runs_to_its_end() -> None:
    # NOTE [caps]: the counts sit above what runs inside the time limit; a polynomial fitted for
    # 100,000 steps or a table filled element by element is not a bomb.
    code = "s = 0.0\nfor i in range(200000):\n    s = s + i * 0.5\nt = torch.tensor(s)"
    assert same(ours(code)["t"], plain(code)["t"])


def test_the_default_counts_sit_above_the_time_limit() -> None:
    limits = Limits()
    assert limits.max_iterations >= 1_000_000 and limits.max_statements >= limits.max_iterations


def test_memory_left_uninitialised_is_zeros_and_ends_as_plain_pytorch_when_filled() -> None:
    # NOTE [zeroed memory]: filled next, as real code does, the values are PyTorch's own
    code = (
        "w = torch.empty(2, 3).fill_(0.5)\nv = torch.Tensor(2, 2).zero_() + 1\n"
        "u = w.new_empty(3).fill_(2.0)\nz = torch.empty_like(w).copy_(w) * 3\n"
        "s = torch.FloatTensor(4).zero_()\n"
    )
    ours_env, plain_env = ours(code), plain(code)
    for name in ("w", "v", "u", "z", "s"):
        assert same(ours_env[name], plain_env[name]), name
    assert torch.equal(ours("e = torch.empty(3)")["e"], torch.zeros(3))


@pytest.mark.parametrize("factor", [2, 3])
def test_gradcheck_is_pytorchs_own_check_of_the_programs_function(factor: int) -> None:
    # NOTE [gradchecks]: a right backward (2) passes, a wrong one (3) fails, as PyTorch says
    code = (
        "class Dbl(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        f"        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g * {factor}\n"
        "x = torch.ones(3, dtype=torch.double, requires_grad=True)\n"
        "f = Dbl.apply\nok = torch.autograd.gradcheck(f, x, raise_exception=False)\n"
        "ok2 = torch.autograd.gradgradcheck(Dbl.apply, (x,), raise_exception=False)\n"
    )
    ours_env, plain_env = ours(code), plain(code)
    assert (ours_env["ok"], ours_env["ok2"]) == (plain_env["ok"], plain_env["ok2"])
    assert ours_env["ok"] is (factor == 2)


def test_id_tells_objects_apart_as_pythons_does_without_an_address() -> None:
    # NOTE [object numbers]
    code = (
        "a = torch.ones(2)\nb = a\nc = a.exp()\nsame = id(a) == id(b)\ndiffer = id(a) != id(c)\n"
        "k = [1]\nlisted = id(k) == id(k)\n"
    )
    ours_env, plain_env = ours(code), plain(code)
    assert [ours_env[n] for n in ("same", "differ", "listed")] == [
        plain_env[n] for n in ("same", "differ", "listed")
    ]
    assert ours("n = id(torch)")["n"] < 10**6  # a number, never the module's address


def test_a_program_names_its_own_values_after_left_out_builtins() -> None:
    # NOTE [shadowed builtins]: MAML's forward(self, x, vars=None)
    code = (
        "def f(x, vars=None):\n    if vars is None:\n        vars = [x * 2]\n    return vars[0].sum()\n"
        "w = torch.ones(3, requires_grad=True)\nloss = f(w)\nloss.backward()\n"
    )
    assert same(ours(code)["w"], plain(code)["w"])


def test_autograd_functional_calls_the_programs_own_function() -> None:
    # hvp(f, x, v) as PyTorch's docs write it: PyTorch calls f, the evaluator runs its body
    code = (
        "from torch.autograd.functional import hvp, jacobian\n"
        "def pow_reducer(x):\n    return x.pow(3).sum()\n"
        "x = torch.tensor([[0.5, 1.0], [2.0, 3.0]])\nv = torch.ones(2, 2)\n"
        "out, h = hvp(pow_reducer, x, v)\nj = jacobian(lambda t: t * t, torch.tensor([1.0, 2.0]))\n"
    )
    ours_env, plain_env = ours(code), plain(code)
    for name in ("out", "h", "j"):
        assert same(ours_env[name], plain_env[name]), name


def test_an_annotated_assignment_is_an_assignment() -> None:
    code = (
        "w: torch.Tensor = torch.ones(3, requires_grad=True)\nn: int\nscale: float = 0.5\n"
        "loss = (w * scale).sum()\nloss.backward()\n"
    )
    ours_env, plain_env = ours(code), plain(code)
    assert same(ours_env["w"], plain_env["w"]) and ours_env["scale"] == plain_env["scale"]
    assert "n" not in ours_env and "n" not in plain_env


def test_a_dataclass_gets_pythons_init_and_repr() -> None:
    # NOTE [program dataclasses]
    code = (
        "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    lr: float = 0.1\n"
        "    epochs: int = 2\n    sizes: list = field(default_factory=list)\n"
        "a = Config(0.5, epochs=3)\nb = Config()\na.sizes.append(1)\n"
        "got = (a.lr, a.epochs, a.sizes, b.lr, b.sizes, str(a))\n"
        "w = torch.ones(2, requires_grad=True)\n(w * a.lr).sum().backward()\n"
    )
    ours_env, plain_env = ours(code), plain(code)
    assert ours_env["got"] == plain_env["got"]
    assert same(ours_env["w"], plain_env["w"])


def test_a_dataclass_missing_a_field_is_pythons_type_error() -> None:
    code = "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: int = 2\np = P()\n"
    with pytest.raises(TypeError) as plain_error:
        plain(code)
    err = program_refusal(code)
    assert str(plain_error.value) in err.message and err.line == 6


def test_a_program_stops_at_its_statement_limit_naming_the_line() -> None:
    code = "n = 0\nfor i in range(100):\n    for j in range(100):\n        n += 1"
    err = program_refusal(code, limits=Limits(max_statements=1000))
    assert err.message == with_run_hint("the program ran 1,000 statements; the limit is 1,000")
    assert err.line in (3, 4)


@pytest.mark.parametrize(
    "code",
    [
        "a = list(range(10**9))",
        "a = sum(range(10**12))",
        "a = max(range(10**12))",
        "a = torch.tensor(range(10**9))",
    ],
)
def test_huge_ranges_are_refused_before_python_makes_them(code: str) -> None:
    err = program_refusal(code)
    assert "items at once; the limit is 1,000,000" in err.message
    assert (err.line, err.col) == (1, 5)


def test_lists_grown_by_append_stay_bounded_and_cannot_hold_themselves() -> None:
    err = program_refusal("a = [0] * 999999\na.append(1)\na.append([1, 2])")
    assert (err.line, err.message) == (
        3,
        with_run_hint("this would hold 1,000,002 items; the limit is 1,000,000"),
    )
    assert program_refusal("a = []\nb = [a]\na.append(b)").message == with_run_hint(
        "a list cannot hold itself"
    )
    assert program_refusal("a = [1]\na[0] = a").message == with_run_hint("a list cannot hold itself")


def test_a_list_used_as_a_queue_keeps_its_true_size() -> None:
    """Items that come out are counted out: 3,000 pairs in and out never near the limit."""
    code = "q = [0] * 999000\nfor i in range(3000):\n    q.append([i, i])\n    del q[-1]\n    q[0] = i\n"
    assert len(ours(code)["q"]) == 999000


def test_lists_sharing_their_parts_are_counted_with_every_share() -> None:
    err = program_refusal("x = []\nfor i in range(100):\n    x.append(x[:])")
    assert (err.line, err.message) == (
        3,
        with_run_hint("this would hold 1,048,576 items; the limit is 1,000,000"),
    )
    err = program_refusal("a = [[]] * 1000\nb = [a] * 1000\nc = [b] * 1000")
    assert (err.line, err.message) == (
        3,
        with_run_hint("this would build a sequence of 1,000,000,000 items; the limit is 1,000,000"),
    )


def test_big_lists_a_loop_lets_go_of_are_not_kept_alive() -> None:
    made: list[weakref.ref[torch.Tensor]] = []

    def on_value(node: ast.AST, value: Any) -> None:
        if isinstance(node, ast.BinOp):
            made.append(weakref.ref(value))

    code = "for i in range(3000):\n    row = [w * 1] * 300"
    Evaluator(program_leaves(), field=PROGRAM_FIELD, on_value=on_value).run(
        parse(code, field=PROGRAM_FIELD, mode="exec")
    )
    gc.collect()
    assert len(made) == 3000
    assert sum(ref() is not None for ref in made) < 2100  # swept as the cache doubles


def test_the_deadline_still_stops_a_loop() -> None:
    env = program_leaves()
    evaluator = Evaluator(env, field=PROGRAM_FIELD, deadline=time.monotonic() - 1)
    with pytest.raises(ProgramError, match="was stopped"):
        evaluator.run(parse("for i in range(5):\n    pass", field=PROGRAM_FIELD, mode="exec"))


# -- grad mode is restored ----------------------------------------------------------------


def test_no_grad_is_restored_after_an_error_inside_it() -> None:
    assert torch.is_grad_enabled()
    err = program_refusal("with torch.no_grad():\n    y = w.view(7)")
    assert err.line == 2 and torch.is_grad_enabled()
    with torch.no_grad():
        program_refusal("with torch.enable_grad():\n    for i in range(3):\n        y = w.view(7)")
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_break_out_of_no_grad_restores_grad_mode() -> None:
    env = ours("for i in range(3):\n    with torch.no_grad():\n        a = w * 2\n        break\nb = w * 2")
    assert not env["a"].requires_grad and env["b"].requires_grad and torch.is_grad_enabled()


# -- in-place changes and PyTorch's own errors ---------------------------------------------


def test_in_place_change_of_a_leaf_gives_pytorchs_error_at_its_line() -> None:
    err = program_refusal("y = w * 2\nw += 1")
    assert (err.line, err.col) == (2, 1)
    assert err.message.startswith(
        "PyTorch says: a leaf Variable that requires grad is being used in an in-place operation."
    )


def test_an_item_write_on_a_saved_output_gives_the_version_error_on_backward() -> None:
    code = "a = w * 1\nb = a.sigmoid()\nb[1] = 2.0\nb.sum().backward()"
    with pytest.raises(RuntimeError) as plain_error:
        plain(code)
    err = program_refusal(code)
    assert (err.line, err.message) == (4, "PyTorch says: " + str(plain_error.value).splitlines()[0])


def test_an_error_deep_in_blocks_is_placed_in_characters() -> None:
    err = program_refusal("for é in range(2):\n    if é == 1:\n        ö = 'é' + é")
    assert (err.field, err.line, err.col) == (PROGRAM_FIELD, 3, 13)
    assert err.message == 'Python says: can only concatenate str (not "int") to str'


def test_tensor_attributes_that_can_be_assigned() -> None:
    assert program_refusal("w.shape = 3").message == with_run_hint(
        "on a tensor only .grad, .requires_grad and .data can be assigned, not .shape"
    )
    assert program_refusal("a = 1\na.real = 3").message == with_run_hint(
        "attributes cannot be assigned on an int"
    )
    assert program_refusal("(w * 2).requires_grad = False").message.startswith(
        "PyTorch says: you can only change"
    )


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("a = w.new_empty_strided((3,), (1,))", "it holds whatever was in memory"),
        ("h = w.register_hook(torch.exp)", "register_hook(fn) takes a function the program defines"),
        ("h = (w * 2).grad_fn.register_hook(print)", "it would run Python code of its own"),
        ("a = (w * 2).grad_fn.register_prehook(print)", "'register_prehook' is not available on a grad_fn"),
        ("a = w.backward", "'backward' is a method: call it"),
        ("a = torch.autograd.grad", "torch.autograd.grad is a function: call it"),
        ("a = torch.no_grad", "is used as with torch.no_grad():"),
        ("a = torch.no_grad()", "is used only as with torch.no_grad():"),
        ("with torch.ones(2):\n    pass", "only with torch.no_grad(): and with torch.enable_grad():"),
        ("with torch.no_grad(1):\n    pass", "takes nothing here"),
        ("a = [1]\nb = a.sort()", "'sort' is not a method programs call on a list; they call append"),
        ("a = []\nb = a.append", "'append' is a method: call it"),
        ("a = (1, 2)\na[0] = 3", "items can be assigned in tensors, lists and dicts, not in a tuple"),
        ("for m in torch:\n    pass", "a for loop cannot go over a module"),
        ("for i in 5:\n    pass", "Python says: 'int' object is not iterable"),
        ("a, b = range(10**20)", "cannot unpack this value into 2 names"),
        ("a = sum([[1], [2]], [])", "sum() adds numbers and tensors here; join lists with +"),
        ("print(w, file=1)", "print() writes to the program's output only"),
        ("a = [1, 2]\na[0:1] = [3]", "list items are assigned one at a time"),
        ("del w[0]", "items can be deleted from lists and dicts only, not from a tensor"),
        ("del w.grad", "attributes cannot be deleted on a tensor"),
        ("for a, b in zip([1], [2, 3], strict=True):\n    pass", "Python says: zip() argument 2 is longer"),
    ],
)
def test_refused_or_failing_at_run_time(code: str, words: str) -> None:
    assert words in program_refusal(code).message


# -- refused before running, with the way to record one's own script -----------------------

HINTED = [
    ("y = 1\n\n@property\ndef f(a):\n    return a", 3, 2, "the decorators programs take are"),
    ("import numpy.linalg as la", 1, 1, "'numpy.linalg' cannot be imported"),
    ("y = 1\nfrom subprocess import run", 2, 1, "'subprocess' cannot be imported"),
    ("import torchvision", 1, 1, "'torchvision' cannot be imported"),
    ("from torch.utils.data import Sampler", 1, 1, "torch.utils.data.Sampler is not available in programs"),
    ("from . import x", 1, 1, "'.' cannot be imported"),
]


@pytest.mark.parametrize(("code", "line", "col", "words"), HINTED, ids=[h[3][:24] for h in HINTED])
def test_refusals_say_how_to_record_a_script_of_ones_own(code: str, line: int, col: int, words: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse(code, field=PROGRAM_FIELD, mode="exec")
    err = info.value
    assert (err.field, err.line, err.col) == (PROGRAM_FIELD, line, col)
    assert words in err.message and err.message.endswith(RUN_HINT)


REFUSED = [
    ("for i in range(2):\n    nonlocal x", 2, 5, "nonlocal declaration not allowed at module level"),
    ("return 1", 1, 1, "'return' outside function"),
    ("yield 1", 1, 1, "'yield' outside function"),
    ("match w:\n    case _:\n        pass", 1, 1, "match statements are not allowed"),
    ("async def f():\n    pass", 1, 1, "async code is not part of the checked language"),
    ("continue", 1, 1, "continue can only be used inside a for loop"),
    ("for i in range(2):\n    pass\nelse:\n    break", 4, 5, "break can only be used inside a for loop"),
    ("from torch.nn import Lineer", 1, 1, "torch.nn.Lineer is not available in programs (did you mean"),
    ("from torch import *", 1, 1, "import * is not allowed"),
    ("from torch import save", 1, 1, "torch.save is not available in programs"),
    ("import math as torch", 1, 1, "'torch' is a built-in name: this import would replace it"),
    ("import torch as _t", 1, 1, "an import cannot bind the name '_t'"),
    ("from torch import nn as eval", 1, 1, "an import cannot bind the name 'eval'"),
    (
        "y = torch.save(w, 'f.pt')",
        1,
        5,
        "torch.save is not available in programs: programs cannot read or write",
    ),
    ("y = torch.hub.load('a', 'b')", 1, 5, "torch.hub is not available in programs"),
    ("y = w.__class__", 1, 5, "attribute '__class__' is private"),
    ("w.__version += 1", 1, 1, "attribute '__version' is private"),
    ("del w.__dict__", 1, 5, "attribute '__dict__' is private"),
    ("y = getattr(w, 'grad')", 1, 5, "'getattr' is not available in programs"),
    ("for open in range(2):\n    pass", 1, 5, "'open' is not available in programs"),
    ("for super in range(2):\n    pass", 1, 5, "'super' is a built-in name and cannot be assigned"),
    ("torch.autograd.grad = 1", 1, 1, "torch.autograd.grad cannot be assigned"),
    ("print(f'{w:>999999999}')", 1, 7, "f-string widths and precisions are limited to 100"),
    ("print(f'{w:.{2}f}')", 1, 7, "a format spec is written out in f-strings here"),
    ("print(f'{w:%%}')", 1, 7, "'%%' is not a format spec f-strings take here"),
]


@pytest.mark.parametrize(("code", "line", "col", "words"), REFUSED, ids=[r[0][:24] for r in REFUSED])
def test_refused_before_running(code: str, line: int, col: int, words: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse(code, field=PROGRAM_FIELD, mode="exec")
    err = info.value
    assert (err.field, err.line, err.col) == (PROGRAM_FIELD, line, col), err
    assert words in err.message
    assert "will be run" not in err.message


# -- checked objects --------------------------------------------------------------------------


class Toy(Checked):
    """A tiny module: ``weight``, ``zero()`` and a call, and a record of every name it was asked."""

    kind = "a toy module"

    def __init__(self) -> None:
        self.weight = torch.ones(2, requires_grad=True)
        self.asked: list[str] = []
        self.child: Toy | None = None

    def get_attribute(self, name: str) -> Any:
        self.asked.append(name)
        if name == "weight":
            return self.weight
        if name == "child" and self.child is not None:
            return self.child
        raise KeyError(name)

    def set_attribute(self, name: str, value: Any) -> None:
        self.asked.append(name)
        if name != "weight":
            raise KeyError(name)
        self.weight = value

    def method(self, name: str) -> Callable[..., Any]:
        self.asked.append(name)
        if name == "zero":
            return self.zero
        raise KeyError(name)

    def members(self) -> list[str]:
        return ["weight", "zero"]

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return args[0] * self.weight

    def zero(self) -> None:
        self.weight.grad = None


def test_a_checked_object_answers_only_its_listed_members() -> None:
    toy = Toy()
    toy.child = Toy()
    env = ours(
        "y = toy(v[:2]).sum()\ny.backward()\ng = toy.weight.grad.clone()\ntoy.zero()\nz = toy.child(v[:2])\n"
        "with torch.no_grad():\n    toy.weight -= 1\nn = 0\nfor p in [toy.weight]:\n    n += 1",
        {"toy": toy, "v": torch.tensor([1.0, 2.0, 3.0])},
    )
    assert torch.equal(env["g"], torch.tensor([1.0, 2.0])) and toy.weight.grad is None
    assert torch.equal(toy.weight, torch.zeros(2))
    assert [n for n in toy.asked if n.startswith("_")] == []


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("a = toy.wieght", "'wieght' is not available on a toy module (did you mean 'weight'?)"),
        ("a = toy.zeros()", "'zeros' is not available on a toy module (did you mean 'zero'?)"),
        ("a = toy.zero", "'zero' is a method: call it, as in zero()"),
        ("a = toy.weight()", "'weight' is not a method: drop the ()"),
        ("toy.bias = v", "'bias' cannot be assigned on a toy module"),
        ("for p in toy:\n    pass", "a for loop cannot go over a toy module"),
        ("a = toy + 1", "a toy module cannot be used with an operator"),
        ("a = toy[0]", "a toy module has no items to take with [...]"),
    ],
)
def test_a_checked_object_refuses_what_it_does_not_list(code: str, message: str) -> None:
    err = program_refusal(code, env={"toy": Toy(), "v": torch.ones(2)})
    assert message in err.message and err.line is not None


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("a = lin.state_dict(keep_vars=1)", "state_dict(...) takes prefix= as text and keep_vars="),
        ("lin.load_state_dict(1)", "load_state_dict(...) takes a dict of tensors by name"),
        ("h = lin.register_forward_hook(torch.relu)", "takes a function the program defines"),
        ("lin.apply(5)", "this is an int, not a function"),
        ("lin.to('meta')", "so an nn.Linear module cannot move to meta"),
        ("g = opt.param_groups[0].state", "'state' is not available on a parameter group"),
        ("opt.step(print)", "step() takes no closure in programs"),
        ("lin.weight = print", "'weight' cannot be assigned on an nn.Linear module"),
    ],
)
def test_real_modules_and_optimizers_keep_hooks_state_and_closures_out(code: str, message: str) -> None:
    start = "lin = nn.Linear(2, 2)\nopt = optim.SGD(lin.parameters(), lr=0.1)\n"
    err = program_refusal(start + code)
    assert message in err.message and err.line == 3


@pytest.mark.parametrize("name", ["_modules", "__dict__", "__class__", "_parameters", "__init__"])
def test_private_members_never_reach_a_proxy(name: str) -> None:
    toy = Toy()
    for code in (f"a = toy.{name}", f"a = toy.{name}()", f"toy.{name} = 1", f"toy.{name} += 1"):
        if name.startswith("__") or "=" not in code.replace("a =", ""):  # NOTE [own names]
            with pytest.raises(ProgramError, match="is private"):
                parse(code, field=PROGRAM_FIELD, mode="exec")
        tree = ast.parse(code)  # past the static checks: the evaluator checks again
        with pytest.raises(ProgramError, match="is private"):
            Evaluator({"toy": toy}, field=PROGRAM_FIELD).run(tree)
    assert toy.asked == []


# -- random loop programs: the evaluator agrees with plain Python ---------------------------

EXPRESSIONS = [
    "w * {c}",
    "a + v",
    "(a * w).tanh()",
    "a.sigmoid() * {k}",
    "a * a",
    "v - a / 2",
    "w.exp() * 0.1 + a",
]


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, loops: tuple[str, ...] = ()) -> list[str]:
    """A few statements at ``depth``, in loops whose counters are ``loops``."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(statement(depth, loops))
    return lines


@st.composite
def statement(draw: st.DrawFn, depth: int, loops: tuple[str, ...]) -> list[str]:
    pad = "    " * depth
    k = draw(st.sampled_from(loops)) if loops else "2"
    choices = ["assign", "inplace", "backward", "total", "zero", "step"]
    if depth < 2:
        choices += ["for", "if"]
    if loops:
        choices += ["leave"]
    choice = draw(st.sampled_from(choices))
    if choice == "assign":
        expression = draw(st.sampled_from(EXPRESSIONS)).format(
            c=draw(st.sampled_from(["0.5", "2", "-1"])), k=k
        )
        return [f"{pad}a = {expression}"]
    if choice == "inplace":
        return [f"{pad}a {draw(st.sampled_from(['+=', '*=', '-=']))} {k}"]
    if choice == "backward":
        retain = draw(st.booleans())
        return [f"{pad}s = (a * w).sum()", f"{pad}s.backward(retain_graph={retain})"]
    if choice == "total":
        return [f"{pad}total = total + (a * {k}).sum()"]
    if choice == "zero":
        return [f"{pad}w.grad = None"]
    if choice == "step":
        return [
            f"{pad}if w.grad is not None:",
            f"{pad}    with torch.no_grad():",
            f"{pad}        w -= 0.1 * w.grad",
        ]
    if choice == "leave":
        word = draw(st.sampled_from(["break", "continue"]))
        return [f"{pad}if {k} == {draw(st.integers(0, 2))}:", f"{pad}    {word}"]
    if choice == "for":
        name = f"k{depth}"
        head = f"{pad}for {name} in range({draw(st.integers(0, 3))}):"
        return [head, *draw(blocks(depth + 1, (*loops, name)))]
    orelse = draw(st.booleans())
    body = [f"{pad}if {k} % 2 == 0:", *draw(blocks(depth + 1, loops))]
    return body + ([f"{pad}else:", *draw(blocks(depth + 1, loops))] if orelse else [])


def outcome(run: Callable[[], Any]) -> tuple[int, str] | None:
    """Where and how a run failed (PyTorch's words, as the evaluator reports them), or None."""
    try:
        run()
    except ProgramError as err:
        assert err.line is not None
        return err.line, err.message
    except RuntimeError as err:
        frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == "<program>"]
        assert frames and frames[-1].lineno is not None
        return frames[-1].lineno, "PyTorch says: " + str(err).splitlines()[0]
    return None


def test_random_loop_programs_agree_with_plain_python() -> None:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(blocks())
    def check(lines: list[str]) -> None:
        code = "\n".join(["a = w * 1.0", "total = 0.0", *lines])
        mine, theirs = program_leaves(), program_leaves()
        assert outcome(lambda: ours(code, mine)) == outcome(lambda: plain(code, theirs)), code
        for name in ("w", "a", "total", "s", "k0", "k1"):
            assert (name in mine) == (name in theirs), (code, name)
            assert name not in mine or same(mine[name], theirs[name]), (code, name)

    check()
