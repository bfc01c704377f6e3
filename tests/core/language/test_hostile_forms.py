"""Ordinary programs, mistakes included, never meet an internal error.

A beginner's module without ``super().__init__()``, a custom ``Function`` whose backward raises,
objects pointing at each other or chained hundreds deep: each is recorded (PyTorch's own error at
its line, or the call's error step) or refused at its line, and nothing else escapes. A fuzzer
puts the language's forms together at random and asserts the same of every program it makes.
"""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from app.core import record
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.sizing.limits import Limits
from tests.support.oracle import check_against_plain, run_plainly

NO_SUPER = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        self.lin = nn.Linear(2, 2)
net = Net()
"""

RAISING_BACKWARD = """import torch
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom")
x = torch.ones(2, requires_grad=True)
y = Double.apply(x).sum()
y.backward()
"""


def outcome(code: str) -> Recording | ProgramError:
    """The recording, or the refusal; any other exception fails the test that asked."""
    try:
        return record(Program(code, name="forms"))
    except ProgramError as exc:
        return exc


def test_a_module_without_super_init_gets_pytorchs_own_error() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            self.lin = nn.Linear(2, 2)  # the same mistake in plain PyTorch

    try:
        Net()
    except AttributeError as exc:
        said = str(exc)
    rec = outcome(NO_SUPER)
    assert isinstance(rec, Recording) and rec.error_line == 5
    assert rec.error is not None and rec.error.endswith(said)


def test_a_function_whose_backward_raises_ends_its_call_with_that_error() -> None:
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @staticmethod
        def backward(ctx: object, g: torch.Tensor) -> torch.Tensor:
            raise ValueError("boom")

    try:
        Double.apply(torch.ones(2, requires_grad=True)).sum().backward()
    except ValueError as exc:
        said = f"ValueError: {exc}"
    rec = outcome(RAISING_BACKWARD)
    assert isinstance(rec, Recording) and rec.failed is not None
    assert rec.failed.error == said and rec.failed.call.line == 11


CHAIN = """import torch
class Link:
    def __init__(self, nxt):
        self.nxt = nxt
        self.w = torch.ones(2, requires_grad=True)
head = None
for i in range({n}):
    head = Link(head)
{cycle}x = torch.ones(2, requires_grad=True)
y = (x * head.w).sum()
y.backward()
"""


def test_objects_chained_deep_or_pointing_at_each_other_are_recorded() -> None:
    for n, cycle in ((500, ""), (2, "head.nxt.nxt = head\n"), (300, "head.nxt.nxt.nxt = head\n")):
        rec = outcome(CHAIN.format(n=n, cycle=cycle))
        assert isinstance(rec, Recording) and rec.error is None, rec
        ends = [step for step in rec.timeline.steps if step.kind == "call_end"]
        assert len(ends) == 1 and rec.failed is None


# -- the fuzzer ----------------------------------------------------------------------------------

CLASSES = (
    "class A:\n    def __init__(self, o):\n        self.o = o\n"
    "class Lazy(nn.Module):\n    def __init__(self):\n        self.l = nn.Linear(2, 2)\n"
    "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.l = nn.Linear(2, 2)\n"
    "    def forward(self, v):\n        return self.l(v)\n"
    "class Fn(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, v):\n        return v * 3\n"
    "    @staticmethod\n    def backward(ctx, g):\n        raise RuntimeError('no')\n"
)
FORMS = [  # each after the classes and x = torch.ones(2, requires_grad=True)
    "a = A(None)\nb = A(a)\na.o = b\n",
    "c = None\nfor i in range(400):\n    c = A(c)\n",
    "lazy = Lazy()\n",
    "m = M()\ny = m(x).sum()\n",
    "s = nn.Sequential(nn.Linear(2, 2))\nfor i in range(300):\n    s = nn.Sequential(s)\ny = s(x).sum()\n",
    "y = Fn.apply(x).sum()\n",
    "y = (x * 2).sum()\n",
    "t = '%(a(b))5s' % {'a(b)': 1}\n",
    "try:\n    y.backward()\nexcept RuntimeError as e:\n    print(e)\n",
]


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FORMS), min_size=1, max_size=5))
def test_no_program_of_the_languages_forms_meets_an_internal_error(forms: list[str]) -> None:
    code = "import torch\nimport torch.nn as nn\n" + CLASSES + "x = torch.ones(2, requires_grad=True)\n"
    code += "y = (x * 2).sum()\n" + "".join(forms) + "y.backward()\n"
    assert isinstance(outcome(code), Recording | ProgramError)


def test_two_thousand_nested_sequentials_get_pytorchs_own_error() -> None:
    """Naming a module's leaves after each statement walked torch's recursion once per level for
    every module: minutes for this chain, stopped at the time limit. Plain PyTorch passes Python's
    recursion limit calling it; the recording says so at that line."""
    nested: nn.Module = nn.Linear(2, 2)
    for _ in range(2000):
        nested = nn.Sequential(nested)
    try:
        nested(torch.ones(2))
    except RecursionError as exc:
        said = str(exc)
    code = (
        "import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2)\nfor i in range(2000):\n"
        "    m = nn.Sequential(m)\ny = m(torch.ones(2)).sum()\ny.backward()\n"
    )
    # Alone it records in about 20 s; two test workers on two cores stretch that past the default
    # 30 s limit. The walk this guards against took minutes.
    try:
        rec: Recording | ProgramError = record(Program(code, name="forms"), limits=Limits(time_limit_s=120.0))
    except ProgramError as exc:
        rec = exc
    assert isinstance(rec, Recording) and rec.error_line == 6
    assert rec.error is not None and said.startswith(rec.error.removeprefix("PyTorch says: "))


def test_a_function_whose_backward_returns_a_meta_tensor_ends_its_call() -> None:
    code = RAISING_BACKWARD.replace('raise ValueError("boom")', 'return torch.zeros(2, device="meta")')
    rec = outcome(code)
    assert isinstance(rec, Recording) and rec.failed is not None
    assert rec.failed.call.line == 11 and "meta" in (rec.failed.error or "")


def test_an_unhashable_dict_key_is_pythons_own_error_at_its_line() -> None:
    code = "import torch\nd = {0: None}\nd[{0: 0}] = torch.ones(2)\n"
    recording = record(Program(code, name="unhashable"))
    check_against_plain(recording, run_plainly(code))  # TypeError: unhashable type: 'dict', line 3
