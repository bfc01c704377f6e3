"""``Timeline.state`` while stepping: forward, back and at random, every state equals a full
replay of ``timeline.steps`` made here from step 0, in content, key order and read-only-ness,
and a state handed out earlier never changes when later ones are made from the same checkpoint."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from app.core import Recording, load_builtin, record
from app.core.model.timeline import CHECKPOINT_EVERY, StepState, Timeline
from tests.support.programs import tanh_chain_program

Replayed = tuple[dict[object, object], dict[object, object], dict[object, object], set[str], set[str]]


@pytest.fixture(scope="module", params=["gan-detach", "tanh-chain"])
def recording(request: pytest.FixtureRequest) -> Recording:
    if request.param == "tanh-chain":
        return record(tanh_chain_program(30))
    return record(load_builtin(request.param))


def replay(steps: object) -> list[Replayed]:
    """Every step's full state, each a fresh copy, by applying every change from step 0."""
    slots: dict[object, object] = {}
    grads: dict[object, object] = {}
    versions: dict[object, object] = {}
    visible: set[str] = set()
    gone: set[str] = set()
    out = []
    for step in steps:  # type: ignore[attr-defined]
        for key, value in step.slot_changes.items():
            slots[key] = value
        for key, value in step.grad_changes.items():
            grads[key] = value
        for key, value in step.version_changes.items():
            versions[key] = value
        visible.update(step.added_nodes)
        gone.update(step.gone_nodes)
        out.append((dict(slots), dict(grads), dict(versions), set(visible), set(gone)))
    return out


def check_mapping(got: Mapping[object, object], want: dict[object, object]) -> None:
    assert list(got) == list(want)  # the order a dict updated step by step has
    assert len(got) == len(want)
    assert [k for k, _ in got.items()] == list(want)
    for key, value in want.items():
        assert key in got
        assert got[key] is value and got.get(key) is value  # the recorded object itself
    assert ("no such", "key") not in got
    assert got.get(("no such", "key"), "default") == "default"
    with pytest.raises(KeyError):
        got[("no such", "key")]
    with pytest.raises(TypeError):
        got[("no such", "key")] = "alive"  # type: ignore[index]
    assert not hasattr(got, "update") and not hasattr(got, "pop")


def check_state(state: StepState, index: int, steps: object, want: Replayed) -> None:
    slots, grads, versions, visible, gone = want
    assert state.step is steps[index]  # type: ignore[index]
    check_mapping(state.slots, slots)  # type: ignore[arg-type]
    check_mapping(state.grads, grads)  # type: ignore[arg-type]
    check_mapping(state.versions, versions)  # type: ignore[arg-type]
    assert type(state.visible_nodes) is frozenset and state.visible_nodes == visible
    assert type(state.gone) is frozenset and state.gone == gone


def orders(count: int) -> dict[str, list[int]]:
    forward = list(range(count))
    return {
        "forward": forward,
        "backward": forward[::-1],
        "random": random.Random(7).choices(forward, k=3 * count),
        "back and forth": [i for a in forward for i in (a, max(a - 1, 0), a)],
    }


@pytest.mark.parametrize("order", ["forward", "backward", "random", "back and forth"])
def test_every_state_equals_a_full_replay(recording: Recording, order: str) -> None:
    steps = recording.timeline.steps
    assert len(steps) > 2 * CHECKPOINT_EVERY
    want = replay(steps)
    timeline = Timeline(steps)  # a fresh cache: the order is the only way it was stepped
    handed: list[tuple[int, StepState]] = []
    for index in orders(len(steps))[order]:
        state = timeline.state(index)
        check_state(state, index, steps, want[index])
        handed.append((index, state))
    for index, state in handed:  # none changed when later states were made
        check_state(state, index, steps, want[index])


def test_a_state_equals_the_same_state_made_afresh(recording: Recording) -> None:
    steps = recording.timeline.steps
    stepped, fresh = Timeline(steps), Timeline(steps)
    for index in range(len(steps)):
        stepped.state(index)
    for index in random.Random(3).sample(range(len(steps)), 20):
        assert stepped.state(index) == fresh.state(index)
