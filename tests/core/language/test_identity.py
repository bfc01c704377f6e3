"""``is`` and ``is not`` on the program's values, against a plain Python run."""

from __future__ import annotations

import contextlib
import io

import pytest

from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.recorder import record

IDENTITIES = """import torch
import torch.nn as nn
import torch.optim as optim
class Box:
    pass
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
    def same(self, other):
        return self is other
net = Net()
seq = nn.Sequential(net.fc, nn.ReLU())
opt = optim.SGD(net.parameters(), lr=0.1)
x = torch.ones(1, 2, requires_grad=True)
y = net(x).sum()
a, b = Box(), Box()
c = a
w = net.fc.weight
print(net.fc is net.fc, seq[0] is net.fc, seq[1] is not net.fc, net.same(net), net.same(seq))
print(w is net.fc.weight, x is x, x is not y, x.grad is None, y.grad_fn is y.grad_fn)
print(a is c, a is b, a is not b, None is None, opt.param_groups[0] is opt.param_groups[0])
print(1 < 2 < 3, 3 if a is c else 4, (lambda *p, **k: (p, k))(*[1, 2], **{'k': 3}))
assert a is c and w is not None
"""


def test_identity_answers_as_plain_python_does() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(IDENTITIES, "plain.py", "exec"), {})  # the oracle: Python and PyTorch, plainly
    recording = record(Program(IDENTITIES))
    assert recording.error is None
    assert [line for step in recording.timeline.steps for line in step.printed] == out.getvalue().splitlines()


@pytest.mark.parametrize(
    "tail", ["(lin is lin).__class__", "lin.__self__ is lin", "(lin is not None).real.__class__"]
)
def test_identity_opens_nothing_more(tail: str) -> None:
    code = f"import torch\nlin = torch.nn.Linear(2, 2)\ny = {tail}\n"
    with pytest.raises(ProgramError) as refused:
        recording = record(Program(code))
        if recording.error is not None:
            raise recording.error
    assert "python -m app run" in str(refused.value)
