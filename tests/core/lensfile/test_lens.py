""".lens files: a recording saved and read back exactly, and every damaged file refused with one error."""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core import builtin_names
from app.core.lensfile import (
    LensError,
    container,
    files,
    lens_bytes,
    open_lens,
    preread_lens,
    read_lens,
    reader,
    recording_from_bytes,
    save_lens,
)
from app.core.lensfile.format import MAX_CONTAINERS, MAX_JSON_BYTES
from app.core.model.errors import ProgramError, UserError
from app.core.model.recording import Recording
from app.core.report import to_json, to_table
from app.render.layout import layout_graph
from app.render.layout_store import layout_from_json
from tests.support.handmade import long_recording, small_recording
from tests.support.recorded import builtin_recording

ROOT = Path(__file__).resolve().parents[3]
FIELDS = (
    "program", "device", "torch_version", "graph", "timeline", "leaves", "calls", "freed_by", "needed_by",
    "error", "error_line",
)  # fmt: skip


def small_json() -> dict[str, Any]:
    return json.loads(gzip.decompress(lens_bytes(small_recording())))  # type: ignore[no-any-return]


def from_json(data: Any) -> Recording:
    return recording_from_bytes(json.dumps(data).encode())


def damaged(data: Any) -> str:
    with pytest.raises(LensError) as info:
        from_json(data)
    return str(info.value)


# --- round trip ---


def assert_same(a: Recording, b: Recording) -> None:
    for name in FIELDS:
        assert getattr(a, name) == getattr(b, name), name
    for step_a, step_b in zip(a.timeline.steps, b.timeline.steps, strict=True):
        assert step_a == step_b
    for i in range(len(a.timeline)):
        assert a.timeline.state(i) == b.timeline.state(i)
    assert a == b


def test_a_small_recording_round_trips_field_by_field() -> None:
    rec = small_recording()
    back = recording_from_bytes(lens_bytes(rec))
    assert_same(rec, back)
    assert back.calls[0].call.keywords == {"retain_graph": "False"}
    assert back.freed_by == {("n1", "self"): 0}
    assert back.program.twin == "t" and back.program.notes == "n"


def test_nodes_keep_their_module_and_source() -> None:
    back = recording_from_bytes(lens_bytes(small_recording())).graph.node("n1")
    assert back.module == "net.0"
    assert back.source == ("two_losses.py", 4) and back.source.file == "two_losses.py"


def test_a_file_without_modules_and_sources_still_reads() -> None:
    """Files written before nodes named their module and source read as 'unknown'."""
    data = small_json()
    for node in data["graph"]["nodes"]:
        node.pop("module", None)
        node.pop("source", None)
    back = from_json(data)
    assert all(n.module is None and n.source is None for n in back.graph.nodes)
    assert back.graph.node("n1").line == 4


def test_values_keep_their_types_and_non_finite_numbers() -> None:
    back = recording_from_bytes(lens_bytes(small_recording()))
    result = back.timeline[7].result
    assert result is not None
    inf, zero = result["x"].flat
    assert inf == math.inf and math.copysign(1.0, zero) == -1.0
    grad = back.timeline[3].grad_changes["x"]
    assert grad is not None and all(isinstance(v, float) for v in grad.flat)


def test_nan_and_ints_and_bools_round_trip() -> None:
    data = small_json()
    data["steps"][3]["grad_changes"]["x"] = {"shape": [3], "flat": ["nan", 2, True], "dtype": "float32"}
    back = recording_from_bytes(lens_bytes(from_json(data)))
    nan, two, true = back.timeline[3].grad_changes["x"].flat  # type: ignore[union-attr]
    assert math.isnan(nan) and type(two) is int and true is True


def test_a_long_recording_round_trips(tmp_path: Path) -> None:
    rec = long_recording(steps=400)
    save_lens(rec, tmp_path / "long.lens")
    assert_same(rec, read_lens(tmp_path / "long.lens"))


def test_the_same_recording_gives_the_same_bytes() -> None:
    assert lens_bytes(small_recording()) == lens_bytes(small_recording())


def test_the_file_is_gzip_json_that_says_its_format_and_version() -> None:
    data = small_json()
    assert data["format"] == "autograd-lens" and data["version"] == 3
    assert "index" not in data["steps"][0]  # steps are stored as changes, their index is their place


