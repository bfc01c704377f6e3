"""The wall around each rule that grew the language: torch's registry, own underscore names,
stand-in modules, copies, the program's own datasets and loaders, DataParallel, generators,
``type()``. Every case is refused with one line naming its place (and the ``run`` hint), and no
case reaches a file, a process, a thread, a frame or a real module (the sentinels of
``tests/support/hostile_cases.py``, and processes and threads below)."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.core import ProgramError
from app.core.language.hints import RUN_HINT
from app.core.model.errors import ProgramRaised
from tests.support.hostile_cases import (
    Case,
    Refused,
    install_sentinels,
    outcome,
    program_refused,
    program_text,
    warm_up,
)

LIN = "import torch\nimport torch.nn as nn\nlin = nn.Linear(2, 2)\n"  # lines 1-3
DATASET = (
    "import torch\nfrom torch.utils.data import Dataset, DataLoader\n"
    "class D(Dataset):\n    def __len__(self):\n        return 4\n"
    "    def __getitem__(self, i):\n        return torch.ones(2) * i\n"
)  # lines 1-7

DOUBLE = (
    "import torch\nclass Dbl(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
)  # lines 1-8

CASES: list[Case] = [
    # -- torch's registry: names it generates, and names around it ---------------------------
    program_refused("a private torch module", "import torch\ny = torch._C\n", 2, 5, "is private"),
    program_refused(
        "a function that takes a callable",
        "import torch\ny = torch.lobpcg(torch.eye(3), k=1)\n",
        2,
        5,
        "torch.lobpcg is not available",
    ),
    program_refused(
        "a quantisation kernel", "import torch\ny = torch.quantize_per_tensor\n", 2, 5, "not available"
    ),
    program_refused(
        "uninitialised memory",
        "import torch\ny = torch.ones(1).new_empty_strided\n",
        2,
        5,
        "whatever was in memory",
    ),
    program_refused(
        "a loss that takes a callable",
        "import torch\nf = torch.nn.functional.triplet_margin_with_distance_loss\n",
        2,
        5,
        "not available",
    ),
    program_refused("a private linalg name", "import torch\ny = torch.linalg._x\n", 2, 5, "is private"),
    program_refused(
        "an op name built at run time",
        "import torch\nname = 'sa' + 've'\ny = torch.__dict__[name]\n",
        3,
        5,
        "is private",
    ),
    # -- torch.__version__: the one dunder read, only off torch itself (NOTE [version string]) --
    program_refused(
        "torch.__version__ assigned", "import torch\ntorch.__version__ = '0'\n", 2, 1, "is private"
    ),
    program_refused(
        "a version through a name", "import torch\nt = torch\nv = t.__version__\n", 3, 5, "is private"
    ),
    program_refused(
        "a tensor's __version__", "import torch\nv = torch.ones(1).__version__\n", 2, 5, "is private"
    ),
    program_refused("torch.nn.__version__", "import torch\nv = torch.nn.__version__\n", 2, 5, "is private"),
    program_refused(
        "__version__ imported", "from torch import __version__\n", 1, 1, "an import cannot bind the name"
    ),
    program_refused(
        "the old Variable module's insides",
        "import torch.autograd.variable as v\nd = v.Variable.__init__\n",
        2,
        5,
        "is private",
    ),
    # -- plain values' missing attributes are Python's AttributeError (NOTE [missing attributes]) --
    program_refused("a float's class", "y = (1.5).__class__\n", 1, 5, "is private"),
    program_refused("None's class", "y = None.__class__.__subclasses__()\n", 1, 5, "is private"),
    program_refused("a float method that exists", "y = (0.5).hex()\n", 1, 5, "not on a float", "record"),
    program_refused(
        "a dict method that exists", "y = {}.fromkeys([1])\n", 1, 5, "'fromkeys' is not a method", "record"
    ),
    # -- parameter containers hold tensors only ----------------------------------------------
    program_refused(
        "a ParameterList of a builtin",
        "import torch\np = torch.nn.ParameterList([print])\n",
        2,
        5,
        "a parameter container takes tensors",
        "record",
    ),
    program_refused(
        "a ParameterDict of torch",
        "import torch\np = torch.nn.ParameterDict({'a': torch.nn})\n",
        2,
        5,
        "a parameter container takes tensors",
        "record",
    ),
    program_refused(
        "a ParameterList given a builtin to go through",
        "import torch\np = torch.nn.ParameterList(print)\n",
        2,
        5,
        "the checked language cannot run this call as written",
        "record",
    ),
    # -- memory PyTorch leaves uninitialised is zeros (NOTE [zeroed memory]), sized first -------
    program_refused(
        "a huge empty", "import torch\ny = torch.empty(10**6, 10**6)\n", 2, 5, "the limit is", "record"
    ),
    program_refused(
        "a huge Tensor(sizes)", "import torch\ny = torch.Tensor(10**12)\n", 2, 5, "the limit is", "record"
    ),
    program_refused(
        "a huge new_empty",
        "import torch\ny = torch.ones(1).new_empty(10**12)\n",
        2,
        5,
        "the limit is",
        "record",
    ),
    program_refused(
        "empty_strided", "import torch\ny = torch.empty_strided((2,), (1,))\n", 2, 5, "not available"
    ),
    program_refused(
        "torch.Tensor of text",
        "import torch\ny = torch.Tensor('ab')\n",
        2,
        5,
        "takes a list of values",
        "record",
    ),
    # -- gc and torch.cuda: the collector runs; nothing else of them ---------------------------
    program_refused(
        "gc's objects", "import gc\ny = gc.get_objects()\n", 2, 5, "gc.get_objects cannot be used", "record"
    ),
    program_refused(
        "gc's referrers",
        "import gc\ny = gc.get_referrers(1)\n",
        2,
        5,
        "gc.get_referrers cannot be used",
        "record",
    ),
    program_refused(
        "gc switched off", "import gc\ngc.disable()\n", 2, 1, "gc.disable cannot be used", "record"
    ),
    program_refused(
        "a CUDA device chosen", "import torch\ntorch.cuda.set_device(0)\n", 2, 1, "not available"
    ),
    program_refused(
        "CUDA's RNG state", "import torch\ns = torch.cuda.get_rng_state()\n", 2, 5, "not available"
    ),
    # -- gradcheck: PyTorch's check, the program's function run by the evaluator -------------
    program_refused(
        "gradcheck of a huge input",
        DOUBLE + "c = torch.autograd.gradcheck(Dbl.apply, torch.ones(10**6, requires_grad=True))\n",
        9,
        5,
        "checks up to 1,000 input elements",
        "record",
    ),
    program_refused(
        "gradcheck handed code as a setting",
        DOUBLE + "x = torch.ones(2, dtype=torch.double, requires_grad=True)\n"
        "c = torch.autograd.gradcheck(Dbl.apply, x, raise_exception=print)\n",
        10,
        5,
        "takes only the numbers",
        "record",
    ),
    program_refused(
        "gradcheck's other settings",
        DOUBLE + "x = torch.ones(2, dtype=torch.double, requires_grad=True)\n"
        "c = torch.autograd.gradcheck(Dbl.apply, x, masked=True)\n",
        10,
        5,
        "takes only the numbers",
        "record",
    ),
    program_refused(
        "gradcheck's insides", "import torch\ng = torch.autograd.gradcheck.__globals__\n", 2, 5, "is private"
    ),
    program_refused(
        "an apply's insides",
        DOUBLE + "a = Dbl.apply.__self__\n",
        9,
        5,
        "is private",
    ),
    # -- left-out builtins a program names its own values after (NOTE [shadowed builtins]) -----
    program_refused(
        "vars read where the program did not bind it",
        "import torch\ndef f(x, vars=None):\n    return x\ny = vars(torch)\n",
        4,
        5,
        "name 'vars' is not defined",
        "record",
    ),
    program_refused(
        "eval as an argument", "def f(eval=None):\n    return 1\n", 1, 7, "'eval' is private or reserved"
    ),
    program_refused("open bound", "open = 1\n", 1, 1, "'open' is not available"),
    program_refused("getattr bound", "def getattr(a, b):\n    return 1\n", 1, 1, "getattr"),
    program_refused(
        "a program function that PyTorch calls without end",
        "import torch\nfrom torch.autograd.functional import jacobian\n"
        "def f(x):\n    return f(x)\nj = jacobian(f, torch.ones(2))\n",
        4,
        12,
        "functions here call each other at most",
        "record",
    ),
    # -- @dataclass: an __init__ from annotated fields, nothing else of dataclasses -----------
    program_refused(
        "a dataclass decorator that is something else",
        "dataclass = print\n@dataclass\nclass C:\n    x: int = 1\n",
        3,
        1,
        "@dataclass here is dataclasses.dataclass",
        "record",
    ),
    program_refused(
        "a dataclass of a module",
        "import torch\nfrom dataclasses import dataclass\n@dataclass\n"
        "class M(torch.nn.Module):\n    x: int = 1\n",
        4,
        1,
        "on a class with no base",
        "record",
    ),
    program_refused(
        "dataclasses' other parts",
        "import dataclasses\nf = dataclasses.asdict\n",
        2,
        5,
        "not available",
        "record",
    ),
    program_refused(
        "a dataclass called",
        "from dataclasses import dataclass\nc = dataclass(print)\n",
        2,
        5,
        "@dataclass above",
        "record",
    ),
    program_refused(
        "a field with a hostile setting",
        "from dataclasses import dataclass, field\n@dataclass\nclass C:\n"
        "    x: list = field(metadata={'a': 1})\n",
        4,
        15,
        "field() takes default= or default_factory= here",
        "record",
    ),
    program_refused(
        "a dataclass decorator with settings",
        "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass C:\n    x: int = 1\n",
        2,
        2,
        "the decorators programs take are",
    ),
    # -- copy: only values, never the evaluator's objects ------------------------------------
    program_refused(
        "deepcopy of a builtin", "import copy\ny = copy.deepcopy(print)\n", 2, 5, "cannot be copied", "record"
    ),
    program_refused(
        "deepcopy of torch",
        "import copy\nimport torch\ny = copy.deepcopy(torch)\n",
        3,
        5,
        "cannot be copied",
        "record",
    ),
    program_refused(
        "deepcopy of a function",
        "import copy\ndef f():\n    return 1\ng = copy.deepcopy(f)\n",
        4,
        5,
        "cannot be copied",
        "record",
    ),
    program_refused(
        "deepcopy of a module holding a function",
        LIN + "import copy\ndef f():\n    return 1\nlin.helper = f\nm = copy.deepcopy(lin)\n",
        8,
        5,
        "cannot be copied",
        "record",
    ),
    program_refused(
        "deepcopy of a module holding torch's namespace",
        LIN + "import copy\nlin.ns = torch.nn\nm = copy.deepcopy(lin)\n",
        6,
        5,
        "cannot be copied",
        "record",
    ),
    program_refused(
        "deepcopy with a memo of the program's",
        LIN + "import copy\nm = copy.deepcopy(lin, {})\n",
        5,
        5,
        "takes the value only",
        "record",
    ),
    program_refused(
        "deepcopy of a loader",
        DATASET + "import copy\nloader = DataLoader(D())\nc = copy.deepcopy(loader)\n",
        10,
        5,
        "cannot be copied",
        "record",
    ),
    # -- argparse: never the command line, never a file --------------------------------------
    program_refused(
        "argparse given arguments",
        "import argparse\np = argparse.ArgumentParser()\na = p.parse_args(['--lr', '1'])\n",
        3,
        5,
        "parse_args() gives the defaults here",
        "record",
    ),
    program_refused(
        "argparse reading a file",
        "import argparse\nt = argparse.FileType('r')\n",
        2,
        5,
        "argparse.FileType is not available",
        "record",
    ),
    program_refused(
        "argparse converting with open",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--f', type=open, default='x')\n",
        3,
        28,
        "'open' is not available",
    ),
    program_refused(
        "argparse without a default",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('data')\n",
        3,
        1,
        "has no default",
        "record",
    ),
    # -- logging and warnings: printed, never a handler, file or stream -----------------------
    program_refused(
        "a log file",
        "import logging\nh = logging.FileHandler('x.log')\n",
        2,
        5,
        "FileHandler is not available",
        "record",
    ),
    program_refused(
        "basicConfig with a file",
        "import logging\nlogging.basicConfig(filename='x.log')\n",
        2,
        1,
        "programs cannot write files",
        "record",
    ),
    program_refused(
        "a handler added",
        "import logging\nlog = logging.getLogger('a')\nlog.addHandler(log)\n",
        3,
        1,
        "'addHandler' is not available",
        "record",
    ),
    program_refused(
        "a logger's handlers",
        "import logging\nlog = logging.getLogger('a')\nh = log.handlers\n",
        3,
        5,
        "'handlers' is not available",
        "record",
    ),
    program_refused(
        "a warnings filter module",
        "import warnings\nw = warnings.showwarning\n",
        2,
        5,
        "not available",
        "record",
    ),
    # -- underscore names: the program's own only ---------------------------------------------
    program_refused(
        "a tensor's _version, the name also the program's",
        "import torch\n_version = 1\nx = torch.ones(2)\ny = x._version\n",
        4,
        5,
        "attribute '_version' is private",
        "record",
    ),
    program_refused(
        "nn.Module's _modules on the program's module",
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self._modules = 1\nm = M()\n",
        5,
        9,
        "'_modules' cannot be assigned",
        "record",
    ),
    program_refused(
        "nn.Module's _forward_hooks read on the program's module",
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self._forward_hooks = 1\n    def f(self):\n        return self._forward_hooks\n"
        "m = M()\n",
        5,
        9,
        "'_forward_hooks' cannot be assigned",
        "record",
    ),
    program_refused(
        "an optimizer's private field, the name also the program's",
        LIN + "opt = torch.optim.SGD(lin.parameters(), lr=0.1)\n_optimizer = 1\ny = opt._optimizer\n",
        6,
        5,
        "is private",
        "record",
    ),
    program_refused(
        "a library module's private field, the name also the program's",
        LIN + "lin._parameters = 1\n",
        4,
        1,
        "attribute '_parameters' is private",
        "record",
    ),
    program_refused("a dunder of the program's own", "class A:\n    __slots__ = 1\n", 2, 5, "private"),
    program_refused("assigning __name__", "__name__ = 'x'\n", 1, 1, "name '__name__' is private"),
    # -- the program's own datasets: listed dunders only, caps hold ---------------------------
    program_refused(
        "a dataset's __getattr__",
        "from torch.utils.data import Dataset\nclass D(Dataset):\n    def __getattr__(self, n):\n"
        "        return 1\n",
        3,
        5,
        "name '__getattr__' is private",
    ),
    program_refused(
        "a dataset's __reduce__ (pickling for workers)",
        "from torch.utils.data import Dataset\nclass D(Dataset):\n    def __reduce__(self):\n"
        "        return 1\n",
        3,
        5,
        "name '__reduce__' is private",
    ),
    program_refused(
        "a dataset too long to go through",
        "import torch\nfrom torch.utils.data import Dataset, DataLoader\nclass D(Dataset):\n"
        "    def __len__(self):\n        return 10**9\n    def __getitem__(self, i):\n        return i\n"
        "for b in DataLoader(D()):\n    pass\n",
        8,
        10,
        "a pass may take 1,000,000",
        "record",
    ),
    # -- DataLoader: one process, no code of its own ------------------------------------------
    program_refused(
        "collate_fn",
        DATASET + "l = DataLoader(D(), collate_fn=print)\n",
        8,
        5,
        "a collate_fn is code",
        "record",
    ),
    program_refused(
        "worker_init_fn",
        DATASET + "l = DataLoader(D(), num_workers=2, worker_init_fn=print)\n",
        8,
        5,
        "programs run in one process",
        "record",
    ),
    program_refused(
        "a multiprocessing context",
        DATASET + "l = DataLoader(D(), num_workers=2, multiprocessing_context='fork')\n",
        8,
        5,
        "no setting 'multiprocessing_context'",
        "record",
    ),
    program_refused(
        "persistent workers",
        DATASET + "l = DataLoader(D(), num_workers=2, persistent_workers=True)\n",
        8,
        5,
        "no setting 'persistent_workers'",
        "record",
    ),
    # -- DataParallel: a module around a module, nothing else ---------------------------------
    program_refused(
        "DataParallel of a function",
        "import torch\nm = torch.nn.DataParallel(print)\n",
        2,
        5,
        "DataParallel takes a module",
        "record",
    ),
    program_refused(
        "torch.distributed itself",
        "import torch\nd = torch.distributed\n",
        2,
        5,
        "programs run in one process",
    ),
    program_refused(
        "nn.parallel's replicate", "import torch\nr = torch.nn.parallel.replicate\n", 2, 5, "not available"
    ),
    # -- generators, distributions, checkpoint, type() -----------------------------------------
    program_refused(
        "a generator's state",
        "import torch\ng = torch.Generator()\ns = g.get_state()\n",
        3,
        5,
        "'get_state' is not available on a Generator",
        "record",
    ),
    program_refused(
        "a huge sample",
        "import torch\nfrom torch.distributions import Normal\ns = Normal(0.0, 1.0).sample((10**9,))\n",
        3,
        5,
        "the limit is",
        "record",
    ),
    program_refused(
        "a distribution's class settings",
        "import torch\nv = torch.distributions.Distribution\n",
        2,
        5,
        "not available",
    ),
    program_refused(
        "checkpoint of torch.save",
        "import torch\nf = torch.utils.checkpoint.checkpoint(torch.save)\n",
        2,
        39,
        "torch.save",
    ),
    program_refused("type of a builtin", "t = type(print)\n", 1, 5, "type(...) names the types", "record"),
    program_refused("type making a class", "t = type('X', (), {})\n", 1, 5, "takes one value here", "record"),
    program_refused(
        "type of torch", "import torch\nt = type(torch)\n", 2, 5, "type(...) names the types", "record"
    ),
    program_refused(
        "a clock of its own", "import time\nt = time.strftime('%Y')\n", 2, 5, "not available", "record"
    ),
    program_refused(
        "a partial of a file function",
        "from functools import partial\nimport torch\nf = partial(torch.save, 1)\n",
        3,
        13,
        "torch.save is not available",
    ),
    program_refused(
        "a partial's inside",
        "from functools import partial\nf = partial(print, 1)\ng = f.func\n",
        3,
        5,
        "not available",
        "record",
    ),
    # -- the evaluator's own gaps: refusals at their line, never the program's exception ----------
    program_refused(
        "a proxy called with arguments it does not take",
        LIN + "lin.train(True, 2, 3)\n",
        4,
        1,
        "train(...) takes other arguments in the checked language",
        "record",
    ),
    program_refused(
        "Python meeting one of the language's objects",
        "class A:\n    pass\nitems = list(A())\n",
        3,
        9,
        "the checked language cannot run this call as written",
        "record",
    ),
    program_refused(
        "a progress bar's stream",
        "from tqdm import tqdm\nb = tqdm([1])\ns = b.fp\n",
        3,
        5,
        "not available",
        "record",
    ),
    program_refused(
        "nn.utils' hooks on a module",
        "import torch\nm = torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2))\n",
        2,
        5,
        "not available",
    ),
]


@pytest.fixture(scope="module")
def warmed() -> None:
    warm_up()


def _forbidden(name: str, hits: list[str]) -> Callable[..., Any]:
    def hit(*args: Any, **kwargs: Any) -> Any:
        hits.append(name)
        raise AssertionError(f"{name} was reached")

    return hit


@pytest.fixture
def sentinels(warmed: None, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    hits = install_sentinels(monkeypatch)
    monkeypatch.setattr(multiprocessing.Process, "start", _forbidden("Process.start", hits))
    monkeypatch.setattr(threading.Thread, "start", _forbidden("Thread.start", hits))
    monkeypatch.setattr(os, "fork", _forbidden("os.fork", hits))
    return hits


def test_the_cases_have_distinct_names() -> None:
    assert len({c.id for c in CASES}) == len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_new_rule_holds_its_wall(case: Case, sentinels: list[str]) -> None:
    result = outcome(case)
    expect = case.expect
    assert isinstance(expect, Refused)
    assert isinstance(result, ProgramError), f"expected a refusal, got a recording: {result}"
    got = (result.stage, result.field, result.line, result.col)  # type: ignore[attr-defined]
    assert got == (expect.stage, expect.field, expect.line, expect.col), str(result)
    assert expect.words in result.message, result.message
    assert not isinstance(result, ProgramRaised), "a refusal, not the program's own exception"
    assert "\n" not in str(result)
    assert sentinels == []


def test_a_loader_with_workers_runs_in_the_program_s_process(sentinels: list[str]) -> None:
    """num_workers= is accepted as a pasted snippet has it, and no process or thread starts."""
    code = (
        DATASET
        + "for b in DataLoader(D(), batch_size=2, num_workers=4, pin_memory=True):\n    print(b.sum())\n"
    )
    from app.core import parse_program, record

    recording = record(parse_program(program_text(code)))
    assert recording.error is None
    assert [t for step in recording.timeline for t in step.printed] == ["tensor(2.)", "tensor(10.)"]
    assert sentinels == []


def test_an_annotation_is_never_run(sentinels: list[str]) -> None:
    """x: T = v is x = v: whatever the annotation says is never evaluated, so it reaches nothing."""
    code = (
        "import torch\nx: open('/etc/passwd').read() = torch.ones(2, requires_grad=True)\n"
        "y: __import__('os').system('ls')\nz: eval('1') = x * 2\nprint(z.sum().item())\n"
    )
    from app.core import parse_program, record

    recording = record(parse_program(program_text(code)))
    assert recording.error is None
    assert [t for step in recording.timeline for t in step.printed] == ["4.0"]
    assert sentinels == []


def test_every_refusal_here_points_to_run() -> None:
    refused = [outcome(case) for case in CASES]
    texts = [str(r) for r in refused if isinstance(r, ProgramError)]
    assert all(RUN_HINT in t for t in texts if "Python says" not in t), [
        t for t in texts if RUN_HINT not in t
    ]
