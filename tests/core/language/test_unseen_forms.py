"""Forms real training code is written in, taken by rules rather than lists: torch's surface from
torch's own registry, nn.Module's public surface on the program's classes, the program's own
underscore names, stand-in modules for bookkeeping, the program's own datasets. Each program is
recorded in the checked language and compared with a plain PyTorch run of the same text."""

from __future__ import annotations

import contextlib
import io
import sys
import types
import warnings

import pytest

from app.core import record
from app.core.language.torch_names import registry_functions
from app.core.loading import parse_python
from tests.support.oracle import PlainRun, check_against_plain, run_plainly

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

PROGRAMS = {
    "registry ops": """
x = torch.randn(1, 2, 4, 4, requires_grad=True)
a = torch.randn(3, requires_grad=True)
cols = F.unfold(x, kernel_size=2)
outer = torch.ger(a, a)
mixed = torch.addcmul(a, a, a, value=0.5)
n = torch.linalg.norm(outer) + torch.special.expit(a).sum() + torch.logaddexp(a, a).sum()
loss = cols.sum() + outer.sum() + mixed.sum() + n
loss.backward()
""",
    "module surface": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))

def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1)
        nn.init.zeros_(m.bias)

device = torch.device("cpu")
model = Net().to(device)
model.apply(init_weights)
model.cpu()
names = [name for name, _ in model.named_modules()]
kids = [n for n, _ in model.named_children()]
first = len(list(model.children())[0].weight)
print(names, kids, len(list(model.modules())))
saved = model.state_dict()
model.load_state_dict(saved)
model.requires_grad_(True)
model.train()
model.zero_grad()
x = torch.randn(5, 3)
loss = model(x).pow(2).mean()
loss.backward()
model.eval()
""",
    "own underscore names": """
def _helper(t):
    return t * 2

class MoCo(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder_q = nn.Linear(3, 2)
        self.encoder_k = nn.Linear(3, 2)
        self._m = 0.9
        self._initialize_weights()

    def _initialize_weights(self):
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data.copy_(p_q.data)

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data = p_k.data * self._m + p_q.data * (1.0 - self._m)

    def forward(self, x):
        q = self.encoder_q(x)
        self._momentum_update_key_encoder()
        k = self.encoder_k(x).detach()
        return _helper((q * k).sum())

model = MoCo()
loss = model(torch.randn(4, 3))
loss.backward()
""",
    "dicts, del, module values, .data, Tensor(t)": """
lin = nn.Linear(2, 2)
lin.cache = torch.ones(2)
stats = {}
stats["w"] = lin.weight
stats["scale"] = 3.0
del stats["scale"]
class Box:
    pass
box = Box()
box.tmp = 1
del box.tmp
x = torch.Tensor(torch.randn(4, 2))
w = torch.randn(2, requires_grad=True)
w.data = torch.full((2,), 0.5)
loss = (lin(x) * stats["w"].sum()).sum() + (lin.cache * w).sum()
loss.backward()
del lin.cache
""",
    "stand-in modules": """
import time
import argparse
import logging
import warnings
import copy
import itertools
from collections import OrderedDict
from typing import List

logging.basicConfig(level=logging.INFO, force=True)
logger = logging.getLogger("toy")
parser = argparse.ArgumentParser(description="toy")
parser.add_argument("--lr", type=float, default="0.1")
parser.add_argument("--hidden-size", type=int, default=4)
parser.add_argument("--cuda", action="store_true")
args = parser.parse_args(args=[])
start = time.time()
time.sleep(0.0)

def sizes() -> List[int]:
    return [args.hidden_size, 1]

model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, sizes()[0])), ("out", nn.Linear(4, 1))]))
teacher = copy.deepcopy(model)
for p in teacher.parameters():
    p.requires_grad_(False)
pairs = list(itertools.product([0, 1], repeat=2))
x = torch.tensor(pairs, dtype=torch.float32)
loss = (model(x) - teacher(x)).pow(2).mean() + model(x).sum() * args.lr
loss.backward()
logger.info("loss %.4f after %d pairs", loss.item(), len(pairs))
warnings.warn("a toy warning")
elapsed = time.time() - start
""",
    "own dataset": """
from torch.utils.data import Dataset, DataLoader

class Pairs(Dataset):
    def __init__(self, n):
        super().__init__()
        self.x = torch.randn(n, 3)
        self.y = self.x.sum(1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Pairs(10), batch_size=4, shuffle=True)
print(len(loader))
for xb, yb in loader:
    opt.zero_grad()
    loss = F.mse_loss(model(xb), yb)
    loss.backward()
    opt.step()
""",
    "checkpoint, distributions, DataParallel, Generator": """
from torch.utils.checkpoint import checkpoint
from torch.distributions.normal import Normal
from torch.distributions import Categorical

g = torch.Generator().manual_seed(2147483647)
model = nn.DataParallel(nn.Sequential(nn.Linear(3, 3), nn.Tanh()))
x = torch.randn(2, 3, generator=g, requires_grad=True)
h = checkpoint(model, x, use_reentrant=False)
mu = h.mean(1)
dist = Normal(mu, torch.ones(2))
action = dist.sample()
logits = model.module(x)
pick = Categorical(logits=logits).sample()
idx = torch.multinomial(torch.softmax(logits[0], 0), 1, generator=g)
loss = -(dist.log_prob(action).sum()) + logits[0, idx].sum() + pick.float().sum() * 0
loss.backward()
""",
    "library modules' surface, type(), as_tensor": """
seq = nn.Sequential()
seq.add_module("fc", nn.Linear(3, 3))
seq.add_module("bn", nn.BatchNorm1d(3))
seq.register_buffer("scale", torch.full((3,), 2.0))
layers = [m for m, again in zip(seq, list(seq))]
seq.bn.eval()
print(seq.bn.running_mean, seq.bn.running_var.sum())
h = (torch.zeros(2, 3), torch.zeros(2, 3))
if type(h) == tuple:
    h = tuple(v.detach() for v in h)
