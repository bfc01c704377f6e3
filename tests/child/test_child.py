"""Recording in a child process (NOTE [recording in a child]): the same recordings, and faults contained.

PyTorch in this process is the oracle: a recording made in the child equals
one made here, a refusal has the same words and place. Faults are injected
through the child's test seam (``AUTOGRAD_LENS_CHILD_FAULTS=1``): an abort,
SIGKILL, SIGSEGV, an exit, an operator that sleeps past the time limit, an
allocation past the memory limit.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from app.child import client as client_module
from app.child.client import (
    IDLE_CHILDREN,
    ChildFailure,
    ChildLimits,
    ChildPool,
    RecordingBug,
    record_in_child,
    request_source,
)
from app.child.server import FAULTS_ENV, requested_program
from app.core.lensfile import lens_bytes
from app.core.loading import load_program
from app.core.model.errors import ProgramError
from app.core.model.graph import Graph
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.model.timeline import Step, Timeline
from app.core.recorder.recorder import record
from app.core.report import to_json
from tests.support.hostile_cases import CASES, Case, case_params, outcome

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="child recording needs POSIX limits")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pool() -> Iterator[ChildPool]:
    """One warm child for the module's ordinary recordings."""
    made = ChildPool()
    yield made
    made.close()


@pytest.fixture(scope="module")
def faulty() -> Iterator[ChildPool]:
    """One pool for the module's faults, whose children honour injected faults. A fault ends or
    retires the child it ran in; the fresh child each test records with next stays warm for the
    following test's fault (each start is an ``import torch``), so the tests count starts from
    :func:`_warm`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FAULTS_ENV, "1")  # read by each child as it starts, for the module's length
        made = ChildPool()
        yield made
        made.close()


def _warm(pool: ChildPool, memory_mb: int | None = ChildLimits().memory_mb) -> int:
    """A warm child with that memory limit in ``pool`` (started now if it has none); how many
    children the pool has started, that one included."""
    pool.give_back(pool.take(memory_mb))
    return pool.started


def _children() -> list[tuple[int, str]]:
    """(pid, state) of this process's children, zombies included (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid():
            found.append((int(entry.name), fields[0]))
    return found


# -- the same recordings -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["forgot-retain", "rnn-no-detach", "higher-derivative", "inplace-sigmoid"])
def test_a_recording_made_in_the_child_equals_one_made_here(name: str, pool: ChildPool) -> None:
    here = record(load_program(name))
    there = record_in_child(name, pool=pool)
    assert to_json(there) == to_json(here)
    assert there.program == here.program


def test_a_program_object_comes_back_as_the_very_program(pool: ChildPool) -> None:
    program = load_program("two-losses").with_code(load_program("two-losses").code + "\nprint(x.grad)\n")
    there = record_in_child(program, pool=pool)
    assert there.program is program
    assert to_json(there) == to_json(record(program))


def test_two_children_busy_at_once_both_stay_warm(pool: ChildPool) -> None:
    """The window records an edit while a panel proves a fix: two children at once. Given back,
    both stay warm, and the next two recordings at once start no child (an ``import torch`` each)."""
    memory_mb = ChildLimits().memory_mb
    first, second = pool.take(memory_mb), pool.take(memory_mb)
    pool.give_back(first)
    pool.give_back(second)
    started = pool.started
    again = [pool.take(memory_mb), pool.take(memory_mb)]
    assert pool.started == started
    assert {child.pid for child in again} == {first.pid, second.pid}
    assert all(child.pid in dict(_children()) for child in again)  # processes still running
    third = pool.take(memory_mb)  # a third at once is started, and closed when given back
    assert pool.started == started + 1
    for child in [*again, third]:
        pool.give_back(child)
    assert not third.alive() and all(child.alive() for child in again)