def test_plain_json_is_read_too() -> None:
    assert from_json(small_json()) == small_recording()


def test_a_lens_error_is_told_to_a_person_and_is_not_a_programs_error() -> None:
    assert issubclass(LensError, UserError) and not issubclass(LensError, ProgramError)


# --- versions and damage ---


def test_a_newer_version_says_so() -> None:
    data = small_json()
    data["version"] = 7
    assert damaged(data) == (
        "this recording was made by a newer Autograd Lens (format version 7); "
        "this version reads versions up to 3"
    )


def test_a_file_of_another_format_is_not_a_recording() -> None:
    assert "not an Autograd Lens recording" in damaged({"format": "other", "version": 1})
    assert "not an Autograd Lens recording" in damaged([1, 2])


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\x00\x01garbage", "not JSON"),
        (b"\x1f\x8bnot really gzip", "compressed data is broken"),
        (gzip.compress(b"{not json", mtime=0), "not JSON"),
        (gzip.compress(b'{"a": "\xff"}', mtime=0), "not UTF-8"),
        (lens_bytes(small_recording())[:-30], "truncated"),
        (lens_bytes(small_recording()) + b"extra", "bytes after"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"", "not JSON"),
    ],
)
def test_damaged_bytes_get_one_clear_error(data: bytes, said: str) -> None:
    with pytest.raises(LensError, match="damaged or not a recording") as info:
        recording_from_bytes(data)
    assert said in str(info.value)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01garbage",
        gzip.compress(b"{not json", mtime=0),
        lens_bytes(small_recording())[:-30],
        lens_bytes(small_recording()) + b"extra",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"format": "autograd-lens", "version": 1, "graph": {"nodes": [1, }',
        b"",
        gzip.compress(b'{"format": "autograd-lens", "version": 1, "title": "\xff"}', mtime=0),
        b'{"format": "autograd-lens", "version": 1, "title": "\xc3"}',
    ],
)
def test_decoding_off_the_main_thread_fails_as_on_it(data: bytes) -> None:
    """The window's worker reads a recording off the main thread: a damaged one gets the very error
    a read on the main thread gives."""
    with pytest.raises(LensError) as whole:
        recording_from_bytes(data)
    with pytest.raises(LensError) as pieces:
        off_the_main_thread(recording_from_bytes, data)
    assert str(pieces.value) == str(whole.value)


class CountedDecoder:
    """A msgspec decoder that notes the size of each text it decodes."""

    def __init__(self, real: Any, sizes: list[int]) -> None:
        self.real, self.sizes = real, sizes

    def decode(self, text: Any) -> Any:
        self.sizes.append(len(text))
        return self.real.decode(text)


