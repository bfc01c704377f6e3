"""The button under a refusal: recording the refused text as the learner's own trusted script.

The consent is asked (through the ``ask`` seam), declining runs nothing, and accepting records
the text through ``python -m app run`` in a child process; the window then shows what PyTorch
itself computed (a plain run of the same text is the oracle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.model.program import Program
from app.ui.editor.editor import ProgramEditor
from app.ui.editor.trusted_script import BUTTON_TEXT, CONSENT_TEXT, TrustedScriptOffer
from app.ui.runtime.settings import AppSettings
from app.ui.window import dialogs
from app.ui.window.main_window import MainWindow
from tests.support.oracle import as_tensor, run_plainly

# Refused by the checked language (import string), ordinary Python otherwise.
REFUSED = (
    "# Own script\n"
    "import string\n"
    "import torch\n"
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "scale = (len(string.digits) // 10) + 1.5\n"
    "y = (x * x * scale).sum()\n"
    "y.backward()\n"
)
RUN_TIMEOUT = 240_000  # a fresh interpreter importing torch on a busy machine, then the script
TIMEOUT = 30_000


class Asked:
    """The consent seam: answers ``answer`` and counts the questions."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.texts: list[str] = []

    def __call__(self, parent: Any, text: str) -> bool:
        self.texts.append(text)
        return self.answer


@pytest.fixture
def offer(qtbot: QtBot) -> TrustedScriptOffer:
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    widget = TrustedScriptOffer(editor)
    qtbot.addWidget(widget)
    return widget


def typed(offer: TrustedScriptOffer, text: str, path: Path | None = None) -> None:
    """The text in the editor as if pasted, checked at once."""
    offer.editor.set_program(Program(text, path=path))
    offer.editor.code_edit.setPlainText(text)
    offer.editor.flush()


def test_the_button_is_offered_under_a_refusal_of_the_language_only(offer: TrustedScriptOffer) -> None:
    assert offer.isHidden() and offer.button.text() == BUTTON_TEXT
    typed(offer, REFUSED)
    error = offer.editor.error()
    assert error is not None and error.line == 2  # the refusal at its line, as before
    assert not offer.isHidden()
    assert "full access to this computer, like python file.py" in offer.explanation.text()
    typed(offer, "x = (\n")  # a syntax error is not the language's refusal
    assert offer.editor.error() is not None and offer.isHidden()
    typed(offer, REFUSED, Path("lesson.toml"))  # a data file never runs as a script
    assert offer.editor.error() is not None and offer.isHidden()
    typed(offer, "import torch\nx = torch.ones(2)\n")
    assert offer.editor.error() is None and offer.isHidden()


def test_declining_runs_nothing(offer: TrustedScriptOffer) -> None:
    offer.ask = asked = Asked(False)
    typed(offer, REFUSED)
    offer.button.click()
    assert asked.texts == [CONSENT_TEXT]
    assert offer.run.process is None and not offer.run.running


def test_consent_is_asked_once_per_text_and_again_for_a_file(
    offer: TrustedScriptOffer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[str] = []
    monkeypatch.setattr(offer.run, "start", lambda code, name, own=None: started.append(code))
    offer.ask = asked = Asked(True)
    typed(offer, REFUSED)
    offer.button.click()
    offer.button.setEnabled(True)
    offer.button.click()
    assert len(asked.texts) == 1 and started == [REFUSED, REFUSED]
    other = REFUSED.replace("1.5", "2.5")
    typed(offer, other)
    offer.button.setEnabled(True)
    offer.button.click()
    assert len(asked.texts) == 2 and started[-1] == other
    typed(offer, REFUSED, tmp_path / "from_elsewhere.py")  # the same text, opened from a file
    offer.button.setEnabled(True)
    offer.button.click()
    assert len(asked.texts) == 3


def test_an_opened_refused_file_shows_its_refusal_and_the_button_unpressed(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.ui.window.file_actions import FileController

    informed: list[str] = []
    monkeypatch.setattr(dialogs, "inform", lambda parent, title, text: informed.append(text))
    editor = ProgramEditor()
    qtbot.addWidget(editor)
    widget = TrustedScriptOffer(editor)
    qtbot.addWidget(widget)
    widget.ask = asked = Asked(True)
    files = FileController(None, editor, AppSettings(tmp_path / "settings.ini"))
    script = tmp_path / "mine.py"
    script.write_text(REFUSED, encoding="utf-8")
    assert files.open_path(script) is None
    assert informed == []  # not a dead end: the text is in the editor with its refusal
    assert editor.code_edit.text() == REFUSED and editor.error() is not None
    assert not widget.isHidden() and asked.texts == [] and widget.run.process is None
    lesson = tmp_path / "lesson.toml"
    lesson.write_text('[program]\ncode = """\nimport string\n"""\n', encoding="utf-8")
    files.open_path(lesson)
    assert len(informed) == 1 and "cannot be opened" in informed[0]


def test_accepting_records_the_script_and_the_window_shows_pytorchs_result(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dialogs, "ask", lambda *args: "discard")
    window = MainWindow(AppSettings(tmp_path / "settings.ini"), "two-losses")
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.editor is not None, timeout=TIMEOUT)
    assert window.editor is not None
    offer = window.trusted_offer
    offer.ask = asked = Asked(True)
    window.editor.code_edit.setPlainText(REFUSED)
    window.editor.flush()
    assert not offer.isHidden()
    with qtbot.waitSignal(window.session.recording_applied, timeout=RUN_TIMEOUT) as blocker:
        offer.button.click()
    recording = blocker.args[0]
    assert asked.texts == [CONSENT_TEXT]
    plain = run_plainly(REFUSED)
    expected = plain.calls[0].grads["x"]
    assert expected is not None
    grads = recording.grads_at_end(0)
    assert torch.equal(as_tensor(grads["x"]), expected)
    assert recording.program.code == REFUSED
    window.session.worker.wait_idle()
    window.close()
    QApplication.processEvents()