def test_the_child_records_below_the_windows_priority(pool: ChildPool) -> None:
    """It records while the window paints: the kernel's own priority of the child process, read
    from outside it, is lower (a higher nice value) than this process's."""
    record_in_child("two-losses", pool=pool)  # a child that has started and answered
    child = pool.take(ChildLimits().memory_mb)  # the warm one
    try:
        child.wait_ready()  # it lowered its priority before it imported torch
        assert os.getpriority(os.PRIO_PROCESS, child.pid) > os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        pool.give_back(child)


def test_a_program_crosses_the_pipe_in_the_lens_files_form_with_every_field() -> None:
    """The request carries the program as a ``.lens`` file holds it; a field the model and the
    schema gain crosses with no edit here."""
    every = {f.name: f"{f.name}: ünï\n" for f in dataclasses.fields(Program) if f.name != "path"}
    program = Program(**every)
    first = Step(0, "forward", None, None, {}, {}, 0)
    in_a_file = Recording(program, "cpu", "2.0", Graph((), ()), Timeline((first,)), {}, ())
    request = json.loads(json.dumps(request_source(program)))
    assert request == {"program": json.loads(gzip.decompress(lens_bytes(in_a_file)))["program"]}
    assert request == {"program": every}
    assert requested_program(request) == program


CHILD_CASES = [c for c in CASES if c.limits is None]


@pytest.mark.parametrize("case", case_params(CHILD_CASES))
def test_every_hostile_case_gets_the_same_outcome_in_the_child(
    case: Case, pool: ChildPool, tmp_path: Path
) -> None:
    expected = outcome(case)
    path = tmp_path / "hostile.toml"
    path.write_text(case.text, encoding="utf-8")
    try:
        got: object = record_in_child(str(path), pool=pool)
    except ProgramError as exc:
        got = exc
    if isinstance(expected, ProgramError):
        assert isinstance(got, ProgramError) and type(got) is type(expected)
        assert (got.message, got.field, got.line, got.col) == (
            expected.message,
            expected.field,
            expected.line,
            expected.col,
        )
    else:
        assert not isinstance(got, ProgramError), got
        # the child named it after its file; "scenario" is the name's old key, kept for shared files
        named = {"scenario": expected.program.name}
        assert {**to_json(got), **named} == to_json(expected)  # type: ignore[arg-type]


# -- faults: a clear message, nothing left running, and the next recording works ---------------
@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("abort", "was ended by SIGABRT"),
        ("kill", "was ended by SIGKILL"),
        ("segv", "was ended by SIGSEGV"),
        ("exit", "ended unexpectedly (exit status 3)"),
    ],
)
def test_a_child_that_dies_is_one_message_and_the_next_recording_works(
    kind: str, words: str, faulty: ChildPool
) -> None:
    started = _warm(faulty)
    with pytest.raises(ChildFailure) as failure:
        record_in_child("two-losses", pool=faulty, fault={"kind": kind})
    assert words in str(failure.value)
    assert "the next recording starts a fresh one" in str(failure.value)
    assert not [pid for pid, state in _children() if state == "Z"]  # reaped
    again = record_in_child("two-losses", pool=faulty)
    assert to_json(again) == to_json(record(load_program("two-losses")))
    assert faulty.started == started + 1  # the warm child died; one fresh child recorded next