@pytest.mark.parametrize("compress", [True, False], ids=["file", "pipe"])
@pytest.mark.parametrize("name", builtin_names())
def test_nodes_and_steps_are_decoded_one_at_a_time(
    name: str, compress: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a file or the child's pipe, each node and step is decoded on its own: no call decodes
    the whole recording (one such call on the 5,000-node chain held the GIL for 32 ms while the
    window's worker read it), and the recording is the one written."""
    rec = builtin_recording(name)  # made once for both ways in
    data = lens_bytes(rec, compress=compress)
    sizes: list[int] = []
    for decoder in ("NODE", "STEP"):
        monkeypatch.setattr(reader, decoder, CountedDecoder(getattr(reader, decoder), sizes))
    read = off_the_main_thread(recording_from_bytes, data)
    assert len(sizes) == len(rec.graph.nodes) + len(rec.timeline)
    assert sum(sizes) < len(gzip.decompress(data) if compress else data)
    assert to_json(read) == to_json(rec)
    assert lens_bytes(read, compress=compress) == data


def off_the_main_thread(function: Any, *args: Any) -> Any:
    """``function(*args)`` on another thread, as the window's worker reads a recording."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


def put(data: Any, place: tuple[Any, ...], value: Any) -> None:
    """Set the value at ``place`` in ``data`` (``...`` deletes it)."""
    for key in place[:-1]:
        data = data[key]
    if value is ...:
        del data[place[-1]]
    else:
        data[place[-1]] = value


def edit(path: str, value: Any) -> dict[str, Any]:
    """The small recording's JSON with the value at ``a.b.0.c`` replaced (``...`` deletes it)."""
    data = small_json()
    put(data, tuple(int(p) if p.isdigit() else p for p in path.split(".")), value)
    return data


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        ("steps", ..., "the key 'steps' is missing"),
        ("graph.nodes.1.id", ..., "graph.nodes[1]: the key 'id' is missing"),
        ("steps.2.node", "n99", "steps[2].node: 'n99' is not a node of the graph"),
        ("steps.0.added_nodes.0", "zz", "steps[0].added_nodes[0]: 'zz' is not a node"),
        ("steps.0.slot_changes", {"n1": {"nope": "alive"}}, "'nope' is not a saved slot"),
        ("steps.0.slot_changes", {"n1": {"self": "gone"}}, "'gone' is not one of"),
        ("steps.0.kind", "jump", "steps[0].kind"),
        ("steps.3.call", 5, "steps[3].call: 5 is outside 0..1"),
        ("steps.3.saved_bytes", "8", "expected a whole number, found a string"),
        ("steps.3.saved_bytes", True, "expected a whole number, found true/false"),
        ("steps.3.saved_bytes", 2**70, "is outside"),
        ("calls.1.last_step", 8, "calls[1].last_step: 8 is outside 0..7"),
        ("calls.0.call.kind", "forward", "calls[0].call.kind"),
        ("calls.1.index", 0, "calls[1].index: 0 is not its place in the list (1)"),
        ("calls.0.first_step", 5, "calls[0]: its last step (4) comes before its first (5)"),
        ("calls.1.failed_node", "n7", "calls[1].failed_node"),
        ("graph.nodes.1.created_at_step", -1, "created_at_step"),
        ("graph.nodes.2.id", "n1", "'n1' appears twice"),
        ("graph.edges.0", ["n1"], "expected [from, to]"),
        ("leaves.x", "n42", "leaves.x"),
        ("freed_by.0", ["n1", "self", 9], "freed_by[0]"),
        ("needed_by.n1", [0, 3], "needed_by.n1[1]"),
        ("freed_by.0", ["n42", "self", 0], "freed_by[0]: 'n42' is not a node of the graph"),
        ("freed_by.0", ["n1", "nope", 0], "freed_by[0]: 'nope' is not a saved slot of 'n1'"),
        ("needed_by", {"n1": [0], "n42": [0]}, "needed_by.n42: 'n42' is not a node of the graph"),
        ("steps.3.grad_changes.x.shape", [3], "shape [3] does not hold 2 values"),
        ("steps.3.grad_changes.x.shape", [2**62, 2**62, 0, 2], "does not hold 2 values"),
        ("steps.3.grad_changes.x.shape", [1] * 65, "more than 64"),
        ("steps.3.grad_changes.x.flat.0", "x", "expected a number, found a string"),
        ("steps.3.grad_changes.x.flat.0", [1.0], "expected a number, found a list"),
        ("graph.nodes.1.source", ["f.py"], "graph.nodes[1].source: expected [file, line]"),
        ("graph.nodes.1.source", ["f.py", 0], "graph.nodes[1].source[1]: 0 is outside"),
        ("graph.nodes.1.source", {"file": "f.py"}, "graph.nodes[1].source: expected a list"),
        ("graph.nodes.1.module", 3, "graph.nodes[1].module: expected a string"),
        ("program.code", None, "program.code: expected a string, found null"),
        ("steps", [], "steps: a recording has at least one step"),
        ("steps.3.grad_changes.x.flat.0", 10**400, "a whole number out of the 64-bit range"),
        ("steps.3.grad_changes.x.flat", ["nan", -(2**64) - 1], "flat[1]: a whole number out of the 64-bit"),
        ("program", [], "program: expected an object"),
        ("version", "1", "format version"),
        ("version", 0, "format version"),
    ],
)
def test_damaged_fields_get_one_clear_error(path: str, value: Any, said: str) -> None:
    message = damaged(edit(path, value))
    assert message.startswith("this .lens file is damaged or not a recording: ")
    assert said in message


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("x = 1\n# " + "y" * 100_000, "a line of 100,002 characters, longer than 100,000"),
        ("x = 1\n" * 200_000, "more than 1,000,000 characters"),
    ],
)
def test_a_program_too_long_to_show_is_refused_as_such(code: str, said: str) -> None:
    data = small_json()
    data["program"]["code"] = code
    with pytest.raises(LensError) as info:
        from_json(data)
    assert str(info.value) == f"this recording's program is too long to show: {said}"


