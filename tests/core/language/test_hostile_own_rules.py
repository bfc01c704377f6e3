"""The wall around the rules for the program's own names over built-in ones, ``object``, setting a
layer's parameters and modules, and mixed precision (``torch.amp``, ``torch.cuda.amp``). Every case
is refused with one line naming its place and the ``run`` hint, or ends as a plain run does with
PyTorch's own error; none names an evaluator type or reaches a file, a process or a real module."""

from __future__ import annotations

import pytest

from app.core import ProgramError, parse_program, record
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
SEQ = "import torch\nimport torch.nn as nn\nseq = nn.Sequential(nn.Linear(2, 2))\n"  # lines 1-3
SCALER = "import torch\nfrom torch.cuda.amp import autocast, GradScaler\nscaler = GradScaler()\n"  # 1-3

CASES: list[Case] = [
    # -- the program's own names: torch and super stay fixed; a re-bound name is checked where it runs
    program_refused("torch re-bound", "torch = 3\n", 1, 1, "built-in name"),
    program_refused("super re-bound", "super = print\n", 1, 1, "built-in name"),
    program_refused("torch imported under a fixed name", "import math as torch\n", 1, 1, "built-in name"),
    program_refused(
        "a re-bound name to torch's private", "import torch\nF = torch\ny = F._C\n", 3, 5, "private"
    ),
    program_refused(
        "a re-bound name to a file function",
        "import torch\nF = torch\nF.save(torch.ones(1), 'x.pt')\n",
        3,
        1,
        "torch.save is not available",
        "record",
    ),
    program_refused(
        "a re-bound name in a function to a file function",
        "import torch\ndef f(nn):\n    return nn.load('x.pt')\ny = f(torch)\n",
        3,
        12,
        "torch.load is not available",
        "record",
    ),
    program_refused(
        "a forbidden builtin as an argument", "def f(getattr):\n    return 1\n", 1, 7, "reserved"
    ),
    program_refused(
        "a re-bound argparse reading a file by its prefix",
        "import argparse\nlist = argparse.ArgumentParser(fromfile_prefix_chars='@')\n"
        "a = list.parse_args(['@/etc/passwd'])\n",
        3,
        5,
        "no command line",
        "record",
    ),
    program_refused(
        "a held deepcopy of a builtin",
        "import copy\nclone = copy.deepcopy\ny = clone(print)\n",
        3,
        5,
        "cannot be copied",
        "record",
    ),
    # -- object ---------------------------------------------------------------------------------
    program_refused("object's subclasses", "y = object.__subclasses__()\n", 1, 5, "private"),
    program_refused("object's mro", "y = object.mro()\n", 1, 5, "not on the built-in object", "record"),
    program_refused(
        "an attribute on a bare object", "o = object()\no.x = 1\n", 2, 1, "cannot be assigned", "record"
    ),
    program_refused("the type of a bare object", "t = type(object())\n", 1, 5, "type(...) names", "record"),
    program_refused(
        "object and a metaclass", "class A(object, metaclass=type):\n    pass\n", 1, 17, "no keywords"
    ),
    # -- a layer's parameters and modules -----------------------------------------------------------
    program_refused(
        "a builtin as a weight", LIN + "lin.weight = print\n", 4, 1, "cannot be assigned", "record"
    ),
    program_refused(
        "a function as a weight",
        LIN + "def f():\n    pass\nlin.weight = f\n",
        6,
        1,
        "cannot be assigned",
        "record",
    ),
    program_refused("a layer's forward", LIN + "lin.forward = print\n", 4, 1, "cannot be assigned", "record"),
    program_refused(
        "a layer's private parameters", LIN + "lin._parameters = {}\n", 4, 1, "private", "record"
    ),
    program_refused(
        "a builtin as a layer of a Sequential", SEQ + "seq[0] = print\n", 4, 1, "modules or tensors", "record"
    ),
    program_refused(
        "a number in a ModuleDict",
        "import torch.nn as nn\nd = nn.ModuleDict()\nd['a'] = 3\n",
        3,
        1,
        "modules or tensors",
        "record",
    ),
    # -- mixed precision ------------------------------------------------------------------------------
    program_refused(
        "autocast given a function",
        SCALER + "with autocast(dtype=print):\n    pass\n",
        4,
        6,
        "takes a device",
        "record",
    ),
    program_refused(
        "autocast given keywords by **",
        "import torch\nkw = {}\nwith torch.autocast(**kw):\n    pass\n",
        3,
        6,
        "not **",
        "record",
    ),
    program_refused("autocast held", "import torch\na = torch.autocast\n", 2, 5, "used as with", "record"),
    program_refused(
        "autocast as a decorator",
        "import torch\n@torch.autocast('cpu')\ndef f():\n    pass\n",
        2,
        2,
        "decorators",
    ),
    program_refused(
        "a scaler stepping a builtin", SCALER + "scaler.step(print)\n", 4, 1, "optimizer", "record"
    ),
    program_refused("a scaler's own scaler", SCALER + "s = scaler._scaler\n", 4, 5, "private"),
    program_refused(
        "a scaler scaling a builtin", SCALER + "s = scaler.scale(print)\n", 4, 5, "takes a tensor", "record"
    ),
    program_refused(
        "a scaler's state of functions",
        SCALER + "scaler.load_state_dict({'scale': print})\n",
        4,
        1,
        "takes what state_dict() gave",
        "record",
    ),
    program_refused(
        "a scaler made with a function",
        "import torch\ns = torch.amp.GradScaler('cuda', init_scale=print)\n",
        2,
        5,
        "takes a device name",
        "record",
    ),
    program_refused("amp's own module", "import torch\ny = torch.cuda.amp.common\n", 2, 5, "not available"),
    program_refused(
        "autocast's module", "import torch\ny = torch.amp.autocast_mode\n", 2, 5, "not available"
    ),
    program_refused(
        "an attribute set on a scaler", SCALER + "scaler.x = 1\n", 4, 1, "cannot be assigned", "record"
    ),
    program_refused(
        "a scaler deep-copied",
        "import copy\n" + SCALER + "s = copy.deepcopy(scaler)\n",
        5,
        5,
        "cannot be copied",
        "record",
    ),
    program_refused(
        "a scaler's optimizer's inside",
        SCALER + "import torch.nn as nn\nopt = torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)\n"
        "o = opt.optimizer\n",
        6,
        5,
        "not available",
        "record",
    ),
]


