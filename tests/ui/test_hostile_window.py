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


# -- a .lens file's program is never the person's trusted script ----------------------------------

REFUSED = (  # refused by the checked language (import string), recorded by ``run`` as a script
    "import string\nimport torch\n"
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "y = (x * x * ((len(string.digits) // 10) + 1.5)).sum()\n"
    "y.backward()\ny.backward()\n"
)


def test_an_edited_lens_program_is_never_offered_as_a_trusted_script(
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    from app.core.recorder.script import record_script
    from app.ui.window import dialogs

    monkeypatch.setattr(dialogs, "ask", lambda *args: "discard")  # the edit is not kept on closing

    script = tmp_path / "theirs.py"
    script.write_text(REFUSED, encoding="utf-8")
    lens = tmp_path / "theirs.lens"
    save_lens(record_script(script).recording, lens)
    script.unlink()
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")), lens)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.editor is not None, timeout=TIMEOUT)
    editor = window.editor
    editor.code_edit.setPlainText(REFUSED + "\n")  # one edit: still the file's program
    editor.flush()
    assert editor.error() is not None  # the language's refusal, which names `run`
    assert window.trusted_offer.isHidden()


def test_a_lens_holding_the_run_scripts_text_is_not_that_script(tmp_path: Path, monkeypatch) -> None:
    """The window ``run train.py`` opened proves its own recording's fixes as edits of train.py;
    another ``.lens`` whose text equals train.py is data all the same."""
    import json
    from dataclasses import replace

    from app.child import proofs
    from app.core.recorder.script import record_script

    script = tmp_path / "train.py"
    script.write_text(REFUSED, encoding="utf-8")
    recording = record_script(script).recording
    own, stranger = tmp_path / "shown.lens", tmp_path / "stranger.lens"
    monkeypatch.setenv(proofs.SCRIPT_ENV, json.dumps([str(script)]))
    monkeypatch.setenv("AUTOGRAD_LENS_RUN_RECORDING", str(own))
    read = replace(recording, program=replace(recording.program, path=None))
    assert proofs.script_of(replace(read, program=replace(read.program, path=own))) is not None
    assert proofs.script_of(replace(read, program=replace(read.program, path=stranger))) is None
