"""Programs in the checked language: statements, loops, autograd calls and objects.

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
from app.core.language.objects import Checked
from app.core.language.parsing import assigned_names, free_names, parse
from app.core.language.whitelist import PRINT_LIMIT, build_namespaces
from app.core.model.errors import ProgramError, ScenarioError
from app.core.model.graph import LoopMark
from app.core.sizing.limits import Limits

FIELD = "program"
RUN_HINT = "to record a script of your own with full Python, run: python -m app run SCRIPT.py"


def leaves() -> dict[str, Any]:
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
    env = leaves() if env is None else env
    Evaluator(env, field=FIELD, hooks=hooks, limits=limits).run(parse(code, field=FIELD, mode="exec"))
    return env


def plain(code: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
    """The same program as plain Python, with what a program starts with bound (trusted test code)."""
    names = leaves() if env is None else env
    names.update(torch=torch, F=F, nn=torch.nn, optim=torch.optim)
    exec(compile(code, "<program>", "exec"), names)
    return names


def refusal(code: str, **kwargs: Any) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
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
    assert refusal("del a").message == "name 'a' is not defined"


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
    return leaves()["w"].detach()


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
    err = refusal(code)
    assert isinstance(err, ProgramError)
    assert (err.field, err.line, err.col) == (FIELD, 3, 1)
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
    err = refusal("y = 0\nfor i in range(10**12):\n    y = y + 1", limits=Limits(max_iterations=50))
    assert (err.line, err.col) == (2, 1)
    assert err.message == "this loop ran 50 times; the limit is 50"
    ours("for i in range(50):\n    pass", limits=Limits(max_iterations=50))  # exactly the limit: fine


def test_the_default_loop_limit_is_ten_thousand() -> None:
    err = refusal("for i in range(20000):\n    pass")
    assert err.message == "this loop ran 10,000 times; the limit is 10,000"


def test_a_program_stops_at_its_statement_limit_naming_the_line() -> None:
    code = "n = 0\nfor i in range(100):\n    for j in range(100):\n        n += 1"
    err = refusal(code, limits=Limits(max_statements=1000))
    assert err.message == "the program ran 1,000 statements; the limit is 1,000"
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
    started = time.monotonic()
    err = refusal(code)
    assert time.monotonic() - started < 5
    assert "items at once; the limit is 1,000,000" in err.message
    assert (err.line, err.col) == (1, 5)


def test_lists_grown_by_append_stay_bounded_and_cannot_hold_themselves() -> None:
    err = refusal("a = [0] * 999999\na.append(1)\na.append([1, 2])")
    assert (err.line, err.message) == (3, "this would hold 1,000,002 items; the limit is 1,000,000")
    assert refusal("a = []\nb = [a]\na.append(b)").message == "a list cannot hold itself"
    assert refusal("a = [1]\na[0] = a").message == "a list cannot hold itself"


def test_a_list_used_as_a_queue_keeps_its_true_size() -> None:
    """Items that come out are counted out: 3,000 pairs in and out never near the limit."""
    code = "q = [0] * 999000\nfor i in range(3000):\n    q.append([i, i])\n    del q[-1]\n    q[0] = i\n"
    assert len(ours(code)["q"]) == 999000


def test_lists_sharing_their_parts_are_counted_with_every_share() -> None:
    started = time.monotonic()
    err = refusal("x = []\nfor i in range(100):\n    x.append(x[:])")
    assert (err.line, err.message) == (3, "this would hold 1,048,576 items; the limit is 1,000,000")
    err = refusal("a = [[]] * 1000\nb = [a] * 1000\nc = [b] * 1000")
    assert (err.line, err.message) == (
        3,
        "this would build a sequence of 1,000,000,000 items; the limit is 1,000,000",
    )
    assert time.monotonic() - started < 5


def test_big_lists_a_loop_lets_go_of_are_not_kept_alive() -> None:
    made: list[weakref.ref[torch.Tensor]] = []

    def on_value(node: ast.AST, value: Any) -> None:
        if isinstance(node, ast.BinOp):
            made.append(weakref.ref(value))

    code = "for i in range(3000):\n    row = [w * 1] * 300"
    Evaluator(leaves(), field=FIELD, on_value=on_value).run(parse(code, field=FIELD, mode="exec"))
    gc.collect()
    assert len(made) == 3000
    assert sum(ref() is not None for ref in made) < 2100  # swept as the cache doubles


def test_the_deadline_still_stops_a_loop() -> None:
    env = leaves()
    evaluator = Evaluator(env, field=FIELD, deadline=time.monotonic() - 1)
    with pytest.raises(ScenarioError, match="was stopped"):
        evaluator.run(parse("for i in range(5):\n    pass", field=FIELD, mode="exec"))


# -- grad mode is restored ----------------------------------------------------------------


def test_no_grad_is_restored_after_an_error_inside_it() -> None:
    assert torch.is_grad_enabled()
    err = refusal("with torch.no_grad():\n    y = w.view(7)")
    assert err.line == 2 and torch.is_grad_enabled()
    with torch.no_grad():
        refusal("with torch.enable_grad():\n    for i in range(3):\n        y = w.view(7)")
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_break_out_of_no_grad_restores_grad_mode() -> None:
    env = ours("for i in range(3):\n    with torch.no_grad():\n        a = w * 2\n        break\nb = w * 2")
    assert not env["a"].requires_grad and env["b"].requires_grad and torch.is_grad_enabled()


# -- in-place changes and PyTorch's own errors ---------------------------------------------


def test_in_place_change_of_a_leaf_gives_pytorchs_error_at_its_line() -> None:
    err = refusal("y = w * 2\nw += 1")
    assert (err.line, err.col) == (2, 1)
    assert err.message.startswith(
        "PyTorch says: a leaf Variable that requires grad is being used in an in-place operation."
    )


def test_an_item_write_on_a_saved_output_gives_the_version_error_on_backward() -> None:
    code = "a = w * 1\nb = a.sigmoid()\nb[1] = 2.0\nb.sum().backward()"
    with pytest.raises(RuntimeError) as plain_error:
        plain(code)
    err = refusal(code)
    assert (err.line, err.message) == (4, "PyTorch says: " + str(plain_error.value).splitlines()[0])


def test_an_error_deep_in_blocks_is_placed_in_characters() -> None:
    err = refusal("for é in range(2):\n    if é == 1:\n        ö = 'é' + é")
    assert (err.field, err.line, err.col) == (FIELD, 3, 13)
    assert err.message == 'Python says: can only concatenate str (not "int") to str'


def test_tensor_attributes_that_can_be_assigned() -> None:
    assert refusal("w.data = v").message.startswith("'.data' cannot be assigned")
    assert (
        refusal("w.shape = 3").message
        == "on a tensor only .grad and .requires_grad can be assigned, not .shape"
    )
    assert refusal("a = 1\na.real = 3").message == "attributes cannot be assigned on an int"
    assert refusal("(w * 2).requires_grad = False").message.startswith("PyTorch says: you can only change")


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("a = w.new_empty(3)", "it holds whatever was in memory"),
        ("h = w.register_hook(print)", "it would run Python code of its own"),
        ("a = (w * 2).grad_fn", "grad_fn objects are not values"),
        ("a = w.backward", "'backward' is a method: call it"),
        ("a = torch.autograd.grad", "torch.autograd.grad is a function: call it"),
        ("a = torch.no_grad", "is used as with torch.no_grad():"),
        ("a = torch.no_grad()", "is used only as with torch.no_grad():"),
        ("with torch.ones(2):\n    pass", "only with torch.no_grad(): and with torch.enable_grad():"),
        ("with torch.no_grad(1):\n    pass", "takes nothing here"),
        ("a = [1]\nb = a.sort()", "'sort' is not a method programs call on a list; they call append"),
        ("a = []\nb = a.append", "'append' is a method: call it"),
        ("a = (1, 2)\na[0] = 3", "items can be assigned in tensors and lists, not in a tuple"),
        ("for m in torch:\n    pass", "a for loop cannot go over a module"),
        ("for i in 5:\n    pass", "Python says: 'int' object is not iterable"),
        ("a, b = range(10**20)", "cannot unpack this value into 2 names"),
        ("a = sum([[1], [2]], [])", "sum() adds numbers and tensors here; join lists with +"),
        ("print(w, file=1)", "print() writes to the program's output only"),
        ("a = [1, 2]\na[0:1] = [3]", "list items are assigned one at a time"),
        ("del w[0]", "items can be deleted from lists only, not from a tensor"),
        ("for a, b in zip([1], [2, 3], strict=True):\n    pass", "Python says: zip() argument 2 is longer"),
    ],
)
def test_refused_or_failing_at_run_time(code: str, words: str) -> None:
    assert words in refusal(code).message


# -- refused before running, with the way to record one's own script -----------------------

HINTED = [
    ("y = 1\n\n@property\ndef f(a):\n    return a", 3, 2, "the decorators programs take are"),
    ("import numpy.linalg as la", 1, 1, "'numpy.linalg' cannot be imported"),
    ("y = 1\nfrom os import path", 2, 1, "'os' cannot be imported"),
    ("import torchvision", 1, 1, "'torchvision' cannot be imported"),
    ("from torch.utils.data import Dataset", 1, 1, "torch.utils.data.Dataset is not available in programs"),
    ("from . import x", 1, 1, "'.' cannot be imported"),
]


@pytest.mark.parametrize(("code", "line", "col", "words"), HINTED, ids=[h[3][:24] for h in HINTED])
def test_refusals_say_how_to_record_a_script_of_ones_own(code: str, line: int, col: int, words: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse(code, field=FIELD, mode="exec")
    err = info.value
    assert (err.field, err.line, err.col) == (FIELD, line, col)
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
    ("import torch.nn as F", 1, 1, "'F' is a built-in name: this import would replace it"),
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
    ("w._version += 1", 1, 1, "attribute '_version' is private"),
    ("del w._version", 1, 5, "only names and items (del a[0]) can be deleted"),
    ("y = getattr(w, 'grad')", 1, 5, "'getattr' is not available in programs"),
    ("for open in range(2):\n    pass", 1, 5, "'open' is not available in programs"),
    ("for print in range(2):\n    pass", 1, 5, "'print' is a built-in name and cannot be assigned"),
    ("torch.autograd.grad = 1", 1, 1, "torch.autograd.grad cannot be assigned"),
    ("print(f'{w:>999999999}')", 1, 7, "f-string widths and precisions are limited to 100"),
    ("print(f'{w:.{2}f}')", 1, 7, "a format spec is written out in f-strings here"),
    ("print(f'{w:%%}')", 1, 7, "'%%' is not a format spec f-strings take here"),
]


@pytest.mark.parametrize(("code", "line", "col", "words"), REFUSED, ids=[r[0][:24] for r in REFUSED])
def test_refused_before_running(code: str, line: int, col: int, words: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse(code, field=FIELD, mode="exec")
    err = info.value
    assert (err.field, err.line, err.col) == (FIELD, line, col), err
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
    err = refusal(code, env={"toy": Toy(), "v": torch.ones(2)})
    assert message in err.message and err.line is not None


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("a = lin.state_dict()", "'state_dict' is not available on an nn.Linear module"),
        ("lin.load_state_dict(1)", "'load_state_dict' is not available on an nn.Linear module"),
        ("h = lin.register_forward_hook(print)", "'register_forward_hook' is not available on an nn.Linear"),
        ("lin.apply(print)", "'apply' is not available on an nn.Linear module"),
        ("lin.to('meta')", "so an nn.Linear module cannot move to meta"),
        ("g = opt.param_groups[0].state", "'state' is not available on a parameter group"),
        ("opt.step(print)", "step() takes no closure in programs"),
        ("lin.weight = lin.bias", "'weight' cannot be assigned on an nn.Linear module"),
    ],
)
def test_real_modules_and_optimizers_keep_hooks_state_and_closures_out(code: str, message: str) -> None:
    start = "lin = nn.Linear(2, 2)\nopt = optim.SGD(lin.parameters(), lr=0.1)\n"
    err = refusal(start + code)
    assert message in err.message and err.line == 3


@pytest.mark.parametrize("name", ["_modules", "__dict__", "__class__", "_parameters", "__init__"])
def test_private_members_never_reach_a_proxy(name: str) -> None:
    toy = Toy()
    for code in (f"a = toy.{name}", f"a = toy.{name}()", f"toy.{name} = 1", f"toy.{name} += 1"):
        with pytest.raises(ScenarioError, match="is private"):
            parse(code, field=FIELD, mode="exec")
        tree = ast.parse(code)  # past the static checks: the evaluator checks again
        with pytest.raises(ScenarioError, match="is private"):
            Evaluator({"toy": toy}, field=FIELD).run(tree)
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
    except ScenarioError as err:
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
        mine, theirs = leaves(), leaves()
        assert outcome(lambda: ours(code, mine)) == outcome(lambda: plain(code, theirs)), code
        for name in ("w", "a", "total", "s", "k0", "k1"):
            assert (name in mine) == (name in theirs), (code, name)
            assert name not in mine or same(mine[name], theirs[name]), (code, name)

    check()
