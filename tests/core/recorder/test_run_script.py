"""Recording the user's own scripts, run as full Python: ``python -m app run`` and ``lens.record()``.

PyTorch is the oracle: each script is also run plainly (tests/support/oracle.py), and every call's kind,
error text, failing node, engine order and grads must agree.
"""

from __future__ import annotations

import json
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
import torch

from app import lens
from app.cli import main
from app.core.lensfile import read_lens
from app.core.model.recording import Recording
from app.core.recorder.script import record_script
from tests.support.oracle import PlainRun, check_against_plain, check_against_probes, run_plainly

MLP = """\
# An MLP training step
import torch
from torch import nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h)


model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(5, 4)
y = torch.randn(5, 1)
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
"""

BPTT = """\
# Truncated BPTT without detach
import torch
from torch import nn

torch.manual_seed(0)


class Cell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.inp = nn.Linear(3, n)
        self.rec = nn.Linear(n, n, bias=False)

    def forward(self, x, h):
        return torch.tanh(self.inp(x) + self.rec(h))


cell = Cell(4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.05)
xs = torch.randn(3, 2, 3)
h = torch.zeros(4)
for chunk in range(3):
    for t in range(2):
        h = cell(xs[chunk, t], h)
    loss = head(h).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

GAN = """\
# A GAN whose discriminator step does not detach the fake batch
import torch
from torch import nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, z):
        return self.body(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, x):
        return self.body(x)


gen, disc = Generator(), Discriminator()
bce = nn.BCEWithLogitsLoss()
g_opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(disc.parameters(), lr=1e-3)
real = torch.randn(4, 3)
fake = gen(torch.randn(4, 2))
d_loss = bce(disc(real), torch.ones(4, 1)) + bce(disc(fake), torch.zeros(4, 1))
d_opt.zero_grad()
d_loss.backward()
d_opt.step()
g_loss = bce(disc(fake), torch.ones(4, 1))
g_opt.zero_grad()
g_loss.backward()
g_opt.step()
"""

STEP_BETWEEN = """\
# optimizer.step() between two backwards of one graph
import torch
from torch import nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return torch.sigmoid(self.out(torch.tanh(self.hidden(x))))


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
out = net(torch.randn(4, 3))
first = out.sum()
second = (out * out).mean()
first.backward(retain_graph=True)
opt.step()
second.backward()
"""

PENALTY = """\
# A gradient penalty: autograd.grad with create_graph, then backward
import torch
from torch import nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 1))
x = torch.randn(5, 2, requires_grad=True)
score = critic(x).sum()
(g,) = torch.autograd.grad(score, x, create_graph=True)
penalty = ((g.norm(dim=1) - 1) ** 2).mean()
penalty.backward()
"""


def _script(tmp_path: Path, code: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    return path


def _node_names(rec: Recording, call: int) -> list[str]:
    """The nodes the engine entered in one call, in order (the failing one last)."""
    info = rec.calls[call]
    steps = [rec.timeline[i] for i in range(info.first_step, info.last_step + 1)]
    names = [rec.graph.node(s.node).name for s in steps if s.kind == "node" and s.node is not None]
    if info.failed_node is not None:
        names.append(rec.graph.node(info.failed_node).name)
    return names


def _check(rec: Recording, code: str) -> PlainRun:
    plain = check_against_plain(rec, run_plainly(code))
    for index, call in enumerate(plain.calls):
        assert _node_names(rec, index) == call.entered, f"engine order of call {index}"
    return plain


# -- PyTorch as the oracle -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kinds", "failing"),
    [
        (MLP, ["backward"] * 3, None),
        (BPTT, ["backward"] * 2, 1),
        (GAN, ["backward"] * 2, 1),
        (STEP_BETWEEN, ["backward"] * 2, 1),
        (PENALTY, ["grad", "backward"], None),
    ],
    ids=["mlp", "bptt-without-detach", "gan-without-detach", "step-between-backwards", "penalty"],
)
def test_a_script_records_what_pytorch_does(tmp_path, code, kinds, failing):
    run = record_script(_script(tmp_path, code))
    rec = run.recording
    assert run.exception is None and run.exit_code == 0
    assert [c.call.kind for c in rec.calls] == kinds
    assert (rec.failed.index if rec.failed else None) == failing
    plain = _check(rec, code)
    check_against_probes(rec)  # slot states, versions and saved bytes after every node, too
    if failing is not None:
        assert rec.timeline[-1].kind == "error" and rec.timeline[-1].error == plain.calls[failing].error


def test_the_classic_errors_say_what_pytorch_says(tmp_path):
    texts = {
        name: record_script(_script(tmp_path, code, f"{name}.py")).recording.failed
        for name, code in {"bptt": BPTT, "gan": GAN, "step": STEP_BETWEEN}.items()
    }
    assert all(info is not None for info in texts.values())
    assert "backward through the graph a second time" in str(texts["bptt"].error)  # type: ignore[union-attr]
    assert "backward through the graph a second time" in str(texts["gan"].error)  # type: ignore[union-attr]
    assert "modified by an inplace operation" in str(texts["step"].error)  # type: ignore[union-attr]


def test_nodes_know_the_script_line_that_made_them(tmp_path):
    rec = record_script(_script(tmp_path, MLP)).recording
    lines = MLP.splitlines()
    fc1, fc2 = (
        lines.index("        h = torch.relu(self.fc1(x))") + 1,
        lines.index("        return self.fc2(h)") + 1,
    )
    loss_line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("loss ="))
    by_name: dict[str, set[int | None]] = {}
    for node in rec.graph.nodes:
        by_name.setdefault(node.name, set()).add(node.line)
    assert by_name["AddmmBackward0"] == {fc1, fc2}  # inside forward: the user's frame, not torch's
    assert by_name["ReluBackward0"] == {fc1}
    assert by_name["MeanBackward0"] == {loss_line}
    assert all(node.line is not None for node in rec.graph.nodes)
    assert set(rec.leaves) == {"model.fc1.weight", "model.fc1.bias", "model.fc2.weight", "model.fc2.bias"}


def test_the_program_is_the_script(tmp_path):
    path = _script(tmp_path, GAN, "train_gan.py")
    rec = record_script(path).recording
    assert rec.program.code == GAN
    assert rec.program.name == "train_gan"
    assert rec.program.title == "A GAN whose discriminator step does not detach the fake batch"
    assert rec.calls[0].call.text == "d_loss.backward()"
    assert rec.calls[0].call.line == GAN.splitlines().index("d_loss.backward()") + 1


def test_graphs_let_go_of_are_gone(tmp_path):
    rec = record_script(_script(tmp_path, MLP)).recording
    first_loss = next(n for n in rec.graph.nodes if n.name == "MeanBackward0")
    assert first_loss.gone_at_step is not None  # the loop bound `loss` to the next one
    assert max(step.alive_nodes for step in rec.timeline.steps) < len(rec.graph.nodes)


LOOPS = """\
# Loops of every kind, and a function of the script with its own
import torch