def test_every_text_a_program_may_hold_can_be_saved_and_read() -> None:
    """A program's text may be up to MAX_SOURCE_CHARS on one line: its recording must open."""
    from app.core.sizing.limits import MAX_SOURCE_CHARS

    data = small_json()
    data["program"]["code"] = "x" * MAX_SOURCE_CHARS
    assert from_json(data).program.code == "x" * MAX_SOURCE_CHARS


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize(
    ("shape", "fits"), [([2**40, 0], False), ([0, 2**40], True), ([3, 0], True), ([2**21, 0], False)]
)
def test_a_shape_holding_no_values_makes_few_lists(shape: list[int], fits: bool, packed: bool) -> None:
    """``[2**40, 0]`` holds no values, yet reading it back as lists would make 2**40 of them."""
    data = small_json()
    value = {"shape": shape, "dtype": "float32"}
    value |= {"packed": "f", "data": ""} if packed else {"flat": []}
    data["steps"][3]["grad_changes"]["x"] = value
    if not fits:
        assert f"shape {shape} does not hold 0 values" in damaged(data)
        return
    import torch

    read = from_json(data).timeline[3].grad_changes["x"]
    assert read is not None
    assert read.tolist() == torch.zeros(shape).tolist()  # PyTorch's own lists for that shape


@pytest.mark.parametrize("gz", [True, False])
def test_a_file_of_tiny_containers_is_refused_before_they_are_made(gz: bool) -> None:
    """A few hundred KB of gzip can inflate to millions of empty arrays: each is ~60 bytes of
    memory once decoded, so their count is bounded before any JSON is decoded."""
    text = b'{"format": "autograd-lens", "version": 2, "junk": [' + b"[]," * MAX_CONTAINERS + b"[]]}"
    data = gzip.compress(text, 1) if gz else text
    with pytest.raises(LensError, match="more than 10,000,000 arrays and objects, too large to read"):
        recording_from_bytes(data)


def bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    return b"".join(packer.compress(chunk) for _ in range(size >> 20)) + packer.flush()


