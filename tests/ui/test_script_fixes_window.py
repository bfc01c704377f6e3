"""A ``run`` recording in the window: its fixes are proven by running the edited script, shown as a
patch of the user's file with "Copy patch" and "Apply to file"; a checked program keeps its
plain fix buttons."""

from __future__ import annotations

import io
from pathlib import Path

from PySide6.QtGui import QGuiApplication

from app.core.recorder.script import record_script
from app.ui.panels.error_panel import ErrorPanel
from app.ui.panels.script_fixes import ScriptFixBar, apply_to_file

CARRIED = """\
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(2, 3)

    def forward(self, x, hidden):
        return self.lstm(x, hidden)


model = Model()
hidden = (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))
for i in range(2):
    out, hidden = model(torch.randn(4, 1, 2), hidden)
    out.pow(2).mean().backward()
"""


def test_a_scripts_fix_is_a_patch_to_copy_or_apply(qtbot, session, tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(CARRIED, encoding="utf-8")
    recording = record_script(script, stdout=io.StringIO()).recording
    assert recording.failed is not None
    panel = ErrorPanel(session)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.lesson_shown, timeout=180_000):  # each fix: a fresh process
        session.apply(recording)
    assert panel.fixes and "tuple(t.detach() for t in hidden)" in panel.fixes[0].code
    assert not panel.fix_buttons[0].isEnabled()  # a script is never re-recorded as a checked program
    assert panel.fix_codes[0].text().endswith("✓ recorded: no error")
    bar = panel.findChildren(ScriptFixBar)[0]
    assert not bar.isHidden()
    bar.copy_button.click()
    patch = QGuiApplication.clipboard().text()
    assert patch.startswith(f"--- {script}\n+++ {script}\n")
    assert "+    hidden = tuple(t.detach() for t in hidden)\n" in patch
    backup = apply_to_file(script, CARRIED, panel.fixes[0].code)
    assert backup.read_text(encoding="utf-8") == CARRIED
    assert script.read_text(encoding="utf-8") == panel.fixes[0].code


def test_applying_to_a_file_that_changed_since_writes_nothing(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("x = 2\n", encoding="utf-8")
    try:
        apply_to_file(script, "x = 1\n", "x = 3\n")
    except OSError as exc:
        assert "changed since it was recorded" in str(exc)
    else:
        raise AssertionError("applied over a changed file")
    assert script.read_text(encoding="utf-8") == "x = 2\n" and not (tmp_path / "train.py.bak").exists()
