"""``python -m app trace`` and ``programs`` as a user runs them: a real subprocess each."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from app.core import Recording, builtin_names, list_devices, load_builtin, record
from app.core.model.text import format_values
from app.core.recorder.grads import values_of
from app.core.report import EVERY_GRAD_UP_TO, to_json, to_table
from tests.support.json_steps import full_states
from tests.support.oracle import run_plainly

ROOT = Path(__file__).resolve().parents[2]
STATES = {"alive", "retained", "freed", "modified"}
KINDS = {"forward", "node", "call_end", "error"}


def run_app(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def own_stderr(text: str) -> list[str]:
    """Every stderr line (torch's NumPy import warning is silenced in app/__init__.py)."""
    return text.splitlines()


@functools.cache
def trace_json(name: str) -> dict[str, Any]:
    done = run_app("trace", name, "--json")
    assert done.returncode == 0, done.stderr
    assert own_stderr(done.stderr) == []
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture(params=["two-losses", "forgot-retain"])
def traced(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, trace_json(request.param)


def is_nested_floats(value: Any) -> bool:
    if isinstance(value, list):
        return all(is_nested_floats(v) for v in value)
    return isinstance(value, float)


def test_json_matches_the_schema(traced: tuple[str, dict[str, Any]]) -> None:
    name, data = traced
    assert {"scenario", "device", "torch_version", "nodes", "edges", "steps"} <= set(data)
    assert data["scenario"] == name and data["device"] == "cpu"  # the program's name, under its old key
    assert data["torch_version"] == torch.__version__
    ids = [n["id"] for n in data["nodes"]]
    assert len(set(ids)) == len(ids)
    tensor_slots = set()
    for node in data["nodes"]:
        assert isinstance(node["name"], str) and (node["label"] is None or isinstance(node["label"], str))
        for slot in node["saved"]:
            assert {"name", "kind", "shape", "dtype", "nbytes"} <= set(slot)
            assert slot["kind"] in {"tensor", "value", "none"}
            assert slot["shape"] is None or all(isinstance(d, int) for d in slot["shape"])
            assert slot["nbytes"] is None or isinstance(slot["nbytes"], int)
            if slot["kind"] == "tensor":
                tensor_slots.add((node["id"], slot["name"]))
    for edge in data["edges"]:
        assert set(edge) == {"from", "to"} and edge["from"] in ids and edge["to"] in ids
    assert data["leaves"] == ["x"]
    for i, step in enumerate(data["steps"]):
        assert step["index"] == i and step["kind"] in KINDS
        assert step["call"] is None or (isinstance(step["call"], int) and step["call"] >= 0)
        assert step["node"] is None or step["node"] in ids
        assert isinstance(step["saved_bytes"], int) and step["saved_bytes"] >= 0
        assert step["error"] is None or isinstance(step["error"], str)
        seen = {(n, s) for n, slots in step["slot_changes"].items() for s in slots}
        assert seen <= tensor_slots  # only tensor slots have a state
        assert all(v in STATES for slots in step["slot_changes"].values() for v in slots.values())
        assert set(step["grad_changes"]) <= set(data["leaves"])
        assert all(g is None or is_nested_floats(g) for g in step["grad_changes"].values())
    calls = [s["call"] for s in data["steps"] if s["call"] is not None]
    assert calls[0] == 0 and calls == sorted(calls)
    assert data["steps"][0]["kind"] == "forward" and data["steps"][0]["call"] is None


def test_json_agrees_with_plain_torch(traced: tuple[str, dict[str, Any]]) -> None:
    name, data = traced
    plain = run_plainly(load_builtin(name).code).calls
    steps = zip(data["steps"], full_states(data), strict=True)
    ends = [(s, full) for s, full in steps if s["kind"] in ("call_end", "error")]
    assert [s["call"] for s, _ in ends] == list(range(len(plain)))
    for (step, full), expected in zip(ends, plain, strict=True):
        assert step["error"] == expected.error
        for leaf, grad in expected.grads.items():
            assert full["grads"][leaf] == (None if grad is None else grad.tolist())
    assert data["program"] == load_builtin(name).code
    assert [c["line"] for c in data["calls"]] == [info.call.line for info in record(load_builtin(name)).calls]


def test_json_equals_the_in_process_report(traced: tuple[str, dict[str, Any]]) -> None:
    name, data = traced
    lesson = {key: data.pop(key) for key in ("fixes", "advice")}  # proven fixes, after the recording
    assert json.loads(json.dumps(to_json(record(load_builtin(name))))) == data
    assert all(f["checked"]["error_gone"] for f in lesson["fixes"])


def test_forgot_retain_exits_0_with_an_error_step() -> None:
    data = trace_json("forgot-retain")
    last = data["steps"][-1]
    assert last["kind"] == "error" and last["call"] == 1
    assert next(n for n in data["nodes"] if n["id"] == last["node"])["name"] == "PowBackward0"


def test_table_is_readable() -> None:
    done = run_app("trace", "forgot-retain")
    assert done.returncode == 0 and own_stderr(done.stderr) == []
    rec = record(load_builtin("forgot-retain"))
    table, _, fixes = done.stdout.partition("\n\nFix 1: ")
    assert table == to_table(rec)
    assert fixes.startswith("retain_graph=True on line 5\n  (recorded: no error)")  # under the error step
    assert_table_shows(rec, to_table(rec))


def test_a_table_of_many_leaves_lists_the_grads_each_step_changed() -> None:
    """A model's parameters on every row made rows a thousand characters wide: past
    EVERY_GRAD_UP_TO leaves a row names only the .grad its step changed, and the last rows show
    the value plain PyTorch left there."""
    program = load_builtin("gan-no-detach")
    rec = record(program)
    assert len(rec.leaves) > EVERY_GRAD_UP_TO
    lines = to_table(rec).splitlines()
    assert f"the {len(rec.leaves)} leaves" in lines[3]
    rows = [line for line in lines if line[:4].strip().isdigit()]
    for step, row in zip(rec.timeline.steps, rows, strict=True):
        named = [word.split(".grad=")[0] for word in row.split() if ".grad=" in word]
        assert named == list(step.grad_changes), step.index
    shown: dict[str, str] = {}  # each leaf's .grad as the rows up to the first call's end left it
    for row in rows[: rec.calls[0].last_step + 1]:
        shown.update(word.split(".grad=", 1) for word in row.split("  ") if ".grad=" in word)
    plain = run_plainly(program.code).calls[0].grads
    assert {leaf for leaf, grad in plain.items() if grad is not None} == set(shown)
    for leaf, text in shown.items():
        assert text == format_values(values_of(plain[leaf]))
    assert len(max(rows, key=len)) < 200


def assert_table_shows(rec: Recording, table: str) -> None:
    lines = table.splitlines()
    assert lines[0].startswith(f"{rec.program.name} on cpu (torch ")
    rows = [line for line in lines if line[:4].strip().isdigit()]
    assert [int(r.split()[0]) for r in rows] == list(range(len(rec.timeline)))
    for step in rec.timeline.steps:
        assert step.caption in table
        if step.node:
            assert f"{step.node} {rec.graph.node(step.node).name}" in rows[step.index]
    assert f"PyTorch: {rec.calls[1].error.splitlines()[0]}" in table  # type: ignore[union-attr]
    assert "PowBackward0.self: alive -> freed" in table


def test_unavailable_device_is_one_line_exit_2() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    done = run_app("trace", "two-losses", "--device", "cuda")
    assert done.returncode == 2 and done.stdout == ""
    lines = own_stderr(done.stderr)
    assert len(lines) == 1
    reason = next(d.reason for d in list_devices() if d.name == "cuda")
    assert lines[0].startswith("autograd-lens: ") and reason in lines[0] and "Traceback" not in done.stderr


def test_programs_lists_every_builtin() -> None:
    done = run_app("programs")
    assert done.returncode == 0
    listed = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert set(listed) == set(builtin_names())
    for name in builtin_names():
        assert load_builtin(name).title in listed[name]


def test_programs_lists_the_builtins_without_importing_torch() -> None:
    """Listing names and titles reads the files' heads; ``import torch`` alone takes seconds."""
    probe = "import sys; from app.cli import main; main(['programs']); print('torch' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    *listed, imported = done.stdout.splitlines()
    assert [line.split()[0] for line in listed] == builtin_names() and imported == "False"


def test_the_old_command_name_still_lists_the_builtins_and_is_not_shown() -> None:
    old = run_app("scenarios")  # the old name of "programs"
    new, shown = run_app("programs"), run_app("--help")
    assert (old.returncode, old.stdout, old.stderr) == (0, new.stdout, "")
    assert shown.returncode == 0 and "programs" in shown.stdout and "scenario" not in shown.stdout.lower()


def _records_programs() -> bool:
    import inspect

    from app.core import loading
    from app.core.recorder import recorder

    return hasattr(loading, "load_program") and "program" in inspect.signature(recorder.record).parameters


needs_programs = pytest.mark.skipif(
    not _records_programs(), reason="the recorder does not record programs yet"
)


@pytest.fixture(scope="module")
def saved_forgot_retain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``trace forgot-retain --json --save FILE``, run once for the tests that read FILE (never
    written to again): the file and the JSON the command printed."""
    out = tmp_path_factory.mktemp("saved") / "forgot.lens"
    saved = run_app("trace", "forgot-retain", "--json", "--save", str(out))
    assert saved.returncode == 0 and own_stderr(saved.stderr) == []
    return out, saved.stdout


@needs_programs
def test_save_then_trace_the_lens_file_gives_the_same_json_and_table(
    saved_forgot_retain: tuple[Path, str], tmp_path: Path
) -> None:
    out, saved_json = saved_forgot_retain
    read = run_app("trace", str(out), "--json", "--prove-fixes")  # reading alone proves nothing
    assert read.returncode == 0 and read.stderr == ""
    assert json.loads(read.stdout) == json.loads(saved_json)
    table = run_app("trace", "forgot-retain", "--save", str(tmp_path / "again.lens"))
    assert table.stdout.rstrip("\n").endswith(f"saved the recording to {tmp_path / 'again.lens'}")
    assert run_app("trace", str(out), "--prove-fixes").stdout.rstrip("\n") in table.stdout


@needs_programs
@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_recording_round_trips_through_a_lens_file(name: str) -> None:
    from app.core.lensfile import lens_bytes, recording_from_bytes
    from app.core.loading import load_program
    from app.core.recorder.recorder import record as record_program

    rec = record_program(load_program(name))
    back = recording_from_bytes(lens_bytes(rec))
    for field in ("program", "graph", "timeline", "leaves", "calls", "freed_by", "needed_by", "error"):
        assert getattr(back, field) == getattr(rec, field), field
    assert back == rec
    for i in range(len(rec.timeline)):
        assert back.timeline.state(i) == rec.timeline.state(i)


@needs_programs
def test_export_draws_a_lens_file(saved_forgot_retain: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = saved_forgot_retain
    done = run_app("export", str(out), "--out", str(tmp_path / "svg"))
    assert done.returncode == 0, done.stderr
    from app.core.lensfile import read_lens

    drawn = sorted(p.name for p in (tmp_path / "svg").iterdir())
    assert drawn == [f"step-{i:03d}.svg" for i in range(len(read_lens(out).timeline))]
