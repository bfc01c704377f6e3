"""``torch.autograd.functional`` with every keyword PyTorch documents, against a plain run."""

from __future__ import annotations

import pytest
import torch

from app.core.lesson.prove import final_grads
from app.core.model.program import Program
from app.core.recorder.recorder import record

HEAD = """import torch
import torch.nn as nn
from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp, vhp
torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
f = lambda v: (v ** 3).sin()
g = lambda v: (v ** 3).sum()
"""

CALLS = {
    "jacobian vectorized": "out = jacobian(f, x, vectorize=True)",
    "jacobian forward-mode": "out = jacobian(f, x, vectorize=True, strategy='forward-mode')",
    "jacobian with a graph": "out = jacobian(f, x, create_graph=True, strict=False, vectorize=False)",
    "hessian outer forward": "out = hessian(g, x, vectorize=True, outer_jacobian_strategy='forward-mode')",
    "vjp with v=": "out = vjp(f, x, v=torch.ones(4), create_graph=True)[1]",
    "jvp with v=": "out = jvp(f, x, v=torch.ones(4), strict=True)[1]",
    "hvp": "out = hvp(g, x, v=torch.ones(4), create_graph=True)[1]",
    "vhp": "out = vhp(g, x, torch.ones(4), strict=False)[1]",
}


@pytest.mark.parametrize("line", CALLS.values(), ids=CALLS.keys())
def test_functional_keywords_give_what_pytorch_gives(line: str) -> None:
    code = HEAD + line + "\n(out.sum() * x).sum().backward()\n"
    names: dict[str, object] = {}
    exec(compile(code, "plain.py", "exec"), names)  # the oracle: PyTorch, plainly
    recording = record(Program(code))
    assert recording.error is None
    x = names["x"]
    assert isinstance(x, torch.Tensor)
    assert x.grad is not None
    ours = [float(v) for v in final_grads(recording)["x"].flat]
    assert torch.allclose(torch.tensor(ours), x.grad)


@pytest.mark.parametrize(
    "line",
    [
        "out = jacobian(f, x, strategy='sideways')",
        "out = jacobian(f, x, strategy='forward-mode')",
        "out = hessian(g, x, outer_jacobian_strategy='forward-mode')",
        "out = jacobian(f, x, hidden=True)",
    ],
)
def test_a_wrong_setting_raises_what_pytorch_raises(line: str) -> None:
    code = HEAD + line + "\n"
    with pytest.raises(Exception) as plain:  # the oracle: PyTorch, plainly
        exec(compile(code, "plain.py", "exec"), {})
    recording = record(Program(code))
    assert recording.error is not None
    message = str(recording.error)
    assert str(plain.value).splitlines()[0] in message
