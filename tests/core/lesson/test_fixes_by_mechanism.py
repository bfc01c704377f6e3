"""Fixes chosen by the mechanism the recording shows, each checked against PyTorch itself: the
edited script, run plainly, gives the gradients (or weights) a hand-written correct version gives."""

from __future__ import annotations

import contextlib
import io
import runpy
import tempfile
from pathlib import Path
from typing import Any

import torch

from app.core.lesson.advice_grads import grown_grads
from app.core.lesson.advised import advices_of
from app.core.lesson.prove import proven_fixes
from app.core.model.recording import Recording
from app.core.recorder.script import record_script
from tests.support.fixes_support import recorded, script_recorder


def _globals(code: str) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp())
    path = folder / "plain.py"
    path.write_text(code, encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        return runpy.run_path(str(path), run_name="__main__")


def _proven(code: str) -> list[Any]:
    folder = Path(tempfile.mkdtemp())
    rec = recorded(folder, code)
    assert isinstance(rec, Recording)
    return [p.fix for p in proven_fixes(rec, record=script_recorder(folder))]


FUNCTION = """import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, prior, flag):
        ctx.save_for_backward(prior)
        return x * prior

    @staticmethod
    def backward(ctx, grad_output):
        (prior,) = ctx.saved_tensors
        return grad_output * prior


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
prior = torch.tensor([0.5, 2.0, -1.0])
Scale.apply(x, prior, True).sum().backward()
"""


def test_a_custom_function_returns_none_for_its_inputs_that_are_not_tensors() -> None:
    fix = _proven(FUNCTION)[0]
    assert "return grad_output * prior, None, None" in fix.code
    done = _globals(fix.code)
    assert done["x"].grad.tolist() == [0.5, 2.0, -1.0]  # d(sum(x * prior))/dx, as PyTorch defines it


ADDER = """import torch


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_output * b
        grad_b = grad_output * a


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
Mul.apply(a, b).sum().backward()
"""


def test_a_backward_that_returns_nothing_returns_the_gradients_it_computed() -> None:
    fix = _proven(ADDER)[0]
    done = _globals(fix.code)
    a, b = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward()
    assert done["a"].grad.tolist() == a.grad.tolist() and done["b"].grad.tolist() == b.grad.tolist()


VECTOR = """import torch

torch.manual_seed(0)
w = torch.randn(3, 2, requires_grad=True)
out = torch.tanh(torch.randn(4, 3) @ w)
out.backward()
"""


def test_a_backward_of_many_values_is_reduced_as_gradient_ones_would() -> None:
    fix = _proven(VECTOR)[0]
    assert "out.sum().backward()" in fix.code
    torch.manual_seed(0)
    w = torch.randn(3, 2, requires_grad=True)
    out = torch.tanh(torch.randn(4, 3) @ w)
    out.backward(torch.ones_like(out))
    assert torch.allclose(_globals(fix.code)["w"].grad, w.grad)


DCGAN = """import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
D = nn.Linear(4, 1)
opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
for i in range(2):
    real = torch.randn(2, 4)
    fake = G(torch.randn(2, 3))
    opt_D.zero_grad()
    loss_D = D(fake).mean() - D(real).mean()
    loss_D.backward()
    opt_D.step()
    opt_G.zero_grad()
    loss_G = -D(fake).mean()
    loss_G.backward()
    opt_G.step()
"""


def test_a_gan_without_fake_detach_gets_the_detach_in_d_step_first_and_retain_only_as_a_band_aid() -> None:
    fixes = _proven(DCGAN)
    assert "loss_D = D(fake.detach()).mean() - D(real).mean()" in fixes[0].code and not fixes[0].band_aid
    retained = [f for f in fixes if "retain_graph" in f.code]
    assert all(f.band_aid and "band-aid" in f.title for f in retained)
    assert all(fixes.index(f) > 0 for f in retained)
    done = _globals(fixes[0].code)
    torch.manual_seed(0)  # the textbook DCGAN step, by hand
    G = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh())
    D = torch.nn.Linear(4, 1)
    opt_D, opt_G = torch.optim.SGD(D.parameters(), lr=0.1), torch.optim.SGD(G.parameters(), lr=0.1)
    for _ in range(2):
        real, fake = torch.randn(2, 4), G(torch.randn(2, 3))
        opt_D.zero_grad()
        (D(fake.detach()).mean() - D(real).mean()).backward()
        opt_D.step()
        opt_G.zero_grad()
        (-D(fake).mean()).backward()
        opt_G.step()
    assert torch.allclose(done["G"][0].weight, G[0].weight) and torch.allclose(done["D"].weight, D.weight)


