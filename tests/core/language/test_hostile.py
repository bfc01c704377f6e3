"""Hostile and broken programs, each with its exact outcome.

A program file is untrusted input. Each case below is a whole file (TOML
text: a ``[program]``, or the older ``[inputs]``/``[forward]``/``[[calls]]``
shape, which loads as program text) and ends in exactly one of three ways:

- ``Refused``: a ProgramError, raised when the file is loaded or when it is
  recorded, naming the field, line and column, with a message for a learner.
  Static checks of an older file name its fields (``forward.code``); what is
  refused while it runs names its place in the program text it became
  (``program, line N``). Everything that guards the machine (private members,
  files, imports, hooks, sizes, loop and statement limits) is a refusal;
- ``TorchRefuses``: PyTorch itself refuses at backward time; the recording is
  kept and the call ends in an ``error`` step whose text is PyTorch's own
  message, taken from the same thing done in plain PyTorch;
- ``ProgramFails``: the program's own code raised (PyTorch or Python said
  no outside an autograd call); the recording is kept and ends with an
  ``error`` step at that line, as Python would end the program.

Sentinels stand in for files, processes, sockets, serialisation and for
eval/exec/import from our own code: no case may reach any of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from app.core import Limits, ProgramError, Recording, record
from app.core.language.evaluator import Evaluator
from app.core.language.hints import with_run_hint
from app.core.language.parsing import parse
from app.core.loading import parse_python
from app.core.model.errors import ProgramRaised, RecordingTimeout
from app.core.sizing.guard import SizeGuard
from tests.support.hostile_cases import (
    APP_DIR,
    BOMB_LIMITS,
    CASES,
    LEAF,
    Case,
    ProgramFails,
    Refused,
    Sentinel,
    TorchRefuses,
    _from_app_only,
    case_params,
    install_sentinels,
    outcome,
    plain_error,
    warm_up,
)
from tests.support.oracle import check_against_plain


def test_there_are_at_least_a_hundred_cases_with_distinct_names() -> None:
    assert len(CASES) >= 100
    assert len({c.id for c in CASES}) == len(CASES)
    assert {type(c.expect) for c in CASES} == {Refused, TorchRefuses, ProgramFails}


@pytest.fixture(scope="module")
def warmed() -> None:
    warm_up()


@pytest.fixture
def sentinels(warmed: None, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return install_sentinels(monkeypatch)


@pytest.mark.parametrize("case", case_params(CASES))
def test_hostile_case_has_its_exact_outcome(case: Case, sentinels: list[str]) -> None:
    result = outcome(case)
    expect = case.expect
    if isinstance(expect, Refused):
        assert isinstance(result, ProgramError), f"expected a refusal, got a recording: {result}"
        assert (result.stage, result.field, result.line, result.col) == (  # type: ignore[attr-defined]
            expect.stage,
            expect.field,
            expect.line,
            expect.col,
        ), str(result)
        assert expect.words in result.message, result.message
        assert isinstance(result, RecordingTimeout) == expect.timeout
        assert not isinstance(result, ProgramRaised), "a refusal, not the program's own error"
        assert "\n" not in str(result)
    elif isinstance(expect, ProgramFails):
        assert isinstance(result, Recording), f"expected a recording, got: {result}"
        assert result.error is not None and expect.words in result.error, result.error
        if expect.plain is not None:
            assert plain_error(expect.plain) in result.error
        assert result.error_line == expect.line and result.failed is None
        last = result.timeline.steps[-1]
        assert (last.kind, last.call, last.line, last.error) == ("error", None, expect.line, result.error)
    else:
        assert isinstance(result, Recording), f"expected a recording, got: {result}"
        message = plain_error(expect.plain)
        failed = result.calls[expect.call]
        assert failed.error == message
        assert result.failed is failed
        last = result.timeline.steps[failed.last_step]
        assert (last.kind, last.call, last.error) == ("error", expect.call, message)
    assert sentinels == []


def test_the_sentinels_do_fire() -> None:
    """The sentinel fixture is only worth something if it catches a real call."""
    hits: list[str] = []
    guarded = _from_app_only(eval, "eval", hits)
    code = compile("guarded('1')", os.path.join(APP_DIR, "fake.py"), "eval")
    with pytest.raises(Sentinel):
        eval(code, {"guarded": guarded})
    assert hits == [f"eval from {os.path.join(APP_DIR, 'fake.py')}"]


# -- the size guard on its own -------------------------------------------------------


def guarded_run(fn: Callable[[], object], limits: Limits | None = None) -> ProgramError:
    with pytest.raises(ProgramError) as info, SizeGuard(limits or Limits()):
        fn()
    return info.value


def test_meta_prediction_does_not_consume_random_numbers() -> None:
    torch.manual_seed(0)
    expected = torch.randn(3), F.dropout(torch.ones(4), 0.5)
    env: dict[str, Any] = {}
    code = "s = torch.manual_seed(0)\na = torch.randn(3)\nb = F.dropout(torch.ones(4), 0.5)"
    Evaluator(env, field="forward.code").run(parse(code, field="forward.code", mode="exec"))
    assert torch.equal(env["a"], expected[0]) and torch.equal(env["b"], expected[1])


def test_an_explicit_device_cannot_dodge_the_meta_prediction() -> None:
    for device in ("cpu", torch.device("cpu")):
        err = guarded_run(lambda d=device: torch.empty(10**12, device=d))  # type: ignore[misc]
        assert err.message == with_run_hint(
            "this would make a tensor of 1,000,000,000,000 elements; the limit is 10,000,000"
        )


def test_views_count_their_elements_even_without_storage() -> None:
    err = guarded_run(lambda: torch.ones(1).expand(10**4, 10**4).sum())
    assert "100,000,000 elements" in err.message


def test_value_dependent_sizes_are_bounded_from_the_real_inputs() -> None:
    small = Limits(max_elements=100)
    with SizeGuard(small):
        assert torch.tensor([3, 5]).bincount().tolist() == [0, 0, 0, 1, 0, 1]
    assert "101 elements" in guarded_run(lambda: torch.tensor([100]).bincount(), small).message
    mask = torch.ones(200, dtype=torch.bool)
    assert "200 elements" in guarded_run(lambda: torch.ones(200)[mask], small).message


def test_work_counts_every_op_of_one_call() -> None:
    limits = Limits(max_work=10**7)
    with SizeGuard(limits):
        torch.ones(100, 100) @ torch.ones(100, 100)  # 10**6 multiply-adds
    err = guarded_run(lambda: torch.ones(100, 100).matrix_power(2**20), limits)
    assert "operations; the limit is 10,000,000" in err.message


def test_the_budget_is_shared_when_one_is_passed() -> None:
    from app.core.sizing.limits import Budget

    budget = Budget(1_000)
    for _ in range(2):
        with SizeGuard(Limits(), budget):
            torch.ones(400)
    with pytest.raises(ProgramError) as info, SizeGuard(Limits(), budget):
        torch.ones(400)
    assert "1,200 tensor elements" in info.value.message


# -- a program leaves nothing behind: grad mode, the random stream ---------------------------

NO_GRAD_FAILURES = {
    "its own error": "with torch.no_grad():\n    x = torch.tensor([1, 2], requires_grad=True)\n",
    "a refusal": "with torch.no_grad():\n    x = torch.ones(10**12)\n",
    "a failing backward": "x = torch.ones(2, requires_grad=True)\n"
    "with torch.no_grad():\n    x.sum().backward()\n",
    "nested grad modes": "with torch.no_grad():\n    with torch.enable_grad():\n"
    "        with torch.no_grad():\n            y = torch.tensor([1, 2], requires_grad=True)\n",
    "a loop bomb": "with torch.no_grad():\n    for i in range(10**9):\n        pass\n",
}


def record_text(code: str, limits: Limits | None = None) -> Recording | ProgramError:
    try:
        return record(parse_python("import torch\n" + code), limits=limits or Limits())
    except ProgramError as err:
        return err


@pytest.mark.parametrize("code", NO_GRAD_FAILURES.values(), ids=list(NO_GRAD_FAILURES))
@pytest.mark.parametrize("caller_grad", [True, False])
def test_grad_mode_is_the_callers_after_a_program_fails_inside_no_grad(code: str, caller_grad: bool) -> None:
    with torch.set_grad_enabled(caller_grad):
        result = record_text(code, BOMB_LIMITS)  # the bomb stops at its count, not the clock
        assert torch.is_grad_enabled() == caller_grad
    assert torch.is_grad_enabled()
    failed = isinstance(result, ProgramError) or result.error is not None or result.failed is not None
    assert failed, result


def test_a_program_records_with_grad_on_even_when_the_caller_turned_it_off() -> None:
    with torch.no_grad():
        rec = record_text("x = torch.ones(2, requires_grad=True)\ny = x.exp()\ny.sum().backward()\n")
    assert isinstance(rec, Recording) and rec.failed is None
    assert [n.name for n in rec.graph.nodes if n.name == "ExpBackward0"] == ["ExpBackward0"]


SEEDED = "torch.manual_seed(5)\na = torch.randn(3)\nprint(a)\n"


def test_a_seed_set_by_the_program_does_not_leak_to_the_caller() -> None:
    torch.manual_seed(1234)
    before = torch.random.get_rng_state()
    rec = record_text(SEEDED + "b = torch.randn(1000)\n")
    assert isinstance(rec, Recording) and rec.error is None
    assert torch.equal(torch.random.get_rng_state(), before)
    with torch.random.fork_rng():
        torch.manual_seed(5)
        expected = torch.randn(3)
    assert "".join(p for s in rec.timeline.steps for p in s.printed) == str(expected)


def test_a_program_starts_from_seed_zero_whatever_the_caller_drew() -> None:
    code = "w = torch.randn(2, requires_grad=True)\nprint(w)\n(w * w).sum().backward()\n"
    first = record_text(code)
    torch.randn(100)  # the caller's stream moves on: the program's does not
    second = record_text(code)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        w = torch.randn(2)
    for rec in (first, second):
        assert isinstance(rec, Recording)
        assert rec.grads_at_end(0)["w"].tolist() == (2 * w).tolist()  # type: ignore[union-attr]


def test_two_recordings_of_the_same_program_give_identical_numbers() -> None:
    """Random weights, random data and dropout: every number is the same twice, and as plain torch's."""
    code = (
        "import torch.nn as nn\n"
        "model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Tanh(), nn.Linear(4, 1))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for i in range(3):\n"
        "    x = torch.randn(5, 3)\n"
        "    opt.zero_grad()\n"
        "    loss = model(x).pow(2).mean()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    print(loss.item())\n"
    )
    first, second = record_text(code), record_text(code)
    assert isinstance(first, Recording) and isinstance(second, Recording)
    assert [s.printed for s in first.timeline.steps] == [s.printed for s in second.timeline.steps]
    assert [s.grad_changes for s in first.timeline.steps] == [s.grad_changes for s in second.timeline.steps]
    assert len(first.calls) == 3 and first.failed is None
    check_against_plain(first)


