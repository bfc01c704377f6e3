"""What a stranger's ``.lens`` file cannot make the window do.

Reading a recording runs nothing: its fixes are proven (each edited program recorded in the limited
child) only after the person presses the one button that says so.
"""

from __future__ import annotations

from pathlib import Path

import app.child.client as client_module
from app.core.lensfile import save_lens
from app.ui.panels.fixes_panel import PROVE_TEXT
from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow

TIMEOUT = 60_000


def test_a_lens_files_fixes_are_recorded_only_on_request(
    qtbot, tmp_path: Path, forgot_retain, monkeypatch
) -> None:
    path = tmp_path / "stranger.lens"
    save_lens(forgot_retain, path)
    recorded: list[str] = []
    real = client_module.record_in_child

    def counted(program, device="cpu"):
        recorded.append(program.code)
        return real(program, device)

    monkeypatch.setattr(client_module, "record_in_child", counted)
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")), path)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    panel = window.error_panel
    qtbot.waitUntil(lambda: not panel.isHidden(), timeout=TIMEOUT)
    qtbot.wait(3000)  # time enough for a lesson found on its own to start recording
    assert recorded == [] and panel.fixes == []
    assert panel.prove_button.isVisible() and panel.prove_button.text() == PROVE_TEXT
    with qtbot.waitSignal(panel.lesson_shown, timeout=TIMEOUT):
        panel.prove_button.click()
    assert recorded and all(code != forgot_retain.program.code for code in recorded)  # the edits
    titles = [fix.title for fix in panel.fixes]
    assert titles and not panel.prove_button.isVisible()
