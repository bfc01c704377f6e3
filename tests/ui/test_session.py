"""The window's view model: recordings made off the GUI thread, stepping that replays snapshots."""

import subprocess
import sys
import threading
from pathlib import Path

import torch

from app.render.layout import LayoutError
from app.ui.runtime import worker as worker_module

TIMEOUT = 30_000


def _load(qtbot, session, source):
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        session.load(source)
    return blocker.args[0]


# -- recording -------------------------------------------------------------------
def test_load_records_on_a_pool_thread_and_shows_step_zero(qtbot, session, two_losses, monkeypatch):
    threads = []
    real = worker_module.record_program

    def spy(program, device):
        threads.append(threading.current_thread())
        return real(program, device)

    monkeypatch.setattr(worker_module, "record_program", spy)
    with qtbot.waitSignal(session.step_applied, timeout=TIMEOUT) as step:
        recording = _load(qtbot, session, "two-losses")
    assert threads and threads[0] is not threading.main_thread()
    assert [s.caption for s in recording.timeline.steps] == [s.caption for s in two_losses.timeline.steps]
    assert step.args == [0]
    assert session.index == 0
    assert session.layout is not None  # laid out in the same run, off the GUI thread
    assert session.layout_error is None


def test_busy_is_true_while_recording_then_false(qtbot, session):
    seen = []
    session.busy_changed.connect(seen.append)
    _load(qtbot, session, "two-losses")
    assert seen == [True, False]
    assert not session.busy


def test_a_lens_file_is_read_and_never_recorded(qtbot, session, forgot_retain, monkeypatch, tmp_path):
    from app.core.lensfile import save_lens

    path = tmp_path / "run.lens"
    save_lens(forgot_retain, path)

    def never(program, device):
        raise AssertionError("a .lens file runs nothing")

    monkeypatch.setattr(worker_module, "record_program", never)
    recording = _load(qtbot, session, path)
    assert recording.program == forgot_retain.program
    assert [s.caption for s in recording.timeline.steps] == [s.caption for s in forgot_retain.timeline.steps]
    assert session.index == forgot_retain.failed.last_step


def test_a_damaged_lens_file_fails_with_its_message_and_keeps_what_is_shown(qtbot, session, tmp_path):
    before = _load(qtbot, session, "two-losses")
    path = tmp_path / "bad.lens"
    path.write_bytes(b"not a recording")
    with qtbot.waitSignal(session.failed, timeout=TIMEOUT) as blocker:
        session.load(path)
    assert "lens" in blocker.args[0].lower()
    assert session.recording is before


def test_change_program_can_be_undone_and_a_load_forgets_the_history(qtbot, session):
    before = _load(qtbot, session, "two-losses")
    assert not session.can_undo and session.undo() is None
    changed = before.program.with_code(before.program.code.replace("x.square()", "x * x"))
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT):
        session.change_program(changed)
    assert session.program == changed and session.can_undo
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        session.undo()
    assert blocker.args[0].program == before.program and not session.can_undo
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT):
        session.change_program(changed)
    _load(qtbot, session, "forgot-retain")
    assert not session.can_undo


def test_stepping_back_replays_the_recorded_snapshot(qtbot, session, two_losses):
    _load(qtbot, session, "two-losses")
    last = len(two_losses.timeline) - 1
    order = list(range(last + 1)) + list(range(last, -1, -1))
    for index in order:
        session.go_to(index)
        state, oracle = session.state(), two_losses.timeline.state(index)
        assert dict(state.slots) == dict(oracle.slots)
        assert {k: None if v is None else v.tolist() for k, v in state.grads.items()} == {
            k: None if v is None else v.tolist() for k, v in oracle.grads.items()
        }


def test_node_call_home_and_end_steps(qtbot, session, two_losses):
    _load(qtbot, session, "two-losses")
    ends = [info.last_step for info in two_losses.calls]
    indices = []
    session.step_applied.connect(indices.append)
    session.next_step()
    assert session.index == 1
    session.prev_step()
    assert session.index == 0
    session.next_call()
    assert session.index == ends[0]
    session.next_call()
    assert session.index == ends[1]
    session.prev_call()
    assert session.index == ends[0]
    session.prev_call()
    assert session.index == 0
    session.end()
    last = len(two_losses.timeline) - 1
    assert session.index == last
    session.next_step()  # clamped: nothing happens past the end
    session.prev_call()
    assert session.index == ends[1]  # the statement after the last call is a step of its own
    session.home()
    assert session.index == 0
    assert indices == [1, 0, ends[0], ends[1], ends[0], 0, last, ends[1], 0]


