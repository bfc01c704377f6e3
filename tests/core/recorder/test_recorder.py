"""The recorder against PyTorch itself: every built-in program replayed in plain torch.

Two independent runs per program serve as the oracle (``tests/support/oracle.py``):

* a *plain* run: the program text executed as trusted Python under the same
  seed, its ``backward`` and ``torch.autograd.grad`` calls logged: the grads,
  results, exception texts and failing nodes to match, call by call;
* a *probed* run: the same, with hooks of our own on every node a call can
  reach; at each pre-hook every ``_saved_*`` slot of every node is read (the
  naive, full probe), so the state after each node is known without the
  recorder's bookkeeping. Engine order is the order the pre-hooks fire.

Recording programs: the forward part statement by statement, what stays alive, versions, leaves.

A recording of a program takes a ``forward`` step after each statement that
changed something; every step carries its program line and loop counters,
every node the line and iteration that made it. A node is alive while some
value the program holds reaches it and gone once nothing does. PyTorch is the
oracle throughout (``tests/support/oracle.py``): each program here is also run as
plain Python, call by call, and with every slot probed at every node.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core import Limits, LoopMark, Program, ProgramError, Recording, builtin_names, load_builtin, record
from app.core.model.timeline import Step, Timeline
from app.core.model.values import Values
from app.core.recorder.ledger import probe_slot
from app.core.recorder.recorder import ProgramRecorder
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
    with pytest.raises(ProgramError) as caught:
        record(code, limits=Limits(max_elements=100, max_total_elements=250))
    assert (caught.value.field, caught.value.line) == ("program", 5)


def test_released_slots_are_seen_without_raising_and_agree_with_pytorchs_error() -> None:
    """probe_slot reads a released slot from its raw saved tensor; PyTorch's own refusal agrees."""
    from app.core.recorder.ledger import probe_slot, released

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


def bare_program(*lines: str) -> Program:
    return Program("\n".join(["import torch", *lines]) + "\n", name="t")