NO_ZERO_GRAD = """import torch
import torch.nn as nn


def train(model, optimizer, batches):
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
train(model, optimizer, batches)
"""


def _plain_training(zero: bool) -> tuple[torch.nn.Linear, list[float]]:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    before: list[float] = []
    for x, y in batches:
        before.append(0.0 if model.bias.grad is None else model.bias.grad.abs().sum().item())
        if zero:
            optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
    return model, before


def test_grad_growing_without_zero_grad_in_a_function_gets_proven_advice() -> None:
    folder = Path(tempfile.mkdtemp())
    rec = recorded(folder, NO_ZERO_GRAD)
    assert isinstance(rec, Recording) and rec.error is None and rec.failed is None
    grown = grown_grads(rec)
    _, plain_before = _plain_training(zero=False)
    assert grown is not None and grown.leaf == "model.bias"
    assert [round(s, 4) for s in grown.sizes] == [round(s, 4) for s in plain_before]  # PyTorch's .grad
    advice = next(a for a in advices_of(rec) if "zero_grad" in a.headline)
    proven = proven_fixes(rec, advice.fixes, record=script_recorder(folder))
    assert proven and "        optimizer.zero_grad()\n        loss.backward()" in proven[0].fix.code
    done = _globals(proven[0].fix.code)
    right, _ = _plain_training(zero=True)
    assert torch.allclose(done["model"].weight, right.weight) and torch.allclose(
        done["model"].bias, right.bias
    )


def test_the_caption_of_a_backward_twice_names_the_call_that_freed_not_retain_graph() -> None:
    folder = Path(tempfile.mkdtemp())
    code = (
        "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.square()\n"
        "y.sum().backward()\ny.sum().backward()\n"
    )
    rec = recorded(folder, code)
    assert isinstance(rec, Recording)
    error = next(s.caption for s in rec.timeline.steps if s.kind == "error")
    assert "freed by the first backward (line 4)" in error
    assert not error.rstrip(".").endswith("retain_graph=True")


def test_a_script_that_switches_gradients_off_does_not_switch_them_off_for_the_next(tmp_path: Path) -> None:
    path = tmp_path / "off.py"
    path.write_text("import torch\ntorch.set_grad_enabled(False)\nx = torch.ones(2)\n", encoding="utf-8")
    record_script(path, stdout=io.StringIO())
    assert torch.is_grad_enabled()


LEAF_LOSS = """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(2):
    x, y = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
    out = model(x).data
    loss = nn.functional.cross_entropy(out, y)
    loss.requires_grad = True
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_loss_made_a_leaf_by_hand_gets_the_cut_fixed_and_the_line_taken_away() -> None:
    folder = Path(tempfile.mkdtemp())
    rec = recorded(folder, LEAF_LOSS)
    assert isinstance(rec, Recording) and rec.failed is None and rec.error is None  # PyTorch is silent
    advice = next(a for a in advices_of(rec) if "nothing learns" in a.headline)
    proven = proven_fixes(rec, advice.fixes, record=script_recorder(folder))
    assert proven
    code = proven[0].fix.code
    assert "loss.requires_grad = True" not in code and "out = model(x)\n" in code
    torch.manual_seed(0)  # the loop as it should be, by hand
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, y = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    assert torch.allclose(_globals(code)["model"].weight, model.weight)
