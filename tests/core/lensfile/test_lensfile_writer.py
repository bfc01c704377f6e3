"""The one writer of a recording's fields: every field of the model is written, once, and both the
``.lens`` file and ``trace --json`` take it from there."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Mapping
from typing import Any

import msgspec
import pytest

from app.core import load_builtin, record
from app.core.lensfile import lens_bytes, reader, recording_from_bytes, schema, writer
from app.core.model.graph import GraphNode, SavedSlot
from app.core.model.program import Call, CallInfo, Program
from app.core.model.recording import Recording
from app.core.model.timeline import Step
from app.core.report import to_json


@pytest.fixture(scope="module")
def recording() -> Recording:
    return record(load_builtin("two-losses"))


def field_names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_every_field_of_the_model_is_in_its_record(recording: Recording) -> None:
    """A field the model gains and the writer misses fails here (a step's index is its place)."""
    node = next(n for n in recording.graph.nodes if n.saved)
    assert set(writer.node_record(node)) == field_names(GraphNode)
    assert set(writer.slot_record(node.saved[0])) == field_names(SavedSlot)
    assert set(writer.step_record(recording.timeline[1])) == field_names(Step) - {"index"}
    call = writer.call_record(recording.calls[0])
    assert set(call) == field_names(CallInfo)
    assert set(call["call"]) == field_names(Call)


# Each model dataclass and the schema struct a file holds it in; the fields only this machine has
# (a program's path) or that a file says by place (a step's index) are left out of the struct.
SCHEMA_OF = [
    (Program, schema.ProgramEntry, {"path"}),
    (GraphNode, schema.NodeEntry, set()),
    (SavedSlot, schema.SlotEntry, set()),
    (Step, schema.StepEntry, {"index"}),
    (Call, schema.CallEntry, set()),
    (CallInfo, schema.CallInfoEntry, set()),
]


@pytest.mark.parametrize(
    ("model", "entry", "not_in_files"), SCHEMA_OF, ids=lambda x: getattr(x, "__name__", "")
)
def test_every_model_dataclass_and_its_schema_struct_list_the_same_fields(
    model: type, entry: type[msgspec.Struct], not_in_files: set[str]
) -> None:
    """A field the model gains and the schema misses (or the other way round) fails here, and a
    default that differs: a file leaving the field out must read back as the model's default."""
    struct = {
        f.name: _default(f.default, f.default_factory, msgspec.NODEFAULT)
        for f in msgspec.structs.fields(entry)
    }
    dataclass = {
        f.name: _default(f.default, f.default_factory, dataclasses.MISSING) for f in dataclasses.fields(model)
    }
    assert set(struct) == set(dataclass) - not_in_files
    both = [name for name in struct if struct[name] is not None and dataclass[name] is not None]
    assert [struct[name] for name in both] == [dataclass[name] for name in both]


def _default(default: Any, factory: Any, missing: Any) -> Any:
    """A field's default in its JSON form (None: it has none, or it is None)."""
    value = factory() if factory is not missing else default
    if value is missing:
        return None
    return msgspec.json.decode(msgspec.json.encode(dict(value) if isinstance(value, Mapping) else value))


@pytest.mark.parametrize(
    ("entry", "left_out"),
    [
        (schema.NodeEntry, writer.NODE_DEFAULTS),
        (schema.SlotEntry, writer.SLOT_DEFAULTS),
        (schema.StepEntry, writer.STEP_DEFAULTS),
    ],
    ids=["node", "slot", "step"],
)
def test_what_the_writer_leaves_out_the_schema_reads_back_as_the_same_value(
    entry: type[msgspec.Struct], left_out: dict[str, Any]
) -> None:
    struct = {
        f.name: _default(f.default, f.default_factory, msgspec.NODEFAULT)
        for f in msgspec.structs.fields(entry)
    }
    assert {name: struct[name] for name in left_out} == left_out


def test_a_program_reads_back_with_every_field_it_was_written_with() -> None:
    every = {f.name: f"{f.name}: ünï\n" for f in dataclasses.fields(Program) if f.name != "path"}
    program = Program(**every)
    assert writer.program_record(program) == every
    assert reader.program_from_record(json.loads(json.dumps(every))) == program


def file_and_trace(rec: Recording) -> tuple[dict[str, Any], dict[str, Any]]:
    return json.loads(gzip.decompress(lens_bytes(rec))), to_json(rec)


def test_a_field_added_to_a_record_is_written_to_the_file_and_to_trace_json(
    recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_node, real_step = writer.node_record, writer.step_record
    monkeypatch.setattr(writer, "node_record", lambda n: real_node(n) | {"depth": len(n.id)})
    monkeypatch.setattr(writer, "step_record", lambda s: real_step(s) | {"heat": s.saved_bytes % 7})
    lens, trace = file_and_trace(recording)
    for nodes in (lens["graph"]["nodes"], trace["nodes"]):
        assert [n["depth"] for n in nodes] == [len(n.id) for n in recording.graph.nodes]
    for steps in (lens["steps"], trace["steps"]):
        assert [s["heat"] for s in steps] == [s.saved_bytes % 7 for s in recording.timeline.steps]
    assert list(trace["nodes"][0])[-1] == "depth"  # after the fields trace --json always had


def test_trace_json_keeps_its_own_order_and_leaves_out_what_only_the_file_keeps(recording: Recording) -> None:
    lens, trace = file_and_trace(recording)
    node = trace["nodes"][0]
    assert list(node) == [
        "id", "name", "label", "added_at_call", "saved", "line", "loops", "created_at_step",
        "gone_at_step", "module", "source",
    ]  # fmt: skip
    assert "is_leaf" not in node and all("storages" not in s for s in node["saved"])
    assert list(trace["calls"][0]) == [
        "index", "line", "kind", "keywords", "text", "error", "failed_node", "first_step", "last_step",
    ]  # fmt: skip
    assert "index" not in lens["steps"][0] and trace["steps"][3]["index"] == 3


def test_the_file_leaves_out_fields_at_their_default_and_reads_back_the_same(recording: Recording) -> None:
    lens, _ = file_and_trace(recording)
    for entry in lens["steps"]:
        assert all(entry[k] != v for k, v in writer.STEP_DEFAULTS.items() if k in entry)
    assert recording_from_bytes(lens_bytes(recording)) == recording
