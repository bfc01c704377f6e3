"""The library a program may import (math, random, torch.utils.data, nn.init, Variable, schedulers):
what it gives is PyTorch's and Python's own, what it refuses is refused at its line, and what it
makes is sized by the guard."""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch

from app.core import record
from app.core.language.evaluator import Evaluator
from app.core.language.hints import RUN_HINT
from app.core.language.parsing import parse
from app.core.language.python_modules import PROGRAM_RANDOM
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.sizing.limits import Limits

FIELD = "program"


def run(code: str, **kwargs: Any) -> dict[str, Any]:
    env: dict[str, Any] = {}
    Evaluator(env, field=FIELD, **kwargs).run(parse(code, field=FIELD, mode="exec"))
    return env


def refusal(code: str, **kwargs: Any) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(code, **kwargs)
    return info.value


def printed(code: str) -> list[str]:
    rec = record(Program(code, name="library"))
    assert rec.error is None, rec.error
    return [text for step in rec.timeline.steps for text in step.printed]


# -- imports --------------------------------------------------------------------------------


def test_imports_bind_listed_members_by_name_as_python_does() -> None:
    env = run(
        "from math import sqrt, pi\n"
        "from torch.nn import Linear\n"
        "from torch.autograd import Variable\n"
        "import torch.utils.data as data\n"
        "from __future__ import print_function\n"
        "torch.manual_seed(0)\n"
        "lin = Linear(2, 3)\n"
        "v = Variable(torch.ones(2) * 2, requires_grad=True)\n"
        "r = sqrt(pi)\n"
        "n = len(data.TensorDataset(torch.zeros(4, 1)))\n"
    )
    torch.manual_seed(0)
    plain = torch.nn.Linear(2, 3)
    assert torch.equal(env["lin"].parameters()[0], plain.weight)
    assert env["v"].is_leaf and env["v"].requires_grad
    assert env["r"] == pytest.approx(1.7724538509055159) and env["n"] == 4


def test_variable_is_what_pytorch_makes_of_it_today() -> None:
    env = run(
        "from torch.autograd import Variable\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = x * 3\n"
        "kept = Variable(y)\n"
        "leaf = Variable(y, requires_grad=True)\n"
    )
    x = torch.ones(2, requires_grad=True)
    y = x * 3
    for name, plain in (
        ("kept", torch.autograd.Variable(y)),
        ("leaf", torch.autograd.Variable(y, requires_grad=True)),
    ):
        ours = env[name]
        assert (ours.is_leaf, ours.requires_grad, ours.grad_fn) == (plain.is_leaf, plain.requires_grad, None)
        assert torch.equal(ours, plain)


@pytest.mark.parametrize(
    ("code", "line", "col", "words"),
    [
        (
            "import torch\nimport numpy as np\nx = np.array([1.0])",
            3,
            5,
            "numpy.array cannot be used: NumPy is not part of programs",
        ),
        ("import matplotlib.pyplot as plt\nplt.show()", 2, 1, "programs draw no plots"),
        ("from math import factorial", 1, 1, "math.factorial is not available in programs"),
        ("import random\nr = random.getstate()", 2, 5, "random.getstate is not available in programs"),
        ("y = torch.autograd.Variablex(1)", 1, 5, "(did you mean torch.autograd.Variable?)"),
        ("from __future__ import braces", 1, 1, "this from __future__ import is not part of programs"),
        ("from math import sqrt\ny = sqrt.__globals__", 2, 5, "attribute '__globals__' is private"),
        ("from math import sqrt\ny = sqrt.real", 2, 5, "'real' is not available on the function math.sqrt"),
    ],
)
def test_refusals_name_the_place_and_end_with_how_to_record_a_trusted_script(
    code: str, line: int, col: int, words: str
) -> None:
    err = refusal(code)
    assert (err.field, err.line, err.col) == (FIELD, line, col), err
    assert words in err.message
    assert err.message.endswith(RUN_HINT)
    # "scenario" is the old word for a program: no refusal may still say it
    assert "scenario" not in err.message and "only a listed set" not in err.message


