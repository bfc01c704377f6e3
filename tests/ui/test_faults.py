"""Faults with the real window (offscreen): Graphviz missing, crashing or hanging; a recording that
fails as CUDA does; an exception inside a slot; saves that fail and edits that must not be lost.

Each test checks what a room full of learners would see: a clear message, the previous
recording still on screen, and a window that keeps stepping.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
from PySide6.QtCore import QObject, QSaveFile, Qt, Signal
from pytestqt.qtbot import QtBot

from app.core.lesson.captions import format_values
from app.core.loading import load_builtin
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.recorder.recorder import record
from app.core.toml_writer import to_toml
from app.render import layout as layout_module
from app.render.layout import INSTALL_HINT
from app.ui.editor.editor import DEBOUNCE_MS
from app.ui.runtime import worker as worker_module
from app.ui.runtime.excepthook import install_exception_handler
from app.ui.runtime.settings import AppSettings
from app.ui.window import dialogs, file_actions
from app.ui.window.main_window import MainWindow

TIMEOUT = 30_000
SEED = load_builtin("two-losses").code


def seed_with(line: str) -> str:
    """The seed program with ``line`` added after its forward line."""
    return SEED.replace("y = x.square()\n", f"y = x.square()\n{line}\n")


@dataclass
class Dialogs:
    answers: list[str] = field(default_factory=list)
    open_paths: list[Path | None] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    informed: list[tuple[str, str]] = field(default_factory=list)

    def ask(self, parent: object, title: str, text: str, choices: object, default: str) -> str:
        self.asked.append(text)
        # Unscripted questions (pytest-qt closing a window with edits) are answered "Discard".
        return self.answers.pop(0) if self.answers else "Discard"

    def inform(self, parent: object, title: str, text: str) -> None:
        self.informed.append((title, text))

    def choose_open_path(self, parent: object) -> Path | None:
        return self.open_paths.pop(0)


@pytest.fixture
def fake_dialogs(monkeypatch: pytest.MonkeyPatch) -> Dialogs:
    fake = Dialogs()
    for name in ("ask", "inform", "choose_open_path"):
        monkeypatch.setattr(dialogs, name, getattr(fake, name))
    return fake


@pytest.fixture(scope="module")
def seed() -> Recording:
    """The oracle: the core's own recording of the seed."""
    return record(load_builtin("two-losses"))


@pytest.fixture
def open_window(qtbot: QtBot, tmp_path: Path, fake_dialogs: Dialogs):  # type: ignore[no-untyped-def]
    windows: list[MainWindow] = []

    def make(program: str = "two-losses") -> MainWindow:
        window = MainWindow(AppSettings(tmp_path / "settings.ini"), program)
        qtbot.addWidget(window)
        window.show()
        with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
            window.start()
        qtbot.waitUntil(lambda: window.editor is not None, timeout=TIMEOUT)  # made after the first graph
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.session.worker.wait_idle()


def _assert_data_panels_follow(window: MainWindow, oracle: Recording) -> None:
    """Step through everything; the caption and x.grad are the core recording's."""
    window.session.home()
    for index in range(len(oracle.timeline)):
        assert window.session.index == index
        state = oracle.timeline.state(index)
        assert window.caption_bar.caption() == state.step.caption
        assert window.grad_panel.grad_text("x") == f"x.grad = {format_values(state.grads.get('x'))}"
        window.session.next_step()


def _fake_dot(folder: Path, body: str) -> None:
    """A ``dot`` on PATH that runs ``body`` (a shell script) instead of Graphviz."""
    folder.mkdir()
    script = folder / "dot"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(0o755)


# -- Graphviz ----------------------------------------------------------------------------


def test_dot_missing_gives_the_install_command_and_the_data_panels_work(
    qtbot: QtBot, open_window, monkeypatch: pytest.MonkeyPatch, seed: Recording
) -> None:
    real_which = shutil.which
    monkeypatch.setattr(
        layout_module.shutil,
        "which",
        lambda name, *a, **k: None if name == "dot" else real_which(name, *a, **k),
    )
    window = open_window()
    assert window.graph_area.currentWidget() is window.graph_area.message
    message = window.graph_area.message.text()
    assert "'dot' was not found" in message
    assert INSTALL_HINT in message  # the install command, word for word
    _assert_data_panels_follow(window, seed)
    qtbot.keyClick(window, Qt.Key.Key_Home)
    qtbot.keyClick(window, Qt.Key.Key_Right)
    assert window.session.index == 1  # the keys still step


