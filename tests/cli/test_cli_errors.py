"""The command line never shows a traceback: every failure is one line on stderr.

Exit 2 for a bad program, file, device or command line (and for an OSError),
1 for a bug in Autograd Lens itself (with a hint), 0 when the run was recorded
even if PyTorch refused a call (an error step). Most checks call ``main`` in
process; a few run ``python -m app`` for real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import cli
from app.core import ProgramError
from tests.support.hostile_cases import CASES, Case, ProgramFails, Refused, case_params, outcome

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "autograd-lens: "


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(args)
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(PREFIX) and lines[0].isprintable(), lines[0]
    return lines[0].removeprefix(PREFIX)


CLI_CASES = [c for c in CASES if c.limits is None]


@pytest.mark.parametrize("case", case_params(CLI_CASES))
def test_every_hostile_case_through_trace(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hostile.toml"
    path.write_text(case.text, encoding="utf-8")
    status, out, err = run_main(["trace", str(path)], capsys)
    if isinstance(case.expect, Refused):
        expected = outcome(case)
        assert isinstance(expected, ProgramError)
        assert status == 2 and out == ""
        assert one_line(err) == " ".join(str(expected).split())
    elif isinstance(case.expect, ProgramFails):  # recorded: the program stopped at its own error
        assert status == 0 and err == ""
        assert f"The program stopped (line {case.expect.line}): " in out and case.expect.words in out
    else:
        assert status == 0 and err == ""
        assert "error" in out


def test_trace_of_a_builtin_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(["trace", "two-losses"], capsys)
    assert status == 0 and err == ""
    assert out.startswith("two-losses on cpu")


def test_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_main(["trace", str(tmp_path)], capsys)
    assert status == 2
    assert one_line(err) == f"file: {tmp_path} is a folder, not a program file"


def test_a_file_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "café"\n'.encode("latin-1"))
    status, _, err = run_main(["trace", str(path)], capsys)
    assert status == 2
    assert (
        one_line(err)
        == "file, line 1, column 12: the file is not UTF-8 text: byte 0xe9 cannot start a character here"
    )


def test_a_path_that_is_not_utf8_is_shown_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_main(["trace", "/nonexistent/\udcff.toml"], capsys)
    assert status == 2
    assert one_line(err) == "file: cannot read /nonexistent/\\udcff.toml: No such file or directory"


def test_control_characters_in_an_error_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ansi.toml"
    path.write_text('"\\u001b]0;pwned\\u0007" = 1\n', encoding="utf-8")
    status, _, err = run_main(["trace", str(path)], capsys)
    assert status == 2
    assert "\x1b" not in err and "\x07" not in err
    assert one_line(err).startswith("\\x1b]0;pwned\\x07: unknown field '\\x1b]0;pwned\\x07'")


def test_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["trace"])
    _, err = capsys.readouterr()
    assert info.value.code == 2
    assert one_line(err) == "the following arguments are required: program (see: autograd-lens trace --help)"


def test_an_unknown_device(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_main(["trace", "two-losses", "--device", "toaster"], capsys)
    assert status == 2
    assert one_line(err).startswith("device: 'toaster' is not a device name")


def test_an_internal_bug_is_one_line_exit_1_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(args: object) -> int:
        raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")

    monkeypatch.setattr(cli, "_trace", broken)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    status, _, err = run_main(["trace", "two-losses"], capsys)
    assert status == 1
    assert one_line(err) == (
        "internal error (TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'); "
        f"this is a bug in Autograd Lens: set {cli.DEBUG_ENV}=1 to see the traceback, and please report it"
    )
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    with pytest.raises(TypeError):
        cli.main(["trace", "two-losses"])


def test_an_unexpected_error_while_recording_is_a_bug_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import app.core.recorder.recorder

    def crash(*args: object, **kwargs: object) -> object:
        raise RuntimeError("CUDA error: device-side assert triggered")

    monkeypatch.setattr(app.core.recorder.recorder, "record", crash)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    status, _, err = run_main(["trace", "two-losses", "--in-process"], capsys)
    assert status == 1
    assert one_line(err).startswith("internal error (RuntimeError: CUDA error: device-side assert triggered)")


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (PermissionError(13, "Permission denied", "/root/out"), 2, "Permission denied: /root/out"),
        (OSError(28, "No space left on device"), 2, "No space left on device"),
        (MemoryError(), 2, "ran out of memory; try a smaller program"),
        (UnicodeEncodeError("ascii", "é", 0, 1, "ordinal not in range(128)"), 2, "cannot read this text: "),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
    ids=["permission", "disk full", "memory", "unicode", "ctrl-c"],
)
def test_system_failures_are_one_line(
    error: BaseException,
    status: int,
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def fail(args: object) -> int:
        raise error

    monkeypatch.setattr(cli, "_export", fail)
    got, _, err = run_main(["export", "two-losses", "--out", "/root/out"], capsys)
    assert got == status
    assert one_line(err).startswith(line)


def test_a_broken_pipe_is_quiet(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def closed_reader(args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_trace", closed_reader)
    monkeypatch.setattr(cli, "_quiet_stdout", lambda: None)  # capsys's stdout has no file descriptor
    status, _, err = run_main(["trace", "two-losses"], capsys)
    assert (status, err) == (2, "")


# -- a few real processes -----------------------------------------------------------


def run_app(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_a_hostile_file_in_a_real_process(tmp_path: Path) -> None:
    path = tmp_path / "escape.toml"
    path.write_text(next(c.text for c in CASES if "__bases__" in c.id), encoding="utf-8")
    done = run_app("trace", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "autograd-lens: forward.code, line 1, column 5: attribute '__bases__' is private: names starting "
        "with _ are refused; to record a script of your own with full Python, run: "
        "python -m app run SCRIPT.py"
    ]


def test_a_non_ascii_error_on_an_ascii_terminal(tmp_path: Path) -> None:
    path = tmp_path / "cafe.toml"
    case = next(c for c in CASES if c.id.startswith("forward: y = z * 2"))
    path.write_text(case.text.replace("z * 2", "café * 2"), encoding="utf-8")
    done = run_app("trace", str(path), env={"PYTHONIOENCODING": "ascii:strict", "LC_ALL": "C"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "autograd-lens: forward.code, line 1, column 5: name 'caf\\xe9' is not defined"
    ]


def test_dev_zero_and_a_directory_in_real_processes(tmp_path: Path) -> None:
    done = run_app("trace", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"autograd-lens: file: {tmp_path} is a folder, not a program file"]
    if Path("/dev/zero").exists():
        done = run_app("trace", "/dev/zero")
        assert done.returncode == 2
        assert done.stderr.splitlines() == ["autograd-lens: file: /dev/zero is not a regular file"]