w = torch.ones(2, requires_grad=True)
seen = []


def inner_loss(scale):
    total = w.sum() * 0
    for k in range(2):
        total = total + (w * (scale + k)).sum()
    return total


for epoch in range(2):
    batch = 0
    while batch < 4:
        batch += 1
        if batch == 2:
            continue
        if epoch == 1 and batch == 4:
            break
        seen.append((epoch, batch))
        inner_loss(batch).backward()
    else:
        seen.append("while ended")
    for item in []:
        seen.append(item)
after = (w * 5).sum()
"""


def _iterations_by_call(code: str) -> list[tuple[int, ...]]:
    """Each backward's (epoch, pass of the while) as the script itself counts them, run plainly."""
    names: dict[str, Any] = {}
    exec(compile(code, "<loops>", "exec"), names)
    seen = [item for item in names["seen"] if item != "while ended"]
    return [(epoch, batch - 1) for epoch, batch in seen]  # the while's pass: batch counts up first


def test_a_scripts_loops_mark_its_calls_and_nodes_by_iteration(tmp_path):
    rec = record_script(_script(tmp_path, LOOPS)).recording
    lines = LOOPS.splitlines()
    epoch_line = lines.index("for epoch in range(2):") + 1
    while_line = lines.index("    while batch < 4:") + 1
    k_line = lines.index("    for k in range(2):") + 1
    expected = _iterations_by_call(LOOPS)
    assert len(rec.calls) == len(expected) == 5
    for info, (epoch, passed) in zip(rec.calls, expected, strict=True):
        assert [(m.line, m.index) for m in info.call.loops] == [(epoch_line, epoch), (while_line, passed)]
        assert all(m.count is None for m in info.call.loops)  # not known before a script's loop runs
    # a node made inside the script's own function: its caller's iterations, then its own loop's
    add_lines = lines.index("        total = total + (w * (scale + k)).sum()") + 1
    marks = sorted(
        tuple((m.line, m.index) for m in node.loops)
        for node in rec.graph.nodes
        if node.line == add_lines and node.name == "AddBackward0"
    )
    assert marks == sorted(
        ((epoch_line, epoch), (while_line, passed), (k_line, k))
        for epoch, passed in expected
        for k in range(2)
    )
    # the line after the loops carries none
    last = rec.timeline[-1]
    assert last.line == len(lines) and last.added_nodes and last.loops == ()


