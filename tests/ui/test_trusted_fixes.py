"""The window's trusted-script path gets what ``run`` gets: a refused script opened from the
command line stays in the editor with its refusal and the button (never the seed); recorded as
the user's own script, its error's fixes are proven as edits of that file, with "Copy patch" and
"Apply to file"; and an error no edit fixes says so in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from pytestqt.qtbot import QtBot

from app.ui.panels.error_panel import NO_FIX_TEXT
from app.ui.runtime.settings import DEFAULT_PROGRAM, AppSettings
from app.ui.window import dialogs
from app.ui.window.main_window import MainWindow

TIMEOUT = 30_000
RUN_TIMEOUT = 300_000  # a fresh interpreter importing torch, then the proofs in fresh ones too

REFUSED_TWICE = (
    "# Own script\n"
    "import string\n"
    "import torch\n"
    "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "scale = (len(string.digits) // 10) + 1.0\n"
    "y = (x * x * scale).sum()\n"
    "y.backward()\n"
    "y.backward()\n"
)


class Yes:
    def __call__(self, parent: Any, text: str) -> bool:
        return True


def _window(qtbot: QtBot, tmp_path: Path, program: str) -> MainWindow:
    window = MainWindow(AppSettings(tmp_path / "settings.ini"), program)
    qtbot.addWidget(window)
    window.show()
    return window


def test_gui_on_a_refused_script_opens_that_script_with_its_refusal_never_the_seed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    script = tmp_path / "mine.py"
    script.write_text(REFUSED_TWICE, encoding="utf-8")
    window = _window(qtbot, tmp_path, str(script))
    window.start()
    qtbot.waitUntil(lambda: window.editor is not None and window.editor.error() is not None, timeout=TIMEOUT)
    assert window.editor is not None
    assert window.editor.code_edit.text() == REFUSED_TWICE and window.editor.error().line == 2
    assert not window.trusted_offer.isHidden()
    qtbot.wait(1000)  # no seed program is loaded behind it
    recording = window.session.recording
    assert recording is None or recording.program.name != DEFAULT_PROGRAM
    window.session.worker.wait_idle()


def test_an_error_no_edit_fixes_says_so_in_one_line(qtbot: QtBot, tmp_path: Path) -> None:
    program = tmp_path / "argmax.py"
    program.write_text(
        "import torch\nx = torch.ones(3, requires_grad=True)\n"
        "y = (x * 2).argmax()\nz = y.float()\nz.backward()\n",
        encoding="utf-8",
    )
    window = _window(qtbot, tmp_path, str(program))
    panel = window.error_panel
    with qtbot.waitSignal(panel.lesson_shown, timeout=TIMEOUT):
        window.start()
    recording = window.session.recording
    assert recording is not None and "does not require grad" in (recording.failed.error or "")
    assert panel.fixes == [] and panel.no_fix.text() == NO_FIX_TEXT
    window.session.go_to(recording.failed.last_step)
    qtbot.waitUntil(panel.isVisible, timeout=TIMEOUT)
    assert panel.no_fix.isVisible() and not any(b.isVisible() for b in panel.fix_buttons)
    assert "\n" not in NO_FIX_TEXT
    window.session.worker.wait_idle()


NO_ZERO_GRAD = """import torch
import torch.nn as nn


def train(model, optimizer, batches):
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
losses = []
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train(model, optimizer, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])
"""


def test_the_advice_panel_offers_zero_grad_for_a_script_that_never_clears_grad(tmp_path: Path) -> None:
    import io

    from app.core.recorder.script import record_script
    from app.ui.panels.advice_panel import AdvicePanel

    script = tmp_path / "train.py"
    script.write_text(NO_ZERO_GRAD, encoding="utf-8")
    recording = record_script(script, stdout=io.StringIO()).recording
    lesson = AdvicePanel.find_lesson(recording, float("inf"))
    assert lesson.fixes and "optimizer.zero_grad()" in lesson.fixes[0].title
    assert "        optimizer.zero_grad()\n        loss.backward()" in lesson.fixes[0].code
    assert ".grad keeps growing" in lesson.said.headline


def _plainly(path: Path) -> subprocess.CompletedProcess[str]:
    """``path`` run as ordinary Python in a fresh interpreter, printing ``x.grad`` at its end."""
    shown = (
        f"import runpy; g = runpy.run_path({str(path)!r}, run_name='__main__'); print(g['x'].grad.tolist())"
    )
    return subprocess.run(
        [sys.executable, "-c", shown],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path.parent,
        check=False,
    )


def test_a_trusted_scripts_error_gets_proven_fixes_and_apply_writes_one_keeps_a_backup_and_records(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    from difflib import unified_diff

    monkeypatch.setattr(dialogs, "ask", lambda *args: "discard")
    script = tmp_path / "mine.py"
    script.write_text(REFUSED_TWICE, encoding="utf-8")
    before = _plainly(script)
    assert before.returncode != 0 and "backward through the graph a second time" in before.stderr  # PyTorch's
    window = _window(qtbot, tmp_path, str(script))
    window.start()
    qtbot.waitUntil(lambda: window.editor is not None and window.editor.error() is not None, timeout=TIMEOUT)
    window.trusted_offer.ask = Yes()
    panel = window.error_panel
    with qtbot.waitSignal(panel.lesson_shown, timeout=RUN_TIMEOUT):
        window.trusted_offer.button.click()
    panel.wait_idle(RUN_TIMEOUT)
    qtbot.waitUntil(lambda: bool(panel.fixes), timeout=RUN_TIMEOUT)
    assert panel.no_fix.isHidden()
    bars = [bar for bar in panel.script_bars if bar.isVisible()]
    assert bars and len(bars) == len(panel.fixes)
    assert str(script) in bars[0].patch()  # an edit of the user's own file, to copy or apply
    fix = panel.fixes[0].code
    globals_: dict[str, Any] = {}
    exec(compile(fix, str(script), "exec"), globals_)  # the fix, run plainly in this process
    plain = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (plain * plain * (len("/") + 1.0)).sum()
    loss.backward(retain_graph=True)  # both backwards of the script, as PyTorch runs them
    loss.backward()
    assert globals_["x"].grad is not None and torch.equal(globals_["x"].grad, plain.grad)
    bar = bars[0]
    with qtbot.waitSignal(window.session.recording_applied, timeout=RUN_TIMEOUT) as applied:
        bar.apply_button.click()
    assert script.read_text(encoding="utf-8") == fix != REFUSED_TWICE  # the proven fix, on disk
    assert (tmp_path / "mine.py.bak").read_text(encoding="utf-8") == REFUSED_TWICE
    edit = "".join(
        unified_diff(REFUSED_TWICE.splitlines(True), fix.splitlines(True), str(script), str(script))
    )
    assert bar.patch() == edit  # what was written is the edit the bar offered
    again = applied.args[0]
    assert again.program.code == fix and again.failed is None and again.error is None  # the error is gone
    after = _plainly(script)
    assert after.returncode == 0, after.stderr  # PyTorch runs the fixed file without an error
    grads = again.grads_at_end(len(again.calls) - 1)["x"]
    assert grads is not None and list(grads.flat) == pytest.approx(
        json.loads(after.stdout.strip().splitlines()[-1])
    )
    window.session.worker.wait_idle()
