"""In-place activations (``F.relu_``, ``torch.sigmoid_``, ``inplace=True``) against a plain run."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from app.core.lesson.prove import final_grads
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.recorder import record

IN_PLACE = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
h = w * 2
F.relu_(h)
g = F.leaky_relu_(w * 3, 0.2)
e = F.elu_(w - 1)
s = torch.sigmoid_(w + 0)
t = torch.tanh_(w * 1)
c = torch.clamp_(w * 5, min=-1.0, max=1.0)
r = F.relu(w * 4, inplace=True)
m = nn.ReLU(inplace=True)(w - 0.5)
loss = (h + g + e + s + t + c + r + m).sum()
loss.backward()
print(h.sum().item(), loss.item())
"""


def test_in_place_twins_give_pytorchs_grads() -> None:
    out = io.StringIO()
    names: dict[str, object] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(IN_PLACE, "plain.py", "exec"), names)  # the oracle: PyTorch, plainly
    recording = record(Program(IN_PLACE))
    assert recording.error is None
    w = names["w"]
    assert isinstance(w, torch.Tensor) and w.grad is not None
    ours = torch.tensor([float(v) for v in final_grads(recording)["w"].flat])
    assert torch.allclose(ours, w.grad.flatten())
    assert [line for step in recording.timeline.steps for line in step.printed] == out.getvalue().splitlines()


def test_a_leaf_written_in_place_raises_what_pytorch_raises() -> None:
    code = "import torch\nw = torch.ones(2, requires_grad=True)\ntorch.relu_(w)\n"
    with pytest.raises(RuntimeError) as plain:
        exec(compile(code, "plain.py", "exec"), {})
    recording = record(Program(code))
    assert recording.error is not None and str(plain.value).splitlines()[0] in str(recording.error)


@pytest.mark.parametrize("line", ["torch.detach_(y)", "torch.relu_.__self__", "F.relu_.__globals__"])
def test_twins_open_nothing_more(line: str) -> None:
    head = "import torch\nimport torch.nn.functional as F\nx = torch.ones(2, requires_grad=True)\n"
    code = f"{head}y = x * 2\n{line}\n"
    with pytest.raises(ProgramError) as refused:
        recording = record(Program(code))
        if recording.error is not None:
            raise recording.error
    assert "python -m app run" in str(refused.value)