# -- random -----------------------------------------------------------------------------------


def test_random_is_pythons_own_generator_seeded_with_the_program() -> None:
    code = "import random\nprint(random.random())\nrandom.seed(5)\n"
    code += "print(random.randint(1, 100), random.random())"
    before = PROGRAM_RANDOM.getstate()
    first, again = printed(code), printed(code)
    assert first == again  # re-recording shows the same numbers
    assert PROGRAM_RANDOM.getstate() == before  # put back as it was
    reference = random.Random(0)
    assert first[0] == str(reference.random())
    reference.seed(5)
    assert first[1] == f"{reference.randint(1, 100)} {reference.random()}"


def test_random_choices_is_refused_before_it_builds_a_huge_list() -> None:
    err = refusal("import random\ny = random.choices([1, 2], k=10**9)")
    assert err.line == 2 and "at most" in err.message


# -- data -------------------------------------------------------------------------------------


def test_a_loader_gives_pytorchs_batches_in_pytorchs_order() -> None:
    code = (
        "from torch.utils.data import TensorDataset, DataLoader\n"
        "data = TensorDataset(torch.arange(10.0), torch.arange(10))\n"
        "loader = DataLoader(data, batch_size=3, shuffle=True)\n"
        "firsts = []\n"
        "for x, y in loader:\n"
        "    firsts.append(y)\n"
        "after = torch.rand(1)\n"
    )
    torch.manual_seed(0)
    env = run(code)
    torch.manual_seed(0)
    data = torch.utils.data
    loader = data.DataLoader(
        data.TensorDataset(torch.arange(10.0), torch.arange(10)), batch_size=3, shuffle=True
    )
    expected = [y for _, y in loader]
    assert [t.tolist() for t in env["firsts"]] == [t.tolist() for t in expected]
    assert torch.equal(env["after"], torch.rand(1))  # the same draws from torch's generator


def test_a_loop_over_a_loader_is_sized_by_the_guard() -> None:
    code = (
        "from torch.utils.data import TensorDataset, DataLoader\n"
        "loader = DataLoader(TensorDataset(torch.zeros(1000, 10)), batch_size=100)\n"
        "for epoch in range(20):\n"
        "    for (xb,) in loader:\n"
        "        pass\n"
    )
    err = refusal(code, limits=Limits(max_total_elements=60_000))
    assert err.line == 4 and "tensor elements" in err.message


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("collate_fn=print", "a collate_fn is code of its own"),
        ("sampler=[0, 1]", "a sampler is code of its own"),
        ("timeout=5", "DataLoader has no setting 'timeout' in programs"),
        ("num_workers=1000", "num_workers from 0 to 64"),
    ],
)
def test_loader_settings_that_run_code_are_refused(setting: str, words: str) -> None:
    err = refusal(f"loader = torch.utils.data.DataLoader(torch.zeros(4, 2), {setting})")
    assert err.line == 1 and words in err.message


def test_a_loader_takes_data_not_modules() -> None:
    err = refusal("loader = torch.utils.data.DataLoader(nn.Linear(2, 2))")
    assert "takes a dataset such as TensorDataset(x, y)" in err.message


# -- modules, optimizers and schedulers ------------------------------------------------------------


def test_a_huge_attention_layer_is_refused_before_it_is_allocated() -> None:
    err = refusal("mha = nn.MultiheadAttention(100000, 2)")
    assert err.line == 1 and "the limit is 10,000,000" in err.message


def test_an_encoder_takes_an_encoder_layer_and_a_scheduler_an_optimizer() -> None:
    assert "takes a layer module first" in refusal("e = nn.TransformerEncoder(nn.Linear(2, 2), 2)").message
    err = refusal("lin = nn.Linear(2, 2)\ns = optim.lr_scheduler.StepLR(lin, 2)")
    assert err.line == 2 and "takes an optimizer such as optim.SGD(...) first" in err.message


