"""Functions, classes, while, try, comprehensions and formatting in the checked language.

Each form is run by the evaluator and compared with the same code written here as plain
Python and PyTorch (never ``exec``); the hostile cases check that each new form keeps the wall:
no private name, no escape through a format string or a class, limits that no ``try`` catches.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from app.core.language.evaluator import Evaluator
from app.core.language.functions import MAX_CALL_DEPTH
from app.core.language.parsing import parse
from app.core.model.errors import ProgramError, ProgramRaised, RecordingTimeout
from app.core.model.graph import LoopMark
from app.core.model.program import CallKind
from app.core.sizing.limits import Limits

FIELD = "program"


def run(code: str, limits: Limits | None = None) -> tuple[dict[str, Any], list[str]]:
    env: dict[str, Any] = {}
    printed: list[str] = []

    class Hooks:
        def autograd_call(self, kind: CallKind, run: Callable[[], Any], *rest: Any) -> Any:
            return run()

        def statement_done(self, statement: ast.stmt, loops: tuple[LoopMark, ...]) -> None:
            pass

        def printed(self, text: str) -> None:
            printed.append(text)

    torch.manual_seed(0)
    Evaluator(env, field=FIELD, limits=limits, hooks=Hooks()).run(parse(code, field=FIELD, mode="exec"))
    return env, printed


def refusal(code: str, limits: Limits | None = None) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(code, limits)
    return info.value


# -- functions ------------------------------------------------------------------------------


def test_arguments_bind_as_python_binds_them() -> None:
    code = (
        "def f(a, b=2, *rest, scale=1.0, **kw):\n"
        "    return (a + b + sum(rest)) * scale + len(kw)\n"
        "out = [f(1), f(1, 3, 4, 5, scale=2.0), f(*[1, 2]), f(**{'a': 1, 'b': 1}), f(1, z=0)]\n"
    )

    def f(a: float, b: float = 2, *rest: float, scale: float = 1.0, **kw: Any) -> float:
        return (a + b + sum(rest)) * scale + len(kw)

    assert run(code)[0]["out"] == [
        f(1),
        f(1, 3, 4, 5, scale=2.0),
        f(*[1, 2]),
        f(**{"a": 1, "b": 1}),
        f(1, z=0),
    ]


def test_a_wrong_call_is_pythons_type_error_and_can_be_caught() -> None:
    code = "def f(a):\n    return a\ntry:\n    f()\nexcept TypeError as e:\n    said = str(e)\n"

    def f(a: int) -> int:
        return a

    with pytest.raises(TypeError) as info:
        f()  # type: ignore[call-arg]
    said = run(code)[0]["said"]
    assert said == "f() missing 1 required positional argument: 'a'" and str(info.value).endswith(said)


def test_closures_nonlocal_global_and_lambda() -> None:
    code = (
        "total = 0\n"
        "def counter():\n    n = 0\n"
        "    def inc(by=1):\n        nonlocal n\n        n += by\n        return n\n"
        "    return inc\n"
        "def add(v):\n    global total\n    total += v\n"
        "c = counter()\nc()\nc(5)\nadd(3)\nadd(4)\nsq = lambda t: t * t\nk = c(0)\ns = sq(3)\n"
    )
    env = run(code)[0]
    assert (env["k"], env["total"], env["s"]) == (6, 7, 9)


def test_a_local_read_before_it_is_bound_is_unbound_local_error() -> None:
    err = refusal("x = 1\ndef f():\n    y = x\n    x = 2\nf()\n")
    assert isinstance(err, ProgramRaised) and "cannot access local variable 'x'" in err.message
    assert err.line == 3


def test_recursion_works_and_has_a_depth_limit_no_try_catches() -> None:
    env = run("def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\nv = fact(10)\n")[0]
    assert env["v"] == 3628800
    err = refusal("def f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept Exception:\n    ok = 1\n")
    assert not isinstance(err, ProgramRaised)
    assert f"at most {MAX_CALL_DEPTH} deep" in err.message and err.message.endswith(
        "python -m app run SCRIPT.py"
    )


def test_a_no_grad_function_and_a_generator() -> None:
    code = (
        "import torch\nw = torch.ones(2, requires_grad=True)\n"
        "@torch.no_grad()\ndef score(x):\n    return (w * x).sum()\n"
        "def pairs(n):\n    for i in range(n):\n        yield i, i * i\n"
        "s = score(torch.ones(2))\np = list(pairs(3))\n"
    )
    env = run(code)[0]
    assert env["s"].requires_grad is False and env["s"].item() == 2.0
    assert env["p"] == [(0, 0), (1, 1), (2, 4)]


# -- classes ------------------------------------------------------------------------------------

NET = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super(Net, self).__init__()\n"
    "        self.fc1 = nn.Linear(3, 4)\n"
    "        self.heads = nn.ModuleDict({'a': nn.Linear(4, 2), 'b': nn.Linear(4, 2)})\n"
    "        self.scale = nn.Parameter(torch.full((2,), 0.5))\n"
    "        self.register_buffer('shift', torch.ones(2))\n"
    "    def forward(self, x):\n"
    "        h = F.relu(self.fc1(x))\n"
    "        return (self.heads['a'](h) + self.heads['b'](h)) * self.scale + self.shift\n"
    "torch.manual_seed(0)\nnet = Net()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    "x = torch.arange(6.).reshape(2, 3)\n"
    "for step in range(3):\n    opt.zero_grad()\n    loss = net(x).pow(2).mean()\n    loss.backward()\n"
    "    opt.step()\n"
    "names = [n for n, p in net.named_parameters()]\n"
)


class PlainNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 2)})
        self.scale = nn.Parameter(torch.full((2,), 0.5))
        self.register_buffer("shift", torch.ones(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        return (self.heads["a"](h) + self.heads["b"](h)) * self.scale + self.shift


def test_a_module_class_trains_as_pytorch_trains_it() -> None:
    env = run(NET)[0]
    torch.manual_seed(0)
    plain = PlainNet()
    opt = torch.optim.SGD(plain.parameters(), lr=0.1)
    x = torch.arange(6.0).reshape(2, 3)
    for _ in range(3):
        opt.zero_grad()
        loss = plain(x).pow(2).mean()
        loss.backward()
        opt.step()
    assert env["names"] == [n for n, _ in plain.named_parameters()]
    ours = dict(env["net"].named_tensors())
    for name, tensor in [*plain.named_parameters(), *plain.named_buffers()]:
        assert torch.equal(ours[name], tensor), name
    assert env["loss"].item() == loss.item()
    assert repr(env["net"]).replace("Net(", "PlainNet(", 1) == repr(plain)


def test_module_lists_sequential_and_a_plain_data_class() -> None:
    code = (
        "import torch.nn as nn\n"
        "class Cfg:\n    def __init__(self, depth=2):\n        self.depth = depth\n"
        "    def width(self):\n        return self.depth * 2\n"
        "class Stack(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
        "        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(cfg.depth)])\n"
        "        self.out = nn.Sequential(nn.Linear(4, cfg.width()), nn.Tanh())\n"
        "    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n"
        "        return self.out[1](self.out[0](x)), len(self.layers)\n"
        "y, n = Stack(Cfg(3))(torch.ones(1, 4))\nshape = list(y.shape)\n"
    )
    env = run(code)[0]
    assert (env["n"], env["shape"]) == (3, [1, 6])


def test_a_module_used_before_init_fails_as_pytorch_says() -> None:
    code = (
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n"
        "        self.fc = nn.Linear(1, 1)\nn = N()\n"
    )
    with pytest.raises(AttributeError) as info:

        class N(nn.Module):
            def __init__(self) -> None:
                self.fc = nn.Linear(1, 1)

        N()
    err = refusal(code)
    assert isinstance(err, ProgramRaised) and str(info.value) in err.message and err.line == 4


# -- statements and expressions -------------------------------------------------------------------


def test_while_comprehensions_try_and_formatting_as_python() -> None:
    code = (
        "i = 0\nwhile i < 5:\n    i += 1\n    if i == 4:\n        break\nelse:\n    i = -1\n"
        "sq = [v * v for v in range(6) if v % 2]\nd = {k: v for k, v in zip('ab', [1, 2])}\n"
        "s = {v % 3 for v in range(7)}\ng = sum(v for v in range(4))\na, *rest = [1, 2, 3]\n"
        "order = []\ntry:\n    order.append('try')\n    [1][2]\nexcept IndexError as e:\n"
        "    order.append(str(e))\nelse:\n    order.append('else')\nfinally:\n    order.append('finally')\n"
        "text = '%5.2f|%d' % (3.14159, 7) + ' {} {:.1f} {name}'.format(1, 2.25, name='n') + f' {i:>3}'\n"
        "has = 2 in [1, 2] and 'c' not in d\n"
    )
    env = run(code)[0]
    order: list[str] = []
    try:
        order.append("try")
        one = [1]
        order.append(one[2])
    except IndexError as e:
        order.append(str(e))
    else:
        order.append("else")
    finally:
        order.append("finally")
    assert env["i"] == 4
    assert (env["sq"], env["d"], env["s"], env["g"]) == ([1, 9, 25], {"a": 1, "b": 2}, {0, 1, 2}, 6)
    assert (env["a"], env["rest"], env["order"]) == (1, [2, 3], order)
    assert (
        env["text"] == "%5.2f|%d" % (3.14159, 7) + " {} {:.1f} {name}".format(1, 2.25, name="n") + f" {4:>3}"  # noqa: UP031
    )
    assert env["has"] is True


def test_an_uncaught_raise_and_a_failed_assert_end_the_program_at_their_line() -> None:
    err = refusal("x = 1\nraise ValueError('bad shape')\n")
    assert isinstance(err, ProgramRaised) and (err.line, err.message) == (2, "ValueError: bad shape")
    err = refusal("x = 1\n\nassert x == 2, f'x is {x}'\n")
    assert isinstance(err, ProgramRaised) and (err.line, err.message) == (3, "AssertionError: x is 1")


def test_a_pytorch_error_is_caught_by_its_python_class() -> None:
    code = (
        "import torch\ntry:\n    torch.ones(2) @ torch.ones(3)\n"
        "except RuntimeError as e:\n    said = str(e)\n"
    )
    with pytest.raises(RuntimeError) as info:
        torch.ones(2) @ torch.ones(3)
    assert run(code)[0]["said"] == str(info.value).splitlines()[0]


# -- the wall holds ---------------------------------------------------------------------------------

ESCAPES = [
    ("def f():\n    return f.__globals__\n", "attribute '__globals__' is private"),
    ("f = lambda: 0\ng = f.__code__\n", "attribute '__code__' is private"),
    ("def f():\n    pass\nc = f.__closure__\n", "attribute '__closure__' is private"),
    ("class A:\n    pass\nb = A.__bases__\n", "attribute '__bases__' is private"),
    ("class A:\n    pass\nm = A.__mro__\n", "attribute '__mro__' is private"),
    ("class A:\n    def __getattr__(self, n):\n        return 1\n", "name '__getattr__' is private"),
    ("class A:\n    def __del__(self):\n        pass\n", "name '__del__' is private"),
    ("class A:\n    __x = 1\n", "name '__x' is private"),
    ("class A(metaclass=type):\n    pass\n", "no keywords such as metaclass="),
    ("x = super().__class__\n", "attribute '__class__' is private"),
    ("t = type(print)\n", "type(...) names the types"),
    ("g = globals()\n", "'globals' is not available"),
    ("v = vars()\n", "'vars' is not available"),
    ("d = dir()\n", "'dir' is not available"),
    ("setattr(1, 'a', 2)\n", "'setattr' is not available"),
    ("s = '{0.__class__}'.format(1)\n", "a format field here names an argument"),
    ("s = '{0[0]}'.format([1])\n", "a format field here names an argument"),
    ("s = '{:{w}}'.format(1, w=10**9)\n", "a format field here names an argument"),
    ("s = '%*d' % (10**9, 1)\n", "% formats here take widths and precisions written out"),
    ("s = '{:>1000000}'.format(1)\n", "widths and precisions are limited to 100"),
    ("def f(**kw):\n    pass\nf(**{'__class__': 1})\n", "keyword '__class__' is private"),
    (
        "import torch\nclass M(torch.nn.Module):\n    pass\nm = M()\nm.forward = 1\n",
        "'forward' cannot be assigned",
    ),
    ("import torch\nclass M(torch.nn.Module):\n    pass\nm = M()\nm.lens_proxy = 1\n", "cannot be assigned"),
    (
        "import torch\nclass M(torch.nn.Module):\n    pass\nk = M().lens_proxy\n",
        "'lens_proxy' is not available",
    ),
    (
        "import torch\nclass M(torch.nn.Module):\n    pass\nk = M().register_forward_hook(torch.relu)\n",
        "takes a function the program defines",
    ),
    ("e = ValueError('a')\nt = e.__traceback__\n", "attribute '__traceback__' is private"),
    (
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    f = e.with_traceback\n",
        "'with_traceback' is not available",
    ),
]


@pytest.mark.parametrize(("code", "words"), ESCAPES, ids=[c[0][:40] for c in ESCAPES])
def test_new_forms_reach_nothing_private(code: str, words: str) -> None:
    err = refusal(code)
    assert words in err.message, err.message
    assert err.line is not None and err.col is not None


SMALL = Limits(max_iterations=100, max_statements=5_000)

BOMBS = [
    ("y = [i for i in range(10**9)]\n", "this loop ran 100 times"),
    ("y = [[j for j in range(99)] for i in range(99)]\n", "the program ran 5,000 statements"),
    ("y = {i: i for i in range(10**6)}\n", "this loop ran 100 times"),
    ("class A:\n    for i in range(10**6):\n        x = i\n", "this loop ran 100 times"),
    ("def f():\n    while True:\n        pass\nf()\n", "this loop ran 100 times"),
    (
        "i = 0\nwhile True:\n    try:\n        i += 1\n    except Exception:\n        pass\n",
        "this loop ran 100 times",
    ),
    (
        "for i in range(99):\n    for j in range(99):\n"
        "        try:\n            x = 1\n        finally:\n            y = 2\n",
        "the program ran 5,000 statements",
    ),
    (
        "import torch\ndef big():\n    return torch.ones(10**5, 10**5)\n"
        "try:\n    big()\nexcept Exception:\n    x = 1\n",
        "elements",
    ),
    (
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = torch.nn.Parameter(torch.ones(10**9))\nm = M()\n",
        "elements",
    ),
    ("def f():\n    yield from range(10**9)\nx = list(f())\n", "this loop ran 100 times"),
]


@pytest.mark.parametrize(("code", "words"), BOMBS, ids=[c[0][:40] for c in BOMBS])
def test_bombs_in_new_forms_stop_at_a_limit_no_handler_catches(code: str, words: str) -> None:
    err = refusal(code, SMALL)
    assert not isinstance(err, ProgramRaised), err.message  # a limit, not an error a try could catch
    assert words in err.message, err.message


def test_no_finally_block_runs_after_a_limit() -> None:
    printed: list[str] = []
    code = "try:\n    while True:\n        pass\nfinally:\n    print('after')\n"
    with pytest.raises(ProgramError):
        env: dict[str, Any] = {}

        class Hooks:
            def autograd_call(self, *args: Any) -> Any:
                raise AssertionError

            def statement_done(self, *args: Any) -> None:
                pass

            def printed(self, text: str) -> None:
                printed.append(text)

        Evaluator(env, field=FIELD, limits=SMALL, hooks=Hooks()).run(parse(code, field=FIELD, mode="exec"))
    assert printed == []


def test_a_handler_cannot_catch_the_time_limit() -> None:
    code = "try:\n    for i in range(10):\n        x = i\nexcept Exception:\n    caught = 1\n"
    with pytest.raises(RecordingTimeout):
        Evaluator({}, field=FIELD, deadline=0.0).run(parse(code, field=FIELD, mode="exec"))


CUSTOM = (
    "import torch\n"
    "class Square(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n"
    "        return x * x\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad):\n"
    "        (x,) = ctx.saved_tensors\n"
    "{body}"
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "y = Square.apply(x)\n"
    "name = 'done'\n"
    "try:\n    y.sum().backward()\nexcept Exception:\n    name = 'caught'\n"
)


def test_a_custom_autograd_function_is_a_node_like_any_other() -> None:
    env = run(CUSTOM.format(body="        return 2 * x * grad\n"))[0]

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    y.sum().backward()
    assert torch.equal(env["x"].grad, x.grad)
    assert type(env["y"].grad_fn).__name__ == type(y.grad_fn).__name__ == "SquareBackward"


def test_a_custom_backward_that_never_returns_stops_at_a_limit_no_try_catches() -> None:
    err = refusal(CUSTOM.format(body="        while True:\n            pass\n"), SMALL)
    assert not isinstance(err, ProgramRaised) and "this loop ran 100 times" in err.message
    assert err.line == 10
