"""The compact timeline: replay equals a naive full snapshot, and storage follows changes."""

from __future__ import annotations

import random

import pytest

from app.core import Recording, load_builtin, record
from app.core.model.timeline import CHECKPOINT_EVERY, CHECKPOINTS_KEPT, Timeline
from app.core.model.values import Values
from tests.support.oracle import check_against_probes, same
from tests.support.programs import tanh_chain_program

CHAIN = 40
Slots = dict[tuple[str, str], str]
Grads = dict[str, Values | None]
Full = tuple[Slots, Grads, set[str], dict[tuple[str, str], int], set[str]]


def tanh_chain() -> Recording:
    return record(tanh_chain_program(CHAIN))


@pytest.fixture(scope="module")
def chain() -> Recording:
    return tanh_chain()


def naive_states(timeline: Timeline) -> list[Full]:
    """Full state at every step, built by applying every change from step 0 (no checkpoints)."""
    slots: Slots = {}
    grads: Grads = {}
    visible: set[str] = set()
    versions: dict[tuple[str, str], int] = {}
    gone: set[str] = set()
    out = []
    for step in timeline.steps:
        slots.update(step.slot_changes)
        grads.update(step.grad_changes)
        visible.update(step.added_nodes)
        versions.update(step.version_changes)
        gone.update(step.gone_nodes)
        out.append((dict(slots), dict(grads), set(visible), dict(versions), set(gone)))
    return out


def assert_state_equals(timeline: Timeline, index: int, naive: Full) -> None:
    state = timeline.state(index)
    slots, grads, visible, versions, gone = naive
    assert state.step is timeline.steps[index]
    assert dict(state.slots) == slots
    assert set(state.grads) == set(grads)
    assert all(same(state.grads[k], grads[k]) for k in grads)
    assert state.visible_nodes == visible
    assert dict(state.versions) == versions
    assert state.gone == gone


def test_chain_spans_several_checkpoints(chain: Recording) -> None:
    assert len(chain.timeline) > 2 * CHECKPOINT_EVERY
    assert chain.failed is None


def test_replay_equals_naive_snapshot_at_every_step(chain: Recording) -> None:
    naive = naive_states(chain.timeline)
    for i in range(len(chain.timeline)):
        assert_state_equals(chain.timeline, i, naive[i])


def test_replay_does_not_depend_on_the_order_steps_are_visited(chain: Recording) -> None:
    fresh = Timeline(chain.timeline.steps)
    naive = naive_states(fresh)
    order = [len(fresh) - 1, 3, 2 * CHECKPOINT_EVERY + 1, CHECKPOINT_EVERY, CHECKPOINT_EVERY - 1, 0]
    for i in order + order[::-1]:
        assert_state_equals(fresh, i, naive[i])


def test_far_jumps_past_the_checkpoint_cache_replay_exactly() -> None:
    """More checkpoints than are kept: every state still equals the naive one, and the cache
    stays bounded (memory must not grow with steps x graph size once a learner stepped through)."""
    rec = record(tanh_chain_program(600))
    timeline = Timeline(rec.timeline.steps)
    assert len(timeline) > 2 * CHECKPOINTS_KEPT * CHECKPOINT_EVERY
    naive = naive_states(timeline)
    order = list(range(len(timeline) - 1, -1, -7)) + random.Random(4).sample(range(len(timeline)), 200)
    for i in order:
        assert_state_equals(timeline, i, naive[i])
        assert len(timeline._checkpoints) <= CHECKPOINTS_KEPT


def test_chain_states_match_independent_probing(chain: Recording) -> None:
    check_against_probes(chain)


def test_each_step_stores_only_what_changed(chain: Recording) -> None:
    naive = naive_states(chain.timeline)
    previous: Slots = {}
    for step, (slots, *_) in zip(chain.timeline.steps, naive, strict=True):
        changed = {k for k, v in slots.items() if previous.get(k) != v}
        assert set(step.slot_changes) == changed, f"step {step.index}"
        if step.kind == "node":
            owners = {k[0] for k in step.slot_changes}
            assert owners <= {step.node, *step.added_nodes}
        previous = slots


def test_storage_grows_with_changes_not_steps_times_graph(chain: Recording) -> None:
    slots = sum(len(n.tensor_slots) for n in chain.graph.nodes)
    stored = sum(len(s.slot_changes) for s in chain.timeline.steps)
    # each slot is stored when it appears, when it is retained and when it is freed
    assert slots >= CHAIN
    assert stored <= 3 * slots
    assert stored < len(chain.timeline) * slots // 10
    grads_stored = sum(len(s.grad_changes) for s in chain.timeline.steps)
    assert grads_stored <= len(chain.calls)  # once per call (a .grad never set is not stored)


def test_grad_changes_only_where_a_gradient_was_accumulated() -> None:
    rec = record(load_builtin("weight-and-input"))
    for step in rec.timeline.steps[1:]:
        if step.grad_changes:
            assert step.kind == "node"
            assert step.node is not None
            assert rec.graph.node(step.node).is_leaf
            assert set(step.grad_changes) == {rec.graph.node(step.node).label}


def test_grads_are_copies_as_plain_values() -> None:
    rec = record(load_builtin("two-losses"))
    for step in rec.timeline.steps:
        for grad in step.grad_changes.values():
            assert grad is None or isinstance(grad, Values)
    early = rec.timeline.state(rec.calls[0].last_step).grads["x"]
    late = rec.timeline.state(rec.calls[1].last_step).grads["x"]
    assert early is not None and late is not None
    assert early.tolist() == [2.0, 4.0] and late.tolist() == [8.0, 16.0]
    assert early != late, "the first call's grad must not change when the second adds to it"


def test_out_of_range_and_bounds(chain: Recording) -> None:
    with pytest.raises(IndexError):
        chain.timeline.state(len(chain.timeline))
    with pytest.raises(IndexError):
        chain.timeline.state(-1)
    for info in chain.calls:
        assert chain.timeline.call_bounds(info.index) == (info.first_step, info.last_step)
    with pytest.raises(IndexError):
        chain.timeline.call_bounds(len(chain.calls))


def test_changed_between_is_symmetric_and_complete(chain: Recording) -> None:
    a, b = 2, len(chain.timeline) - 3
    slots, nodes = chain.timeline.changed_between(a, b)
    assert (slots, nodes) == chain.timeline.changed_between(b, a)
    first, last = chain.timeline.state(a), chain.timeline.state(b)
    differ = {k for k in set(first.slots) | set(last.slots) if first.slots.get(k) != last.slots.get(k)}
    assert differ <= slots
    assert set(last.visible_nodes) - set(first.visible_nodes) <= nodes


@pytest.mark.parametrize("name", ["gan-no-detach", "accumulate-zero-grad"])
def test_the_grads_set_between_two_steps_in_any_order_of_asking(name: str) -> None:
    """The forward steps that set a ``.grad`` between a call's end and a step, as a plain scan
    of the steps finds them, whichever order the pairs are asked in (each answer is kept)."""
    recording = record(load_builtin(name))
    steps = recording.timeline.steps
    setting = [s.index for s in steps if s.kind == "forward" and s.grad_changes]
    assert setting  # the program sets a .grad outside a backward (zero_grad)
    afters = [0, *(c.last_step for c in recording.calls)]
    pairs = [(a, i) for a in afters for i in range(a, len(steps))]
    for order in (pairs, pairs[::-1], random.Random(7).sample(pairs, len(pairs))):
        timeline = record(load_builtin(name)).timeline
        for after, index in order:
            assert timeline.grads_set_between(after, index) == [i for i in setting if after < i <= index]