def test_step_lr_with_rmsprop_matches_pytorch_without_its_order_warning() -> None:
    code = (
        "w = torch.ones(3, requires_grad=True)\n"
        "opt = optim.RMSprop([w], lr=0.1)\n"
        "sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)\n"
        "lrs = []\n"
        "for i in range(5):\n"
        "    (w * w).sum().backward()\n"
        "    opt.step()\n"
        "    sched.step()\n"
        "    lrs.append(sched.get_last_lr()[0])\n"
    )
    env: dict[str, Any] = {}
    evaluator = Evaluator(env, field=FIELD)
    evaluator.run(parse(code, field=FIELD, mode="exec"))
    w = torch.ones(3, requires_grad=True)
    opt = torch.optim.RMSprop([w], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        (w * w).sum().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert env["lrs"] == lrs and torch.equal(env["w"], w)
    assert evaluator.warnings == []


def test_a_loader_over_many_samples_gives_pytorchs_batches_in_few_operations() -> None:
    code = (
        "from torch.utils.data import TensorDataset, DataLoader, random_split\n"
        "data = TensorDataset(torch.randn(15000, 3), torch.randint(0, 4, (15000,)))\n"
        "part, rest = random_split(data, [0.8, 0.2])\n"
        "batches = []\n"
        "loaders = [DataLoader(data, batch_size=64, shuffle=True, drop_last=True), DataLoader(part, 100)]\n"
        "for loader in loaders:\n"
        "    for x, y in loader:\n"
        "        batches.append(x)\n"
        "        batches.append(y)\n"
    )
    torch.manual_seed(0)
    env = run(code)
    torch.manual_seed(0)
    tud = torch.utils.data
    dataset = tud.TensorDataset(torch.randn(15000, 3), torch.randint(0, 4, (15000,)))
    part, _ = tud.random_split(dataset, [0.8, 0.2])
    loaders = [
        tud.DataLoader(dataset, batch_size=64, shuffle=True, drop_last=True),
        tud.DataLoader(part, 100),
    ]
    expected = [t for loader in loaders for x, y in loader for t in (x, y)]
    assert len(env["batches"]) == len(expected) == 2 * (15000 // 64 + 120)
    for ours, plain in zip(env["batches"], expected, strict=True):
        assert ours.dtype == plain.dtype and torch.equal(ours, plain)


# -- hostile: the library's new doors stay shut -------------------------------------------------

HOSTILE = [
    ("from random import random as r\ny = r.__self__", 2, "attribute '__self__' is private"),
    ("import random\ny = random.sample(range(10**9), 3)", 2, "the limit is 1,000,000"),
    ("from torch.utils.data import DataLoader as DL\nx = DL.dataset", 2, "'dataset' is not available"),
    ("from torch.autograd import Variable\nx = Variable(nn.Linear(2, 2))", 2, "Variable takes a tensor"),
    (
        "layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8)\n"
        "e = nn.TransformerEncoder(layer, num_layers=10**6)",
        2,
        "at most 100 layers",
    ),
    ("w = torch.zeros(3000, 3000)\nnn.init.orthogonal_(w)", 2, "the limit is 10,000,000,000"),
    ("loader = torch.utils.data.DataLoader([print])", 1, "takes a dataset such as TensorDataset"),
]


@pytest.mark.parametrize(("code", "line", "words"), HOSTILE, ids=[h[2][:30] for h in HOSTILE])
def test_library_escapes_and_bombs_end_the_program_at_their_line(code: str, line: int, words: str) -> None:
    err = refusal(code)
    assert err.line == line and words in err.message, err


def test_autograd_functional_takes_a_module_or_a_function_bound_by_name() -> None:
    env = run(
        "from torch.autograd.functional import jacobian, hessian, vjp\n"
        "from torch import tanh\n"
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))\n"
        "x = torch.randn(3)\n"
        "J = jacobian(net, x)\n"
        "H = hessian(tanh, torch.tensor([0.3, -1.0]).sum())\n"
        "out, back = vjp(net, x, torch.ones(2))\n"
    )
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    x = torch.randn(3)
    functional = torch.autograd.functional
    assert torch.equal(env["J"], functional.jacobian(net, x))
    assert torch.equal(env["H"], functional.hessian(torch.tanh, torch.tensor([0.3, -1.0]).sum()))
    out, back = functional.vjp(net, x, torch.ones(2))
    assert torch.equal(env["out"], out) and torch.equal(env["back"], back)
    err = refusal(
        "lin = nn.Linear(2, 1)\nJ = torch.autograd.functional.jacobian(lin, torch.ones(2), hidden=True)"
    )
    assert err.line == 2 and "unexpected keyword argument 'hidden'" in err.message
    err = refusal("J = torch.autograd.functional.jacobian(3, torch.ones(2))")
    assert "takes something the program can call first" in err.message