# -- odd gradients: sparse, meta, complex, empty -----------------------------------------------
# Each is an outcome: recorded, with PyTorch's own gradients (a sparse one as the dense tensor
# it stands for, a complex one by magnitude, as the window shows it), or an error step in a
# learner's words; never an internal error.

INDEX = "i = torch.tensor([[0, 1], [1, 0], [2, 2]])\n"
ODD_GRADIENTS = {
    "gather sparse": "x = torch.ones(3, 2, requires_grad=True)\n"
    + INDEX
    + "torch.gather(x, 0, i, sparse_grad=True).sum().backward()\n",
    "gather sparse twice": "x = torch.ones(3, 2, requires_grad=True)\n"
    + INDEX
    + "y = torch.gather(x * 3, 0, i, sparse_grad=True)\n"
    + "y.sum().backward(retain_graph=True)\n(y * y).sum().backward()\nprint(x.grad)\n",
    "gather sparse into a dense grad": "x = torch.ones(3, 2, requires_grad=True)\n"
    + INDEX
    + "(x * 2).sum().backward()\ntorch.gather(x, 0, i, sparse_grad=True).sum().backward()\n",
    "embedding sparse": "import torch.nn.functional as F\nw = torch.randn(5, 2, requires_grad=True)\n"
    + "F.embedding(torch.tensor([0, 2, 2, 4]), w, sparse=True).pow(2).sum().backward()\n",
    "embedding sparse float64": "import torch.nn.functional as F\n"
    + "w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)\n"
    + "F.embedding(torch.tensor([[1, 3], [3, 3]]), w, sparse=True).sum().backward()\n",
    "embedding sparse through autograd.grad": "import torch.nn.functional as F\n"
    + "w = torch.randn(5, 2, requires_grad=True)\n"
    + "y = F.embedding(torch.tensor([1, 1]), w, sparse=True).sum()\ng = torch.autograd.grad(y, [w])\n",
    "embedding sparse, then Adam": "import torch.nn.functional as F\nimport torch.optim as optim\n"
    + "w = torch.randn(5, 2, requires_grad=True)\nopt = optim.Adam([w], lr=0.5)\n"
    + "F.embedding(torch.tensor([1, 4]), w, sparse=True).sum().backward()\nopt.step()\n",
    "complex": "x = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)\n(x * x).abs().sum().backward()\n",
    "complex grad output": "x = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)\n"
    + "(x * x).sum().backward(torch.tensor(1 + 1j))\n",
    "empty": "x = torch.ones(0, 3, requires_grad=True)\nx.sum().backward()\n",
}