@pytest.mark.parametrize(
    "fake",
    [
        (
            'echo "Segmentation fault (core dumped)" >&2\nkill -SEGV $$',
            "Graphviz could not lay out this graph (dot was ended by signal 11: Segmentation fault",
        ),
        (
            "echo 'Error: syntax error in line 1' >&2\nexit 1",
            "Graphviz could not lay out this graph (dot exited with status 1: Error: syntax error in line 1",
        ),
        ("exec sleep 30", "Graphviz could not lay out this graph: dot took longer than 1 s"),
    ],
    ids=["crash", "error", "time-out"],
)
def test_a_graphviz_crash_or_time_out_is_explained_and_the_window_works(
    open_window, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed: Recording, fake: tuple[str, str]
) -> None:
    script, expected = fake
    _fake_dot(tmp_path / "bin", script)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setitem(layout_module.layout_graph.__kwdefaults__, "timeout_s", 1.0)
    window = open_window()
    message = window.graph_area.message.text()
    assert window.graph_area.currentWidget() is window.graph_area.message
    assert expected in message and INSTALL_HINT not in message  # Graphviz is there: no install hint
    _assert_data_panels_follow(window, seed)


def test_a_drawing_dot_refuses_is_drawn_plainer_with_one_quiet_line(
    open_window, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed: Recording
) -> None:
    real = shutil.which("dot")
    if real is None:
        pytest.skip("Graphviz 'dot' is not installed")
    # Graphviz 2.43's refusal of curved edges, as it says it; anything else goes to the real dot
    _fake_dot(
        tmp_path / "bin",
        "if grep -q 'splines=spline' \"$4\"; then echo 'triangulation failed' >&2; exit 1; fi\n"
        f'exec "{real}" "$@"',
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    window = open_window()
    assert window.graph_area.currentWidget() is not window.graph_area.message  # the graph is drawn
    assert window.session.layout is not None and window.session.layout.simplified == "edges drawn straight"
    said = window.statusBar().currentMessage()
    assert said == "Graphviz could not lay out the full drawing: edges drawn straight"
    _assert_data_panels_follow(window, seed)


# -- recordings that fail as CUDA does ---------------------------------------------------------

CUDA_FAILURES = [
    "CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 15.77 GiB total capacity)",
    "CUDA error: an illegal memory access was encountered",  # the device is lost
]


def _edit_code(window: MainWindow, code: str) -> None:
    """Type-and-pause, as a learner editing the program would."""
    window.editor.code_edit.setPlainText(code)
    window.editor.flush()


@pytest.mark.parametrize("failure", CUDA_FAILURES, ids=["out-of-memory", "device-lost"])
def test_a_failed_recording_keeps_the_previous_one_and_cpu_keeps_working(
    qtbot: QtBot, open_window, monkeypatch: pytest.MonkeyPatch, seed: Recording, failure: str
) -> None:
    window = open_window()
    window.session.go_to(3)
    before = window.session.recording

    def fail(program: Program, device: str) -> Recording:
        raise RuntimeError(failure)

    with monkeypatch.context() as patch:
        patch.setattr(worker_module, "record_program", fail)
        with qtbot.waitSignal(window.session.failed, timeout=TIMEOUT) as blocker:
            _edit_code(window, seed_with("z = y * 2"))
    assert failure in blocker.args[0]
    assert not window.notice.isHidden() and failure in window.notice.text()
    assert "previous recording stays" in window.notice.text()
    assert window.session.recording is before and window.session.index == 3
    assert window.graph_area.currentWidget() is window.graph_area.page  # the graph is still drawn
    assert window.editor.current_program().code == seed_with("z = y * 2")  # the edit is kept
    _assert_data_panels_follow(window, seed)

    # the device is back to normal: the next edit records on the CPU
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        _edit_code(window, SEED)
    assert blocker.args[0].device == "cpu" and blocker.args[0].failed is None
    assert blocker.args[0].program == seed.program


def test_a_real_torch_error_type_is_handled_the_same(
    qtbot: QtBot, open_window, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = open_window()
    before = window.session.recording

    def fail(program: Program, device: str) -> Recording:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(worker_module, "record_program", fail)
    with qtbot.waitSignal(window.session.failed, timeout=TIMEOUT):
        window.session.rerecord(before.program.with_code(SEED.replace("retain_graph=True", "")))
    assert "OutOfMemoryError" in window.notice.text() and window.session.recording is before


# -- an exception inside a slot ---------------------------------------------------------------


class Boom(QObject):
    fired = Signal()


@pytest.fixture
def handler_shows_notices(open_window) -> Iterator[MainWindow]:  # type: ignore[no-untyped-def]
    """The window with the exception handler wired as ``run_gui`` wires it."""
    window = open_window()
    uninstall = install_exception_handler(window.show_notice)
    yield window
    uninstall()


def test_an_exception_in_a_slot_is_shown_in_the_window_and_it_keeps_running(
    qtbot: QtBot, handler_shows_notices: MainWindow, seed: Recording
) -> None:
    window = handler_shows_notices

    def broken_slot(index: int) -> None:
        raise KeyError(f"no view for step {index}")

    window.session.step_applied.connect(broken_slot)
    with qtbot.waitSignal(window.notice_shown, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_Right)
    assert blocker.args[0].startswith("Something went wrong: KeyError:")
    assert "no view for step 1" in window.notice.text() and not window.notice.isHidden()
    assert window.session.index == 1
    assert window.caption_bar.caption() == seed.timeline[1].caption  # the other views still updated
    qtbot.keyClick(window, Qt.Key.Key_Right)
    assert window.session.index == 2  # and the window goes on stepping
    window.session.step_applied.disconnect(broken_slot)


def test_an_exception_in_a_worker_thread_is_shown_too(
    qtbot: QtBot, handler_shows_notices: MainWindow
) -> None:
    window = handler_shows_notices
    with qtbot.waitSignal(window.notice_shown, timeout=TIMEOUT) as blocker:
        worker = threading.Thread(target=lambda: {}["missing"])
        worker.start()
        worker.join()
    assert "KeyError" in blocker.args[0]


# -- edits are never lost without a question ------------------------------------------------------


class CommitFails(QSaveFile):
    def commit(self) -> bool:
        self.cancelWriting()
        super().commit()
        return False


def test_closing_with_unsaved_edits_asks_and_a_failed_save_keeps_everything(
    open_window, fake_dialogs: Dialogs, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(to_toml(load_builtin("two-losses")), encoding="utf-8")
    before = path.read_bytes()
    window = open_window(str(path))
    assert window.files.current_path == path
    _edit_code(window, seed_with("z = y + 1"))
    assert window.editor.is_modified()

    fake_dialogs.answers = ["Cancel"]
    assert window.close() is False and window.isVisible()

    with monkeypatch.context() as patch:
        patch.setattr(file_actions, "QSaveFile", CommitFails)
        fake_dialogs.answers = ["Save"]
        assert window.close() is False and window.isVisible()
    assert path.read_bytes() == before
    assert fake_dialogs.informed[-1][0] == "Save failed"
    assert window.editor.current_program().code == seed_with("z = y + 1")
    assert len(fake_dialogs.asked) == 2

    fake_dialogs.answers = ["Save"]
    assert window.close() is True
    assert "z = y + 1" in path.read_text(encoding="utf-8")


def test_opening_a_bad_file_in_the_window_explains_it_and_changes_nothing(
    open_window, fake_dialogs: Dialogs, tmp_path: Path
) -> None:
    window = open_window()
    before = window.session.recording
    bad = tmp_path / "bad.toml"
    bad.write_text(to_toml(load_builtin("two-losses")).replace("x.square()", "x.__class__"), encoding="utf-8")
    fake_dialogs.open_paths = [bad]
    window.commands.open.trigger()
    [(_, text)] = fake_dialogs.informed
    assert "program, line 4, column 5" in text and "__class__" in text
    assert window.session.recording is before
    assert window.editor.current_program() == before.program


def test_a_recording_that_arrives_while_typing_does_not_overwrite_the_typing(
    qtbot: QtBot, open_window
) -> None:
    window = open_window()
    editor = window.editor
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        _edit_code(window, seed_with("z = y * 2"))  # checked, emitted, being recorded...
        editor.code_edit.setPlainText(seed_with("z = y * 2 + 1"))  # ...while the learner types on
        # The learner's pause must not end before the first recording arrives (on a loaded
        # machine it may take longer than the pause, and then the newer text supersedes it).
        editor._timer.setInterval(10 * TIMEOUT)
    editor._timer.setInterval(DEBOUNCE_MS)  # the pause starts again: the newest text is recorded
    assert blocker.args[0].program.code == seed_with("z = y * 2")
    assert editor.code_edit.text() == seed_with("z = y * 2 + 1")
    assert editor.is_modified()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        pass  # the pause after typing records the newest text
    assert blocker.args[0].program.code == seed_with("z = y * 2 + 1")