def test_play_runs_to_the_end_and_stops(qtbot, session, two_losses):
    _load(qtbot, session, "two-losses")
    session.set_speed(50)
    with qtbot.waitSignal(session.playing_changed, timeout=TIMEOUT, check_params_cb=lambda on: not on):
        session.play()
        assert session.playing
    assert session.index == len(two_losses.timeline) - 1
    assert not session.playing


def test_toggle_play_pauses(qtbot, session):
    _load(qtbot, session, "two-losses")
    session.set_speed(0.5)
    session.toggle_play()
    assert session.playing
    session.toggle_play()
    assert not session.playing


# -- re-recording ------------------------------------------------------------------
def test_rerecord_jumps_to_a_failure_and_back_to_where_it_was(qtbot, session, forgot_retain):
    recording = _load(qtbot, session, "two-losses")
    session.go_to(5)
    forgot = recording.program.code.replace("backward(retain_graph=True)", "backward()")
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        session.rerecord(recording.program.with_code(forgot))
    failed = blocker.args[0].failed
    assert failed is not None
    assert failed.error == forgot_retain.failed.error
    assert session.index == failed.last_step
    assert session.state().step.kind == "error"
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT):
        session.rerecord(recording.program)
    assert session.recording.failed is None
    # where the error was: the failed call's end, now run through (its old step number is another step)
    fixed = session.recording.calls[failed.index]
    assert session.index == fixed.last_step != failed.last_step
    assert fixed.call.line == failed.call.line


def test_a_failed_recording_keeps_the_previous_one(qtbot, session, monkeypatch):
    before = _load(qtbot, session, "two-losses")
    session.go_to(3)

    def out_of_memory(program, device):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(worker_module, "record_program", out_of_memory)
    with qtbot.waitSignal(session.failed, timeout=TIMEOUT) as blocker:
        session.rerecord(before.program.with_code(before.program.code.replace("=True", "=False")))
    assert "CUDA out of memory" in blocker.args[0]
    assert session.recording is before
    assert session.index == 3
    assert session.program == before.program  # the next change builds on what is on screen
    assert isinstance(session.last_error, torch.OutOfMemoryError)


def test_a_bad_program_name_fails_with_the_program_error(qtbot, session):
    with qtbot.waitSignal(session.failed, timeout=TIMEOUT) as blocker:
        session.load("two-loses")
    assert "no built-in program 'two-loses'" in blocker.args[0]
    assert "did you mean 'two-losses'" in blocker.args[0]
    assert session.recording is None


def test_a_stale_result_is_dropped(qtbot, session, monkeypatch):
    release = threading.Event()
    real = worker_module.record_program

    def slow_for_forgot_retain(source, device):
        if source == "forgot-retain":  # a built-in's name: the child reads it
            release.wait(TIMEOUT / 1000)
        return real(source, device)

    monkeypatch.setattr(worker_module, "record_program", slow_for_forgot_retain)
    applied = []
    session.recording_applied.connect(applied.append)
    session.load("forgot-retain")  # superseded before it finishes
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT):
        session.load("two-losses")
    release.set()
    assert session.worker.wait_idle(TIMEOUT)
    qtbot.wait(50)  # let the stale answer reach the event loop, where it must be dropped
    assert [r.program.name for r in applied] == ["two-losses"]
    assert session.recording.program.name == "two-losses"


def test_a_layout_failure_still_delivers_the_recording(qtbot, session, monkeypatch):
    def no_dot(recording):
        raise LayoutError(
            "Graphviz 'dot' was not found on PATH; install Graphviz: sudo apt-get install graphviz"
        )

    monkeypatch.setattr(worker_module, "layout_recording", no_dot)
    recording = _load(qtbot, session, "two-losses")
    assert recording.grads_at_end(1)["x"].tolist() == [8.0, 16.0]
    assert session.layout is None
    assert "apt-get install graphviz" in session.layout_error


def test_set_device_records_again_on_that_device(qtbot, session, monkeypatch):
    _load(qtbot, session, "two-losses")
    devices = []
    real = worker_module.record_program

    def spy(program, device):
        devices.append(device)
        return real(program, "cpu")

    monkeypatch.setattr(worker_module, "record_program", spy)
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT):
        session.set_device("cuda:0")
    assert devices == ["cuda:0"]


