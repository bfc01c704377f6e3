"""The one writer of a recording's fields: every field of the model is written, once, and both the
``.lens`` file and ``trace --json`` take it from there."""

from __future__ import annotations

import dataclasses
import gzip
import json
from typing import Any

import pytest

from app.core import load_builtin, record
from app.core.lensfile import lens_bytes, recording_from_bytes, writer
from app.core.model.graph import GraphNode, SavedSlot
from app.core.model.program import Call, CallInfo
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
