"""The step log: steps as the model defines them, each field set, and the nodes' lifetimes."""

from __future__ import annotations

import dataclasses

import torch

from app.core.model.graph import GraphNode, LoopMark, SourceRef
from app.core.model.timeline import Step
from app.core.recorder.capture import GraphCapture
from app.core.recorder.step_log import StepLog


def _take(log: StepLog, **more: object) -> Step:
    fields = dict(
        line=3, loops=(), slots={}, versions={}, grads={}, saved_bytes=8, device_bytes=None, alive_nodes=2
    )
    fields.update(more)
    return log.take("node", 0, "n1", **fields)  # type: ignore[arg-type]


def test_a_step_has_every_field_and_equals_the_one_steps_own_init_makes() -> None:
    log = StepLog()
    log.node_added("n1", line=3, loops=(LoopMark(2, 0, None),), origin=("lin", SourceRef("a.py", 3)))
    log.printed("hi")
    step = _take(log, slots={("n1", "self"): "freed"}, versions={("n1", "self"): 2})
    assert set(vars(step)) == {f.name for f in dataclasses.fields(Step)}
    expected = Step(
        index=0,
        kind="node",
        call=0,
        node="n1",
        slot_changes={("n1", "self"): "freed"},
        grad_changes={},
        saved_bytes=8,
        added_nodes=("n1",),
        line=3,
        printed=("hi",),
        alive_nodes=2,
        version_changes={("n1", "self"): 2},
    )
    assert step == expected
    assert not log.waiting and _take(log).added_nodes == () and len(log) == 2


def test_a_nodes_fields_say_when_it_came_and_went() -> None:
    log = StepLog()
    log.node_added("n0", line=1, loops=(), origin=(None, None))
    _take(log)
    _take(log)
    log.node_gone("n0")
    assert _take(log).gone_nodes == ("n0",)
    fields = log.node_fields()["n0"]
    assert (fields["created_at_step"], fields["gone_at_step"], fields["module"]) == (0, 2, None)


def test_the_captured_graph_takes_the_fields_as_its_nodes_own() -> None:
    x = torch.ones(2, requires_grad=True)
    capture = GraphCapture()
    log = StepLog()
    for node_id in capture.add_roots([x.exp().grad_fn]):
        log.node_added(node_id, line=5, loops=(), origin=("m", SourceRef("s.py", 5)))
    graph = capture.freeze(log.node_fields())
    for node in graph.nodes:
        assert set(vars(node)) >= {f.name for f in dataclasses.fields(GraphNode)}
        assert node == dataclasses.replace(node) and (node.line, node.module) == (5, "m")
