"""Forms nearly every pasted snippet has beside its model (an unused ``import numpy``, a learning
rate decayed through ``param_groups``, ...), recorded in the checked language and compared with
PyTorch: the program's text run plainly (the oracle), and the same text recorded as a trusted
script, as ``python -m app run`` records it; and the wall around each new form."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import torch

from app.core import record
from app.core.language.evaluator import Evaluator
from app.core.language.hints import RUN_HINT
from app.core.language.parsing import parse
from app.core.loading import parse_python
from app.core.model.errors import ProgramError
from app.core.recorder.script import record_script
from tests.support.oracle import check_against_plain, run_plainly, same

HERE = Path(__file__).resolve().parent
SNIPPETS = sorted(p for p in (HERE.parents[1] / "support" / "snippets").glob("gaps_*.py"))
FIELD = "program"
# Stand-in modules (imported, never used by the snippets): the plain run leaves their imports out,
# as NumPy and matplotlib need not be installed where the tests run.
STAND_INS = ("import numpy", "import matplotlib")


def plain_text(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(STAND_INS))


def run(code: str) -> dict[str, Any]:
    env: dict[str, Any] = {}
    Evaluator(env, field=FIELD).run(parse(code, field=FIELD, mode="exec"))
    return env


def refusal(code: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(code)
    return info.value


def test_the_corpus_has_snippets() -> None:
    assert len(SNIPPETS) >= 4


@pytest.mark.parametrize("path", SNIPPETS, ids=[p.stem for p in SNIPPETS])
def test_a_snippet_is_accepted_and_recorded_as_pytorch_runs_it(path: Path, tmp_path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    recording = record(parse_python(text, name=path.stem))  # accepted as written
    check_against_plain(recording, run_plainly(plain_text(text)))
    plain = tmp_path / path.name
    plain.write_text(plain_text(text), encoding="utf-8")
    script = record_script(plain, stdout=io.StringIO())
    assert script.exception is None
    ran = script.recording
    assert sorted(recording.leaves) == sorted(ran.leaves)
    assert recording.error == ran.error
    assert [(c.call.kind, c.error) for c in recording.calls] == [(c.call.kind, c.error) for c in ran.calls]
    for call in recording.calls:
        ours, theirs = recording.grads_at_end(call.index), ran.grads_at_end(call.index)
        assert set(ours) == set(theirs)
        assert all(same(grad, theirs[name]) for name, grad in ours.items()), f"grads after call {call.index}"


# -- numpy and matplotlib.pyplot: imported, refused at each use ---------------------------


@pytest.mark.parametrize(
    ("code", "line", "col", "words"),
    [
        (
            "import numpy as np\nx = np.zeros(3)",
            2,
            5,
            "numpy.zeros cannot be used: NumPy is not part of programs",
        ),
        ("import numpy\nx = numpy.array([1.0])", 2, 5, "numpy.array cannot be used"),
        ("from numpy import array", 1, 1, "numpy.array cannot be used"),
        ("import numpy.random as npr", 1, 1, "'numpy.random' cannot be imported: NumPy"),
        ("import matplotlib.pyplot as plt\nplt.plot([1, 2])", 2, 1, "programs draw no plots"),
        ("import matplotlib.pyplot as plt\nplt.show()", 2, 1, "matplotlib.pyplot.show cannot be used"),
        ("import matplotlib\nmatplotlib.use('Agg')", 2, 1, "matplotlib.use cannot be used"),
        ("import numpy as np\nx = np.__dict__", 2, 5, "attribute '__dict__' is private"),
        ("import numpy as np\nx = np.__loader__", 2, 5, "attribute '__loader__' is private"),
    ],
)
def test_a_stand_in_module_is_refused_at_each_use(code: str, line: int, col: int, words: str) -> None:
    err = refusal(code)
    assert (err.line, err.col) == (line, col), err
    assert words in err.message
    assert err.message.endswith(RUN_HINT)


def test_a_stand_in_module_cannot_be_called_or_assigned() -> None:
    assert "not a function" in refusal("import numpy as np\nx = np(1)").message
    assert "cannot be assigned" in refusal("import numpy as np\nnp.pi = 3").message


# -- param_groups: hyperparameters read and written, nothing else --------------------------

DECAY = """
w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.5, momentum=0.9)
seen = []
for epoch in range(3):
    opt.zero_grad()
    (w * w).sum().backward()
    opt.step()
    for g in opt.param_groups:
        g['lr'] = g['lr'] * 0.1
    opt.param_groups[0]['momentum'] *= 0.5
    seen.append(opt.param_groups[0]['lr'])