def test_the_device_idiom_names_the_device_the_program_runs_on() -> None:
    env = run(
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "torch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(2, 3), nn.ReLU()).to(device)\n"
        "y = model(torch.ones(1, 2).to(device))\n"
    )
    assert env["device"] == torch.device("cpu")  # recorded on the CPU here, whatever the machine has
    torch.manual_seed(0)
    assert torch.equal(
        env["y"], torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())(torch.ones(1, 2))
    )
    err = refusal("model = nn.Linear(2, 2)\nmodel = model.to('cuda:0')")
    assert err.line == 2 and "this program runs on cpu (chosen in the window or with --device)" in err.message
    assert (
        "to() on an nn.Linear module takes a device" in refusal("m = nn.Linear(2, 2).to(torch.half)").message
    )


def test_a_loader_gives_its_dataset_and_batch_size() -> None:
    env = run(
        "from torch.utils.data import TensorDataset, DataLoader\n"
        "loader = DataLoader(TensorDataset(torch.zeros(10, 2)), batch_size=4)\n"
        "n, b = len(loader.dataset), loader.batch_size\n"
        "raw = DataLoader(torch.zeros(7, 2), batch_size=3)\n"
        "m = len(raw.dataset)\n"
    )
    assert (env["n"], env["b"], env["m"]) == (10, 4, 7)
    assert (
        "'sampler' is not available on a DataLoader"
        in refusal("l = torch.utils.data.DataLoader([1.0])\ns = l.sampler").message
    )


def test_plateau_and_one_cycle_schedules_match_pytorch() -> None:
    code = (
        "w = torch.ones(3, requires_grad=True)\n"
        "opt = optim.SGD([w], lr=0.1, momentum=0.9)\n"
        "plateau = optim.lr_scheduler.ReduceLROnPlateau(opt, mode='min', factor=0.5, patience=1)\n"
        "opt2 = optim.Adam([w], lr=0.01)\n"
        "cycle = optim.lr_scheduler.OneCycleLR(opt2, max_lr=0.1, total_steps=6, anneal_strategy='linear')\n"
        "lrs = []\n"
        "for i in range(6):\n"
        "    loss = (w * w).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    opt2.step()\n"
        "    plateau.step(loss * 0 + 1.0)\n"
        "    cycle.step()\n"
        "    lrs.append([plateau.get_last_lr()[0], cycle.get_last_lr()[0]])\n"
    )
    env = run(code)
    w = torch.ones(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    schedulers = torch.optim.lr_scheduler
    plateau = schedulers.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
    opt2 = torch.optim.Adam([w], lr=0.01)
    cycle = schedulers.OneCycleLR(opt2, max_lr=0.1, total_steps=6, anneal_strategy="linear")
    lrs = []
    for _ in range(6):
        loss = (w * w).sum()
        loss.backward()
        opt.step()
        opt2.step()
        plateau.step(loss * 0 + 1.0)
        cycle.step()
        lrs.append([plateau.get_last_lr()[0], cycle.get_last_lr()[0]])
    assert env["lrs"] == lrs and torch.equal(env["w"], w)
    code = "opt = optim.SGD([torch.ones(1, requires_grad=True)], lr=1)\n"
    err = refusal(code + "s = optim.lr_scheduler.StepLR(opt, 2)\ns.step(3)")
    assert err.line == 3 and "step() takes nothing: step()" in err.message
