"""The recorder against PyTorch itself: every built-in program replayed in plain torch.

Two independent runs per program serve as the oracle (``tests/support/oracle.py``):

* a *plain* run: the program text executed as trusted Python under the same
  seed, its ``backward`` and ``torch.autograd.grad`` calls logged: the grads,
  results, exception texts and failing nodes to match, call by call;
* a *probed* run: the same, with hooks of our own on every node a call can
  reach; at each pre-hook every ``_saved_*`` slot of every node is read (the
  naive, full probe), so the state after each node is known without the
  recorder's bookkeeping. Engine order is the order the pre-hooks fire.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import torch

from app.core import Limits, Program, Recording, ScenarioError, builtin_names, load_builtin, record
from app.core.model.timeline import Timeline
from app.core.model.values import Values
from app.core.recording.ledger import probe_slot
from app.core.recording.recorder import ProgramRecorder
from tests.support.oracle import as_tensor, check_against_plain, check_against_probes, run_plainly

LEAF = "x = torch.tensor([1., 2.], requires_grad=True)"


def program(*lines: str, leaf: str = LEAF) -> Program:
    """A small program: ``import torch``, the leaf, then ``lines``."""
    return Program("\n".join(["import torch", leaf, *lines]) + "\n", name="t")


def node_named(rec: Recording, name: str) -> str:
    return next(n.id for n in rec.graph.nodes if n.name == name)


BUILTINS = builtin_names()


@pytest.fixture(scope="module", params=BUILTINS)
def builtin(request: pytest.FixtureRequest) -> Recording:
    return record(load_builtin(request.param))


def test_every_builtin_is_covered() -> None:
    assert len(BUILTINS) >= 26
    assert {"two-losses", "forgot-retain", "no-saved-values", "square-needs-saved"} <= set(BUILTINS)
    assert {"higher-derivative", "summed-loss", "separate-forwards"} <= set(BUILTINS)
    assert {"rnn-no-detach", "retain-bandaid", "gan-no-detach", "logged-loss"} <= set(BUILTINS)


def test_builtin_grads_and_errors_match_plain_torch(builtin: Recording) -> None:
    check_against_plain(builtin)


def test_builtin_states_order_and_bytes_match_probing(builtin: Recording) -> None:
    check_against_probes(builtin)


def without_pointers(rec: Recording) -> list[Any]:
    """The graph as data, storages by size only (their addresses differ from run to run)."""
    nodes = []
    for node in rec.graph.nodes:
        slots = [dataclasses.replace(s, storages=tuple(r.nbytes for r in s.storages)) for s in node.saved]
        nodes.append(dataclasses.replace(node, saved=tuple(slots)))
    return [nodes, rec.graph.edges]


def test_recording_twice_gives_the_same_timeline(builtin: Recording) -> None:
    again = record(builtin.program)
    assert again.timeline.steps == builtin.timeline.steps
    assert without_pointers(again) == without_pointers(builtin)
    assert again.calls == builtin.calls and again.leaves == builtin.leaves


def test_contribution_is_this_calls_share(builtin: Recording) -> None:
    rec = builtin
    for info in rec.calls:
        step = rec.timeline[info.last_step]
        if step.kind != "call_end" or info.call.kind != "backward":
            continue
        assert step.contribution is not None
        before = rec.timeline.state(info.first_step - 1).grads
        end = rec.grads_at_end(info.index)
        for name, share in step.contribution.items():
            after, earlier = as_tensor(end.get(name)), as_tensor(before.get(name))
            if after is None:
                assert share is None
                continue
            assert share is not None
            expected = after if earlier is None or earlier.shape != after.shape else after - earlier
            assert torch.equal(as_tensor(share), expected), (info.index, name)


@pytest.mark.parametrize("last_retains", [True, False])
def test_hooks_are_removed_even_when_a_call_fails(last_retains: bool) -> None:
    """After recording, running backward through the recorded graph adds no step."""
    flag = "retain_graph=True" if last_retains else ""
    code = program("y = x.exp()", "z = x + 1", f"y.sum().backward({flag})", "y.sum().backward()")
    recorder = ProgramRecorder(code, torch.device("cpu"), Limits())
    rec = recorder.run()
    assert (rec.calls[-1].error is None) == last_retains
    count = len(recorder.log.steps)
    recorder.env["z"].sum().backward()  # AddBackward0 and AccumulateGrad were hooked during the calls
    assert len(recorder.log.steps) == count
    end = as_tensor(rec.grads_at_end(len(rec.calls) - 1)["x"])
    assert end is not None and torch.equal(recorder.env["x"].grad, end + 1)


# -- slot-state semantics ------------------------------------------------------


def test_alive_until_the_node_runs_then_retained_then_freed() -> None:
    rec = record(program("y = x.exp()", "y.sum().backward(retain_graph=True)", "y.sum().backward()"))
    exp = node_named(rec, "ExpBackward0")
    created = rec.graph.node(exp).created_at_step
    assert created is not None
    states = [rec.timeline.state(i).slots[(exp, "result")] for i in range(created, len(rec.timeline))]
    ran_1 = next(s.index for s in rec.timeline.steps if s.node == exp and s.call == 0) - created
    ran_2 = next(s.index for s in rec.timeline.steps if s.node == exp and s.call == 1) - created
    assert set(states[:ran_1]) == {"alive"}
    assert set(states[ran_1:ran_2]) == {"retained"}
    assert set(states[ran_2:]) == {"freed"}
    assert rec.freed_by[(exp, "result")] == 1


def test_unreached_node_stays_alive() -> None:
    """Only what a call walks is freed: a branch it never reaches keeps its buffers."""
    rec = record(program("a = x.exp()", "b = x.sin()", "a.sum().backward()"))
    sin = node_named(rec, "SinBackward0")
    exp = node_named(rec, "ExpBackward0")
    end = rec.timeline.state(len(rec.timeline) - 1)
    assert end.slots[(sin, "self")] == "alive"
    assert end.slots[(exp, "result")] == "freed"
    check_against_probes(rec)


def test_inplace_change_of_a_saved_result_is_modified_and_fails() -> None:
    rec = record(program("y = x.exp()", "y.add_(1)", "y.sum().backward()"))
    exp = node_named(rec, "ExpBackward0")
    changed = next(s for s in rec.timeline.steps if s.line == 4)
    assert changed.kind == "forward" and changed.slot_changes[(exp, "result")] == "modified"
    plain = run_plainly(rec.program.code)
    assert plain.calls[0].error is not None and "modified by an inplace operation" in plain.calls[0].error
    assert rec.calls[0].error == plain.calls[0].error
    last = rec.timeline[rec.calls[0].last_step]
    assert last.kind == "error" and last.error == plain.calls[0].error
    assert rec.calls[0].failed_node == exp
    check_against_plain(rec, plain)
    check_against_probes(rec)


def test_modified_slot_still_counts_its_bytes() -> None:
    rec = record(program("y = x.exp()", "y.add_(1)", "y.sum().backward()"))
    y = run_plainly(rec.program.code).names["y"]
    changed = next(s for s in rec.timeline.steps if s.line == 4)
    assert changed.saved_bytes == y.untyped_storage().nbytes() > 0


def test_inplace_on_an_input_saved_by_mul() -> None:
    rec = record(program("w = x * 1", "y = w * w", "w.mul_(2)", "y.sum().backward()"))
    check_against_plain(rec)
    check_against_probes(rec)
    assert rec.calls[0].error is not None
    assert rec.graph.node(rec.calls[0].failed_node or "").name == "MulBackward0"


def test_error_before_any_node_runs() -> None:
    """A loss that does not require grad: PyTorch refuses the call itself."""
    rec = record(program("y = x.detach() * 2", "y.sum().backward()"))
    check_against_plain(rec)
    assert rec.calls[0].failed_node is None
    assert rec.calls[0].error is not None and "does not require grad" in rec.calls[0].error


def test_probe_slot_reads_pytorch() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    fn = y.grad_fn
    assert probe_slot(fn, "result", False) == "alive"
    y.sum().backward(retain_graph=True)
    assert probe_slot(fn, "result", True) == "retained"
    y.sum().backward()
    assert probe_slot(fn, "result", True) == "freed"


# -- saved bytes ---------------------------------------------------------------


def test_two_losses_bytes_stay_until_the_last_call() -> None:
    rec = record(load_builtin("two-losses"))
    x_bytes = torch.tensor([1.0, 2.0]).untyped_storage().nbytes()
    first_end = rec.timeline[rec.calls[0].last_step]
    assert first_end.saved_bytes >= x_bytes > 0
    assert rec.timeline[rec.calls[1].last_step].saved_bytes == 0
    forgot = record(load_builtin("forgot-retain"))
    assert forgot.timeline[forgot.calls[0].last_step].saved_bytes == 0


def test_shared_storage_is_counted_once() -> None:
    """x * x saves x twice (self and other): one storage, counted once."""
    rec = record(load_builtin("square-needs-saved"))
    mul = node_named(rec, "MulBackward0")
    slots = {s.name: s for s in rec.graph.node(mul).tensor_slots}
    assert set(slots) == {"self", "other"}
    assert slots["self"].storage == slots["other"].storage
    assert rec.timeline[rec.graph.node(mul).created_at_step or 0].saved_bytes == slots["self"].nbytes == 16


# -- the oracle itself can fail ------------------------------------------------


def corrupted(rec: Recording, index: int, **changes: Any) -> Recording:
    steps = list(rec.timeline.steps)
    steps[index] = dataclasses.replace(steps[index], **changes)
    return dataclasses.replace(rec, timeline=Timeline(tuple(steps)))


def test_oracle_catches_a_wrong_slot_state() -> None:
    rec = record(load_builtin("two-losses"))
    pow_id = node_named(rec, "PowBackward0")
    step = next(s for s in rec.timeline.steps if s.node == pow_id and s.call == 0)
    bad = corrupted(rec, step.index, slot_changes={(pow_id, "self"): "freed"})
    with pytest.raises(AssertionError, match="slot states"):
        check_against_probes(bad)


def test_oracle_catches_wrong_bytes_versions_and_order() -> None:
    rec = record(load_builtin("two-losses"))
    first, second = [s for s in rec.timeline.steps if s.kind == "node" and s.call == 0][:2]
    with pytest.raises(AssertionError, match="saved bytes"):
        check_against_probes(corrupted(rec, second.index, saved_bytes=second.saved_bytes + 4))
    swapped = corrupted(corrupted(rec, first.index, node=second.node), second.index, node=first.node)
    with pytest.raises(AssertionError):
        check_against_probes(swapped)
    pow_id = node_named(rec, "PowBackward0")
    bumped = corrupted(rec, second.index, version_changes={(pow_id, "self"): 7})
    with pytest.raises(AssertionError, match="version"):
        check_against_probes(bumped)


def test_oracle_catches_a_wrong_grad_error_text_node_or_print() -> None:
    rec = record(load_builtin("forgot-retain"))
    end = rec.calls[0].last_step
    with pytest.raises(AssertionError, match=r"x\.grad"):
        check_against_plain(corrupted(rec, end, grad_changes={"x": Values((2,), (2.0, 4.5))}))
    failing = rec.calls[1].last_step
    bad = corrupted(rec, failing, error="something else")
    bad = dataclasses.replace(bad, calls=(bad.calls[0], dataclasses.replace(bad.calls[1], error="x")))
    with pytest.raises(AssertionError):
        check_against_plain(bad)
    other = next(n.id for n in rec.graph.nodes if n.id != rec.calls[1].failed_node)
    wrong = dataclasses.replace(
        rec, calls=(rec.calls[0], dataclasses.replace(rec.calls[1], failed_node=other))
    )
    with pytest.raises(AssertionError, match="failing node"):
        check_against_plain(wrong)
    with pytest.raises(AssertionError):
        check_against_plain(corrupted(rec, 0, printed=("hello",)))


def test_inplace_change_in_a_later_loss_is_seen_before_the_call_runs() -> None:
    """A loss expression may change a saved tensor in place: the state must follow at once."""
    rec = record(program("y = x.exp()", "y.sum().backward(retain_graph=True)", "y.mul_(2).sum().backward()"))
    check_against_plain(rec)
    check_against_probes(rec)
    exp = node_named(rec, "ExpBackward0")
    first = rec.calls[1].first_step
    assert rec.timeline.state(first).slots[(exp, "result")] == "modified"
    assert "changed in place" in rec.timeline[rec.calls[1].last_step].caption


def test_create_graph_backward_replaces_grad_and_each_change_is_recorded() -> None:
    """With create_graph, AccumulateGrad replaces .grad out of place at every call."""
    calls = ["y.sum().backward(create_graph=True)"] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: create_graph makes a reference cycle
        rec = record(program("y = x.pow(3)", *calls))
        check_against_plain(rec)
        check_against_probes(rec)
    changes = [s for s in rec.timeline.steps if "x" in s.grad_changes]
    assert len(changes) == len(rec.calls)


@pytest.mark.parametrize("only", ["w", "v"])
def test_backward_with_inputs_runs_only_what_it_needs(only: str) -> None:
    code = load_builtin("weight-and-input").code.replace(
        "h.sum().backward(", f"h.sum().backward(inputs=[{only}], "
    )
    rec = record(Program(code))
    assert rec.calls[0].call.keywords["inputs"] == f"[{only}]"
    check_against_plain(rec)
    check_against_probes(rec)
    other = "v" if only == "w" else "w"
    assert rec.grads_at_end(0).get(other) is None and rec.grads_at_end(0)[only] is not None


def _contents(value: Any, seen: set[int]) -> Iterator[Any]:
    if id(value) in seen:
        return
    seen.add(id(value))
    yield value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _contents(getattr(value, f.name), seen)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _contents(k, seen)
            yield from _contents(v, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _contents(v, seen)


def test_recording_is_pure_data(builtin: Recording) -> None:
    """No graph node, no live tensor, no torch object at all: grads are plain Values."""
    items = list(_contents(builtin, set()))
    assert not [v for v in items if hasattr(v, "next_functions")]
    assert not [v for v in items if type(v).__module__.split(".")[0] == "torch"]
    grads = [g for step in builtin.timeline.steps for g in step.grad_changes.values()]
    assert all(g is None or isinstance(g, Values) for g in grads), "grads are stored as Values"


def test_one_element_budget_covers_the_whole_recording() -> None:
    """Every statement of the program draws on one budget, not one budget each."""
    made = [f"{n} = torch.ones(100, requires_grad=True)" for n in "abc"]
    code = program(*made, "y = a * b", "y.sum().backward()")
    record(code, limits=Limits(max_elements=100, max_total_elements=10_000))
    with pytest.raises(ScenarioError) as caught:
        record(code, limits=Limits(max_elements=100, max_total_elements=250))
    assert (caught.value.field, caught.value.line) == ("program", 5)


def test_released_slots_are_seen_without_raising_and_agree_with_pytorchs_error() -> None:
    """probe_slot reads a released slot from its raw saved tensor; PyTorch's own refusal agrees."""
    from app.core.recording.ledger import probe_slot, released

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = torch.stack([x, y]).sum()  # StackBackward0 saves no tensors; ExpBackward0 saves its result
    fn = y.grad_fn
    assert not released(fn, "result") and probe_slot(fn, "result", has_run=False) == "alive"
    z.backward(retain_graph=True)
    assert not released(fn, "result") and probe_slot(fn, "result", has_run=True) == "retained"
    y.sum().backward()
    assert released(fn, "result") and probe_slot(fn, "result", has_run=True) == "freed"
    with pytest.raises(RuntimeError, match="freed"):
        _ = fn._saved_result