AWKWARD_LOOPS = """\
import torch

w = torch.ones(2, requires_grad=True)
seen = []


def same(f):
    return f


e = 0
while (e <
       2):
    for i, (a,
            b) in enumerate([(1, 2), (3, 4)]):
        @same
        def scaled():
            return w * (a + b)

        seen.append((e, i))
        scaled().sum().backward()
    e += 1
"""


def test_loops_over_several_lines_and_decorated_bodies_count_their_iterations(tmp_path):
    """A header over several lines reports more than its first line; a decorator runs before its
    ``def``: neither may end the loop or count a pass twice."""
    rec = record_script(_script(tmp_path, AWKWARD_LOOPS)).recording
    lines = AWKWARD_LOOPS.splitlines()
    outer, inner = lines.index("while (e <") + 1, lines.index("    for i, (a,") + 1
    names: dict[str, Any] = {}
    exec(compile(AWKWARD_LOOPS, "<awkward>", "exec"), names)
    assert [[(m.line, m.index) for m in c.call.loops] for c in rec.calls] == [
        [(outer, e), (inner, i)] for e, i in names["seen"]
    ]


def test_a_script_carrying_its_hidden_state_is_offered_detach(tmp_path):
    """The truncated-BPTT script fails in its second chunk; the fix detaches h, and PyTorch runs the
    fixed script without an error."""
    from app.core.lesson.recipes import fixes_for

    rec = record_script(_script(tmp_path, BPTT)).recording
    failed = rec.failed
    assert failed is not None and [m.index for m in failed.call.loops] == [1]
    made = rec.graph.node(failed.failed_node or "")
    assert [m.index for m in made.loops][:1] == [0]  # made in the chunk before
    fix = next(f for f in fixes_for(rec) if "h.detach()" in f.title)
    fixed = record_script(_script(tmp_path, fix.code, "fixed.py"))
    assert fixed.recording.failed is None and len(fixed.recording.calls) == 3
    plain = run_plainly(fix.code)
    assert all(call.error is None for call in plain.calls)


LSTM_STEP_BETWEEN = """\
import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(input_size=4, hidden_size=8, batch_first=True)
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
out, (h, c) = lstm(torch.randn(2, 5, 4))
loss = nn.functional.mse_loss(head(out[:, -1]), torch.randn(2, 1))
opt.zero_grad()
loss.backward()
opt.step()
reg = h.pow(2).mean()
reg.backward()
"""


def test_an_lstm_stepped_between_two_backwards_is_offered_a_fix_that_runs(tmp_path):
    """The second backward fails on a freed buffer of the LSTM's node, and opt.step() wrote the
    weights it saved in between: every fix offered first runs under plain PyTorch without an error
    (retain_graph=True alone gave the version error instead)."""
    from app.core.lesson.recipes import fixes_for

    rec = record_script(_script(tmp_path, LSTM_STEP_BETWEEN)).recording
    failed = rec.failed
    plain = run_plainly(LSTM_STEP_BETWEEN)
    assert failed is not None and failed.error == plain.calls[1].error
    fixes = fixes_for(rec)
    assert fixes and fixes[0].title == "retain_graph=True on line 11, opt.step() after both backwards"
    for fix in fixes:
        assert all(call.error is None for call in run_plainly(fix.code).calls), fix.title


def test_a_script_summing_its_loss_tensor_is_advised(tmp_path):
    from app.core.lesson.advice import advice_for, kept_graphs

    code = MLP.replace("for step in range(3):", "total = 0\nfor step in range(3):") + "    total += loss\n"
    rec = record_script(_script(tmp_path, code)).recording
    kept = kept_graphs(rec)
    assert kept is not None and len(set(kept.alive_at_ends)) == len(kept.alive_at_ends)  # rising
    advice = advice_for(rec)
    assert advice is not None
    edited = next(f for f in advice.fixes if "loss.item()" in f.title)
    assert kept_graphs(record_script(_script(tmp_path, edited.code, "edited.py")).recording) is None