def _as_shown(grad: torch.Tensor | None) -> torch.Tensor | None:
    """PyTorch's gradient as a recording shows it: dense, a complex one by magnitude."""
    if grad is None:
        return None
    grad = grad.to_dense() if grad.layout != torch.strided else grad
    return grad.abs() if grad.is_complex() else grad


@pytest.mark.parametrize("code", ODD_GRADIENTS.values(), ids=list(ODD_GRADIENTS))
def test_an_odd_gradient_is_recorded_as_pytorch_computes_it(code: str) -> None:
    from tests.support.oracle import run_plainly, same

    rec = record_text(code)
    assert isinstance(rec, Recording), rec
    plain = run_plainly("import torch\n" + code)
    assert len(rec.calls) == len(plain.calls) >= 1
    for info, call in zip(rec.calls, plain.calls, strict=True):
        assert info.error == call.error
        grads = rec.grads_at_end(info.index)
        for name, grad in call.grads.items():
            assert same(grads.get(name), _as_shown(grad)), (name, grads.get(name), grad)
        if call.result is not None:
            result = rec.timeline[info.last_step].result
            assert result is not None and same(result["result"], _as_shown(call.result[0]))
    if plain.error is None:
        assert rec.error is None
    else:
        assert rec.error is not None and str(plain.error) in rec.error
    printed = "".join(text + "\n" for step in rec.timeline.steps for text in step.printed)
    assert printed == plain.printed