def test_an_operator_past_the_time_limit_is_stopped_by_the_wall_clock(
    faulty: ChildPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the wall clock stops the child at its time limit plus a grace (5 s, for an operator that is
    # about to return): a shorter grace here stops it the same way, sooner
    monkeypatch.setattr(client_module, "GRACE_S", 0.5)
    limits = ChildLimits(time_limit_s=0.5)
    started = _warm(faulty)
    with pytest.raises(ChildFailure) as failure:
        record_in_child("two-losses", pool=faulty, limits=limits, fault={"kind": "sleep", "seconds": 3600})
    assert failure.value.limit == "time"
    assert "time limit of 0.5 s" in str(failure.value) and "--time-limit" in str(failure.value)
    assert not _children() or all(state != "Z" for _, state in _children())
    assert record_in_child("two-losses", pool=faulty).calls  # a fresh child
    assert faulty.started == started + 1


def test_a_bug_in_the_child_names_its_exception(faulty: ChildPool) -> None:
    started = _warm(faulty)
    with pytest.raises(RecordingBug) as bug:
        record_in_child("two-losses", pool=faulty, fault={"kind": "bug"})
    assert bug.value.kind == "RuntimeError" and "injected" in str(bug.value)
    assert faulty.started == started  # the warm child answered
    assert record_in_child("two-losses", pool=faulty).calls  # the faulty child was retired
    assert faulty.started == started + 1


def test_an_allocation_past_the_memory_limit_names_the_limit(faulty: ChildPool) -> None:
    limits = ChildLimits(memory_mb=2048)
    with pytest.raises(ChildFailure) as failure:
        record_in_child("two-losses", pool=faulty, limits=limits, fault={"kind": "allocate"})
    assert failure.value.limit == "memory"
    assert "2,048 MB" in str(failure.value) and "--memory-limit" in str(failure.value)
    assert record_in_child("two-losses", pool=faulty, limits=limits).calls


def test_a_device_out_of_memory_is_the_programs_error_and_a_fresh_child_follows(
    faulty: ChildPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CUDA's out-of-memory error inside the program's own operator: PyTorch's words at that line,
    as a recording made here under the same fault shows them, never the child's memory limit; the
    child is retired (a device error can leave its context unusable) and the next one records."""
    from app.child.server import _fault

    fault = {"kind": "device-oom", "op": "square"}
    limits = ChildLimits(memory_mb=2048)
    started = _warm(faulty, limits.memory_mb)
    shown = record_in_child("two-losses", pool=faulty, limits=limits, fault=fault)
    monkeypatch.setenv(FAULTS_ENV, "1")
    with _fault(fault):
        here = record(load_program("two-losses"))
    assert to_json(shown) == to_json(here)
    assert "CUDA out of memory" in (shown.error or "") and "--memory-limit" not in (shown.error or "")
    lines = load_program("two-losses").code.splitlines()
    assert "square()" in lines[(shown.error_line or 0) - 1]
    assert faulty.started == started
    expected = to_json(record(load_program("two-losses")))
    assert to_json(record_in_child("two-losses", pool=faulty, limits=limits)) == expected
    assert faulty.started == started + 1  # retired after the device error, though its limits fit


def test_the_child_runs_under_its_limits_with_only_its_pipes(pool: ChildPool, tmp_path: Path) -> None:
    secret = tmp_path / "parent-only.txt"
    with secret.open("w") as handle:
        os.set_inheritable(handle.fileno(), True)  # even an inheritable descriptor stays here
        fresh = ChildPool()
        record_in_child("two-losses", pool=fresh)
        [child] = fresh._idle
        limits = Path(f"/proc/{child.pid}/limits").read_text()
        status = Path(f"/proc/{child.pid}/status").read_text()
        targets = [os.readlink(f"/proc/{child.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{child.pid}/fd")]
        ours = {t for fd in os.listdir("/proc/self/fd") if (t := _fd_target(fd))}
        fresh.close()
    # NOTE [memory limit]: 4,096 MB on top of what the child's imports mapped (torch's libraries)
    room = int(_limit(limits, "Max address space")) - 4096 * 2**20
    peak = int(_limit(status, "VmPeak:")) * 1024
    assert 100 * 2**20 < room <= peak
    assert _limit(limits, "Max open files") == "256"
    assert _limit(limits, "Max core file size") == "0"
    assert str(secret) not in targets
    # the child shares two pipes with this process, its own; a CUDA build's driver opens more of its own
    assert len({t for t in targets if t.startswith("pipe:")} & ours) == 2


def _fd_target(fd: str) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except FileNotFoundError:  # the descriptor that listed the folder, closed since
        return None


def _limit(text: str, name: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith(name))
    return line[len(name) :].split()[0]


def test_two_hundred_re_records_through_one_warm_child_grow_nothing(pool: ChildPool) -> None:
    program = load_program("forgot-retain")
    record_in_child(program, pool=pool)
    child = pool._idle[-1]  # the warm child each recording takes next (the newest given back)
    fds_before = len(os.listdir("/proc/self/fd"))
    started = pool.started
    rss = []
    for i in range(200):
        record_in_child(program, pool=pool)
        if i in (20, 199):
            rss.append(_rss_kb(child.pid))
    assert pool._idle[-1] is child and pool.started == started and child.requests >= 201
    assert len(os.listdir("/proc/self/fd")) == fds_before
    assert len(_children()) <= IDLE_CHILDREN + 1  # this module's warm children (and one from another pool)
    assert rss[1] - rss[0] < 20_000  # kB: no recording left anything behind in the child


def _rss_kb(pid: int) -> int:
    line = next(
        line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmRSS")
    )
    return int(line.split()[1])


# -- the command line: one line, exit 2 ---------------------------------------------------------
def _trace(*args: str, fault: dict[str, object] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, FAULTS_ENV: "1", "AUTOGRAD_LENS_CHILD_FAULT": json.dumps(fault or {})}
    env.pop("AUTOGRAD_LENS_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "app", "trace", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "fault", "words"),
    [
        ((), {"kind": "abort"}, "SIGABRT"),
        (("--time-limit", "1"), {"kind": "sleep"}, "--time-limit"),
        (("--memory-limit", "2048"), {"kind": "allocate"}, "--memory-limit"),
    ],
)
def test_trace_tells_a_dead_child_in_one_line_and_exits_2(
    args: tuple[str, ...], fault: dict[str, object], words: str
) -> None:
    done = _trace("two-losses", *args, fault=fault)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("autograd-lens: ") and words in lines[0]


def test_trace_in_the_child_prints_what_trace_in_process_prints(
    pool: ChildPool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command as ``python -m app trace`` runs it, here, its children from this module's warm pool."""
    import app.core.recorder.recorder as recorder_module
    from app import cli

    monkeypatch.setattr(client_module, "POOL", pool)
    monkeypatch.setattr(pool, "limits", pool.limits)  # the command sets its pool's limits
    bound = recorder_module.record

    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("trace without --in-process recorded in the command's own process")

    monkeypatch.setattr(recorder_module, "record", never)
    assert cli.main(["trace", "rnn-no-detach", "--json"]) == 0
    child = capsys.readouterr()
    monkeypatch.setattr(recorder_module, "record", bound)
    assert cli.main(["trace", "rnn-no-detach", "--json", "--in-process"]) == 0
    here = capsys.readouterr()
    assert child.err == here.err == ""
    assert json.loads(child.out) == json.loads(here.out)


# -- the window --------------------------------------------------------------------------------
def test_the_window_records_in_the_child_never_here(qtbot, session, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.core.recorder.recorder as recorder_module

    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("the window's process ran a recording")

    monkeypatch.setattr(recorder_module, "record", never)
    with qtbot.waitSignal(session.recording_applied, timeout=60_000) as blocker:
        session.load("forgot-retain")
    assert to_json(blocker.args[0]) == to_json(
        record(load_program("forgot-retain"))
    )  # bound before the patch


def test_a_crash_in_the_child_leaves_the_window_working(
    qtbot, session, faulty: ChildPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.ui.runtime import worker as worker_module

    with qtbot.waitSignal(session.recording_applied, timeout=60_000):
        session.load("two-losses")
    shown = session.recording
    monkeypatch.setattr(
        worker_module, "record_program", partial(record_in_child, pool=faulty, fault={"kind": "abort"})
    )
    with qtbot.waitSignal(session.failed, timeout=60_000) as failed:
        session.load("forgot-retain")
    assert "SIGABRT" in failed.args[0]
    assert session.recording is shown  # the previous recording stays on screen
    monkeypatch.setattr(worker_module, "record_program", partial(record_in_child, pool=faulty))
    with qtbot.waitSignal(session.recording_applied, timeout=60_000) as applied:
        session.load("forgot-retain")
    assert to_json(applied.args[0]) == to_json(record(load_program("forgot-retain")))


def test_the_command_starts_the_child_before_it_imports_qt() -> None:
    """``python -m app`` starts the warm child first: its ``import torch`` runs while Qt and the
    window's modules load."""
    code = (
        "import sys, types\n"
        "import app.child.client as client\n"
        "seen = []\n"
        "qt = lambda: sorted(m for m in sys.modules if m.startswith('PySide6'))\n"
        "client.ChildPool.prestart = lambda self: seen.append(qt())\n"
        "stub = types.ModuleType('app.ui.main')\n"
        "stub.run_gui = lambda source: print(seen, source) or 0\n"
        "sys.modules['app.ui.main'] = stub\n"
        "from app.cli import main\n"
        "main(['gui', 'two-losses'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[[]]", "two-losses"]  # started once, before any of Qt


def test_the_window_paints_its_first_graph_without_torch_and_imports_the_checks_after(tmp_path: Path) -> None:
    """The first graph comes from the child; the editor's checks (and torch) are imported in the
    window's process only after it, off the GUI thread."""
    code = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
        "import first_paint\n"
        "from PySide6.QtCore import QTimer\n"
        "def finish():\n"
        "    print('at-first-paint', 'torch' in sys.modules, flush=True)\n"
        "    end = time.monotonic() + 60\n"
        "    def later():\n"  # as soon as torch is imported, or after a minute without it
        "        if 'torch' in sys.modules or time.monotonic() > end:\n"
        "            print('later', 'torch' in sys.modules, flush=True)\n"
        "            first_paint.os._exit(0)\n"
        "        QTimer.singleShot(100, later)\n"
        "    later()\n"
        "first_paint._finish = finish\n"
        "sys.argv[1:] = ['forgot-retain']\n"
        "first_paint.main()\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "AUTOGRAD_LENS_SETTINGS": str(tmp_path / "s.ini")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    # first_paint's own line, then this test's two
    assert done.stdout.split() == ["first-paint", "at-first-paint", "False", "later", "True"]


def test_a_large_program_crosses_the_pipe_whole(pool: ChildPool) -> None:
    """A request larger than a pipe's buffer arrives in pieces; the child reads it all."""
    program = load_program("two-losses")
    padded = program.with_code(program.code + "\n" + "# padding\n" * 8_000)
    assert len(padded.code) > 65_536  # a Linux pipe holds 64 KiB
    assert to_json(record_in_child(padded, pool=pool)) == to_json(record(padded))


# -- run SCRIPT.py with the window: the script runs in a child process ---------------------------
SCRIPT = """import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x.square()
y.sum().backward(retain_graph=True)
(y * 3).sum().backward()
print(x.grad.tolist())
"""


def test_run_without_out_records_in_a_child_and_shows_that_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from app import cli
    from app.core.lensfile import read_lens

    script = tmp_path / "two_calls.py"
    script.write_text(SCRIPT, encoding="utf-8")
    shown: list[str] = []
    monkeypatch.setattr("app.ui.main.run_gui", lambda path: shown.append(path) or 0)
    assert cli.main(["run", str(script)]) == 0
    assert "[8.0, 16.0]" in capfd.readouterr().out  # the script's own output, from its process
    assert len(shown) == 1
    assert cli.main(["run", "--json", str(script)]) == 0  # recorded here: the oracle
    got = to_json(read_lens(shown[0]))
    printed = json.loads(capfd.readouterr().out)
    assert printed.pop("fixes") == [] and printed.pop("advice") is None  # the lesson: not the recording's
    assert json.dumps(got, sort_keys=True) == json.dumps(printed, sort_keys=True)


def test_a_script_that_crashes_its_interpreter_ends_only_its_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app import cli

    script = tmp_path / "crash.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", encoding="utf-8")
    monkeypatch.setattr("app.ui.main.run_gui", lambda path: pytest.fail("no window for a crashed script"))
    assert cli.main(["run", str(script)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["autograd-lens: the script's process was ended by SIGSEGV; nothing was recorded to show"]
