"""A module's hooks with the program's own functions, against a plain PyTorch run."""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest
import torch

from app.core.lesson.prove import final_grads
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.recorder import record

FORWARD = """import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(3, 2)
x = torch.ones(4, 3, requires_grad=True)
def scale(module, args, out):
    print('forward of', module, args[0].shape)
    return out * 2
def shift(module, args):
    return (args[0] + 1,)
h = lin.register_forward_hook(scale)
lin.register_forward_pre_hook(shift, prepend=True)
lin(x).sum().backward()
h.remove()
lin(x).sum().backward()
print(x.grad)
"""

BACKWARD = """import torch
import torch.nn as nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 1)
    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))
net = Net()
x = torch.randn(5, 3, requires_grad=True)
def halve(module, grad_input, grad_output):
    print('full backward', grad_output[0].shape)
    return (grad_input[0] / 2,)
def pre(module, grad_output):
    print('pre', module)
    return (grad_output[0] * 3,)
net.a.register_full_backward_hook(halve)
net.register_full_backward_pre_hook(pre)
net(x).sum().backward()
print(x.grad)
"""

OLD_STYLE = """import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(2, 2)
x = torch.randn(3, 2, requires_grad=True)
lin.register_backward_hook(lambda m, gi, go: print('old hook', len(gi), len(go)))
lin(x).sum().backward()
"""

WITH_KWARGS = """import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(2, 2)
x = torch.randn(3, 2, requires_grad=True)
def pre(module, args, kwargs):
    return (args[0] * 2,), kwargs
def post(module, args, kwargs, out):
    print('kwargs', kwargs)
    return out + 1
lin.register_forward_pre_hook(pre, with_kwargs=True)
lin.register_forward_hook(post, with_kwargs=True, always_call=True)
lin(x).sum().backward()
"""

PROGRAMS = {
    "forward and pre": FORWARD,
    "backward, own class": BACKWARD,
    "deprecated": OLD_STYLE,
    "kwargs": WITH_KWARGS,
}


def _plain(code: str) -> tuple[dict[str, object], list[str]]:
    out = io.StringIO()
    names: dict[str, object] = {}
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "plain.py", "exec"), names)  # the oracle: PyTorch and Python, plainly
    return names, out.getvalue().splitlines()


@pytest.mark.parametrize("code", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_module_hooks_run_as_pytorch_runs_them(code: str) -> None:
    names, printed = _plain(code)
    recording = record(Program(code))
    assert recording.error is None
    x = names["x"]
    assert isinstance(x, torch.Tensor) and x.grad is not None
    ours = [float(v) for v in final_grads(recording)["x"].flat]
    assert torch.allclose(torch.tensor(ours), x.grad.flatten())
    ours = [line for step in recording.timeline.steps for line in step.printed]
    assert "\n".join(ours).splitlines() == printed


def _refusal(code: str) -> str:
    try:
        recording = record(Program(code))
    except ProgramError as refusal:  # refused before running
        return str(refusal)
    assert recording.error is not None
    return str(recording.error)


HOSTILE = {
    "the function's globals": "def f(m, a, o):\n    return f.__globals__\nlin.register_forward_hook(f)\n",
    "the handle's inside": "h = lin.register_forward_hook(print)\nh._handle\n",
    "the real module": "def f(m, a):\n    return m._parameters\nlin.register_forward_pre_hook(f)\nlin(x)\n",
    "a module given back": "lin.register_forward_hook(lambda m, a, o: m)\nlin(x)\n",
    "an evaluator object": "print.register_forward_hook(print)\n",
    "a listed function as the hook": "lin.register_forward_hook(torch.relu)\n",
    "a keyword PyTorch lacks": "lin.register_forward_hook(print, hidden=True)\n",
}


@pytest.mark.parametrize("tail", HOSTILE.values(), ids=HOSTILE.keys())
def test_module_hooks_open_no_path_out(tail: str) -> None:
    code = "import torch\nimport torch.nn as nn\nlin = nn.Linear(2, 2)\nx = torch.ones(1, 2)\n" + tail
    message = _refusal(code)
    assert "python -m app run" in message and "Traceback" not in message