META = {
    "a meta leaf": "x = torch.ones(3, requires_grad=True, device='meta')\n(x * 2).sum().backward()\n",
    "a tensor moved to meta": "x = torch.ones(3, requires_grad=True)\ny = x.to('meta')\n"
    + "(y * 2).sum().backward()\n",
    "a module on meta": "import torch.nn as nn\nm = nn.Linear(2, 3, device='meta')\n"
    + "y = m(torch.ones(1, 2, device='meta'))\ny.sum().backward()\n",
    "meta like": "x = torch.ones(2, requires_grad=True)\ny = torch.zeros_like(x, device='meta')\n",
}


@pytest.mark.parametrize("code", META.values(), ids=list(META))
def test_a_meta_tensor_stops_the_program_where_it_is_made(code: str) -> None:
    rec = record_text(code)
    assert isinstance(rec, Recording), rec
    made = next(n for n, line in enumerate(code.splitlines(), start=2) if "meta" in line or "m(" in line)
    assert rec.calls == () and rec.error_line in (made, made + 1)
    assert rec.error is not None and "meta device" in rec.error and "no values" in rec.error
    assert rec.timeline[-1].kind == "error"


def test_an_optimizer_step_on_a_sparse_gradient_is_refused_at_its_line() -> None:
    code = (
        "import torch.nn.functional as F\nimport torch.optim as optim\n"
        "w = torch.randn(5, 2, requires_grad=True)\nopt = optim.SGD([w], lr=0.5)\n"
        "F.embedding(torch.tensor([1, 4]), w, sparse=True).sum().backward()\nopt.step()\n"
    )
    refused = record_text(code)
    assert (
        isinstance(refused, ProgramError) and "dense" in refused.message and refused.line == 7
    )  # opt.step()


# -- no memory address reaches a recording -------------------------------------------------------
# torch.manual_seed returns the Generator, whose repr holds its address; so do zip and enumerate
# objects. A recording is shared: no text of it may say where the recording process keeps things.

ADDRESSES = {
    "print": "print(g)",
    "print of a list": "print([g], (g,))",
    "f-string": 'print(f"{g}")',
    "f-string repr": 'print(f"{g!r}, {[g]}")',
    "f-string width": 'print(f"{g!s:>60}|")',
    "characters of an f-string": 'print(list(f"{g}"))',
    "zip and enumerate": "print(zip([1], [2]), enumerate([1]))",
    "text joined": 'print("seed: " + f"{g}")',
}


@pytest.mark.parametrize("line", ADDRESSES.values(), ids=list(ADDRESSES))
def test_a_printed_object_shows_no_address(line: str) -> None:
    rec = record_text(f"g = torch.manual_seed(0)\n{line}\n")
    assert isinstance(rec, Recording) and rec.error is None, rec
    printed = "".join(text for step in rec.timeline.steps for text in step.printed)
    assert printed and "0x" not in printed and "0', 'x'" not in printed, printed
    assert "Generator object" in printed or "zip object" in printed or "'G', 'e'" in printed
    assert not any("0x" in step.caption for step in rec.timeline.steps)


def test_a_denied_family_is_denied_on_every_member_that_holds_its_name() -> None:
    from app.core.language.denials import DENIED_FAMILIES, denied_attribute

    members = {n for cls in (torch.Tensor, torch.nn.Module) for n in dir(cls) if not n.startswith("_")}
    held = {n for n in members for part, _ in DENIED_FAMILIES if part in n}
    assert {"data_ptr", "const_data_ptr", "untyped_storage", "share_memory"} <= held
    assert all(denied_attribute(n) is not None for n in held)
    for name in sorted(held):
        refused = record_text(f"x = {LEAF}\ny = x.{name}\n")
        assert isinstance(refused, ProgramError) and "raw memory" in refused.message, name