@pytest.mark.parametrize("size", [MAX_JSON_BYTES // 100, 2 * container.CHUNK])
def test_long_runs_inflate_whole_at_any_size(size: int) -> None:
    """One long run inflates in many pieces, the last of them perhaps from no new input."""
    data = small_json()
    data["program"]["notes"] = ""
    padding = size - len(json.dumps(data, separators=(",", ":")).encode())
    data["program"]["notes"] = "a" * padding
    text = json.dumps(data, separators=(",", ":")).encode()
    assert len(text) == size
    assert recording_from_bytes(gzip.compress(text, 9)).program.notes == "a" * padding


def test_a_zip_bomb_stops_at_the_cap() -> None:
    data = bomb(MAX_JSON_BYTES + (2 << 20))
    assert len(data) < 1 << 20
    with pytest.raises(LensError, match="inflates to more than 200 MB"):
        recording_from_bytes(data)


def test_a_file_over_the_cap_is_refused_before_reading_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(container, "MAX_JSON_BYTES", 1000)
    path = tmp_path / "big.lens"
    path.write_bytes(b" " * 2000)
    with pytest.raises(LensError, match="larger than"):
        read_lens(path)


# --- fuzzing: only LensError escapes, and whatever is read can be reported ---

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALID_GZ = lens_bytes(small_recording())
VALID_JSON = gzip.decompress(VALID_GZ)


def read_or_refuse(data: bytes) -> None:
    try:
        rec = recording_from_bytes(data)
    except LensError as exc:
        assert str(exc) and "\n" not in str(exc).split(": ", 1)[0]
        return
    to_table(rec)  # what a read file offers must be usable, not only parsed
    json.dumps(to_json(rec))
    for i in range(len(rec.timeline)):
        rec.timeline.state(i)


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        if action == "flip":
            data[at] = draw(st.integers(0, 255))
        elif action == "delete":
            del data[at]
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at:]
        if not data:
            break
    return bytes(data)


@FUZZ
@given(mutated(VALID_GZ))
def test_fuzz_mutated_gzip_bytes(data: bytes) -> None:
    read_or_refuse(data)


@FUZZ
@given(mutated(VALID_JSON))
def test_fuzz_mutated_json_text(data: bytes) -> None:
    read_or_refuse(data)


def outcome_of(data: bytes) -> str:
    try:
        return json.dumps(to_json(recording_from_bytes(data)), sort_keys=True)
    except LensError as exc:
        return f"refused: {exc}"


@FUZZ
@given(st.one_of(mutated(VALID_GZ), mutated(VALID_JSON)))
def test_fuzz_a_read_off_the_main_thread_in_small_pieces_ends_as_a_whole_read(data: bytes) -> None:
    """The window's worker reads a file inflated in small pieces (cut inside characters and numbers
    here): the same recording, or word for word the same refusal, as a read on the main thread."""
    whole = outcome_of(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(container, "CHUNK", 61)
        assert off_the_main_thread(outcome_of, data) == whole


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, the value itself included."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += paths(item, (*prefix, i))
    return out


SMALL = small_json()
SMALL_TEXT = json.dumps(SMALL)
PLACES = paths(SMALL)[1:]


def small_copy() -> dict[str, Any]:
    """A fresh ``SMALL`` to edit: it is parsed JSON, so parsing its text again copies it exactly,
    in a fraction of ``copy.deepcopy``'s time (which was most of these tests' time)."""
    return json.loads(SMALL_TEXT)  # type: ignore[no-any-return]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
    | st.sampled_from(["n0", "n1", "self", "alive", "node", "backward", "nan", "float32"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


def replaced(place: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = small_copy()
    put(data, place, value)
    return data


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(PLACES), json_values | st.just(...)), min_size=1, max_size=3))
def test_fuzz_random_json_values_at_every_key(edits: list[tuple[tuple[Any, ...], Any]]) -> None:
    data = small_copy()
    for place, value in edits:
        with contextlib.suppress(KeyError, IndexError, TypeError):  # an earlier edit removed the place
            put(data, place, value)
    read_or_refuse(json.dumps(data).encode())


# --- a wrong value at every place ---

AWKWARD = (None, True, False, 0, 1, -1, 2**64, 1.5, "", "n1", "self", "alive", "node", [], [1, 2, None], {})


def test_every_place_accepts_only_what_fits() -> None:
    """A wrong type at any single place is either refused or harmless (spot-checked, all places)."""
    for place in PLACES:
        for value in AWKWARD:
            read_or_refuse(json.dumps(replaced(place, value)).encode())
        read_or_refuse(json.dumps(replaced(place, ...)).encode())


# --- no torch ---


def test_reading_a_lens_file_imports_no_torch(tmp_path: Path) -> None:
    path = tmp_path / "small.lens"
    save_lens(small_recording(), path)
    code = (
        "import sys, io, contextlib\n"
        "from app.cli import main\n"
        "from app.core.lensfile import read_lens\n"
        f"read_lens({str(path)!r})\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    assert main(['trace', {str(path)!r}, '--json']) == 0\n"
        "    assert main(['trace', " + repr(str(path)) + "]) == 0\n"
        "import json; json.loads(out.getvalue().split('\\n', 1)[0])\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# --- the command line on .lens files (no torch on this path, so each run starts fast) ---


def run_app(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lens") / "small.lens"
    save_lens(small_recording(), path)
    return path


def test_trace_json_of_a_lens_file_is_the_report_of_its_recording(saved: Path) -> None:
    done = run_app("trace", str(saved), "--json")
    assert (done.returncode, done.stderr) == (0, "")
    printed = json.loads(done.stdout)
    assert (printed.pop("fixes"), printed.pop("advice")) == ([], None)  # the lesson, beside the recording
    assert printed == json.loads(json.dumps(to_json(small_recording())))


def test_trace_of_a_lens_file_prints_the_table(saved: Path) -> None:
    done = run_app("trace", str(saved))
    assert (done.returncode, done.stderr) == (0, "")
    table, _, note = done.stdout.partition(to_table(small_recording()) + "\n")
    assert table == "" and "fixes not proven" in note and "--prove-fixes" in note  # a file runs nothing


def test_trace_save_of_a_lens_file_writes_the_same_recording_and_its_layout(
    saved: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy.lens"
    done = run_app("trace", str(saved), "--json", "--save", str(out))
    assert (done.returncode, done.stderr) == (0, "")
    recording, layout = open_lens(out)
    assert recording == read_lens(saved) == small_recording()
    assert open_lens(saved)[1] is None  # written without one
    assert layout_from_json(layout, recording.graph) == layout_graph(recording.graph)


def one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("autograd-lens: ")
    return lines[0]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            b"\x1f\x8b\x08\x00garbage",
            "this .lens file is damaged or not a recording: it ends before",
        ),
        (
            gzip.compress(json.dumps(edit("version", 4)).encode(), mtime=0),
            "made by a newer Autograd Lens (format version 4)",
        ),
        (json.dumps(edit("steps.2.node", "n99")).encode(), "steps[2].node: 'n99' is not a node of the graph"),
        (b"", "not JSON"),
    ],
)
def test_a_damaged_or_newer_lens_file_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "bad.lens"
    path.write_bytes(content)
    for command in ("trace", "export", "gui"):
        extra = ("--out", str(tmp_path / "out")) if command == "export" else ()
        assert said in one_line_exit_2(run_app(command, str(path), *extra))


def test_a_missing_lens_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    assert "No such file" in one_line_exit_2(run_app("trace", str(tmp_path / "none.lens")))


def test_device_does_not_apply_to_a_recorded_file(saved: Path) -> None:
    line = one_line_exit_2(run_app("trace", str(saved), "--device", "cpu"))
    assert "already recorded (on cpu); --device applies only when recording" in line


def test_a_leaf_no_graph_has_used_yet_survives_the_file(tmp_path: Path) -> None:
    """A program that fails before its leaf joins a graph names the leaf with no node ("")."""
    from app.core.loading import parse_python
    from app.core.recorder.recorder import record

    program = parse_python("import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nx += 1\n")
    recording = record(program)
    assert recording.leaves == {"x": ""} and recording.error is not None
    path = tmp_path / "early.lens"
    save_lens(recording, path)
    assert read_lens(path).leaves == {"x": ""}


def test_a_file_read_before_the_window_opens_is_handed_over_once(
    tmp_path: Path, lens_reads: list[int]
) -> None:
    path = tmp_path / "run.lens"
    save_lens(small_recording(), path)
    reads = lens_reads
    preread_lens(path)
    assert len(reads) == 1
    handed = open_lens(path)
    assert len(reads) == 1  # not read again
    assert handed[0] == small_recording()
    again = open_lens(path)  # the pre-read one was handed over: read anew
    assert len(reads) == 2 and again == handed


def test_a_file_changed_after_it_was_read_is_read_again(tmp_path: Path, lens_reads: list[int]) -> None:
    path = tmp_path / "run.lens"
    save_lens(small_recording(), path)
    preread_lens(path)
    save_lens(long_recording(), path)  # another size
    assert open_lens(path)[0] == long_recording()
    preread_lens(path)
    later = path.stat().st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))  # the same size, touched: it may have changed
    lens_reads.clear()  # counted from here
    assert open_lens(path)[0] == long_recording() and len(lens_reads) == 1


