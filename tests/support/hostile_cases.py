"""Hostile and broken programs, each with its exact outcome: the cases the hostile, child, command
line and fuzz tests run.

A program file is untrusted input. Each case below is a whole file (TOML
text: a ``[program]``, or the older ``[inputs]``/``[forward]``/``[[calls]]``
shape, which loads as program text) and ends in exactly one of three ways:

- ``Refused``: a ProgramError, raised when the file is loaded or when it is
  recorded, naming the field, line and column, with a message for a learner.
  Static checks of an older file name its fields (``forward.code``); what is
  refused while it runs names its place in the program text it became
  (``program, line N``). Everything that guards the machine (private members,
  files, imports, hooks, sizes, loop and statement limits) is a refusal;
- ``TorchRefuses``: PyTorch itself refuses at backward time; the recording is
  kept and the call ends in an ``error`` step whose text is PyTorch's own
  message, taken from the same thing done in plain PyTorch;
- ``ProgramFails``: the program's own code raised (PyTorch or Python said
  no outside an autograd call); the recording is kept and ends with an
  ``error`` step at that line, as Python would end the program.

Sentinels stand in for files, processes, sockets, serialisation and for
eval/exec/import from our own code: no case may reach any of them.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
import torch

from app.core import Limits, ProgramError, Recording, parse_program, record
from app.core.sizing.limits import MAX_PIECES, MAX_SEQUENCE

APP_DIR = str(Path(__file__).resolve().parents[2] / "app")
LEAF = "torch.tensor([1., 2.], requires_grad=True)"
LEAF_LINE = f"import torch\nx = {LEAF}\n"

# -- building programs ------------------------------------------------------------


def program_text(code: str) -> str:
    """A file of the program shape holding ``code`` (a TOML basic string: JSON escapes)."""
    return f"[program]\ncode = {json.dumps(code, ensure_ascii=False)}\n"


def toml_text(
    *,
    inputs: dict[str, str] | None = None,
    forward: str = "y = x * 2",
    calls: list[dict[str, Any]] | None = None,
) -> str:
    """A program file; every string is written as a TOML basic string (JSON escapes)."""
    lines = ['name = "hostile"', 'title = "A hostile program"', 'summary = "It must fail cleanly."']
    lines.append("[inputs]")
    lines += [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in (inputs or {"x": LEAF}).items()]
    lines += ["[forward]", f"code = {json.dumps(forward, ensure_ascii=False)}"]
    for call in calls if calls is not None else [{"loss": "y.sum()"}]:
        lines.append("[[calls]]")
        lines += [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in call.items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Refused:
    stage: Literal["load", "record"]
    field: str
    line: int | None
    col: int | None
    words: str
    timeout: bool = False


@dataclass(frozen=True)
class TorchRefuses:
    call: int
    plain: Callable[[], object]  # the same thing in plain PyTorch: it raises


@dataclass(frozen=True)
class ProgramFails:
    line: int  # the program line the error step stands at
    words: str  # part of the recorded error
    plain: Callable[[], object] | None = None  # the same thing in plain PyTorch: its text is recorded


Expected = Refused | TorchRefuses | ProgramFails


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    expect: Expected
    limits: Limits | None = field(default=None)
    known_bug: str | None = None  # why the outcome is not yet the one expected (a strict xfail)


# An older file's forward code starts on line 4 of its program text: "import torch", a blank
# line, then one line per input (the cases below have the one input x, unless they say).
FORWARD_START = 4


def fwd(
    code: str, line: int, col: int, words: str, *, stage: Literal["load", "record"] = "record"
) -> Refused:
    if stage == "load":
        return Refused(stage, "forward.code", line, col, words)
    return Refused(stage, "program", FORWARD_START + line - 1, col, words)


def leaf() -> torch.Tensor:
    return torch.tensor([1.0, 2.0], requires_grad=True)


def _nonscalar() -> object:
    return (leaf() * 2).backward()


def _detached() -> object:
    return (leaf() * 2).detach().sum().backward()


def _no_requires_grad() -> object:
    return (torch.tensor([1.0, 2.0]) * 2).sum().backward()


def _saved_modified() -> object:
    y = leaf().exp()
    y.add_(1)
    return y.sum().backward()


def _grad_of_constant() -> object:
    x, w = leaf(), torch.tensor([1.0, 2.0])
    return torch.autograd.grad((x * w).sum(), [w])


def _second_backward() -> object:
    y = leaf().square()
    y.sum().backward()
    return (y * 3).sum().backward()


def _integer_leaf() -> object:
    return torch.tensor([1, 2], requires_grad=True)


def _integer_leaf_in_no_grad() -> object:
    with torch.no_grad():
        return torch.tensor([1, 2], requires_grad=True)


def _inplace_on_a_leaf() -> object:
    x = leaf()
    x += 1
    return x


def _text_sum() -> object:
    text: Any = f"{leaf()}"
    return text.sum()


def _invalid_type() -> object:
    return leaf().type("os.system")


def case(id: str, expect: Expected, limits: Limits | None = None, **parts: Any) -> Case:
    return Case(id, toml_text(**parts), expect, limits)


def program_refused(  # noqa: PLR0917 (read as one row of the table)
    id: str,
    code: str,
    line: int,
    col: int,
    words: str,
    stage: Literal["load", "record"] = "load",
    limits: Limits | None = None,
) -> Case:
    return Case(id, program_text(code), Refused(stage, "program", line, col, words), limits)


# The default counts sit above what runs inside the time limit (NOTE [caps] in limits.py): a bomb
# meets the time limit first. The cases of the counts themselves set them lower, to be quick.
BOMB_LIMITS = Limits(max_iterations=10_000, max_statements=1_000_000)


LINEAR = "import torch\nimport torch.nn as nn\nlin = nn.Linear(2, 2)\n"
SGD = LINEAR + "opt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"


def loss_refused(loss: str, col: int, words: str, stage: Literal["load", "record"] = "load") -> Case:
    return case(f"loss: {loss[:40]}", Refused(stage, "calls[0].loss", 1, col, words), calls=[{"loss": loss}])


def forward_refused(code: str, line: int, col: int, words: str, stage: Literal["load", "record"]) -> Case:
    return case(f"forward: {code[:40]}", fwd(code, line, col, words, stage=stage), forward=code)


NESTED = "(" * 10_000 + "x" + ")" * 10_000
ONE_MB = "x" + " + x" * 250_000  # 1,000,001 characters

CASES: list[Case] = [
    # -- escapes through attributes, names and imports --------------------------------
    forward_refused("y = ().__class__.__bases__", 1, 5, "attribute '__bases__' is private", "load"),
    loss_refused("x.__class__.__subclasses__()", 1, "attribute '__subclasses__' is private"),
    forward_refused("y = x._version", 1, 5, "attribute '_version' is private", "load"),
    forward_refused(
        "y = x * 2\nz = y.grad_fn._saved_self", 2, 5, "attribute '_saved_self' is private", "load"
    ),
    forward_refused("import subprocess", 1, 1, "'subprocess' cannot be imported", "load"),
    # NOTE [stand-in modules: os]: os binds a stand-in; only os.path's functions of text are there
    program_refused("os.system", "import os\nos.system('ls')\n", 2, 1, "os.system cannot be used", "record"),
    program_refused("from os import system", "from os import system\n", 1, 1, "os.system cannot be used"),
    program_refused("os.environ", "from os import environ\n", 1, 1, "os.environ cannot be used"),
    program_refused(
        "os.path.exists", "import os\ny = os.path.exists('/etc')\n", 2, 5, "os.path.exists cannot", "record"
    ),
    program_refused("os.path.os", "import os\ny = os.path.os\n", 2, 5, "os.path.os cannot be used", "record"),
    program_refused(
        "os.path.abspath",
        "import os.path as p\ny = p.abspath('.')\n",
        2,
        5,
        "os.path.abspath cannot",
        "record",
    ),
    program_refused(
        "sys.modules", "import sys\ny = sys.modules\n", 2, 5, "sys.modules cannot be used", "record"
    ),
    program_refused(
        "os.path.join's globals", "import os\ny = os.path.join.__globals__\n", 2, 5, "is private"
    ),
    program_refused(
        "os.path of a program object",
        "import os\nclass P:\n    pass\ny = os.path.join(P(), 'a')\n",
        4,
        5,
        "os.path.join takes text here",
        "record",
    ),
    forward_refused("from subprocess import run", 1, 1, "'subprocess' cannot be imported", "load"),
    loss_refused("__import__('os').system('echo pwned')", 1, "name '__import__' is private"),
    forward_refused("y = open('/etc/passwd')", 1, 5, "programs cannot read or write files", "load"),
    forward_refused("y = eval('x * 2')", 1, 5, "programs never run text as code", "load"),
    forward_refused("y = ｅｖａｌ('x * 2')", 1, 5, "programs never run text as code", "load"),
    forward_refused("y = getattr(x, '__class__')", 1, 5, "read attributes with a dot", "load"),
    forward_refused("y = x\nz = F.__builtins__", 2, 5, "attribute '__builtins__' is private", "load"),
    forward_refused("y = torch.save(x, '/tmp/lens.pt')", 1, 5, "torch.save is not available", "load"),
    forward_refused("y = torch.load('/tmp/lens.pt')", 1, 5, "torch.load is not available", "load"),
    forward_refused("y = torch.hub.load('a/b', 'c')", 1, 5, "torch.hub is not available", "load"),
    forward_refused("y = torch.ops.aten.mul(x, 2)", 1, 5, "torch.ops is not available", "load"),
    forward_refused("y = x.numpy()", 1, 5, "NumPy is not part of programs", "load"),
    forward_refused("y = x.ｎｕｍｐｙ()", 1, 5, "NumPy is not part of programs", "load"),
    forward_refused("y = x.tofile('/tmp/lens.bin')", 1, 5, "programs cannot read or write files", "load"),
    forward_refused("y = x.untyped_storage()", 1, 5, "it reaches raw memory", "load"),
    forward_refused("y = x.const_data_ptr()", 1, 5, "it reaches raw memory", "load"),
    forward_refused("y = x.mutable_data_ptr()", 1, 5, "it reaches raw memory", "load"),
    forward_refused("y = x.data_ptr", 1, 5, "it reaches raw memory", "load"),
    forward_refused("y = x._typed_storage()", 1, 5, "is private", "load"),
    forward_refused("y = x.storage_offset()", 1, 5, "it reaches raw memory", "load"),
    forward_refused("y = x.is_pinned() or x.pin_memory()", 1, 22, "it reaches raw memory", "load"),
    forward_refused("y = x.to_dlpack()", 1, 5, "it reaches raw memory", "load"),
    forward_refused("m = torch.nn.Linear(2, 2)\nm.share_memory()", 2, 1, "it reaches raw memory", "load"),
    # a hook is the program's own function (tensor_hooks.py): never a tensor, a torch function,
    # or the method itself held as a value to call later with anything
    forward_refused("y = x.register_hook(x)", 1, 21, "takes a function the program defines", "record"),
    forward_refused(
        "y = x.register_hook(torch.exp)", 1, 21, "takes a function the program defines", "record"
    ),
    forward_refused("f = x.register_hook\ny = f(print)", 1, 5, "it would run Python code of its own", "load"),
    forward_refused("y = x.register_hook(print)\nz = y._handle", 2, 5, "is private", "load"),
    # -- syntax that is not part of the language --------------------------------------
    forward_refused("f = lambda v: v.__class__\ny = f(x)", 1, 15, "attribute '__class__' is private", "load"),
    case(
        "forward: a comprehension bomb",
        fwd("y = torch.stack([v * 2 for v in range(10**6)])", 1, 17, "this loop ran 10,000 times"),
        limits=BOMB_LIMITS,
        forward="y = torch.stack([v * 2 for v in range(10**6)])",
    ),
    case(  # NOTE [missing attributes]: Python's own AttributeError, as a plain run raises it
        "forward: an f-string makes text, which has no sum()",
        ProgramFails(5, "Python says: 'str' object has no attribute 'sum'", _text_sum),
        forward="y = f'{x}'",
    ),
    forward_refused(
        "y = f'{x:>1000000000}'", 1, 5, "f-string widths and precisions are limited to 100", "load"
    ),
    forward_refused("y = f'{x.__class__}'", 1, 8, "attribute '__class__' is private", "load"),
    forward_refused("y = (z := x * 2)", 1, 6, "the walrus operator := is not allowed", "load"),
    forward_refused(
        "y = torch.add(*[x] * 10**7)", 1, 16, "this would build a sequence of 10,000,000 items", "record"
    ),
    forward_refused("y = torch.add(x, **{'_other': x})", 1, 18, "keyword '_other' is private", "record"),
    forward_refused("y = " + NESTED, 1, 205, "too many nested parentheses", "load"),
    forward_refused("y = " + "-" * 200 + "x", 1, 104, "nested more than 100 levels deep", "load"),
    forward_refused("y = x\x00 * 2", 1, 6, "NUL character", "load"),
    forward_refused("y = x\nz = '" + "A" * 5000 + "'", 2, 5, "text constants are limited to 1,000", "load"),
    case(
        "a 900 KB expression",
        Refused("load", "forward.code", 1, 100_001, "characters long; the limit is 100,000"),
        forward="y = " + "x + " * 225_000 + "x",
    ),
    case(
        "a 1 MB expression (the file is over 1 MB)",
        Refused("load", "file", None, None, "program files are limited to 1,000,000 bytes"),
        calls=[{"loss": ONE_MB}],
    ),
    # -- names that are not bound -----------------------------------------------------
    forward_refused("y = z * 2", 1, 5, "name 'z' is not defined", "load"),
    loss_refused("q.sum()", 1, "name 'q' is not defined"),
    case(
        "a loss that uses a name bound only by a later call",
        Refused("load", "calls[0].loss", 1, 1, "name 'g' is not defined"),
        calls=[{"loss": "g.sum()"}, {"kind": "grad", "loss": "y.sum()", "inputs": ["x"], "bind": "g"}],
    ),
    case(
        "grad inputs never bound",
        Refused("load", "calls[0].inputs", None, None, "'q' is not defined"),
        calls=[{"kind": "grad", "loss": "y.sum()", "inputs": ["q"]}],
    ),
    case(
        "a bind that shadows a leaf",
        Refused("load", "calls[0].bind", None, None, "'x' already names an input; pick a new name"),
        calls=[{"kind": "grad", "loss": "y.sum()", "inputs": ["x"], "bind": "x"}],
    ),
    case(
        "a bind that shadows a forward value",
        Refused("load", "calls[0].bind", None, None, "'y' already names a value; pick a new name"),
        calls=[{"kind": "grad", "loss": "y.sum()", "inputs": ["x"], "bind": "y"}],
    ),
    forward_refused("torch = 3\ny = x", 1, 1, "'torch' is a built-in name and cannot be assigned", "load"),
    # -- values a program may not build ----------------------------------------------
    case(
        "torch.ones(10**12)",
        Refused("record", "program", 3, 5, "a tensor of 1,000,000,000,000 elements; the limit is 10,000,000"),
        inputs={"x": "torch.ones(10**12, requires_grad=True)"},
    ),
    forward_refused(
        "v = torch.ones(1).expand(10**6, 10**6)\nm = v.contiguous()\ny = x * 2",
        1,
        5,
        "a tensor of 1,000,000,000,000 elements",
        "record",
    ),
    forward_refused(
        "a = torch.ones(10**4, 1)\nb = torch.ones(1, 10**4)\nc = a + b\ny = x * 2",
        3,
        5,
        "a tensor of 100,000,000 elements",
        "record",
    ),
    forward_refused("y = x.repeat(10**6, 10**6)", 1, 5, "a tensor of 2,000,000,000,000 elements", "record"),
    forward_refused(
        "z = torch.zeros(10**6, 10**6, device='cpu')\ny = x", 1, 5, "1,000,000,000,000 elements", "record"
    ),
    forward_refused(
        "z = x.new_ones(10**12, device='meta')\ny = x", 1, 5, "1,000,000,000,000 elements", "record"
    ),
    forward_refused("z = torch.ones(torch.tensor(10**10))\ny = x", 1, 5, "10,000,000,000 elements", "record"),
    forward_refused(
        "z = F.one_hot(torch.tensor([10**10]))\ny = x", 1, 5, "10,000,000,001 elements", "record"
    ),
    forward_refused(
        "z = torch.tensor([10**10]).bincount()\ny = x", 1, 5, "10,000,000,001 elements", "record"
    ),
    forward_refused(
        "z = x.repeat_interleave(torch.tensor([10**10, 1]))\ny = x", 1, 5, "10,000,000,001 elements", "record"
    ),
    forward_refused(
        "z = torch.ones(10**5).split(1)\ny = x",
        1,
        5,
        f"100,000 separate tensors; the limit is {MAX_PIECES:,}",
        "record",
    ),
    forward_refused(
        "z = torch.ones(3000, 3000) @ torch.ones(3000, 3000)\ny = x",
        1,
        5,
        "this would take about 27,0",  # 3000**3 multiply-adds, and a little more
        "record",
    ),
    forward_refused(
        "z = F.max_pool1d(torch.ones(1, 1, 10**6), 5 * 10**5, 1)\ny = x",
        1,
        5,
        "this would take about 500,003,000,000 operations",
        "record",
    ),
    forward_refused(
        "a = torch.ones(1, 1, 3162, 3162)\nk = torch.ones(1, 1, 1581, 1581)\nz = F.conv2d(a, k)\ny = x",
        3,
        5,
        "this needs a scratch buffer of",
        "record",
    ),
    forward_refused("n = 9 ** 9 ** 9\ny = x", 1, 5, "this power would have more than 100,000 bits", "record"),
    forward_refused(
        "z = [0] * 10**9\ny = x", 1, 5, f"1,000,000,000 items; the limit is {MAX_SEQUENCE:,}", "record"
    ),
    forward_refused("z = torch.tensor([[0] * 10**5] * 10**3)\ny = x", 1, 18, "100,000,000 items", "record"),
    forward_refused("z = [0] * 10**6\nz += z\ny = x", 2, 1, "2,000,000 items", "record"),
    forward_refused(
        "z = [0] * x.sum().long()\ny = x", 1, 5, "repeated a whole number of times, not by a tensor", "record"
    ),
    forward_refused(
        "s = '%*d' % (10**9, 1)\ny = x", 1, 5, "% formats here take widths and precisions", "record"
    ),
    Case(
        "forward: r = round(5, -10**9)\ny = x",
        toml_text(forward="r = round(5, -10**9)\ny = x"),
        fwd("", 1, 5, "round() takes at most 1000 digits"),
    ),
    forward_refused(
        "s = x.to_sparse()\ny = s * 2", 1, 5, "PyTorch cannot size _to_sparse before running it", "record"
    ),
    # -- values of the wrong kind -----------------------------------------------------
    case(
        "an integer leaf that requires grad",
        ProgramFails(3, "PyTorch says: Only Tensors of floating point and complex dtype", _integer_leaf),
        inputs={"x": "torch.tensor([1, 2], requires_grad=True)"},
    ),
    forward_refused("y = (3).real", 1, 5, "not from an int", "record"),
    forward_refused("y = x(2)", 1, 5, "'x' is a tensor, not a function", "record"),
    forward_refused("y = x.sum\nz = y", 1, 5, "'sum' is a method: call it", "record"),
    forward_refused(
        "g = torch.manual_seed(0)\ny = g.seed()", 2, 5, "'seed' is not available on a Generator", "record"
    ),
    case(
        "forward: y = x.type('os.system')",
        ProgramFails(4, "PyTorch says: invalid type: 'os.system'", _invalid_type),
        forward="y = x.type('os.system')",
    ),
    # -- PyTorch itself refuses, at backward time -------------------------------------
    case("a non-scalar loss", TorchRefuses(0, _nonscalar), calls=[{"loss": "y"}]),
    case(
        "a loss that does not require grad", TorchRefuses(0, _detached), calls=[{"loss": "y.detach().sum()"}]
    ),
    case(
        "a leaf without requires_grad",
        TorchRefuses(0, _no_requires_grad),
        inputs={"x": "torch.tensor([1., 2.])"},
    ),
    case(
        "an in-place change of a saved tensor",
        TorchRefuses(0, _saved_modified),
        forward="y = x.exp()\ny.add_(1)",
    ),
    case(
        "grad with respect to a constant",
        TorchRefuses(0, _grad_of_constant),
        inputs={"x": LEAF, "w": "torch.tensor([1., 2.])"},
        forward="y = x * w",
        calls=[{"kind": "grad", "loss": "y.sum()", "inputs": ["w"]}],
    ),
    case(
        "a second backward through freed buffers",
        TorchRefuses(1, _second_backward),
        forward="y = x.square()",
        calls=[{"loss": "y.sum()"}, {"loss": "(y * 3).sum()"}],
    ),
    # -- limits of the whole recording ------------------------------------------------
    case(
        "more allocations than the recording's budget",
        fwd("", 6, 5, "made 5,002 tensor elements and list items; the limit is 5,000"),
        forward="a = torch.ones(1000)\nb = torch.ones(1000)\nc = torch.ones(1000)\nd = torch.ones(1000)\n"
        "e = torch.ones(1000)\ny = x * 2",
        limits=Limits(max_total_elements=5_000),
    ),
    case(
        "a recording past its time limit",
        Refused(
            "record", "program", 1, 1, "the recording ran longer than -1 s and was stopped", timeout=True
        ),
        limits=Limits(time_limit_s=-1),
    ),
    # -- programs: loops and statements that would never end --------------------------
    Case(
        "a loop bomb",
        program_text("for i in range(10**9):\n    pass\n"),
        Refused("record", "program", 1, 1, "this loop ran 10,000 times; the limit is 10,000"),
        limits=BOMB_LIMITS,
    ),
    Case(
        "a loop over a long list",
        program_text("for v in [1] * 10**6:\n    a = v\n"),
        Refused("record", "program", 1, 1, "this loop ran 10,000 times; the limit is 10,000"),
        limits=BOMB_LIMITS,
    ),
    Case(
        "a statement bomb of nested loops",
        program_text(
            "for i in range(1000):\n    for j in range(1000):\n"
            "        for k in range(1000):\n            a = 1\n"
        ),
        Refused("record", "program", 4, 13, "the program ran 200,000 statements; the limit is 200,000"),
        limits=Limits(max_statements=200_000),  # the default, 1,000,000, meets the time limit first here
    ),
    Case(
        "a graph that grows without end",
        program_text(
            "import torch\nx = torch.ones(1000, requires_grad=True)\nt = x\n"
            "for i in range(10**5):\n    t = t + x\n"
        ),
        Refused("record", "program", 4, 1, "this loop ran 10,000 times; the limit is 10,000"),
        limits=BOMB_LIMITS,
    ),
    Case(
        "a loop past the time limit",
        program_text("import torch\nfor i in range(100):\n    a = torch.ones(10)\n"),
        Refused("record", "program", 1, 1, "the recording ran longer than -1 s", timeout=True),
        limits=Limits(time_limit_s=-1),
    ),
    program_refused(
        "while",
        "i = 0\nwhile True:\n    i = i + 1\n",
        2,
        1,
        "this loop ran 10,000 times",
        "record",
        BOMB_LIMITS,
    ),
    program_refused(
        "def",
        "def f(x):\n    return f(x)\n\nf(1)\n",
        2,
        12,
        "functions here call each other at most",
        "record",
    ),
    program_refused(
        "class", "class A:\n    def f(self):\n        return self.__dict__\n", 3, 16, "'__dict__' is private"
    ),
    program_refused(
        "a list that holds itself", "a = [1]\na.append(a)\n", 2, 1, "a list cannot hold itself", "record"
    ),
    program_refused(
        "a list doubled", "a = [0]\nfor i in range(100):\n    a = a + a\n", 3, 9, "1,048,576 items", "record"
    ),
    program_refused(
        "an integer squared",
        "n = 2\nfor i in range(100):\n    n = n * n\n",
        3,
        9,
        "more than 100,000 bits",
        "record",
    ),
    program_refused(
        "global settings",
        "import torch\ntorch.set_grad_enabled(False)\n",
        2,
        1,
        "is used only as with torch.set_grad_enabled():",
        "record",
    ),
    program_refused(
        "the default dtype",
        "import torch\ntorch.set_default_dtype(torch.float64)\n",
        2,
        1,
        "global settings would leak",
    ),
    # -- programs: proxies probed for what they do not list -----------------------------
    program_refused(
        "a module's _parameters", LINEAR + "p = lin._parameters\n", 4, 5, "attribute '_parameters' is private"
    ),
    program_refused(
        "a module's __dict__", LINEAR + "p = lin.__dict__\n", 4, 5, "attribute '__dict__' is private"
    ),
    program_refused(
        "a layer of a Sequential, then private",
        "import torch\nm = torch.nn.Sequential(torch.nn.Linear(2, 2))\na = m[0]\nb = a._parameters\n",
        4,
        5,
        "attribute '_parameters' is private",
    ),
    program_refused(
        "a parameter group's dict",
        SGD + "g = opt.param_groups[0]._group\n",
        5,
        5,
        "attribute '_group' is private",
    ),
    program_refused(
        "a parameter group's methods",
        SGD + "opt.param_groups[0].update({'lr': 1})\n",
        5,
        1,
        "'update' is not available on a parameter group",
        "record",
    ),
    program_refused(
        "optimizer state", SGD + "g = opt.state\n", 5, 5, "'state' is not available on an optim.SGD", "record"
    ),
    program_refused(
        "an optimizer's state_dict",
        SGD + "d = opt.state_dict()\n",
        5,
        5,
        "'state_dict' is not available",
        "record",
    ),
    program_refused(
        "state_dict into a dict of the program's",
        LINEAR + "d = lin.state_dict(destination={})\n",
        4,
        5,
        "state_dict(...) takes other arguments in the checked language",
        "record",
    ),
    program_refused(
        "load_state_dict",
        LINEAR + "lin.load_state_dict(lin)\n",
        4,
        1,
        "load_state_dict(...) takes a dict of tensors by name",
        "record",
    ),
    program_refused(
        "apply", LINEAR + "lin.apply(lin)\n", 4, 1, "an nn.Linear module takes tensors, numbers", "record"
    ),
    program_refused(
        "to", LINEAR + "lin.to('meta')\n", 4, 1, "an nn.Linear module cannot move to meta", "record"
    ),
    program_refused(
        "forward", LINEAR + "f = lin.forward\n", 4, 5, "'forward' is not available on an nn.Linear", "record"
    ),
    program_refused(
        "assigning a parameter",
        LINEAR + "lin.weight = print\n",
        4,
        1,
        "'weight' cannot be assigned",
        "record",
    ),
    program_refused(
        "a private attribute assigned", LINEAR + "lin._x = 3\n", 4, 1, "attribute '_x' is private", "record"
    ),
    program_refused(
        "nn.Module itself",
        "import torch\nm = torch.nn.Module()\n",
        2,
        5,
        "torch.nn.Module is a base for classes: write class Net(nn.Module):",
        "record",
    ),
    program_refused(
        "assigning a tensor's shape",
        LEAF_LINE + "x.data.shape = (3,)\n",
        3,
        1,
        "a tensor only .grad, .requires_grad and .data",
        "record",
    ),
    program_refused(
        "new_empty_strided",
        "import torch\ny = torch.ones(2).new_empty_strided((3,), (1,))\n",
        2,
        5,
        "'.new_empty_strided' is not allowed",
    ),
    program_refused(
        "torch.empty_strided",
        "import torch\ny = torch.empty_strided((3,), (1,))\n",
        2,
        5,
        "torch.empty_strided is not available",
    ),
    # -- programs: hooks, which would run code of their own -----------------------------
    program_refused(
        "a forward hook",
        LINEAR + "h = lin.register_forward_hook(torch.relu)\n",
        4,
        31,
        "register_forward_hook(hook) takes a function the program defines",
        "record",
    ),
    program_refused(
        "a backward hook",
        LINEAR + "h = lin.register_full_backward_hook(torch.relu)\n",
        4,
        37,
        "register_full_backward_hook(hook) takes a function the program defines",
        "record",
    ),
    program_refused(
        "a parameter hook's handle",
        LINEAR + "h = lin.weight.register_hook(print)\nh.hooks_dict_ref()\n",
        5,
        1,
        "'hooks_dict_ref' is not available on a hook handle",
        "record",
    ),
    # NOTE [grad_fn views]: t.grad_fn is a view listing name(), next_functions and variable only
    program_refused(
        "a node's hook",
        LEAF_LINE + "y = x * 2\nh = y.grad_fn.register_hook(print)\n",
        4,
        5,
        "'.register_hook' is not allowed",
        "record",
    ),
    program_refused(
        "a node's prehook",
        LEAF_LINE + "y = x * 2\nh = y.grad_fn.register_prehook(print)\n",
        4,
        5,
        "'register_prehook' is not available on a grad_fn node",
        "record",
    ),
    program_refused(
        "a next node's hook",
        LEAF_LINE + "y = x * 2\nn = y.grad_fn.next_functions[0][0]\nh = n.register_prehook(print)\n",
        5,
        5,
        "'register_prehook' is not available on a grad_fn node",
        "record",
    ),
    program_refused(
        "a node's metadata",
        LEAF_LINE + "y = x * 2\ny.grad_fn.metadata['a'] = print\n",
        4,
        1,
        "'metadata' is not available on a grad_fn node",
        "record",
    ),
    program_refused("a node's class", LEAF_LINE + "y = x * 2\nh = y.grad_fn.__class__\n", 4, 5, "is private"),
    program_refused(
        "a node's saved tensor",
        LEAF_LINE + "y = x * 2\nh = y.grad_fn.next_functions[0][0]._saved_self\n",
        4,
        5,
        "is private",
    ),
    program_refused(
        "saved tensor hooks without unpack",
        "import torch\nwith torch.autograd.graph.saved_tensors_hooks(print):\n    pass\n",
        2,
        6,
        "saved_tensors_hooks(pack, unpack) takes the two functions",
        "record",
    ),
    # -- programs: their own errors end them with an error step -------------------------
    Case(
        "an error inside no_grad",
        program_text(
            "import torch\nwith torch.no_grad():\n    x = torch.tensor([1, 2], requires_grad=True)\n"
        ),
        ProgramFails(3, "PyTorch says: Only Tensors of floating point", _integer_leaf_in_no_grad),
    ),
    Case(
        "an in-place change of a leaf",
        program_text(LEAF_LINE + "x += 1\n"),
        ProgramFails(
            3,
            "PyTorch says: a leaf Variable that requires grad is being used in an in-place",
            _inplace_on_a_leaf,
        ),
    ),
]


def case_params(cases: list[Case]) -> list[Any]:
    """The cases as pytest parameters; a case with a known bug is a strict xfail."""
    marks = {c.id: [pytest.mark.xfail(strict=True, reason=c.known_bug)] if c.known_bug else [] for c in cases}
    return [pytest.param(c, id=c.id, marks=marks[c.id]) for c in cases]


# -- sentinels: nothing outside the language is ever reached -----------------------


class Sentinel(Exception):
    """Raised by anything a program must never reach."""


def warm_up() -> None:
    """Do once what PyTorch imports lazily (meta kernels, Dynamo), before the sentinels go in."""
    text = toml_text(forward="y = F.mse_loss(x, x * 2) + torch.cat([x, x]).mean()")
    record(parse_program(text))


def install_sentinels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace everything a program must never reach; the list collects what was reached."""
    hits: list[str] = []

    def forbid(name: str) -> Callable[..., Any]:
        def hit(*args: Any, **kwargs: Any) -> Any:
            hits.append(name)
            raise Sentinel(name)

        return hit

    targets: list[tuple[Any, str]] = [
        (builtins, "open"),
        (io, "open"),
        (os, "system"),
        (os, "popen"),
        (os, "execv"),
        (os, "execve"),
        (os, "remove"),
        (subprocess, "Popen"),
        (socket, "socket"),
        (shutil, "rmtree"),
        (pickle, "load"),
        (pickle, "loads"),
        (torch, "save"),
        (torch, "load"),
        (torch.hub, "load"),
        (torch.Tensor, "numpy"),
    ]
    for owner, name in targets:
        monkeypatch.setattr(owner, name, forbid(f"{getattr(owner, '__name__', owner)}.{name}"))
    for name in ("eval", "exec", "compile", "__import__"):
        monkeypatch.setattr(builtins, name, _from_app_only(getattr(builtins, name), name, hits))
    return hits


def _from_app_only(real: Callable[..., Any], name: str, hits: list[str]) -> Callable[..., Any]:
    """Let PyTorch's own lazy machinery use ``real``; our code must never call it.

    PyTorch's C++ code imports its own modules while one of our frames is the
    innermost Python frame, so ``import torch...`` seen from app/ is allowed.
    """

    def guarded(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_code.co_filename
        torch_itself = name == "__import__" and str(args[0]).split(".")[0] == "torch"
        if caller.startswith(APP_DIR) and not torch_itself:
            hits.append(f"{name} from {caller}")
            raise Sentinel(name)
        return real(*args, **kwargs)

    return guarded


def outcome(case: Case) -> Recording | ProgramError:
    """Load and record ``case``; anything but a ProgramError or a recording fails the test."""
    try:
        program = parse_program(case.text)
    except ProgramError as err:
        err.stage = "load"  # type: ignore[attr-defined]
        return err
    try:
        return record(program, limits=case.limits)
    except ProgramError as err:
        err.stage = "record"  # type: ignore[attr-defined]
        return err


def plain_error(plain: Callable[[], object]) -> str:
    with pytest.raises((RuntimeError, ValueError, AttributeError)) as info:
        plain()
    return str(info.value)
