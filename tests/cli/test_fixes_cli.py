"""``trace`` and ``run`` offer proven fixes: in ``--json`` as the window's objects, in text as diffs
after PyTorch's message; a fix is there only when its edited program recorded without an error."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from app.child import proofs
from app.cli import main
from app.core.lesson.prove import Outcome, Record, ScriptSource

HIDDEN_TUPLE = """\
import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(2, 3)
opt = torch.optim.SGD(lstm.parameters(), lr=0.1)
hidden = (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))
for i in range(3):
    out, hidden = lstm(torch.randn(4, 1, 2), hidden)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.fixture(scope="module")
def _proven_edits() -> dict[tuple[object, ...], Outcome]:
    return {}


@pytest.fixture
def proofs_shared_in_module(_proven_edits, monkeypatch) -> None:
    """Each edit of a script is proven once for this module, by a fresh process as ``run`` proves
    it (``in_script_child``): the two tests that run ``HIDDEN_TUPLE`` prove the same three edits,
    and the second reads the first one's recordings (never changed) instead of starting three more
    interpreters that import torch."""
    real = proofs.in_script_child

    def shared(script: ScriptSource, time_limit_s: float | None = None) -> Record:
        record = real(script, time_limit_s)

        def run(code: str) -> Outcome:
            key = (script.path.name, script.args, script.device, code)
            if key not in _proven_edits:
                _proven_edits[key] = record(code)
            return _proven_edits[key]

        return run

    monkeypatch.setattr(proofs, "in_script_child", shared)


@pytest.mark.usefixtures("proofs_shared_in_module")
def test_run_json_offers_the_detach_of_each_tensor_of_a_carried_tuple(tmp_path: Path, capsys) -> None:
    script = tmp_path / "lm.py"
    script.write_text(HIDDEN_TUPLE, encoding="utf-8")
    assert main(["run", "--json", str(script)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calls"][-1]["error"].startswith("Trying to backward through the graph a second time")
    first = out["fixes"][0]
    assert "hidden = tuple(t.detach() for t in hidden)" in first["code"]
    assert first["checked"] == {"error_gone": True, "other_error": None, "claims": []}
    assert first["changed_lines"] == [14]
    assert all(f["checked"]["error_gone"] and f["checked"]["other_error"] is None for f in out["fixes"])
    assert out["advice"] is None
    fixed = tmp_path / "fixed.py"
    fixed.write_text(first["code"], encoding="utf-8")
    runpy.run_path(str(fixed), run_name="__main__")  # PyTorch itself: no error


@pytest.mark.usefixtures("proofs_shared_in_module")
def test_run_prints_the_proven_fix_as_a_diff_of_the_users_file(tmp_path: Path, capsys) -> None:
    script = tmp_path / "lm.py"
    script.write_text(HIDDEN_TUPLE, encoding="utf-8")
    assert main(["run", "--out", str(tmp_path / "x.lens"), str(script)]) == 0
    err = capsys.readouterr().err
    assert err.index("the script stopped at line 12") < err.index("Fix 1: detach hidden")
    assert f"--- {script}\n+++ {script}\n" in err
    assert "+    hidden = tuple(t.detach() for t in hidden)\n" in err


@pytest.mark.parametrize("name", ["forgot-retain", "rnn-no-detach"])
def test_trace_json_fixes_are_proven_and_their_claims_hold(name: str, capsys) -> None:
    assert main(["trace", name, "--json", "--in-process"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fixes"]
    for fix in out["fixes"]:
        assert fix["checked"]["error_gone"] and fix["checked"]["other_error"] is None
        assert all(claim["holds"] for claim in fix["checked"]["claims"])
        assert set(fix) >= {"title", "explanation", "code", "changed_lines", "checked"}
    if name == "forgot-retain":
        summed = next(f for f in out["fixes"] if f["title"] == "add the losses, one backward")
        assert summed["checked"]["claims"] == [
            {"text": "It gives the same gradients as retaining the graph.", "holds": True}
        ]


def test_trace_prints_the_fixes_under_the_error_step(capsys) -> None:
    assert main(["trace", "rnn-no-detach", "--in-process"]) == 0
    out = capsys.readouterr().out
    assert out.index("PyTorch: Trying to backward") < out.index(
        "Fix 1: h.detach() at the end of each iteration"
    )
    assert "(recorded: no error)" in out and "+    h = h.detach()" in out


def test_advice_is_in_the_json_of_a_program_that_keeps_its_graphs(capsys) -> None:
    assert main(["trace", "logged-loss", "--json", "--in-process"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fixes"] == [] and out["advice"] is not None
    assert out["advice"]["fixes"] and all(
        claim["holds"] for fix in out["advice"]["fixes"] for claim in fix["checked"]["claims"]
    )


NO_ZERO_GRAD = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    loss = ((model(torch.randn(4, 3)) - 1.0) ** 2).mean()
    loss.backward()
    optimizer.step()
"""


def test_run_prints_proven_advice_for_a_script_that_raised_nothing(tmp_path: Path, capsys) -> None:
    script = tmp_path / "train.py"
    script.write_text(NO_ZERO_GRAD, encoding="utf-8")
    assert main(["run", "--out", str(tmp_path / "train.lens"), str(script)]) == 0
    err = capsys.readouterr().err
    assert "No error, but .grad keeps growing" in err
    assert f"+++ {script}" in err and "+    optimizer.zero_grad()" in err


def test_an_html_export_of_a_failing_built_in_carries_its_proven_fixes(tmp_path) -> None:
    """The page of a program whose call fails shows the fixes the window shows, each with its diff
    (the page's own data, compared with the fixes proven here by recording each edit)."""
    import json

    from app.child.proofs import proven_lesson
    from app.cli import main
    from app.core import load_builtin, record

    recording = record(load_builtin("forgot-retain"))
    assert recording.failed is not None and recording.error is None  # a call failed, not the program
    proven = proven_lesson(recording, here=True).fixes
    out = tmp_path / "page.html"
    assert main(["export", "forgot-retain", "--format", "html", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    data = json.loads(text.split('id="lens-data">', 1)[1].split("</script>", 1)[0])
    shown = data["steps"]["error_panel"]["fixes"]
    assert proven and [f["title"] for f in shown] == [p.fix.title for p in proven]
    assert all(f["diff"] for f in shown)
