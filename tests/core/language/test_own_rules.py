"""Rules for forms real code is written in, taken as written: the program's own names over the
language's built-in ones, ``object`` as a base and as a value, nn.Module's public attribute setting
on torch's layers, and ``torch.amp`` / ``torch.cuda.amp`` as on a machine without CUDA. Each
program is recorded in the checked language and compared with a plain PyTorch run of the same text;
what stays out (a tensor's raw storage) is refused with its reason and the ``run`` hint."""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest

from app.core import ProgramError, record
from app.core.language.evaluator import Evaluator
from app.core.language.hints import RUN_HINT
from app.core.language.parsing import parse
from app.core.loading import parse_python
from tests.support.oracle import check_against_plain, run_plainly

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

PROGRAMS = {
    "the program's own names over built-in ones": """
model = nn.Linear(3, 1)
optim = torch.optim.SGD(model.parameters(), lr=0.1)
sum = 0.0
max = None
def score(x, len=2, list=None):
    return x * len
for step in range(3):
    optim.zero_grad()
    loss = score(model(torch.randn(4, 3))).pow(2).mean()
    loss.backward()
    optim.step()
    sum += loss.item()
    if max is None or loss.item() > max:
        max = loss.item()
print(round(sum, 4), round(max, 4))
import torch.nn.functional as F
F = F.relu
print(F(torch.tensor([-1.0, 2.0])))

def main():
    import math as r
    import torch
    from torch import nn
    return nn.Linear(1, 1)(torch.ones(1) * r.pi)

print(main().shape)
""",
    "a learning rate held in a tensor": """
model = nn.Linear(3, 1)
lr = torch.tensor(0.05)
opt = torch.optim.Adam(model.parameters(), lr=lr)
for step in range(2):
    opt.zero_grad()
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.param_groups[0]["lr"] = lr * 0.5
print(opt.param_groups[0]["lr"])
""",
    "stand-in functions held as values": """
import math
import argparse
import copy
Parser = argparse.ArgumentParser
root, clone = math.sqrt, copy.deepcopy
parser = Parser()
parser.add_argument("--scale", type=float, default=2.0)
args = parser.parse_args(args=[])
model = nn.Linear(2, 1)
teacher = clone(model)
loss = (model(torch.ones(1, 2)) * root(args.scale)).sum() + teacher(torch.ones(1, 2)).sum()
loss.backward()
print(root(16.0))
""",
    "object as a base and as a value": """
class AverageMeter(object):
    def __init__(self):
        self.total, self.count = 0.0, 0
    def update(self, v, n=1):
        self.total += v * n
        self.count += n
missing = object()
cache = {"w": missing}
meter = AverageMeter()
w = torch.randn(3, requires_grad=True)
for i in range(2):
    loss = (w * (i + 1)).pow(2).sum()
    loss.backward()
    meter.update(loss.item())
print(cache["w"] == missing, isinstance(meter, object), isinstance(w, object), meter.count)
""",
    "a layer's parameters and buffers set as nn.Module sets them": """
layer = nn.Linear(3, 2)
layer.weight = nn.Parameter(torch.ones(2, 3))
layer.bias.data = torch.zeros(2)
layer.weight.data = torch.full((2, 3), 0.5)
emb = nn.Embedding(4, 3)
emb.weight = nn.Parameter(torch.arange(12.0).reshape(4, 3))
bn = nn.BatchNorm1d(2)
bn.running_mean = torch.full((2,), 0.25)
head = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
head[0] = nn.Linear(2, 2)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)
net = Net()
net.fc = nn.Linear(2, 1, bias=False)
net.fc.weight = nn.Parameter(torch.tensor([[1.0, -1.0]]))
x = emb(torch.tensor([1, 2]))
loss = net(head(bn(layer(x)))).sum()
loss.backward()
layer.bias = None
print(layer(x).shape, layer.bias, sorted(n for n, _ in net.named_parameters()))
""",
    "a tensor, not a Parameter, set as a parameter: PyTorch's TypeError": """
layer = nn.Linear(3, 2)
layer.weight = torch.ones(2, 3)
""",
    "torch.cuda.amp on a machine without CUDA": """
from torch.cuda.amp import autocast, GradScaler
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = GradScaler()
x = torch.randn(4, 3)
for step in range(2):
    opt.zero_grad()
    with autocast():
        loss = model(x).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
print(scaler.get_scale(), scaler.is_enabled(), loss.dtype)
""",
    "torch.amp and torch.autocast": """
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda", enabled=True)
x = torch.randn(4, 3)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    y = model(x)
with torch.amp.autocast("cuda", enabled=False):
    z = model(x)
with torch.autocast("cpu", enabled=False):
    z2 = model(x)
loss = y.float().pow(2).mean() + z.sum() + z2.sum()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
print(y.dtype, z.dtype, scaler.get_scale())
""",
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_form_is_accepted_and_recorded_as_pytorch_runs_it(name: str) -> None:
    text = HEADER + PROGRAMS[name]
    recording = record(parse_python(text, name="program"))  # accepted as written
    with warnings.catch_warnings():  # amp's own warnings: compared in the test below
        warnings.simplefilter("ignore")
        plain = run_plainly(text)
    check_against_plain(recording, plain)


def plain_warnings(text: str) -> set[str]:
    """What PyTorch warns in a plain run of ``text``, each message once."""
    with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_plainly(text)
    return {" ".join(str(w.message).split()) for w in caught if "NumPy" not in str(w.message)}


@pytest.mark.parametrize("name", [n for n in PROGRAMS if "amp" in n])
def test_mixed_precision_warns_as_pytorch_warns_without_cuda(name: str) -> None:
    text = HEADER + PROGRAMS[name]
    evaluator = Evaluator({}, field="program")
    evaluator.run(parse(text, field="program", mode="exec"))
    said = {w.split("PyTorch warns: ", 1)[1] for w in evaluator.warnings}
    assert said == plain_warnings(text)
    assert any("CUDA is not available" in w for w in said)


@pytest.mark.parametrize(
    ("code", "line", "words"),
    [
        ("y = torch.zeros(2)\ny.set_(torch.ones(3))\n", 5, "share another tensor's storage"),
        ("y = torch.zeros(2)\ny.resize_(3)\n", 5, "uninitialised"),
        ("y = torch.zeros(6).resize(2, 3)\n", 4, "uninitialised"),
        ("y = torch.zeros(2)\ny.resize_as_(torch.ones(3))\n", 5, "uninitialised"),
    ],
)
def test_raw_storage_stays_out_with_what_to_write_instead(code: str, line: int, words: str) -> None:
    with pytest.raises(ProgramError) as caught:
        record(parse_python(HEADER + code, name="program"))
    message = str(caught.value)
    assert words in message and RUN_HINT in message and "\n" not in message
    assert message.startswith(f"program, line {line}, ")
