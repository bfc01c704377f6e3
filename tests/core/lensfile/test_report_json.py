"""``trace --json`` and the table on a recording made by hand: every key of before, steps as their
changes, and the program's."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.lensfile import save_lens
from app.core.model.recording import Recording
from app.core.model.text import format_bytes, format_values
from app.core.model.timeline import Step, Timeline
from app.core.model.values import Values
from app.core.report import to_json, to_table
from app.core.trace_json import JsonTooLarge, json_pieces, values_text
from tests.support.handmade import small_recording
from tests.support.json_steps import full_states

ROOT = Path(__file__).resolve().parents[3]
OLD_TOP = {"scenario", "device", "torch_version", "nodes", "edges", "steps"}
OLD_STEP = {"index", "kind", "call", "node", "saved_bytes", "error", "caption"}
CHANGES = {"slot_changes", "grad_changes", "version_changes"}
OLD_NODE = {"id", "name", "label", "added_at_call", "saved"}


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    out = to_json(small_recording())
    assert json.loads(json.dumps(out)) == out  # plain JSON, nothing else
    return out


def test_top_level_keeps_the_old_keys_and_adds_the_program(data: dict[str, Any]) -> None:
    assert set(data) >= OLD_TOP
    assert data["scenario"] == "loop-twice"  # the program's name, kept under its old key
    assert data["title"] == "Loop twice"
    assert data["program"] == small_recording().program.code


def test_calls_say_where_and_how_they_were_made(data: dict[str, Any]) -> None:
    first, second = data["calls"]
    assert first == {
        "index": 0,
        "line": 6,
        "kind": "backward",
        "keywords": {"retain_graph": "False"},
        "text": "y.sum().backward(retain_graph=False)",
        "error": None,
        "failed_node": None,
        "first_step": 2,
        "last_step": 4,
    }
    assert second["error"].startswith("RuntimeError: boom") and second["failed_node"] == "n4"


def test_nodes_carry_their_line_loop_and_life(data: dict[str, Any]) -> None:
    nodes = {n["id"]: n for n in data["nodes"]}
    assert all(set(n) >= OLD_NODE for n in nodes.values())
    pow0 = nodes["n1"]
    assert pow0["line"] == 4
    assert pow0["loops"] == [{"line": 3, "index": 0, "count": 2}]
    assert (pow0["created_at_step"], pow0["gone_at_step"]) == (0, 4)
    assert nodes["n0"]["loops"] == [] and nodes["n3"]["gone_at_step"] is None


def test_nodes_name_their_module_and_source_or_null(data: dict[str, Any]) -> None:
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes["n1"]["module"] == "net.0"
    assert nodes["n1"]["source"] == {"file": "two_losses.py", "line": 4}
    assert nodes["n0"]["module"] is None and nodes["n0"]["source"] is None


def test_tensor_slots_say_their_saved_version_and_value_slots_their_value(data: dict[str, Any]) -> None:
    tensor, value = next(n for n in data["nodes"] if n["id"] == "n1")["saved"]
    assert tensor == {
        "name": "self", "kind": "tensor", "shape": [2], "dtype": "torch.float32", "nbytes": 8,
        "saved_version": 0,
    }  # fmt: skip
    assert value["value"] == "2" and "saved_version" not in value


def test_steps_keep_the_old_keys_and_add_line_loops_alive_and_changes(data: dict[str, Any]) -> None:
    steps = data["steps"]
    assert all(set(s) >= OLD_STEP | CHANGES for s in steps)
    assert not any({"saved_state", "grads", "versions"} & set(s) for s in steps)  # the full state: no more
    assert data["leaves"] == ["x"]
    assert [s["line"] for s in steps] == [4, 5, 6, 6, 6, 4, 5, 6]
    assert steps[5]["loops"] == [{"line": 3, "index": 1, "count": 2}]
    assert [s["alive_nodes"] for s in steps] == [2, 2, 3, 3, 2, 2, 2, 3]
    assert [s["version_changes"] for s in steps] == [{"n1": {"self": 0}}, {"n1": {"self": 1}}, {}, {}, {},
                                                     {"n3": {"self": 0}}, {}, {}]  # fmt: skip
    states = full_states(data)
    assert states[1]["versions"] == {"n1": {"self": 1}}  # the version now, not only the change
    assert states[7]["versions"] == {"n1": {"self": 1}, "n3": {"self": 0}}


def test_printed_appears_only_where_something_was_printed(data: dict[str, Any]) -> None:
    assert [s.get("printed") for s in data["steps"]] == [
        None,
        ["0"],
        None,
        None,
        None,
        None,
        ["1", "more"],
        None,
    ]


def test_steps_carry_their_changes_and_replay_the_full_state(data: dict[str, Any]) -> None:
    steps, states = data["steps"], full_states(data)
    alive, freed = {"self": "alive"}, {"self": "freed"}
    assert [s["slot_changes"] for s in steps] == [
        {"n1": alive},
        {},
        {},
        {"n1": freed},
        {},
        {"n3": alive},
        {},
        {},
    ]
    assert [s["grad_changes"] for s in steps] == [
        {},
        {},
        {},
        {"x": [2.0, 4.0]},
        {},
        {},
        {},
        {"x": [4.0, 8.0]},
    ]
    assert states[2]["saved_state"] == {"n1": {"self": "alive"}}
    assert states[6]["saved_state"] == {"n1": {"self": "freed"}, "n3": {"self": "alive"}}
    assert [s["grads"]["x"] for s in states] == [None, None, None, [2.0, 4.0], [2.0, 4.0], [2.0, 4.0],
                                                 [2.0, 4.0], [4.0, 8.0]]  # fmt: skip
    assert steps[4]["contribution"] == {"x": [2.0, 4.0]}
    assert steps[7]["result"] == {"x": ["Infinity", -0.0]}  # strict JSON: no bare Infinity
    assert steps[3]["device_bytes"] == 1024 and "device_bytes" not in steps[2]


def flat(by_node: dict[str, dict[str, Any]]) -> dict[tuple[str, str], Any]:
    return {(node, slot): v for node, slots in by_node.items() for slot, v in slots.items()}


def test_the_json_equals_the_state_the_timeline_replays(data: dict[str, Any]) -> None:
    rec = small_recording()
    for i, step in enumerate(full_states(data)):
        state = rec.timeline.state(i)
        assert flat(step["saved_state"]) == dict(state.slots)
        assert flat(step["versions"]) == dict(state.versions)
        grads = {k: None if v is None else v.tolist() for k, v in state.grads.items()}
        assert step["grads"] == {"x": None} | grads


def test_the_table_shows_line_iteration_and_printed_text() -> None:
    table = to_table(small_recording())
    lines = table.splitlines()
    assert lines[:2] == ["loop-twice on cpu (torch 2.13.0)", "Loop twice"]
    assert lines[3].split()[:5] == ["step", "line", "iter", "call", "kind"]
    row = next(line for line in lines if line.startswith("   3 "))
    assert row.split()[:6] == ["3", "L6", "1/2", "1", "node", "n1"]
    assert "x.grad=[2, 4]" in row
    assert "saved: n1 PowBackward0.self: alive -> freed" in table
    assert "printed: 0" in table and "printed: more" in table
    assert "PyTorch: RuntimeError: boom" in table and "second line" not in table


def test_format_values_reads_like_before() -> None:
    assert format_values(None) == "None"
    assert format_values(Values((), (0.123456,))) == "0.1235"
    assert format_values(Values((2,), (2.0, 4.0))) == "[2, 4]"
    assert format_values(Values((2, 2), (1, 2, 3, 4), "int64")) == "[1, 2, 3, 4]"
    assert format_values(Values((3,), (True, False, True), "bool")) == "[True, False, True]"
    many = Values((10,), tuple(float(i) for i in range(10)))
    assert format_values(many) == "[0, 1, 2, 3, 4, 5, … (10 values)]"
    assert format_values(many, limit=2) == "[0, 1, … (10 values)]"
    assert (format_bytes(512), format_bytes(1536), format_bytes(3 << 20)) == ("512 B", "1.5 KiB", "3.0 MiB")


def test_format_values_agrees_with_torch_as_captions_did() -> None:
    """The old caption formatter read a tensor; the new one reads Values: same text (subprocess: torch)."""
    code = (
        "import torch\n"
        "from app.core.model.text import format_values\n"
        "from app.core.model.values import Values\n"
        "def old(t, limit=6):\n"
        "    flat = t.detach().reshape(-1).tolist()\n"
        "    shown = ', '.join(f'{v:.4g}' if isinstance(v, float) else str(v) for v in flat[:limit])\n"
        "    more = f', … ({len(flat)} values)' if len(flat) > limit else ''\n"
        "    return f'[{shown}{more}]' if t.dim() > 0 else shown\n"
        "for t in [torch.tensor(1.5), torch.arange(9.0).reshape(3, 3) / 7, torch.tensor([1, 2]),\n"
        "          torch.tensor([True]), torch.zeros(0), torch.tensor([float('nan'), float('inf')])]:\n"
        "    v = Values(tuple(t.shape), tuple(t.reshape(-1).tolist()), str(t.dtype))\n"
        "    assert format_values(v) == old(t), (format_values(v), old(t))\n"
        "print('same')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.stdout.strip() == "same", done.stderr


def _refuse_constant(name: str) -> None:
    raise ValueError(f"bare {name} is not JSON")


def test_the_text_is_strict_json_with_non_finite_numbers_as_strings() -> None:
    grads = {"x": Values((2, 2), (float("nan"), float("inf"), float("-inf"), 1e308))}
    rec = _with_steps(small_recording(), [Step(0, "forward", None, None, {}, grads, 0)])
    text = "".join(json_pieces(rec))
    data = json.loads(text, parse_constant=_refuse_constant)
    assert data["steps"][0]["grad_changes"]["x"] == [["NaN", "Infinity"], ["-Infinity", 1e308]]
    assert [float(v) for v in data["steps"][0]["grad_changes"]["x"][0]] != [0.0, 0.0]
    assert text.isascii()


@pytest.mark.parametrize(
    "shape", [(), (1,), (7,), (3, 1), (1, 3), (2, 3, 4), (4, 1, 2, 1), (0,), (2, 0, 3), (5, 5), (2, 3, 2, 2)]
)
@pytest.mark.parametrize("block", [1, 2, 3, 5, 64])
def test_values_in_pieces_read_back_as_torch_tolist(shape: tuple[int, ...], block: int) -> None:
    import torch

    t = torch.arange(float(torch.Size(shape).numel())).reshape(shape) * 0.5 - 1
    v = Values(tuple(t.shape), tuple(t.reshape(-1).tolist()))
    assert json.loads("".join(values_text(v, block=block))) == t.tolist()


def _with_steps(rec: Recording, steps: list[Step]) -> Recording:
    return dataclasses.replace(rec, timeline=Timeline(tuple(steps)), calls=(), freed_by={}, needed_by={})


def test_a_big_gradient_is_written_once_however_many_steps_follow() -> None:
    """A leaf of 100,000 elements then 1,000 printing steps: each step repeating the whole .grad made
    the text grow as steps x elements (450 MB for 9 steps of a 10-million-element leaf)."""
    grad = Values((100_000,), (1.0,) * 100_000)
    steps = [Step(0, "forward", None, None, {}, {"x": grad}, 0)]
    steps += [Step(i, "forward", None, None, {}, {}, 0, printed=(str(i),)) for i in range(1, 1_001)]
    text = "".join(json_pieces(_with_steps(small_recording(), steps)))
    numbers = len("".join(values_text(grad)))
    assert numbers < len(text) < numbers + 300_000  # the numbers once, and ~200 bytes a step
    assert full_states(json.loads(text))[-1]["grads"]["x"] == [1.0] * 100_000


def test_past_its_limit_the_text_stops_with_the_step_it_reached() -> None:
    grad = Values((100_000,), (0.25,) * 100_000)
    steps = [Step(0, "forward", None, None, {}, {}, 0), Step(1, "forward", None, None, {}, {"x": grad}, 0)]
    rec = _with_steps(small_recording(), steps)
    size = len("".join(json_pieces(rec)))
    assert len("".join(json_pieces(rec, max_bytes=size))) == size
    with pytest.raises(JsonTooLarge) as info:
        json_pieces(rec, max_bytes=size - 1)
    assert (info.value.step, info.value.steps, info.value.limit) == (1, 2, size - 1)


def test_trace_past_max_json_mb_prints_nothing_and_says_how_to_raise_it(tmp_path: Path) -> None:
    grad = Values((300_000,), (0.25,) * 300_000)
    path = tmp_path / "big.lens"
    steps = list(small_recording().timeline.steps)
    steps[3] = dataclasses.replace(steps[3], grad_changes={"x": grad})
    save_lens(dataclasses.replace(small_recording(), timeline=Timeline(tuple(steps))), path)
    run = [sys.executable, "-m", "app", "trace", str(path), "--json"]
    refused = subprocess.run(
        [*run, "--max-json-mb", "1"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert (refused.returncode, refused.stdout) == (2, "")
    assert len(refused.stderr.splitlines()) == 1 and "--max-json-mb" in refused.stderr, refused.stderr
    done = subprocess.run([*run, "--max-json-mb", "2"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["steps"][3]["grad_changes"]["x"] == [0.25] * 300_000