def test_a_file_rewritten_while_it_is_read_is_not_handed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.lens"
    save_lens(small_recording(), path)
    real = files.read

    def rewritten_meanwhile(data: bytes) -> Any:
        save_lens(long_recording(), path)
        return real(data)

    monkeypatch.setattr(files, "read", rewritten_meanwhile)
    preread_lens(path)
    monkeypatch.setattr(files, "read", real)
    assert open_lens(path)[0] == long_recording()


def test_a_damaged_file_fails_when_read_before_the_window(tmp_path: Path) -> None:
    path = tmp_path / "bad.lens"
    path.write_bytes(b"{}")
    with pytest.raises(LensError):
        preread_lens(path)


def test_reading_a_file_leaves_nothing_for_the_collector(tmp_path: Path) -> None:
    """The window turns automatic collection off; a reader kept alive by a cycle would keep the
    whole decoded file until a full collection, and that collection would free it all at once."""
    import gc

    path = tmp_path / "run.lens"
    save_lens(long_recording(), path)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        recording = read_lens(path)
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()
    assert recording == long_recording()


def test_numbers_too_large_for_a_float_are_written_as_they_are() -> None:
    from app.core.lensfile.writer import numbers_json

    assert numbers_json([10**400, 1.5, True]) == [10**400, 1.5, True]
    assert numbers_json([1.0, math.inf, -math.inf]) == [1.0, "inf", "-inf"]
