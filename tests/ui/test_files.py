"""Open / Save / Save As / recent files / unsaved-edit questions / failed saves, and the exception handler."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray, QObject, QSaveFile, QSettings, Signal
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.core.loading import load_builtin, load_file, parse_program
from app.core.model.program import Program
from app.core.toml_writer import to_toml
from app.ui.editor.editor import ProgramEditor
from app.ui.runtime.excepthook import install_exception_handler
from app.ui.window import dialogs, file_actions
from app.ui.window.file_actions import MAX_RECENT, FileController, write_atomically


@dataclass
class Dialogs:
    """Stands in for every dialog; records what was asked and shown."""

    answers: list[str] = field(default_factory=list)
    save_paths: list[Path | None] = field(default_factory=list)
    open_paths: list[Path | None] = field(default_factory=list)
    asked: list[tuple[str, tuple[str, ...], str]] = field(default_factory=list)
    informed: list[tuple[str, str]] = field(default_factory=list)
    suggested: list[Path] = field(default_factory=list)

    def ask(self, parent: object, title: str, text: str, choices: tuple[str, ...], default: str) -> str:
        self.asked.append((text, tuple(choices), default))
        if not self.answers:
            raise AssertionError(f"unexpected question: {text}")
        return self.answers.pop(0)

    def inform(self, parent: object, title: str, text: str) -> None:
        self.informed.append((title, text))

    def choose_open_path(self, parent: object) -> Path | None:
        return self.open_paths.pop(0)

    def choose_save_path(self, parent: object, suggested: Path) -> Path | None:
        self.suggested.append(suggested)
        return self.save_paths.pop(0)


@pytest.fixture
def fake_dialogs(monkeypatch: pytest.MonkeyPatch) -> Dialogs:
    fake = Dialogs()
    for name in ("ask", "inform", "choose_open_path", "choose_save_path"):
        monkeypatch.setattr(dialogs, name, getattr(fake, name))
    return fake


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot: QtBot) -> QWidget:
    widget = QWidget()
    qtbot.addWidget(widget)
    return widget


@pytest.fixture
def editor(window: QWidget) -> ProgramEditor:
    return ProgramEditor(window)


@pytest.fixture
def files(
    window: QWidget, editor: ProgramEditor, settings: QSettings, fake_dialogs: Dialogs
) -> FileController:
    return FileController(window, editor, settings)


@pytest.fixture
def program_file(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    path = folder / "mine.toml"
    path.write_text(to_toml(load_builtin("two-losses")), encoding="utf-8")
    return path


OLDER_SHAPE = b"""name = "old"
title = "t"
summary = "s"
[inputs]
x = "torch.ones(2, requires_grad=True)"
[[calls]]
kind = "backward"
loss = "q.sum()"
"""


def mine() -> Program:
    """The seed program as it loads from ``mine.toml``: named by its file."""
    return replace(load_builtin("two-losses"), name="mine")


@dataclass
class Lab:
    files: FileController
    editor: ProgramEditor
    dialogs: Dialogs


@pytest.fixture
def lab(files: FileController, editor: ProgramEditor, fake_dialogs: Dialogs) -> Lab:
    return Lab(files, editor, fake_dialogs)


def _edit_title(editor: ProgramEditor, title: str) -> None:
    editor.set_details(editor.details()._replace(title=title))


# -- open -------------------------------------------------------------------------


def test_open_path_fills_the_editor_and_signals(lab: Lab, program_file: Path, qtbot: QtBot) -> None:
    with qtbot.waitSignal(lab.files.program_opened, timeout=1000) as blocker:
        opened = lab.files.open_path(program_file)
    assert opened == mine() == blocker.args[0]
    assert lab.editor.current_program() == opened
    assert lab.files.current_path == program_file
    assert not lab.editor.is_modified()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"name = [unclosed", "not valid TOML"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
        (
            to_toml(load_builtin("two-losses")).replace("import torch", "import string").encode(),
            "program, line 1",
        ),
        (
            to_toml(load_builtin("two-losses")).replace("x.square()", "x.__class__").encode(),
            "program, line 4, column 5",
        ),
        (OLDER_SHAPE, "calls[0].loss"),  # the older shape, checked field by field
        (b"a = " + b"[" * 100_000 + b"]" * 100_000, "cannot be opened"),  # deeper than tomllib can recurse
    ],
)
def test_a_bad_file_is_explained_never_raised(
    lab: Lab, tmp_path: Path, content: bytes, expected: str
) -> None:
    lab.editor.set_program(load_builtin("forgot-retain"))
    bad = tmp_path / "bad.toml"
    bad.write_bytes(content)
    assert lab.files.open_path(bad) is None
    [(_, text)] = lab.dialogs.informed
    assert expected in text and "bad.toml" in text
    assert lab.editor.current_program() == load_builtin("forgot-retain")  # the editor is untouched
    assert lab.files.recent_files() == []


def test_a_missing_file_is_explained(lab: Lab, tmp_path: Path) -> None:
    assert lab.files.open_path(tmp_path / "gone.toml") is None
    assert "cannot read" in lab.dialogs.informed[0][1]


def test_open_dialog_uses_the_chooser(lab: Lab, program_file: Path) -> None:
    lab.dialogs.open_paths = [None, program_file]
    assert lab.files.open_dialog() is None  # cancelled
    assert lab.files.open_dialog() == mine()


def test_a_plain_python_file_opens_as_a_program(lab: Lab, tmp_path: Path) -> None:
    path = tmp_path / "snippet.py"
    path.write_text("# Two losses, pasted\n" + load_builtin("forgot-retain").code, encoding="utf-8")
    opened = lab.files.open_path(path)
    assert isinstance(opened, Program)
    assert (opened.name, opened.title) == ("snippet", "Two losses, pasted")
    assert lab.editor.code_edit.text() == path.read_text(encoding="utf-8")
    assert lab.files.current_path == path


def test_a_lens_file_is_handed_to_the_window_and_the_editor_is_untouched(
    lab: Lab, tmp_path: Path, qtbot: QtBot
) -> None:
    lab.editor.set_program(load_builtin("forgot-retain"))
    path = tmp_path / "run.lens"
    path.write_bytes(b"read by the window's worker, not here")
    with qtbot.waitSignal(lab.files.recording_opened, timeout=1000) as blocker:
        assert lab.files.open_path(path) == path
    assert blocker.args == [path]
    assert lab.editor.current_program() == load_builtin("forgot-retain")
    assert lab.files.recent_files() == [path.resolve()]
    assert lab.files.open_path(tmp_path / "missing.lens") is None
    assert "not a file" in lab.dialogs.informed[-1][1]


# -- save / save as -----------------------------------------------------------------


def test_save_writes_toml_that_reloads_equal(lab: Lab, program_file: Path) -> None:
    lab.files.open_path(program_file)
    _edit_title(lab.editor, 'A new title with "quotes" and a back\\slash')
    assert lab.editor.is_modified()
    assert lab.files.save() is True
    assert not lab.editor.is_modified()
    reloaded = parse_program(program_file.read_bytes(), name="mine")
    assert reloaded == lab.editor.current_program()
    assert reloaded.title == 'A new title with "quotes" and a back\\slash'
    assert sorted(p.name for p in program_file.parent.iterdir()) == ["mine.toml"]  # no temp file left


def test_save_of_a_builtin_asks_where(lab: Lab, tmp_path: Path) -> None:
    lab.editor.set_program(load_builtin("two-losses"))
    assert (
        lab.editor.source_path() is not None and lab.files.current_path is None
    )  # built-ins are never overwritten
    target = tmp_path / "copy.toml"
    lab.dialogs.save_paths = [target]
    assert lab.files.save() is True
    assert lab.dialogs.suggested[0].name == "two-losses.toml"
    assert load_file(target) == replace(load_builtin("two-losses"), name="copy")
    assert lab.files.current_path == target
    assert lab.files.recent_files() == [target.resolve()]


def test_save_as_moves_to_the_new_file_and_cancel_keeps_edits(lab: Lab, program_file: Path) -> None:
    lab.files.open_path(program_file)
    _edit_title(lab.editor, "Changed")
    lab.dialogs.save_paths = [None]
    assert lab.files.save_as() is False
    assert lab.editor.is_modified() and lab.files.current_path == program_file
    other = program_file.with_name("other.toml")
    lab.dialogs.save_paths = [other]
    assert lab.files.save_as() is True
    assert lab.files.current_path == other and not lab.editor.is_modified()
    assert load_file(other).title == "Changed"
    assert load_file(program_file).title == load_builtin("two-losses").title  # the old file is untouched
    assert lab.dialogs.suggested[-1] == program_file


def test_save_with_an_error_in_the_editor_writes_nothing(lab: Lab, program_file: Path) -> None:
    lab.files.open_path(program_file)
    before = program_file.read_bytes()
    lab.editor.code_edit.setPlainText(load_builtin("two-losses").code.replace("x.square()", "x.__class__"))
    assert lab.files.save() is False
    assert program_file.read_bytes() == before
    assert "program, line 4, column 5" in lab.dialogs.informed[0][1]
    assert lab.editor.is_modified()


def test_save_as_a_python_file_writes_the_code_alone(lab: Lab, program_file: Path) -> None:
    lab.files.open_path(program_file)
    target = program_file.with_name("plain.py")
    lab.dialogs.save_paths = [target]
    assert lab.files.save_as() is True
    assert target.read_text(encoding="utf-8") == load_builtin("two-losses").code
    assert load_file(target).code == load_builtin("two-losses").code
    assert lab.files.current_path == target


# -- failed saves keep the old file --------------------------------------------------


class OpenFails(QSaveFile):
    def open(self, mode: object) -> bool:  # type: ignore[override]
        return False


class WriteFails(QSaveFile):
    """Writes half the bytes, as a full disk would."""

    def write(self, data: QByteArray) -> int:  # type: ignore[override]
        return super().write(bytes(data)[: len(data) // 2])


class CommitFails(QSaveFile):
    """The final flush fails (ENOSPC at close): Qt discards the temporary file."""

    def commit(self) -> bool:
        self.cancelWriting()
        super().commit()
        return False


@contextmanager
def _read_only(folder: Path) -> Iterator[bool]:
    """Make ``folder`` refuse new files, even for root (chattr +i); yields whether it worked."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield True
        finally:
            folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    ok = (
        chattr is not None
        and subprocess.run([chattr, "+i", str(folder)], capture_output=True, check=False).returncode == 0
    )
    try:
        yield ok
    finally:
        if ok:
            subprocess.run([chattr, "-i", str(folder)], check=True)  # type: ignore[list-item]


