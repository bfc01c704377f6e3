"""The scenario language: what it allows (PyTorch is the oracle) and what it refuses, where and why.

Every refusal is a ScenarioError naming the field, the 1-based line and the
1-based column (in characters), with a message a learner can act on.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from app.core.language.evaluator import Evaluator
from app.core.language.parsing import Mode, parse
from app.core.language.positions import node_position
from app.core.model.errors import ScenarioError
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


def refusal(text: str, mode: Mode = "exec", *, evaluate: bool = False) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
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
    ("import os", 1, 1, "'os' cannot be imported: a program can import torch, torch.nn"),
    ("from os import system", 1, 1, "'os' cannot be imported"),
    ("y = __import__('os')", 1, 5, "name '__import__' is private"),
    ("y = x.__class__", 1, 5, "attribute '__class__' is private"),
    ("y = ().__class__.__bases__", 1, 5, "attribute '__bases__' is private"),
    ("y = x._version", 1, 5, "attribute '_version' is private"),
    ("_y = x", 1, 1, "name '_y' is private"),
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
    ("y = x.register_hook(x)", 1, 5, "it would run Python code of its own"),
    ("y = x.new_empty(3)", 1, 5, "it holds whatever was in memory"),
    ("y = x.grad_fn", 1, 5, "grad_fn objects are not values in programs"),
    ("def __f():\n    pass", 1, 1, "name '__f' is private: a class may define only these names with _"),
    ("def f(_a):\n    pass", 1, 7, "argument '_a' is private or reserved"),
    ("def f():\n    global _x", 2, 5, "name '_x' is private or reserved"),
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
    ("del x.grad", 1, 5, "only names and items (del a[0]) can be deleted"),
    ("del print", 1, 5, "'print' is a built-in name and cannot be deleted"),
    ("break", 1, 1, "break can only be used inside a for loop"),
    ("y: int = 1", 1, 1, "type annotations are not allowed"),
    ("y = x is w", 1, 5, "'is' compares object identity; compare with None only"),
    ("y = 1 << 100000", 1, 5, "bit shifts (<< and >>) are not allowed"),
    ("y = b'bytes'", 1, 5, "bytes literals are not allowed"),
    ("y = '" + "a" * (MAX_TEXT + 1) + "'", 1, 5, "text constants are limited to 1,000 characters"),
    ("x.data = w", 1, 1, "'.data' cannot be assigned"),
    ("x.data = x.data + 1", 1, 1, "'.data' cannot be assigned"),
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
    ("y = x.shape()", 1, 5, "'shape' is not a method: drop the ()"),
    ("y = torch.float32(x)", 1, 5, "torch.float32 is not a function"),
    ("y = x.sumx()", 1, 5, "tensors have no attribute 'sumx' (did you mean 'sum'?)"),
    (
        "y = x.grad.sum()",
        1,
        5,
        "methods can only be called on tensors, nn modules, optimizers, torch and F, not on None",
    ),
    ("y = x.max(dim=0).count", 1, 5, "not from a max"),
    ("y = x @ x @ w", 1, 5, "PyTorch says: "),
    ("y = x.view(7)", 1, 5, "PyTorch says: shape '[7]' is invalid for input of size 3"),
    ("y = 1 / 0", 1, 5, "Python says: division by zero"),
    ("a, b = x", 1, 1, "cannot unpack this value into 2 names"),
    ("len = 3", 1, 1, "'len' is a built-in name and cannot be assigned"),
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
    with pytest.raises(ScenarioError) as ours:
        parse(source, field="forward", mode="exec")
    assert ours.value.line == python.value.lineno
