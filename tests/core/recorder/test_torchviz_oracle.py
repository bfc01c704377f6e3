"""torchviz vouches for the graph we draw: at the first backward of every built-in program and of
every training script, ``make_dot(outputs, params=..., show_saved=True)`` on the same program's
outputs draws the nodes, edges, leaves and saved tensors of our recording (tests/support/torchviz_oracle.py
says where we differ on purpose). The real-model scripts of tests/core/recorder/test_real_models.py
are compared there, on the recordings it makes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.core import builtin_names, load_builtin, record
from app.core.model.graph import Graph
from app.core.model.recording import Recording
from app.core.recorder import capture, recorder
from app.core.recorder.script import record_script
from tests.support.torchviz_oracle import TorchvizGraph, differences, first_call_make_dot

TRAINING = sorted((Path(__file__).parents[2] / "support" / "scripts" / "training").glob("*.py"))


def make_dot_at_first_call(rec: Recording) -> TorchvizGraph:
    drawn = first_call_make_dot(rec.program.code, {"__name__": "__main__"})
    assert drawn is not None, "the program makes an autograd call"
    return drawn


@pytest.mark.parametrize("name", builtin_names())
def test_a_builtin_draws_what_make_dot_draws_before_its_first_backward(name: str) -> None:
    rec = record(load_builtin(name))
    drawn = make_dot_at_first_call(rec)
    assert differences(rec, drawn) == []
    assert drawn.names and drawn.roots
    named = [leaf for leaf, _ in drawn.leaves.values() if leaf]
    assert named, "torchviz names the program's leaves from params: the names are compared"


@pytest.mark.parametrize("script", TRAINING, ids=[p.stem for p in TRAINING])
def test_a_training_script_draws_what_make_dot_draws_before_its_first_backward(script: Path) -> None:
    run = record_script(script)
    assert run.exception is None
    drawn = make_dot_at_first_call(run.recording)
    assert differences(run.recording, drawn) == []
    assert sum(len(saved) for saved in drawn.saved.values()) > 0, "saved tensors are compared"


def test_a_value_written_in_place_is_what_make_dot_cannot_read() -> None:
    """``make_dot(show_saved=True)`` raises on a saved tensor modified in place: the slots whose read
    raises are the ones we show as modified."""
    rec = record(load_builtin("inplace-sigmoid"))
    drawn = make_dot_at_first_call(rec)
    assert drawn.unreadable is not None and sum(len(s) for s in drawn.unreadable.values()) == 1
    assert differences(rec, drawn) == []


# -- the comparison fails when our capture loses something ----------------------------------------------


def _drop_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    real = capture.saved_slot_names
    monkeypatch.setattr(
        capture,
        "saved_slot_names",
        lambda fn: [s for s in real(fn) if (type(fn).__name__, s) != ("MvBackward0", "vec")],
    )


def _frozen(change: Callable[[Graph], Graph]) -> Callable[[pytest.MonkeyPatch], None]:
    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        real = capture.GraphCapture.freeze
        monkeypatch.setattr(
            capture.GraphCapture, "freeze", lambda self, fields=None, **kw: change(real(self, fields, **kw))
        )

    return patch


def _without_edge_into(name: str) -> Callable[[Graph], Graph]:
    def change(graph: Graph) -> Graph:
        gone = next(e for e in graph.edges if graph.node(e.dst).name == name)
        return Graph(graph.nodes, tuple(e for e in graph.edges if e != gone))

    return change


def _without_node(name: str) -> Callable[[Graph], Graph]:
    def change(graph: Graph) -> Graph:
        gone = next(n.id for n in graph.nodes if n.name == name)
        edges = tuple(e for e in graph.edges if gone not in e)
        return Graph(tuple(n for n in graph.nodes if n.id != gone), edges)

    return change


def _recorded(change: Callable[[Graph], Graph]) -> Callable[[pytest.MonkeyPatch], None]:
    """The recording's graph changed after the run (a node dropped mid-run would break the captions)."""

    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        real = recorder.ProgramRecorder.result

        def result(self: recorder.ProgramRecorder) -> Recording:
            made = real(self)
            return replace(made, graph=change(made.graph))

        monkeypatch.setattr(recorder.ProgramRecorder, "result", result)

    return patch


def _unnamed_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder.ProgramRecorder, "name_of", lambda self, tensor: None)
    monkeypatch.setattr(recorder.ProgramRecorder, "take_named_leaves", lambda self: None)


BREAKS: dict[str, tuple[Callable[[pytest.MonkeyPatch], Any], str]] = {
    "a saved slot": (_drop_slot, "saved vec (2) of"),
    "an edge": (_frozen(_without_edge_into("AccumulateGrad")), "edge MvBackward0 -> AccumulateGrad missing"),
    "a node": (_recorded(_without_node("TanhBackward0")), "torchviz's TanhBackward0 has no node of ours"),
    "a leaf's name": (_unnamed_leaves, "torchviz says 'v'"),
}


@pytest.mark.parametrize("lost", list(BREAKS))
def test_the_comparison_tells_what_our_capture_lost(monkeypatch: pytest.MonkeyPatch, lost: str) -> None:
    rec = record(load_builtin("weight-and-input"))  # h = torch.tanh(w @ v); h.sum().backward()
    drawn = make_dot_at_first_call(rec)
    assert differences(rec, drawn) == []
    breaking, expected = BREAKS[lost]
    breaking(monkeypatch)
    broken = record(load_builtin("weight-and-input"))
    found = differences(broken, drawn)
    assert any(expected in line for line in found), found