@pytest.fixture
def modified_file(files: FileController, editor: ProgramEditor, program_file: Path) -> tuple[Path, bytes]:
    files.open_path(program_file)
    _edit_title(editor, "Edits that must not be lost")
    return program_file, program_file.read_bytes()


def _assert_failed_save_kept_everything(lab: Lab, path: Path, before: bytes) -> None:
    assert lab.files.save() is False
    assert path.read_bytes() == before  # byte for byte
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temporary file left behind
    assert lab.editor.is_modified()
    assert lab.editor.current_program().title == "Edits that must not be lost"  # type: ignore[union-attr]
    title, text = lab.dialogs.informed[-1]
    assert title == "Save failed" and "was not changed" in text and str(path) in text


def test_a_read_only_folder_keeps_the_old_file(
    lab: Lab, modified_file: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, before = modified_file
    with _read_only(path.parent) as really_read_only:
        if really_read_only:
            with pytest.raises(OSError):
                (path.parent / "probe").write_bytes(b"")
        else:  # root without chattr: simulate the refusal
            monkeypatch.setattr(file_actions, "QSaveFile", OpenFails)
        _assert_failed_save_kept_everything(lab, path, before)


@pytest.mark.parametrize("failing", [OpenFails, WriteFails, CommitFails])
def test_a_failing_save_file_keeps_the_old_file(
    lab: Lab, modified_file: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch, failing: type[QSaveFile]
) -> None:
    path, before = modified_file
    monkeypatch.setattr(file_actions, "QSaveFile", failing)
    _assert_failed_save_kept_everything(lab, path, before)


def test_a_save_into_a_missing_folder_fails_cleanly(tmp_path: Path) -> None:
    reason = write_atomically(tmp_path / "no-such-folder" / "x.toml", b"data")
    assert reason is not None
    assert not (tmp_path / "no-such-folder").exists()


def test_write_atomically_replaces_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(b"old content that is longer than the new one")
    assert write_atomically(path, b"new") is None
    assert path.read_bytes() == b"new"


# -- unsaved edits are never lost without a question ------------------------------------


def test_maybe_discard_does_not_ask_when_nothing_changed(lab: Lab) -> None:
    lab.editor.set_program(load_builtin("two-losses"))
    assert lab.files.maybe_discard() is True
    assert lab.dialogs.asked == []


def test_maybe_discard_cancel_and_discard(lab: Lab, modified_file: tuple[Path, bytes]) -> None:
    path, before = modified_file
    lab.dialogs.answers = ["Cancel", "Discard"]
    assert lab.files.maybe_discard() is False
    assert lab.editor.is_modified() and path.read_bytes() == before
    assert lab.dialogs.asked[0][1:] == (("Save", "Discard", "Cancel"), "Save")
    assert "mine.toml" in lab.dialogs.asked[0][0]
    assert lab.files.maybe_discard() is True
    assert path.read_bytes() == before


def test_maybe_discard_save_writes_first(lab: Lab, modified_file: tuple[Path, bytes]) -> None:
    path, _ = modified_file
    lab.dialogs.answers = ["Save"]
    assert lab.files.maybe_discard() is True
    assert load_file(path).title == "Edits that must not be lost"
    assert not lab.editor.is_modified()


def test_maybe_discard_save_that_fails_keeps_the_edits(
    lab: Lab, modified_file: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, before = modified_file
    monkeypatch.setattr(file_actions, "QSaveFile", CommitFails)
    lab.dialogs.answers = ["Save"]
    assert lab.files.maybe_discard() is False
    assert path.read_bytes() == before and lab.editor.is_modified()


def test_opening_another_file_asks_about_unsaved_edits(
    lab: Lab, modified_file: tuple[Path, bytes], tmp_path: Path
) -> None:
    other = tmp_path / "other.toml"
    other.write_text(to_toml(load_builtin("forgot-retain")), encoding="utf-8")
    lab.dialogs.answers = ["Cancel"]
    assert lab.files.open_path(other) is None
    assert lab.editor.current_program().title == "Edits that must not be lost"  # type: ignore[union-attr]
    lab.dialogs.answers = ["Cancel"]
    assert lab.files.open_dialog() is None
    assert lab.dialogs.open_paths == []  # no file chooser after Cancel


# -- recent files -------------------------------------------------------------------


def _files(tmp_path: Path, count: int) -> list[Path]:
    paths = []
    for index in range(count):
        path = tmp_path / f"s{index}.toml"
        path.write_text(to_toml(load_builtin("two-losses")), encoding="utf-8")
        paths.append(path.resolve())
    return paths


def test_recent_files_order_limit_and_persistence(lab: Lab, window: QWidget, tmp_path: Path) -> None:
    paths = _files(tmp_path, 10)
    for path in paths:
        lab.files.open_path(path)
    assert lab.files.recent_files() == paths[::-1][:MAX_RECENT]
    lab.files.open_path(paths[5])
    assert lab.files.recent_files()[:2] == [paths[5], paths[9]]
    assert len(lab.files.recent_files()) == MAX_RECENT

    reread = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    again = FileController(window, ProgramEditor(window), reread)
    assert again.recent_files() == lab.files.recent_files()

    paths[9].unlink()
    assert paths[9] not in again.recent_files()
    assert again.recent_files()[0] == paths[5]


def test_a_single_recent_file_survives_the_ini_format(
    lab: Lab, window: QWidget, program_file: Path, tmp_path: Path
) -> None:
    lab.files.open_path(program_file)
    reread = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert FileController(window, ProgramEditor(window), reread).recent_files() == [program_file.resolve()]


# -- the exception handler -----------------------------------------------------------


class Emitter(QObject):
    fired = Signal(int)


def test_an_exception_in_a_slot_is_shown_logged_and_survived(
    qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    handled: list[int] = []
    emitter = Emitter()

    def broken_slot(value: int) -> None:
        raise RuntimeError(f"slot failed on {value}\nsecond line")

    emitter.fired.connect(broken_slot)
    emitter.fired.connect(handled.append)
    uninstall = install_exception_handler(shown.append)
    try:
        with caplog.at_level(logging.ERROR, logger="app.ui.runtime.excepthook"):
            emitter.fired.emit(1)
            qtbot.wait(10)  # the event loop keeps running
            emitter.fired.emit(2)
    finally:
        uninstall()
    assert len(shown) == 2
    assert shown[0].startswith("Something went wrong: RuntimeError: slot failed on 1.")
    assert "second line" not in shown[0] and "\n" not in shown[0]
    assert "still running" in shown[0]
    assert handled == [1, 2]  # later slots and later signals still ran
    assert sum("slot failed on 1" in (r.exc_text or "") for r in caplog.records) == 1
    assert "Traceback" in caplog.records[0].exc_text  # type: ignore[operator]


def test_an_exception_in_a_worker_thread_reaches_the_gui_thread(qtbot: QtBot) -> None:
    import threading

    shown: list[tuple[str, bool]] = []
    uninstall = install_exception_handler(
        lambda text: shown.append((text, threading.current_thread() is threading.main_thread()))
    )
    try:
        worker = threading.Thread(target=lambda: 1 / 0)
        worker.start()
        worker.join()
        qtbot.waitUntil(lambda: bool(shown), timeout=2000)
    finally:
        uninstall()
    assert shown[0][0].startswith("Something went wrong: ZeroDivisionError")
    assert shown[0][1] is True


def test_uninstall_restores_the_previous_hooks() -> None:
    import sys
    import threading

    before = (sys.excepthook, threading.excepthook)
    uninstall = install_exception_handler(lambda text: None)
    assert sys.excepthook is not before[0]
    uninstall()
    assert (sys.excepthook, threading.excepthook) == before


def test_a_broken_show_does_not_loop(qtbot: QtBot, caplog: pytest.LogCaptureFixture) -> None:
    def show(text: str) -> None:
        raise ValueError("display is broken")

    emitter = Emitter()
    emitter.fired.connect(lambda value: 1 / 0)
    uninstall = install_exception_handler(show)
    try:
        emitter.fired.emit(1)
    finally:
        uninstall()
    assert any("showing an error failed" in r.getMessage() for r in caplog.records)