"""


def test_a_learning_rate_written_in_a_group_is_the_one_the_next_step_uses() -> None:
    ours = run("import torch\n" + DECAY)
    plain: dict[str, Any] = {"torch": torch}
    exec(compile(DECAY, "plain", "exec"), plain)  # the oracle: the same text in plain Python
    assert torch.equal(ours["w"], plain["w"])
    assert ours["seen"] == plain["seen"] == pytest.approx([0.05, 0.005, 0.0005])
    without_decay = run("import torch\n" + DECAY.replace("g['lr'] * 0.1", "g['lr']"))
    assert not torch.equal(without_decay["w"], ours["w"])  # the writes changed the steps


def test_a_group_gives_the_parameters_themselves_as_a_new_list() -> None:
    env = run(
        "import torch\nw = torch.ones(2, requires_grad=True)\nopt = torch.optim.Adam([w], lr=0.1)\n"
        "ps = opt.param_groups[0]['params']\nps.append(1)\nbetas = opt.param_groups[0]['betas']\n"
        "n = len(opt.param_groups[0]['params'])"
    )
    assert env["ps"][0] is env["w"] and env["n"] == 1 and env["betas"] == (0.9, 0.999)


@pytest.mark.parametrize(
    ("statement", "words"),
    [
        ("g['foo'] = 1", "only its settings can be assigned"),
        ("g['params'] = []", "only its settings can be assigned"),
        ("g['lr'] = torch.ones(2)", "takes a plain number for lr, not a tensor"),
        ("g['lr'] = 'fast'", "takes a plain number for lr"),
        ("x = g._group", "attribute '_group' is private"),
        ("x = g.keys()", "'keys' is not available on a parameter group"),
        ("x = g.__class__", "attribute '__class__' is private"),
        ("x = opt.state", "'state' is not available on an optim.SGD optimizer"),
        ("x = opt.defaults", "'defaults' is not available"),
        ("x = opt.param_groups[0].update", "'update' is not available on a parameter group"),
        ("opt.param_groups = []", "'param_groups' cannot be assigned"),
    ],
)
def test_a_group_reaches_nothing_but_its_hyperparameters(statement: str, words: str) -> None:
    code = (
        "import torch\nw = torch.ones(2, requires_grad=True)\n"
        f"opt = torch.optim.SGD([w], lr=0.5)\ng = opt.param_groups[0]\n{statement}"
    )
    err = refusal(code)
    assert err.line == 5 and words in err.message, err.message


def test_a_missing_group_key_fails_as_in_python() -> None:
    code = (
        "import torch\nw = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.5)\nx = opt.param_groups[0]['nope']"
    )
    with pytest.raises(KeyError, match="nope"):
        exec(compile(code, "plain", "exec"), {})  # the oracle
    err = refusal(code)
    assert err.line == 4 and "'nope'" in err.message


# -- isinstance, map, filter, iter, next, sorted/min/max with key= -----------------------------

BUILTINS = """
import torch
import torch.nn as nn
lin = nn.Linear(2, 3)
seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
t = torch.ones(2)
kinds = [
    isinstance(t, torch.Tensor), isinstance(lin, nn.Linear), isinstance(lin, nn.ReLU),
    isinstance(seq, nn.Sequential), isinstance(seq[1], (nn.Linear, nn.ReLU)), isinstance(lin, nn.Module),
    isinstance(3, int), isinstance(True, int), isinstance(2.0, int), isinstance([1], (list, tuple)),
    isinstance(t, torch.FloatTensor), isinstance(t, torch.LongTensor), isinstance(1.5, torch.Tensor),
    isinstance("a", str), isinstance({}, dict),
]
order = sorted([3, -7, 2, 5], key=lambda v: abs(v), reverse=True)
stable = sorted(["bb", "a", "cc", "d"], key=len)
mapped = list(map(lambda a, b: a * b, [1, 2, 3], [4, 5]))
kept = list(filter(lambda v: v % 2, range(7)))
truthy = list(filter(None, [0, 1, "", "x"]))
smallest = min([3, -5, 4], key=abs)
largest = max([(1, "a"), (3, "b"), (3, "c")], key=lambda p: p[0])
it = iter([10, 20])
first = next(it)
second = next(it)
done = next(it, "end")
"""


def test_builtins_that_call_functions_give_what_python_gives() -> None:
    ours = run(BUILTINS)
    plain: dict[str, Any] = {}
    exec(compile(BUILTINS, "plain", "exec"), plain)  # the oracle
    for name in ("kinds", "order", "stable", "mapped", "kept", "truthy", "smallest", "largest"):
        assert ours[name] == plain[name], name
    assert (ours["first"], ours["second"], ours["done"]) == (plain["first"], plain["second"], plain["done"])


def test_isinstance_knows_the_programs_classes() -> None:
    code = (
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n"
        "class Deeper(Net):\n    pass\nclass Box:\n    pass\n"
        "a = [isinstance(Deeper(), Net), isinstance(Net(), Deeper), isinstance(Net(), nn.Module),"
        " isinstance(Box(), Box), isinstance(Box(), Net), isinstance(Net().fc, nn.Linear)]"
    )
    assert run(code)["a"] == [True, False, True, True, False, True]


def test_isinstance_knows_a_caught_exception() -> None:
    code = (
        "try:\n    y = [1][3]\nexcept Exception as e:\n"
        "    a = [isinstance(e, IndexError), isinstance(e, LookupError), isinstance(e, ValueError),"
        " isinstance(1, ValueError)]"
    )
    plain: dict[str, Any] = {}
    exec(compile(code, "plain", "exec"), plain)  # the oracle
    assert run(code)["a"] == plain["a"] == [True, True, False, False]


@pytest.mark.parametrize(
    ("code", "line", "words"),
    [
        ("y = isinstance(1, print)", 1, "isinstance(...) takes torch.Tensor, an nn layer"),
        ("y = isinstance(1, 2)", 1, "isinstance(...) takes torch.Tensor"),
        ("x = torch.ones(1)\ny = isinstance(x, x)", 2, "isinstance(...) takes torch.Tensor"),
        ("y = isinstance(1, torch.nn.functional)", 1, "isinstance(...) takes torch.Tensor"),
        ("y = isinstance(1, (str, sorted))", 1, "isinstance(...) takes torch.Tensor"),
        ("y = issubclass(int, int)", 1, "'issubclass' is not available in programs"),
        ("y = torch.Tensor.add", 1, "attributes can only be read from"),
        ("y = torch.Tensor.__mro__", 1, "attribute '__mro__' is private"),
        ("y = list(map(print, range(10**9)))", 1, "the limit is"),
        ("y = sorted(range(10**9), key=abs)", 1, "the limit is"),
        ("y = iter(range(10**9))", 1, "the limit is"),
        ("y = next([1])", 1, "next(...) takes what iter(...) gave"),
        ("y = next(iter(torch.nn))", 1, "cannot go over"),
        ("y = sorted([1], key=abs, cmp=1)", 1, "sorted(...) takes key= and reverse="),
    ],
)
def test_the_new_builtins_hold_the_wall(code: str, line: int, words: str) -> None:
    err = refusal("import torch\n" + code)
    assert err.line == line + 1 and words in err.message, err.message


def test_a_language_limit_inside_map_is_not_caught() -> None:
    code = "def f(v):\n    return f(v)\ntry:\n    y = list(map(f, [1]))\nexcept Exception:\n    y = 0"
    message = refusal(code).message
    assert "recursion" in message or "deep" in message, message


# -- torch.Tensor(...) and friends, cudnn settings --------------------------------------------

CONSTRUCTORS = """
a = torch.Tensor([1.0, 2.0])
b = torch.FloatTensor([[1, 2], [3, 4]])
c = torch.LongTensor([1, 0, 2])
d = torch.Tensor()
e = torch.DoubleTensor((0.5,))
f = torch.BoolTensor([True, False])
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
"""


def test_tensor_constructors_make_what_pytorch_makes() -> None:
    ours = run("import torch\n" + CONSTRUCTORS)
    plain: dict[str, Any] = {"torch": torch}
    exec(compile(CONSTRUCTORS, "plain", "exec"), plain)  # the oracle
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = False, False
    for name in "abcdef":
        assert ours[name].dtype == plain[name].dtype and torch.equal(ours[name], plain[name]), name


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("y = torch.LongTensor(10**9)", "the limit is"),  # NOTE [zeroed memory]: zeros, sized first
        ("y = torch.Tensor(torch.ones(2), 3)", "takes a list of values"),
        ("y = torch.Tensor([1.0], device='meta')", "takes its values only here"),
        ("y = torch.Tensor([[1.0] * 10000] * 10000)", "the limit is"),
        ("torch.backends.cudnn.version = 1", "torch.backends.cudnn.version is not available"),
        ("torch.backends.cudnn.deterministic = 1", "takes True or False"),
        ("torch.backends.mps = 1", "torch.backends.mps is not available"),
        ("torch.cuda.is_available = 1", "cannot be assigned"),
        ("y = torch.backends.cudnn.deterministic", "torch.backends.cudnn.deterministic is not available"),
    ],
)
def test_constructors_and_settings_hold_the_wall(code: str, words: str) -> None:
    err = refusal("import torch\n" + code)
    assert err.line == 2 and words in err.message, err.message


# -- p.data -= ...: in place, as Python does it; replacing .data stays refused -----------------


def test_an_update_through_data_is_in_place_as_in_pytorch() -> None:
    code = (
        "w = torch.ones(3, requires_grad=True)\nw.grad = torch.full((3,), 2.0)\nw.data -= 0.5 * w.grad.data\n"
    )
    ours = run("import torch\n" + code)
    plain: dict[str, Any] = {"torch": torch}
    exec(compile(code, "plain", "exec"), plain)  # the oracle
    assert torch.equal(ours["w"], plain["w"]) and ours["w"].is_leaf and ours["w"].requires_grad


@pytest.mark.parametrize(
    "code",
    [
        "w.data = 3",
        "w.data, b = [0.0, 0.0], 1",
        "for w.data in [torch.zeros(2)]:\n    pass",
    ],
)
def test_data_is_replaced_only_by_a_tensor(code: str) -> None:
    err = refusal(f"import torch\nw = torch.ones(2, requires_grad=True)\n{code}")
    assert err.line == 3, err.message