FRESH_PROCESS = """
import sys
from PySide6.QtCore import QCoreApplication, QTimer
from app.ui.runtime.session import Session
app = QCoreApplication([])
assert "torch" not in sys.modules
session = Session()
names = []
session.recording_applied.connect(lambda r: (names.append(r.program.name), app.quit()))
session.failed.connect(lambda m: (print(m), app.exit(1)))
session.load("forgot-retain")
session.load("two-losses")
QTimer.singleShot(100_000, lambda: app.exit(2))
status = app.exec()
session.worker.wait_idle()
print(names)
sys.exit(status)
"""


def test_two_requests_before_torch_is_imported_both_finish_and_the_newest_shows():
    # A cold start: both pool threads import app.core at once (worker.import_core serialises
    # that; the deadlock it prevents is a narrow race, so this checks the cold path works).
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "['two-losses']"


LENS_OPEN_PROCESS = """
import sys
from PySide6.QtCore import QCoreApplication, QTimer
from app.ui.runtime.session import Session
app = QCoreApplication([])
session = Session()
session.recording_applied.connect(lambda r: (print(len(r.timeline)), app.quit()))
session.failed.connect(lambda m: (print(m), app.exit(1)))
session.load(sys.argv[1])
QTimer.singleShot(100_000, lambda: app.exit(2))
status = app.exec()
session.worker.wait_idle()
print(sorted(m for m in sys.modules if m.startswith("app.core.lesson")))
sys.exit(status)
"""


def test_opening_a_lens_file_imports_no_lesson_module(two_losses, tmp_path):
    # The window asks whether a file is the user's own script's recording on the GUI thread while
    # its worker reads the file; the lesson's 20 modules wait for the first lesson.
    from app.core.lensfile import save_lens

    path = tmp_path / "two.lens"
    save_lens(two_losses, path)
    done = subprocess.run(
        [sys.executable, "-c", LENS_OPEN_PROCESS, str(path)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip().splitlines() == [str(len(two_losses.timeline)), "[]"]


def test_a_lens_files_damaged_step_is_said_when_it_is_shown(qtbot, session, two_losses, tmp_path):
    """A .lens file's steps are checked as they are shown (NOTE [steps on demand]): a damaged late
    step leaves the file open, and stepping onto it says what is wrong and stays where it was."""
    from tests.support.damaged_lens import lens_with_step, unknown_slot_node

    last = len(two_losses.timeline) - 1
    path = lens_with_step(two_losses, tmp_path / "late.lens", last, unknown_slot_node)
    recording = _load(qtbot, session, path)
    assert len(recording.timeline) == len(two_losses.timeline) and session.index == 0
    session.go_to(last - 1)
    assert session.index == last - 1
    with qtbot.waitSignal(session.failed, timeout=TIMEOUT) as blocker:
        session.go_to(last)
    assert f"steps[{last}].slot_changes" in blocker.args[0]
    assert session.index == last - 1 and session.state().step.index == last - 1
    assert session.recording is recording


def test_the_checks_wait_while_the_window_draws_the_graph_it_was_given(qtbot, session, monkeypatch):
    """The editor's checks import torch, which holds the interpreter for a second or more: while
    the window still draws its first graph (``checks_wait``), the import waits; then it starts."""
    imports, asked, drawing = [], [], [True]
    monkeypatch.setattr(worker_module, "import_checks", lambda: imports.append(1))
    monkeypatch.setattr(worker_module, "CHECKS_AFTER_MS", 10)
    monkeypatch.setattr(worker_module, "CHECKS_WAITS", 10**6)  # only the drawing's end starts it

    def still_drawing() -> bool:
        asked.append(1)
        return drawing[0]

    session.worker.checks_wait = still_drawing
    _load(qtbot, session, "two-losses")
    qtbot.waitUntil(lambda: len(asked) >= 3, timeout=TIMEOUT)
    assert imports == []
    drawing[0] = False
    qtbot.waitUntil(lambda: imports == [1], timeout=TIMEOUT)


def test_the_checks_wait_for_a_drawing_only_so_long(qtbot, session, monkeypatch):
    imports, asked = [], []
    monkeypatch.setattr(worker_module, "import_checks", lambda: imports.append(1))
    monkeypatch.setattr(worker_module, "CHECKS_AFTER_MS", 10)
    session.worker.checks_wait = lambda: asked.append(1) or True  # a graph never drawn
    _load(qtbot, session, "two-losses")
    qtbot.waitUntil(lambda: imports == [1], timeout=TIMEOUT)
    assert len(asked) == worker_module.CHECKS_WAITS
