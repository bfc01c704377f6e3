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
from oracle import check_against_plain, run_plainly, same

from app.core import record
from app.core.language.evaluator import Evaluator
from app.core.language.hints import RUN_HINT
from app.core.language.parsing import parse
from app.core.loading import parse_python
from app.core.model.errors import ScenarioError
from app.core.recording.script import record_script

SNIPPETS = sorted((Path(__file__).resolve().parent / "snippets").glob("gaps_*.py"))
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


def refusal(code: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        run(code)
    return info.value


def test_the_corpus_has_snippets() -> None:
    assert len(SNIPPETS) >= 2


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
        ("g['lr'] = torch.ones(1)", "takes a plain number for lr, not a tensor"),
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
