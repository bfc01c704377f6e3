"""Fixes are proven before they are shown, on the shapes real scripts have.

Hypothesis varies each shape (names, tuple sizes, where the step sits, loop
lengths); for each, the first proven fix is applied and the script run plainly
with PyTorch as the oracle: it raises nothing. A recipe that is deliberately
wrong (an edit that raises, a claim that is false) is never shown.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.lesson.edits import changed_lines
from app.core.lesson.fix import Claim, Fix
from app.core.lesson.prove import proven_fixes
from app.core.model.recording import Recording
from tests.support.fixes_support import recorded, run_plainly, script_recorder

SHAPES = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
NAMES = st.sampled_from(["h", "hidden", "state", "hx", "carry"])


def first_proven(code: str) -> tuple[Recording, Fix, Path]:
    folder = Path(tempfile.mkdtemp())
    rec = recorded(folder, code)
    assert isinstance(rec, Recording) and (rec.failed is not None or rec.error is not None), code
    proven = proven_fixes(rec, record=script_recorder(folder))
    assert proven, code
    fix = proven[0].fix
    assert run_plainly(folder, fix.code) is None, (fix.title, fix.code)
    return rec, fix, folder


def carried_script(name: str, shape: str, batches: int) -> str:
    cell = {"tensor": "nn.RNNCell(2, 3)", "tuple": "nn.LSTMCell(2, 3)", "gru": "nn.GRUCell(2, 3)"}[shape]
    start = "(torch.zeros(1, 3), torch.zeros(1, 3))" if shape == "tuple" else "torch.zeros(1, 3)"
    out = f"{name}[0]" if shape == "tuple" else name
    return (
        "import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\n"
        f"cell = {cell}\nopt = torch.optim.SGD(cell.parameters(), lr=0.1)\n"
        f"{name} = {start}\n"
        f"for i in range({batches}):\n"
        f"    {name} = cell(torch.randn(1, 2), {name})\n"
        f"    loss = {out}.pow(2).mean()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )


@SHAPES
@given(name=NAMES, shape=st.sampled_from(["tensor", "tuple", "gru"]), batches=st.integers(2, 4))
def test_carried_state_of_any_shape_is_detached_first(name: str, shape: str, batches: int) -> None:
    _, fix, _ = first_proven(carried_script(name, shape, batches))
    assert "detach" in fix.title and not fix.band_aid
    if shape == "tuple":
        assert f"{name} = tuple(t.detach() for t in {name})" in fix.code


@SHAPES
@given(name=st.sampled_from(["hidden", "state", "memory"]), batches=st.integers(2, 3))
def test_state_kept_on_the_module_is_detached_where_it_is_carried(name: str, batches: int) -> None:
    code = (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        f"        self.rnn = nn.GRU(2, 3, batch_first=True)\n        self.{name} = None\n\n"
        "    def forward(self, x):\n"
        f"        out, self.{name} = self.rnn(x, self.{name})\n        return out\n\n\n"
        "m = M()\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        f"for i in range({batches}):\n    loss = m(torch.randn(1, 4, 2)).sum()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    _, fix, _ = first_proven(code)
    assert f"self.{name} = " in "\n".join(changed_lines(code, fix.code))


@SHAPES
@given(name=st.sampled_from(["total", "running_loss", "epoch_loss"]), start=st.sampled_from(["0", "0.0"]))
def test_a_loss_accumulated_across_iterations_is_reset_before_anything_else(name: str, start: str) -> None:
    code = (
        "import torch\n\ntorch.manual_seed(0)\nw = torch.randn(3, requires_grad=True)\n"
        f"{name} = {start}\nfor i in range(3):\n    loss = (w * torch.randn(3)).pow(2).sum()\n"
        f"    {name} += loss\n    {name}.backward()\n"
    )
    _, fix, _ = first_proven(code)
    assert fix.title == f"{name} = {start} at the start of each iteration"


@SHAPES
@given(
    name=st.sampled_from(["laterals", "feats", "maps"]),
    holder=st.sampled_from(["list", "dict"]),
    op=st.sampled_from(["+=", "*="]),
)
def test_an_in_place_write_into_a_held_tensor_is_made_out_of_place(name: str, holder: str, op: str) -> None:
    keys = ["0", "1"] if holder == "list" else ['"a"', '"b"']
    made = (
        "[torch.relu(w * (i + 1)) for i in range(2)]"
        if holder == "list"
        else '{"a": torch.relu(w * 1), "b": torch.relu(w * 2)}'
    )
    code = (
        "import torch\n\nw = torch.randn(4, requires_grad=True)\n"
        f"{name} = {made}\n{name}[{keys[0]}] {op} {name}[{keys[1]}]\n"
        f"sum(v.sum() for v in {name}{'.values()' if holder == 'dict' else ''}).backward()\n"
    )
    _, fix, _ = first_proven(code)
    assert f"{name}[{keys[0]}] = {name}[{keys[0]}] {op[0]} {name}[{keys[1]}]" in fix.code


@SHAPES
@given(lr=st.sampled_from(["0.1", "lr"]), names=st.sampled_from([("w", "b"), ("weight", "bias")]))
def test_a_leaf_written_in_place_is_updated_under_no_grad(lr: str, names: tuple[str, str]) -> None:
    w, b = names
    code = (
        f"import torch\n\nlr = 0.1\n{w} = torch.randn(3, requires_grad=True)\n"
        f"{b} = torch.zeros(1, requires_grad=True)\n"
        f"for i in range(2):\n    loss = ({w}.sum() + {b}).pow(2).sum()\n    loss.backward()\n"
        f"    {w} -= {lr} * {w}.grad\n    {b} -= {lr} * {b}.grad\n"
    )
    _, fix, _ = first_proven(code)
    assert (
        f"    with torch.no_grad():\n        {w} -= {lr} * {w}.grad\n        {b} -= {lr} * {b}.grad\n"
        in fix.code
    )


@SHAPES
@given(generator_first=st.booleans(), steps=st.integers(1, 2))
def test_a_gan_stepping_between_two_backwards_gets_a_fix_that_runs(generator_first: bool, steps: int) -> None:
    d_part = (
        "    d_loss = bce(D(real), ones) + bce(d_fake, zeros)\n    opt_d.zero_grad()\n"
        "    d_loss.backward()\n    opt_d.step()\n"
    )
    g_part = (
        "    g_loss = bce(d_fake, ones)\n    opt_g.zero_grad()\n    g_loss.backward()\n    opt_g.step()\n"
    )
    body = g_part + d_part if generator_first else d_part + g_part
    code = (
        "import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\n"
        "G = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))\n"
        "D = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))\n"
        "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\nopt_d = torch.optim.SGD(D.parameters(), lr=0.1)\n"
        "bce = nn.BCEWithLogitsLoss()\nones, zeros = torch.ones(4, 1), torch.zeros(4, 1)\n"
        f"for step in range({steps}):\n    real = torch.randn(4, 2)\n    fake = G(torch.randn(4, 2))\n"
        "    d_fake = D(fake)\n" + body
    )
    first_proven(code)


# -- a wrong recipe is never shown ------------------------------------------------------------


TWO_LOSSES = (
    "import torch\n\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.square()\n"
    "y.sum().backward()\n(y * 3).sum().backward()\n"
)


def test_a_fix_that_raises_or_claims_something_false_is_never_shown(tmp_path: Path) -> None:
    rec = recorded(tmp_path, TWO_LOSSES)
    assert isinstance(rec, Recording) and rec.failed is not None
    raising = Fix(
        "detach a tuple", "", TWO_LOSSES.replace("y = x.square()", "y = x.square()\ny = (y,)[0:1].detach()")
    )
    still_failing = Fix("nothing useful", "", TWO_LOSSES.replace("y.sum()", "y.mean()"))
    retained = TWO_LOSSES.replace("y.sum().backward()", "y.sum().backward(retain_graph=True)")
    false_claim = Fix(
        "retain, with a false claim",
        "",
        retained,
        claims=(
            Claim(
                "The same gradients as one loss.", "same_grads_as", TWO_LOSSES.replace("(y * 3)", "(y * 0)")
            ),
        ),
    )
    true_claim = Fix(
        "add the losses",
        "",
        TWO_LOSSES.replace(
            "y.sum().backward()\n(y * 3).sum().backward()", "(y.sum() + (y * 3).sum()).backward()"
        ),
        claims=(Claim("The same gradients as retaining the graph.", "same_grads_as", retained),),
    )
    proven = proven_fixes(
        rec, [raising, still_failing, false_claim, true_claim], record=script_recorder(tmp_path)
    )
    assert [p.fix.title for p in proven] == ["add the losses"]
    assert proven[0].checked.claims[0].holds and proven[0].checked.mark().endswith("retaining the graph")


# -- the forum-style scripts --------------------------------------------------------------------

SCRIPTS = Path(__file__).parents[2] / "support" / "scripts" / "fixes"
EXPECTED_FIRST = {
    "accumulated_loss.py": "running_loss = 0.0 at the start of each iteration",
    "backward_under_no_grad.py": "compute the loss outside torch.no_grad()",
    "fpn_list_inplace.py": "out of place on line 12",
    "grad_penalty_no_create_graph.py": "create_graph=True on line 9",
    "gru_state_dict.py": 'state["h"]: detach it before line 12 uses it',
    "lstm_hidden_tuple.py": "detach hidden at the end of each iteration",
    "lstm_self_hidden.py": "self.hidden: detach it before line 16 uses it",
    "manual_sgd_leaf_inplace.py": "with torch.no_grad(): around lines 12-15",
    "relu_inplace_after_sigmoid.py": "inplace=False on line 12",
    "gan_generator_first.py": "compute d_fake again after opt_g.step(), from fake.detach()",
    "gan_output_reused.py": "compute output again after optimizerD.step()",
    "transformer_memory_carried.py": "memory.detach() at the end of each iteration",
}


@pytest.mark.parametrize("name", sorted(p.name for p in SCRIPTS.glob("*.py")))
def test_each_forum_script_gets_a_first_fix_that_runs_plainly(name: str, tmp_path: Path) -> None:
    code = (SCRIPTS / name).read_text(encoding="utf-8")
    assert run_plainly(tmp_path, code) is not None  # the script as posted fails under PyTorch
    _, fix, _ = first_proven(code)
    if name in EXPECTED_FIRST:
        assert fix.title == EXPECTED_FIRST[name]