@pytest.fixture(scope="module")
def warmed() -> None:
    warm_up()


@pytest.fixture
def sentinels(warmed: None, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return install_sentinels(monkeypatch)


def test_the_cases_have_distinct_names() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_rule_holds_its_wall(case: Case, sentinels: list[str]) -> None:
    result = outcome(case)
    expect = case.expect
    assert isinstance(expect, Refused)
    assert isinstance(result, ProgramError), f"expected a refusal, got a recording: {result}"
    got = (result.stage, result.field, result.line, result.col)  # type: ignore[attr-defined]
    assert got == (expect.stage, expect.field, expect.line, expect.col), str(result)
    assert expect.words in result.message, result.message
    assert not isinstance(result, ProgramRaised), "a refusal, not the program's own exception"
    assert "\n" not in str(result) and RUN_HINT in str(result)
    assert sentinels == []


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (LIN + "lin.weight = 3\n", "cannot assign 'int' as parameter 'weight'"),
        ("import torch\ns = torch.amp.GradScaler('cpu', growth_factor=0.5)\n", "growth factor must be > 1.0"),
        ("o = object(1)\n", "object() takes no arguments"),
    ],
)
def test_what_pytorch_or_python_refuses_is_the_program_s_own_error(
    code: str, error: str, sentinels: list[str]
) -> None:
    recording = record(parse_program(program_text(code)))
    assert recording.error is not None and error in recording.error
    assert sentinels == []


def test_a_printed_scaler_names_pytorch_s_type_not_ours(sentinels: list[str]) -> None:
    recording = record(parse_program(program_text(SCALER + "print(scaler)\n")))
    printed = [t for step in recording.timeline for t in step.printed]
    assert printed == ["<torch.cuda.amp.grad_scaler.GradScaler object>"]
    assert sentinels == []