same = type(seq.fc) == nn.Linear and type(2.0) == float
x = torch.as_tensor([[1.0, 2.0, 3.0], [0.0, 1.0, 0.5]])
loss = (seq(x) * seq.scale).sum() + h[0].sum()
loss.backward()
""",
    "nn.utils, packed sequences, finfo": """
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence
eps = torch.finfo(torch.float32).eps
lin = nn.Linear(2, 2)
v = parameters_to_vector(lin.parameters())
vector_to_parameters(v.detach() * 0.5, lin.parameters())
seqs = pad_sequence([torch.randn(3, 2), torch.randn(2, 2)], batch_first=True)
rnn = nn.LSTM(2, 3, batch_first=True)
packed = pack_padded_sequence(seqs, torch.tensor([3, 2]), batch_first=True)
out, _ = rnn(packed)
out, lengths = pad_packed_sequence(out, batch_first=True)
loss = lin(out[..., :2]).sum() + eps
loss.backward()
""",
    "set_grad_enabled by phase": """
model = nn.Linear(3, 1)
x = torch.randn(4, 3)
for phase in ["train", "val"]:
    if phase == "train":
        model.train()
    else:
        model.eval()
    with torch.set_grad_enabled(phase == "train"):
        loss = model(x).pow(2).mean()
        if phase == "train":
            loss.backward()
    print(phase, loss.requires_grad)
""",
    "functools": """
import functools
from functools import partial, reduce

def init(m, std):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, std=std)

net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
net.apply(partial(init, std=0.02))
total = reduce(lambda a, b: a + b, [p.sum() for p in net.parameters()])
print(functools.reduce(lambda a, b: a * b, [1, 2, 3], 1))
total.backward()
""",
    "a positional table filled element by element": """
import math
max_len, d_model = 40, 16
pe = torch.zeros(max_len, d_model)
for pos in range(max_len):
    for i in range(0, d_model, 2):
        pe[pos, i] = math.sin(pos / (10000 ** ((2 * i) / d_model)))
        pe[pos, i + 1] = math.cos(pos / (10000 ** ((2 * (i + 1)) / d_model)))
w = torch.randn(d_model, requires_grad=True)
(pe @ w).sum().backward()
""",
}


def run_plainly_with_logs(text: str) -> PlainRun:
    """The plain run, what logging writes to stderr and what warnings.warn gives counted as
    printed: a recording shows them in its printed output (NOTE [stand-in modules: bookkeeping])."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_plainly(text)
    logged = [line for line in stderr.getvalue().splitlines() if line.startswith(("INFO:", "WARNING:"))]
    warned = [f"{w.category.__name__}: {w.message}" for w in caught if w.category is UserWarning]
    run.printed += "".join(line + "\n" for line in [*logged, *warned])
    return run


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_form_is_accepted_and_recorded_as_pytorch_runs_it(name: str) -> None:
    text = HEADER + PROGRAMS[name]
    recording = record(parse_python(text, name="program"))  # accepted as written
    check_against_plain(recording, run_plainly_with_logs(text))


def test_logging_and_warnings_go_to_the_printed_output() -> None:
    recording = record(parse_python(HEADER + PROGRAMS["stand-in modules"], name="program"))
    printed = [text for step in recording.timeline for text in step.printed]
    assert any(t.startswith("INFO:toy:loss ") and t.endswith("after 4 pairs") for t in printed)
    assert "UserWarning: a toy warning" in printed


def test_the_registry_gives_torch_functions_nobody_listed_and_keeps_the_deny_list() -> None:
    functional = registry_functions("torch.nn.functional")
    assert {"unfold", "fold", "grid_sample", "pixel_shuffle"} <= functional
    found = registry_functions("torch")
    assert {"ger", "addcmul", "cummax", "logaddexp", "block_diag"} <= found
    assert not found & {"save", "load", "from_file", "quantize_per_tensor", "empty_like", "as_strided"}
    assert not any(name.startswith("_") for name in found)


def test_a_program_is_run_as_a_script_named_main() -> None:
    code = HEADER + 'if __name__ == "__main__":\n    print(__name__)\n'
    recording = record(parse_python(code, name="program"))
    assert [t for step in recording.timeline for t in step.printed] == ["__main__"]


TQDM_PROGRAM = (
    HEADER
    + """
from tqdm import tqdm, trange
from torch.utils.data import TensorDataset, DataLoader
w = torch.ones(2, requires_grad=True)
loader = DataLoader(TensorDataset(torch.randn(6, 2)), batch_size=2, shuffle=True)
pbar = tqdm(loader, desc="train")
for (x,) in pbar:
    loss = (x @ w).sum()
    loss.backward()
    pbar.set_postfix(loss=loss.item())
for i, (x,) in enumerate(tqdm(loader)):
    print(i, len(pbar))
for i in trange(2):
    w.grad = None
"""
)


def test_a_loop_over_tqdm_goes_through_what_it_wraps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle's tqdm (not installed here) gives the items back and draws nothing, as tqdm with
    a closed stderr does."""
    fake = types.ModuleType("tqdm")

    class Bar(list):  # type: ignore[type-arg]
        def set_postfix(self, **kwargs: object) -> None:
            pass

    fake.tqdm = lambda items, **kwargs: Bar(items)  # type: ignore[attr-defined]
    fake.trange = lambda *bounds, **kwargs: Bar(range(*bounds))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    recording = record(parse_python(TQDM_PROGRAM, name="program"))
    check_against_plain(recording, run_plainly(TQDM_PROGRAM))