def recorded(*lines: str) -> Recording:
    """Record the program, and check it against PyTorch run plainly and probed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: create_graph makes a reference cycle
        rec = record(bare_program(*lines))
        check_against_plain(rec)
        check_against_probes(rec)
    return rec


def steps_at(rec: Recording, line: int, kind: str = "forward") -> list[Step]:
    return [s for s in rec.timeline.steps if s.line == line and s.kind == kind]


def nodes_named(rec: Recording, name: str) -> list[str]:
    return [n.id for n in rec.graph.nodes if n.name == name]


# -- lines, loops and what each step shows -------------------------------------------------------

LOOP = (
    LEAF,  # 2
    "for i in range(3):",  # 3
    "    y = x * (i + 1)",  # 4
    "    if i % 2 == 0:",  # 5
    "        print(i, 'even')",  # 6
    "    y.sum().backward()",  # 7
)


def test_a_forward_step_per_statement_that_changed_something_with_its_line_and_loop() -> None:
    rec = recorded(*LOOP)
    made = steps_at(rec, 4)
    assert [s.loops for s in made] == [(LoopMark(3, i, 3),) for i in range(3)]
    assert all(s.added_nodes for s in made)  # each y = x * (i + 1) adds its MulBackward0
    printed = steps_at(rec, 6)
    assert [(s.printed, s.loops) for s in printed] == [
        (("0 even",), (LoopMark(3, 0, 3),)),
        (("2 even",), (LoopMark(3, 2, 3),)),
    ]
    assert not steps_at(rec, 3) and not steps_at(rec, 5)  # the for and the if change nothing
    assert rec.timeline[0].kind == "forward" and rec.timeline[0].line == 4


def test_calls_and_their_steps_carry_the_iteration() -> None:
    rec = recorded(*LOOP)
    assert [(c.call.line, c.call.loops) for c in rec.calls] == [(7, (LoopMark(3, i, 3),)) for i in range(3)]
    for info in rec.calls:
        steps = rec.timeline.steps[info.first_step : info.last_step + 1]
        assert {(s.call, s.line, s.loops) for s in steps} == {(info.index, 7, info.call.loops)}
    assert [as_tensor(rec.grads_at_end(c.index)["x"]).tolist() for c in rec.calls] == [  # type: ignore[union-attr]
        [1.0, 1.0],
        [3.0, 3.0],
        [6.0, 6.0],
    ]


def test_nested_loops_are_marked_outermost_first() -> None:
    rec = recorded(LEAF, "for i in range(2):", "    for j in range(3):", "        y = x * j")
    marks = [s.loops for s in steps_at(rec, 5)]
    assert marks == [(LoopMark(3, i, 2), LoopMark(4, j, 3)) for i in range(2) for j in range(3)]


def test_a_loop_over_a_list_counts_its_items() -> None:
    rec = recorded(LEAF, "for c in [2.0, 3.0]:", "    (x * c).sum().backward()")
    assert [c.call.loops for c in rec.calls] == [(LoopMark(3, 0, 2),), (LoopMark(3, 1, 2),)]


def test_each_node_carries_the_line_iteration_and_step_that_made_it() -> None:
    rec = recorded(*LOOP)
    muls = [rec.graph.node(n) for n in nodes_named(rec, "MulBackward0")]
    assert [(n.line, n.loops, n.label) for n in muls] == [
        (4, (LoopMark(3, i, 3),), "y = x * (i + 1)") for i in range(3)
    ]
    sums = [rec.graph.node(n) for n in nodes_named(rec, "SumBackward0")]
    assert [(n.line, n.added_at_call) for n in sums] == [(7, i) for i in range(3)]


@pytest.mark.parametrize("name", builtin_names())
def test_created_gone_and_alive_agree_with_the_steps(name: str) -> None:
    """Every node appears at the step that says so, on its line; alive = shown and not gone."""
    rec = record(load_builtin(name))
    for node in rec.graph.nodes:
        assert node.created_at_step is not None
        made = rec.timeline[node.created_at_step]
        assert node.id in made.added_nodes and node.line == made.line, node
        if node.added_at_call is None:
            assert node.loops == made.loops, node
        if node.gone_at_step is not None:
            assert node.id in rec.timeline[node.gone_at_step].gone_nodes
            # a temporary (print(total / 3)) is made and let go by the same statement: one step
            assert node.gone_at_step >= node.created_at_step
    for i, step in enumerate(rec.timeline.steps):
        state = rec.timeline.state(i)
        assert step.alive_nodes == len(state.visible_nodes - state.gone), i
        gone_slots = {s for (n, _), s in state.slots.items() if n in state.gone}
        assert gone_slots <= {"freed"}, i


# -- alive and gone ---------------------------------------------------------------------------------

LET_GO = (
    LEAF,  # 2
    "y = x.exp()",  # 3
    "y = y.detach()",  # 4: the exp graph is let go
    "z = x.sin()",  # 5
    "del z",  # 6: and the sin graph
    "w = x.cos()",  # 7
    "w = x * 2",  # 8: the cos node, not the leaf's node the new w still reaches
    "v = x.exp()",  # 9
    "v = v * 2",  # 10: the new v still reaches the exp: nothing is let go
    "ys = [x.tan(), x.sigmoid()]",  # 11
    "ys[0] = 0.0",  # 12: the tan, held only by the list
)


def test_nodes_are_gone_once_nothing_the_program_holds_reaches_them() -> None:
    rec = recorded(*LET_GO)
    gone_at = {line: set(steps_at(rec, line)[0].gone_nodes) for line in (4, 6, 8, 10, 12)}
    names = {line: sorted(rec.graph.node(n).name for n in ids) for line, ids in gone_at.items()}
    assert names == {
        4: ["AccumulateGrad", "ExpBackward0"],
        6: ["AccumulateGrad", "SinBackward0"],
        8: ["CosBackward0"],
        10: [],
        12: ["TanBackward0"],
    }
    for ids in gone_at.values():
        for node in ids:
            assert (
                rec.graph.node(node).gone_at_step
                == steps_at(rec, rec.graph.node(node).line or 0)[0].index + 1
            )


def test_a_gone_node_frees_what_it_saved_and_the_counts_fall() -> None:
    rec = recorded(*LET_GO)
    by_line = {line: steps_at(rec, line)[0] for line in range(3, 13)}
    assert [by_line[line].alive_nodes for line in (3, 4, 5, 6)] == [2, 0, 2, 0]
    assert [by_line[line].saved_bytes for line in (3, 4, 5, 6)] == [8, 0, 8, 0]
    exp = nodes_named(rec, "ExpBackward0")[0]
    assert by_line[4].slot_changes == {(exp, "result"): "freed"}
    assert by_line[12].alive_nodes == by_line[11].alive_nodes - 1
    assert by_line[12].saved_bytes == by_line[11].saved_bytes - 8
    assert exp in rec.timeline.state(by_line[4].index).gone


def logging_loop(accumulate: str) -> Recording:
    return recorded(
        "w = torch.tensor([1., 2.], requires_grad=True)",
        "total = 0.0",
        "for i in range(4):",  # 4
        "    loss = (w * (i + 1)).exp().sum()",  # 5
        f"    {accumulate}",  # 6
    )


def iteration_ends(rec: Recording) -> list[Step]:
    """The last step of each iteration of the loop on line 4."""
    last: dict[int, Step] = {}
    for step in rec.timeline.steps:
        if step.loops:
            last[step.loops[0].index] = step
    return [last[i] for i in sorted(last)]


@pytest.mark.parametrize("accumulate", ["total = total + loss", "total += loss"])
def test_summing_the_loss_tensor_keeps_every_iteration_alive(accumulate: str) -> None:
    ends = iteration_ends(logging_loop(accumulate))
    alive, saved = [s.alive_nodes for s in ends], [s.saved_bytes for s in ends]
    assert len(ends) == 4
    assert all(b > a for a, b in itertools.pairwise(alive)), alive
    assert all(b > a for a, b in itertools.pairwise(saved)), saved
    assert not any(s.gone_nodes for s in ends)


def test_summing_the_loss_as_a_number_lets_each_iteration_go() -> None:
    rec = logging_loop("total += loss.item()")
    ends = iteration_ends(rec)
    assert len({(s.alive_nodes, s.saved_bytes) for s in ends}) == 1
    assert all(len(s.gone_nodes) == 3 for s in ends[1:])  # the previous iteration's sum, exp and mul
    assert isinstance(run_plainly(rec.program.code).names["total"], float)


def hidden_state(detach: str) -> list[int]:
    rec = recorded(
        "w = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)",
        "h = torch.zeros(2)",
        "for i in range(4):",
        f"    h = torch.tanh(w @ h + 1.0){detach}",
    )
    return [s.alive_nodes for s in iteration_ends(rec)]


def test_an_undetached_hidden_state_keeps_every_iteration_alive() -> None:
    grows = hidden_state("")
    assert all(b > a for a, b in itertools.pairwise(grows)), grows


STATEMENT_TEMPORARIES = [
    "h = (w * 2).detach()",
    "h = (w * 2).sum().item()",
    "h = [(w * 2).detach()]",
    "(w * 2).sum()",
    "print((w * 2).sum())",
]


@pytest.mark.parametrize("line", STATEMENT_TEMPORARIES)
def test_a_graph_a_statement_makes_and_drops_is_gone_at_once(line: str) -> None:
    rec = recorded("w = torch.ones(2, requires_grad=True)", line, "z = 1")
    made = steps_at(rec, 3)
    assert not made or (made[-1].alive_nodes, made[-1].saved_bytes) == (0, 0), made
    assert all(n.gone_at_step is not None for n in rec.graph.nodes)


def test_a_detached_hidden_state_does_not_grow() -> None:
    flat = hidden_state(".detach()")
    assert len(set(flat)) <= 1 and all(n == 0 for n in flat), flat


def test_the_graph_in_a_grad_made_with_create_graph_is_alive_at_once() -> None:
    rec = recorded(LEAF, "x.pow(3).sum().backward(create_graph=True)", "z = 1", "g = x.grad * 1")
    after = steps_at(rec, 3)[-1]  # x.grad = 3x**2, a graph of four nodes that saves x twice
    assert after.alive_nodes >= 5 and after.saved_bytes > 0, (after.alive_nodes, after.saved_bytes)


# -- versions -----------------------------------------------------------------------------------------


def test_a_slot_shows_the_version_it_was_saved_at_and_is_modified_where_it_changed() -> None:
    rec = recorded(
        "a = torch.tensor([1., 2., 3.], requires_grad=True)",  # 2
        "b = a * 1",  # 3
        "b.add_(1)",  # 4: b is at version 1 when c saves it
        "c = b * b",  # 5
        "b[1] = 2.0",  # 6: the saved b changes: modified, version 2
        "c.sum().backward()",  # 7: fails on it
    )
    mul = rec.graph.node(nodes_named(rec, "MulBackward0")[1])
    assert [(s.name, s.saved_version) for s in mul.tensor_slots] == [("other", 1), ("self", 1)]
    made, written = steps_at(rec, 5)[0], steps_at(rec, 6)[0]
    assert rec.timeline.state(made.index).versions[(mul.id, "self")] == 1
    assert written.slot_changes == {(mul.id, "other"): "modified", (mul.id, "self"): "modified"}
    assert written.version_changes == {(mul.id, "other"): 2, (mul.id, "self"): 2}
    assert written.index < rec.calls[0].first_step  # shown before any backward fails on it
    assert "is at version 2; expected version 1" in (rec.calls[0].error or "")
    assert rec.calls[0].failed_node == mul.id


def test_an_optimizer_step_modifies_a_saved_weight_before_the_next_backward() -> None:
    rec = recorded(
        "import torch.nn as nn",  # 2
        "lin = nn.Linear(2, 1)",  # 3
        "opt = torch.optim.SGD(lin.parameters(), lr=0.1)",  # 4
        "x = torch.ones(3, 2, requires_grad=True)",  # 5
        "out = lin(x).sum()",  # 6
        "out.backward(retain_graph=True)",  # 7
        "opt.step()",  # 8
        "opt.zero_grad()",  # 9
        "out.backward()",  # 10
    )
    addmm = nodes_named(rec, "AddmmBackward0")[0]
    stepped = steps_at(rec, 8)[0]
    assert stepped.slot_changes == {(addmm, "mat2"): "modified"}
    assert stepped.version_changes == {(addmm, "mat2"): 2}
    zeroed = steps_at(rec, 9)[0]
    assert zeroed.grad_changes == {"lin.weight": None, "lin.bias": None}
    assert rec.failed is rec.calls[1] and rec.calls[1].failed_node == addmm
    assert "modified by an inplace operation" in (rec.calls[1].error or "")


# -- leaves and their .grad ----------------------------------------------------------------------------


def test_module_parameters_are_named_by_their_path_and_unused_leaves_too() -> None:
    rec = recorded(
        "import torch.nn as nn",
        "model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))",
        "unused = torch.ones(2, requires_grad=True)",
        "loss = model(torch.ones(4, 2)).sum()",
        "loss.backward()",
    )
    params = {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    assert set(rec.leaves) == params | {"unused"}
    assert rec.leaves["unused"] == ""  # named, never part of a graph
    for name in params:
        node = rec.graph.node(rec.leaves[name])
        assert node.is_leaf and node.label == name
    grads = rec.grads_at_end(0)
    assert set(grads) == params  # a .grad never set is not stored: it reads as None
    assert grads["model.2.bias"].tolist() == [4.0]  # type: ignore[union-attr]


def test_grad_written_by_the_program_is_a_step() -> None:
    rec = recorded(
        LEAF,
        "(x * x).sum().backward()",  # 3
        "x.grad = None",  # 4
        "(x * 3).sum().backward()",  # 5
        "x.grad.zero_()",  # 6
    )
    assert steps_at(rec, 4)[0].grad_changes == {"x": None}
    assert steps_at(rec, 6)[0].grad_changes["x"].tolist() == [0.0, 0.0]  # type: ignore[union-attr]
    assert rec.grads_at_end(1)["x"].tolist() == [3.0, 3.0]  # type: ignore[union-attr]


def test_printed_text_belongs_to_the_step_it_ran_in() -> None:
    rec = recorded(
        LEAF,
        "loss = (x * x).sum()",  # 3
        "print('loss', loss.item(), f'{loss.item():.2f}')",  # 4
        "loss.backward()",  # 5
        "print(x.grad)",  # 6
        "print()",  # 7
    )
    assert [s.printed for s in rec.timeline.steps if s.printed] == [
        ("loss 5.0 5.00",),
        ("tensor([2., 4.])",),
        ("",),
    ]
    assert [s.line for s in rec.timeline.steps if s.printed] == [4, 6, 7]


# -- the program's own errors ------------------------------------------------------------------------


def test_an_error_of_the_program_ends_it_with_an_error_step_at_that_line_and_iteration() -> None:
    rec = recorded(
        LEAF,
        "for i in range(3):",  # 3
        "    (x * 2).sum().backward()",  # 4
        "    if i == 1:",  # 5
        "        x += 1",  # 6: a leaf that requires grad, changed in place
        "print('never')",
    )
    assert len(rec.calls) == 2 and rec.failed is None
    assert (
        rec.error
        == "PyTorch says: a leaf Variable that requires grad is being used in an in-place operation."
    )
    assert rec.error_line == 6
    last = rec.timeline[-1]
    assert (last.kind, last.call, last.node, last.line, last.loops) == (
        "error",
        None,
        None,
        6,
        (LoopMark(3, 1, 3),),
    )
    assert last.error == rec.error and not any(s.printed for s in rec.timeline.steps)


def test_a_python_error_ends_the_program_too() -> None:
    rec = recorded(LEAF, "a = [1, 2]", "y = x * 2", "b = a[5]", "y.sum().backward()")
    assert (rec.error, rec.error_line, rec.calls) == ("Python says: list index out of range", 5, ())
    assert rec.timeline[-1].kind == "error" and rec.timeline[-1].line == 5


# -- random loop programs, against PyTorch ------------------------------------------------------------

VALUES = st.floats(-1.5, 1.5, allow_nan=False).map(lambda v: round(v, 2))
UNARY = ("torch.tanh({})", "torch.sigmoid({})", "({}).exp()", "({}).square()", "({}).sin()", "({}) * 2.0")
RETAIN = st.sampled_from(["", "retain_graph=True", "retain_graph=True", "retain_graph=False"])


@st.composite
def loop_programs(draw: st.DrawFn) -> str:
    """A loop over a carried state ``h`` and a fresh ``y``, with backward and grad calls in it.

    Some calls are inside an ``if``, some retain the graph, some states are detached, some
    losses summed across iterations, and ``w`` may be stepped in place under ``no_grad`` (which
    later calls see as a modified saved tensor).
    """
    x, w = (draw(st.lists(VALUES, min_size=2, max_size=2)) for _ in range(2))
    lines = [
        "import torch",
        f"x = torch.tensor({x}, requires_grad=True)",
        f"w = torch.tensor({w}, requires_grad=True)",
        "h = x * 1.0",
        "total = 0.0",
        f"for i in range({draw(st.sampled_from([1, 2, 3, 3]))}):",
        f"    y = {draw(st.sampled_from(UNARY)).format('x * w')}",
        f"    h = {draw(st.sampled_from(UNARY)).format(draw(st.sampled_from(['h * w', 'h + y', 'h * y'])))}",
        f"    loss = {draw(st.sampled_from(['(h * w).sum()', '(h + y).pow(2).sum()', '(y * w).sum()']))}",
    ]
    call = draw(st.sampled_from(["backward", "backward", "grad"]))
    keywords = draw(RETAIN)
    if call == "backward":
        text = f"loss.backward({keywords})"
    else:
        text = f"g = torch.autograd.grad(loss, [w]{', ' + keywords if keywords else ''})[0]"
    guard = draw(st.sampled_from([None, None, "i % 2 == 0", "i > 0"]))
    if guard is None:
        lines.append(f"    {text}")
        if call == "backward" and draw(st.integers(0, 2)):
            lines += ["    with torch.no_grad():", "        w -= 0.1 * w.grad"]
        if call == "backward" and draw(st.booleans()):
            lines.append(draw(st.sampled_from(["    w.grad = None", "    w.grad.zero_()"])))
    else:
        lines += [f"    if {guard}:", f"        {text}"]
        if draw(st.booleans()):
            lines += ["    else:", f"        print(i, {draw(st.sampled_from(['loss.item()', 'h']))})"]
    if not draw(st.integers(0, 2)):
        lines.append("    h = h.detach()")
    accumulate = draw(st.sampled_from([None, "total = total + loss", "total += loss.item()"]))
    if accumulate is not None:
        lines.append(f"    {accumulate}")
    if accumulate == "total = total + loss" and draw(st.booleans()):
        lines.append("total.backward()")
    return "\n".join(lines) + "\n"


def check_loop_program(code: str) -> Recording:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rec = record(Program(code, name="loop"))
        check_against_plain(rec)
        check_against_probes(rec)
    return rec


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_programs())
def test_random_loop_program_matches_pytorch_call_by_call(code: str) -> None:
    check_loop_program(code)


def test_loop_generator_reaches_every_outcome() -> None:
    """Passing programs, failing calls (freed and modified), programs that end with their own error."""
    seen: set[str] = set()

    def outcome(rec: Recording) -> str:
        if rec.failed is not None:
            error = rec.failed.error or ""
            return "modified" if "inplace" in error else "freed" if "second time" in error else "other"
        return "program error" if rec.error else "passed"

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)  # the same examples each run
    @given(loop_programs())
    def collect(code: str) -> None:
        seen.add(outcome(record(Program(code))))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        collect()
    assert {"passed", "freed", "modified"} <= seen, seen


def test_a_known_loop_program_fails_where_pytorch_does() -> None:
    """The band-aid shape, written out: retain_graph lets a carried state reach a stepped weight."""
    code = (
        "import torch\n"
        "x = torch.tensor([0.5, -1.0], requires_grad=True)\n"
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "h = x * 1.0\n"
        "for i in range(3):\n"
        "    h = torch.tanh(h * w)\n"
        "    loss = (h * w).sum()\n"
        "    loss.backward(retain_graph=True)\n"
        "    with torch.no_grad():\n"
        "        w -= 0.1 * w.grad\n"
    )
    rec = check_loop_program(code)
    assert rec.failed is rec.calls[1]
    assert "modified by an inplace operation" in (rec.calls[1].error or "")
    stepped = [s for s in rec.timeline.steps if s.line == 10 and s.kind == "forward"]
    assert any("modified" in s.slot_changes.values() for s in stepped)