def test_lens_record_marks_only_loops_it_saw_begin():
    x = torch.ones(2, requires_grad=True)
    for outer in range(2):
        with lens.record() as rec:
            for i in range(2):
                (x * (i + outer)).sum().backward()
    calls = rec.recording.calls
    assert [[m.index for m in c.call.loops] for c in calls] == [[0], [1]]  # the inner loop only
    assert all(len(c.call.loops) == 1 for c in calls)


# -- the command ----------------------------------------------------------------------------------


def test_run_out_then_trace_reads_it(tmp_path, capsys):
    path, out = _script(tmp_path, MLP), tmp_path / "mlp.lens"
    assert main(["run", "--out", str(out), str(path)]) == 0
    captured = capsys.readouterr()
    assert "step 2: loss" in captured.out  # the script's own output, as python would print it
    assert main(["trace", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["kind"] for c in data["calls"]] == ["backward"] * 3
    assert data["program"] == MLP
    assert read_lens(out).calls == record_script(path).recording.calls


def test_run_json_keeps_the_script_output_off_stdout(tmp_path, capsys):
    assert main(["run", "--json", str(_script(tmp_path, MLP))]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert len(data["calls"]) == 3
    assert "step 0: loss" in captured.err


def test_run_json_past_max_json_mb_prints_nothing_and_says_how_to_raise_it(tmp_path, capsys):
    assert main(["run", "--json", "--max-json-mb", "0.001", str(_script(tmp_path, MLP))]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    last = captured.err.splitlines()[-1]
    assert last.startswith("autograd-lens: the JSON would pass 0.001 MB") and "--out FILE.lens" in last


def test_an_autograd_error_ends_the_script_with_exit_0(tmp_path, capsys):
    out = tmp_path / "gan.lens"
    # --no-fixes (as the window runs it): proving the fixes, each edited script in a fresh process
    # of its own, is tests/cli/test_fixes_cli.py's subject, and no part of this test's
    script = str(_script(tmp_path, GAN + "print('never')\n"))
    assert main(["run", "--no-fixes", "--out", str(out), script]) == 0
    captured = capsys.readouterr()
    assert "never" not in captured.out
    rec = read_lens(out)
    assert rec.failed is not None and rec.timeline[-1].kind == "error"
    # ... and says so: the script did not run to its end
    plain = run_plainly(GAN)
    error = plain.calls[1].error or ""
    line = GAN.splitlines().index("g_loss.backward()") + 1
    said = [text for text in captured.err.splitlines() if "stopped" in text]
    assert said == [
        f"autograd-lens: the script stopped at line {line}: call 2 (g_loss.backward()) raised PyTorch's "
        f"error, recorded as the last step: {error.split('. ')[0]}."
    ]


def test_a_script_too_long_to_show_is_refused_before_it_runs(tmp_path, capsys):
    marker = tmp_path / "ran"
    script = _script(tmp_path, f"open({str(marker)!r}, 'w').close()\nx = 1  # {'y' * 100_000}\n")
    assert main(["run", "--out", str(tmp_path / "x.lens"), str(script)]) == 2
    assert not marker.exists() and not (tmp_path / "x.lens").exists()
    assert "too long to record: a line of 100,009 characters" in capsys.readouterr().err


def test_lens_record_in_a_file_too_long_to_show_refuses_before_its_block(tmp_path):
    import runpy

    from app.core.model.errors import ProgramError

    before = sys.gettrace()
    code = f"from app import lens\nran = []\nwith lens.record():\n    ran.append(1)\n# {'y' * 100_000}\n"
    with pytest.raises(ProgramError, match="too long to record: a line of 100,002 characters"):
        runpy.run_path(str(_script(tmp_path, code, "notebook.py")))
    assert _restored() and sys.gettrace() is before


def test_run_out_into_a_missing_folder_fails_before_the_script_runs(tmp_path, capsys):
    marker = tmp_path / "ran"
    script = _script(tmp_path, f"open({str(marker)!r}, 'w').close()\n")
    assert main(["run", "--out", str(tmp_path / "missing" / "x.lens"), str(script)]) == 2
    assert not marker.exists()
    assert "its folder does not exist" in capsys.readouterr().err


def test_the_scripts_own_exception_exits_1_with_its_traceback_and_the_recording_so_far(tmp_path, capsys):
    code = MLP + "raise ValueError('the data ran out')\n"
    path, out = _script(tmp_path, code, "boom.py"), tmp_path / "boom.lens"
    assert main(["run", "--out", str(out), str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert f'File "{path}", line {len(code.splitlines())}, in <module>' in err
    assert err.rstrip().endswith("ValueError: the data ran out") or "ValueError: the data ran out" in err
    assert "app/cli.py" not in err and "runpy" not in err  # the script's traceback, not ours
    rec = read_lens(out)
    assert len(rec.calls) == 3
    assert rec.error == "ValueError: the data ran out" and rec.error_line == len(code.splitlines())
    assert rec.timeline[-1].kind == "error"


def test_arguments_after_the_script_are_its_own(tmp_path, capsys):
    code = "import sys\nprint(sys.argv)\nif '--fail' in sys.argv:\n    raise SystemExit(3)\n"
    path = _script(tmp_path, code, "args.py")
    before = list(sys.argv)
    assert main(["run", "--out", str(tmp_path / "a.lens"), str(path), "--json", "-x", "1"]) == 0
    assert capsys.readouterr().out.strip() == repr([str(path), "--json", "-x", "1"])
    assert main(["run", "--out", str(tmp_path / "a.lens"), str(path), "--fail"]) == 3
    assert sys.argv == before


def test_a_script_runs_as_main_and_imports_its_neighbours(tmp_path, capsys):
    _script(
        tmp_path, "import torch\ndef make():\n    return torch.ones(3, requires_grad=True)\n", "helper.py"
    )
    code = "import helper\nif __name__ == '__main__':\n    w = helper.make()\n    (w * 2).sum().backward()\n"
    run = record_script(_script(tmp_path, code, "uses_helper.py"))
    assert run.exception is None
    assert run.recording.grads_at_end(0)["w"].tolist() == [2.0, 2.0, 2.0]


# -- the Python API -------------------------------------------------------------------------------

_ORIGINALS = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)


def _restored() -> bool:
    now = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
    return all(a is b for a, b in zip(now, _ORIGINALS, strict=True))


def test_lens_record_records_the_block():
    before = sys.gettrace()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x = torch.randn(2, 3)
    with lens.record(model) as rec:
        out = model(x)
        loss = out.pow(2).sum()
        loss.backward(retain_graph=True)
        loss.backward()
    assert _restored() and sys.gettrace() is before
    recording = rec.recording
    assert [c.call.text for c in recording.calls] == ["loss.backward(retain_graph=True)", "loss.backward()"]
    assert "model.0.weight" in recording.leaves
    assert torch.equal(
        torch.tensor(recording.grads_at_end(1)["model.0.weight"].flat).reshape(4, 3), model[0].weight.grad
    )
    assert recording.program.path == Path(__file__)
    out_line = recording.calls[0].call.line - 2  # out = model(x): the caller's line, not torch's
    assert {n.line for n in recording.graph.nodes if n.name == "AddmmBackward0"} == {out_line}
    assert rec.to_json()["calls"][1]["kind"] == "backward"


def test_lens_record_removes_its_patches_when_the_block_raises():
    before = sys.gettrace()
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(KeyError), lens.record() as rec:
        (x * 2).sum().backward()
        raise KeyError("mine")
    assert _restored() and sys.gettrace() is before
    assert rec.recording.error is not None and "KeyError" in rec.recording.error
    assert len(rec.recording.calls) == 1


def test_lens_record_raises_the_autograd_error_as_pytorch_did(tmp_path):
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="second time"), lens.record() as rec:
        y = (x.exp() * 2).sum()
        y.backward()
        y.backward()
    assert _restored()
    failed = rec.recording.failed
    assert failed is not None and failed.index == 1
    assert rec.recording.graph.node(failed.failed_node or "").name == "MulBackward0"  # as PyTorch says
    rec.save(tmp_path / "block.lens")
    assert read_lens(tmp_path / "block.lens").calls == rec.recording.calls


def test_lens_record_gives_no_line_to_nodes_made_before_the_block():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = torch.tanh(x)
    with lens.record() as rec:
        h.sum().backward()
    recording = rec.recording
    tanh = next(n for n in recording.graph.nodes if n.name == "TanhBackward0")
    assert tanh.line is None and tanh.source is None  # not the backward's line: made before
    assert tanh.created_at_step == 0 and recording.timeline[0].line is None
    total = next(n for n in recording.graph.nodes if n.name == "SumBackward0")
    assert total.line == recording.calls[0].call.line  # made by the call's own line
    assert torch.equal(torch.tensor(recording.grads_at_end(0)["x"].flat), x.grad)


def test_lens_record_leaves_out_leaves_its_block_never_uses():
    unrelated = torch.ones(3, requires_grad=True)
    other = torch.nn.Linear(2, 2)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with lens.record() as rec:
        fresh = torch.zeros(2, requires_grad=True)  # bound in the block: the block's own leaf
        (x * 3).sum().backward()
    assert set(rec.recording.leaves) == {"x", "fresh"}
    assert torch.equal(torch.tensor(rec.recording.grads_at_end(0)["x"].flat), x.grad)
    assert unrelated.grad is None and other.weight.grad is None and fresh.grad is None


def test_lens_record_leaves_out_a_graph_only_another_module_holds():
    elsewhere = types.ModuleType("elsewhere")  # another module's data: reachable, not the block's
    w = torch.ones(2, requires_grad=True)
    elsewhere.kept = {"a": [w * 2]}
    del w
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with lens.record() as rec:
        (x * 3).sum().backward()
    assert set(rec.recording.leaves) == {"x"}
    assert torch.equal(torch.tensor(rec.recording.grads_at_end(0)["x"].flat), x.grad)


def test_the_recording_is_not_ready_inside_the_block():
    with lens.record() as rec, pytest.raises(RuntimeError, match="ready once"):
        _ = rec.recording


def test_the_scripts_print_is_part_of_its_steps(tmp_path):
    code = textwrap.dedent(
        """\
        import torch
        w = torch.ones(2, requires_grad=True)
        print("before")
        (w * w).sum().backward()
        print("after", w.grad.tolist())
        """
    )
    rec = record_script(_script(tmp_path, code), stdout=sys.stderr).recording
    printed = [(s.line, text) for s in rec.timeline.steps for text in s.printed]
    assert printed == [(3, "before"), (5, "after [2.0, 2.0]")]


def test_the_recorders_own_work_runs_untraced(tmp_path, monkeypatch):
    # NOTE [untraced recorder]: only the wrappers that turn tracing off start while the script is
    # traced (and the patches' context manager, as it ends); everything they run is untraced.
    from app.core.recorder.script_recorder import ScriptRecorder

    traced: set[str] = set()
    real = ScriptRecorder.global_trace

    def watching(self, frame, event, arg):
        if Path(frame.f_code.co_filename).parts[-3:-1] == ("core", "recorder"):
            traced.add(frame.f_code.co_name)
        return real(self, frame, event, arg)

    monkeypatch.setattr(ScriptRecorder, "global_trace", watching)
    run = record_script(_script(tmp_path, MLP))
    assert traced == {"untraced", "tracing"}
    check_against_plain(run.recording, run_plainly(MLP))


def test_lines_that_let_nothing_go_take_no_walk(tmp_path, monkeypatch):
    # NOTE [walks not repeated]: the same held nodes and nothing captured since: no walk.
    from app.core.recorder.capture import GraphCapture

    walks: list[int] = []
    real = GraphCapture.reachable_from_all
    monkeypatch.setattr(
        GraphCapture, "reachable_from_all", lambda self, roots: walks.append(1) or real(self, roots)
    )
    code = "import torch\nx = torch.ones(3, requires_grad=True)\ny = (x * 2).sum()\n"
    code += "".join(f"a{k} = {k}\n" for k in range(20)) + "del y\nz = x.exp().sum()\nz.backward()\n"
    rec = record_script(_script(tmp_path, code)).recording
    assert len(walks) <= 6  # one per line that captured or let go, not one per line (25)
    made_by_y = {n.id for n in rec.graph.nodes if n.line == 3}
    let_go = {n.id for s in rec.timeline.steps if s.line == 24 for n in map(rec.graph.node, s.gone_nodes)}
    assert made_by_y and let_go == made_by_y  # y's graph, let go at `del y`
    assert rec.grads_at_end(0)["x"].tolist() == torch.ones(3).exp().tolist()


@pytest.mark.parametrize("differentiable", [False, True])
def test_an_optimizers_state_is_walked_only_when_it_can_hold_a_graph(differentiable):
    # A step made with grad off (the default) leaves state that holds no graph and no leaf.
    from app.core.recorder.script_frames import tensors_in

    w = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9, differentiable=differentiable)
    opt.state[w]["momentum_buffer"] = buffer = torch.zeros(2)
    found = list(tensors_in([opt], set()))
    assert any(t is w for t in found)
    assert any(t is buffer for t in found) == differentiable
