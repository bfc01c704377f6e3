"""The recorder against PyTorch itself: every built-in replayed in plain torch.

Two independent runs per scenario serve as the oracle:

* a *plain* run: the same inputs, forward code and losses (evaluated with the
  project's :class:`Evaluator`, which only builds tensors), then plain
  ``loss.backward`` / ``torch.autograd.grad`` with no hooks at all: the grads,
  results and exception texts to match;
* a *probed* run: the same, with pre-hooks of our own on every node; at each
  pre-hook every ``_saved_*`` slot of every node is read (the naive, full
  probe), so the state after each node is known without the recorder's
  bookkeeping. Engine order is the order the pre-hooks fire.

The two graphs are matched by walking both from each call's root along
``next_functions``, so node ids are never assumed.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch

from app.core import Recording, builtin_names, load_builtin, parse_scenario, record
from app.core.language.expr import Evaluator, Limits, parse
from app.core.loading import Call, Scenario
from app.core.model.timeline import Timeline
from app.core.recording.recorder import _Recorder, probe_slot

# -- the oracle -----------------------------------------------------------------

SlotStates = dict[tuple[int, str], str]  # (position in discovery, slot) -> state


def evaluate(env: dict[str, Any], text: str, field: str, mode: str = "eval") -> Any:
    tree = parse(text, field=field, mode=mode)  # type: ignore[arg-type]
    evaluator = Evaluator(env, field=field)
    return evaluator.evaluate(tree) if mode == "eval" else evaluator.run(tree)


def build_forward(scenario: Scenario) -> dict[str, Any]:
    env: dict[str, Any] = {}
    for name, expr in scenario.inputs:
        env[name] = evaluate(env, expr, f"inputs.{name}")
    evaluate(env, scenario.forward, "forward.code", mode="exec")
    return env


def plain_call(env: dict[str, Any], call: Call, loss: torch.Tensor) -> tuple[Any, str | None]:
    """``loss.backward`` or ``torch.autograd.grad`` exactly as a learner writes it."""
    inputs = [env[name] for name in call.inputs]
    try:
        if call.kind == "grad":
            result = torch.autograd.grad(
                loss, inputs, retain_graph=call.retain_graph, create_graph=call.create_graph
            )
            if call.bind is not None:
                env[call.bind] = result[0] if len(result) == 1 else tuple(result)
            return result, None
        loss.backward(retain_graph=call.retain_graph, create_graph=call.create_graph, inputs=inputs or None)
    except (RuntimeError, TypeError, ValueError) as exc:
        return None, str(exc)
    return None, None


def leaf_names(env: dict[str, Any], scenario: Scenario) -> list[str]:
    return [
        n
        for n in scenario.input_names
        if isinstance(env[n], torch.Tensor) and env[n].is_leaf and env[n].requires_grad
    ]


@dataclass
class PlainCall:
    error: str | None
    grads: dict[str, torch.Tensor | None]
    result: tuple[torch.Tensor | None, ...] | None


def plain_run(scenario: Scenario) -> list[PlainCall]:
    """The scenario with no hooks, no probing: what PyTorch alone says."""
    env = build_forward(scenario)
    leaves = leaf_names(env, scenario)
    out = []
    for index, call in enumerate(scenario.calls):
        loss = evaluate(env, call.loss, f"calls[{index}].loss")
        result, error = plain_call(env, call, loss)
        grads = {n: None if env[n].grad is None else env[n].grad.detach().clone() for n in leaves}
        out.append(PlainCall(error, grads, None if result is None else tuple(result)))
        if error is not None:
            break
    return out


def children(fn: Any) -> list[Any]:
    """Distinct ``next_functions`` in order (a node used twice is one edge)."""
    out: list[Any] = []
    for child, _ in fn.next_functions:
        if child is not None and all(child is not c for c in out):
            out.append(child)
    return out


def walk(roots: Iterable[Any]) -> Iterator[Any]:
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        yield fn
        stack.extend(children(fn))


def raw_tensors(fn: Any, slot: str) -> list[torch.Tensor]:
    """The tensors a slot holds, read without the version check; [] once freed."""
    raw = getattr(fn, "_raw_saved_" + slot)
    raws = raw if isinstance(raw, (list, tuple)) else [raw]
    return [t for t in (r.data for r in raws) if isinstance(t, torch.Tensor)]


def probe(fn: Any, slot: str, ran: bool) -> str | None:
    """Independent probe: None for a slot that holds no tensor."""
    try:
        value = getattr(fn, "_saved_" + slot)
    except RuntimeError as exc:
        return "modified" if "modified by an inplace operation" in str(exc) else "freed"
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or not all(isinstance(v, torch.Tensor) for v in values):
        return None
    return "retained" if ran else "alive"


def slot_names(fn: Any) -> list[str]:
    return [a.removeprefix("_saved_") for a in dir(fn) if a.startswith("_saved_")]


@dataclass
class Snapshot:
    states: SlotStates
    saved_bytes: int
    grads: dict[str, torch.Tensor | None]


@dataclass
class ProbedCall:
    order: list[int]  # discovery positions, in the order the pre-hooks fired
    snapshots: list[Snapshot]  # [before anything ran, after node 1, ..., after the last]
    error: str | None
    root: int | None


@dataclass
class ProbedRun:
    fns: list[Any] = field(default_factory=list)
    calls: list[ProbedCall] = field(default_factory=list)
    ran: set[int] = field(default_factory=set)
    leaves: dict[str, torch.Tensor] = field(default_factory=dict)
    forward: Snapshot | None = None  # right after the forward code ran

    def add(self, roots: Iterable[Any]) -> None:
        for fn in walk(roots):
            if all(fn is not f for f in self.fns):
                self.fns.append(fn)

    def position(self, fn: Any) -> int:
        return next(i for i, f in enumerate(self.fns) if f is fn)

    def snapshot(self) -> Snapshot:
        states: SlotStates = {}
        storages: dict[tuple[str, int], int] = {}
        for i, fn in enumerate(self.fns):
            for slot in slot_names(fn):
                state = probe(fn, slot, i in self.ran)
                if state is None:
                    continue
                states[(i, slot)] = state
                if state != "freed":
                    for t in raw_tensors(fn, slot):
                        s = t.untyped_storage()
                        storages[(str(t.device), s.data_ptr() or id(s))] = s.nbytes()
        grads = {n: None if t.grad is None else t.grad.detach().clone() for n, t in self.leaves.items()}
        return Snapshot(states, sum(storages.values()), grads)


def probed_run(scenario: Scenario) -> ProbedRun:
    """The scenario with pre-hooks of our own that probe every slot of every node."""
    env = build_forward(scenario)
    run = ProbedRun(leaves={n: env[n] for n in leaf_names(env, scenario)})
    run.add(v.grad_fn for v in env.values() if isinstance(v, torch.Tensor))
    run.forward = run.snapshot()
    for index, call in enumerate(scenario.calls):
        loss = evaluate(env, call.loss, f"calls[{index}].loss")
        run.add([loss.grad_fn])
        probed = probe_call(run, env, call, loss)
        run.calls.append(probed)
        if probed.error is not None:
            break
    return run


def probe_call(run: ProbedRun, env: dict[str, Any], call: Call, loss: torch.Tensor) -> ProbedCall:
    order: list[int] = []
    snaps: list[Snapshot] = []

    def hook(position: int) -> Callable[[Any], None]:
        def pre(grad_outputs: Any) -> None:
            if order:
                run.ran.add(order[-1])  # the node before has finished: this one starts
            snaps.append(run.snapshot())
            order.append(position)

        return pre

    handles = [fn.register_prehook(hook(i)) for i, fn in enumerate(run.fns)]
    try:
        _, error = plain_call(env, call, loss)
    finally:
        for h in handles:
            h.remove()
    if order and error is None:
        run.ran.add(order[-1])
    snaps.append(run.snapshot())
    root = None if loss.grad_fn is None else run.position(loss.grad_fn)
    return ProbedCall(order, snaps, error, root)


def match_nodes(rec: Recording, run: ProbedRun) -> dict[int, str]:
    """Our discovery positions -> recorder ids, by walking both graphs from each root."""
    edges: dict[str, list[str]] = {}
    for e in rec.graph.edges:
        edges.setdefault(e.src, []).append(e.dst)
    mapping: dict[int, str] = {}
    for info, call in zip(rec.calls, run.calls, strict=False):
        steps = [rec.timeline[i] for i in range(info.first_step, info.last_step + 1)]
        first = next((s.node for s in steps if s.node is not None), None)
        if call.root is None or first is None:
            continue
        stack = [(call.root, first)]
        while stack:
            mine, theirs = stack.pop()
            if mine in mapping:
                assert mapping[mine] == theirs
                continue
            assert type(run.fns[mine]).__name__ == rec.graph.node(theirs).name
            mapping[mine] = theirs
            kids = [run.position(c) for c in children(run.fns[mine])]
            assert len(kids) == len(edges.get(theirs, [])), f"edges of {theirs}"
            stack.extend(zip(kids, edges.get(theirs, []), strict=True))
    return mapping


def translated(states: SlotStates, mapping: dict[int, str]) -> dict[tuple[str, str], str]:
    return {(mapping[i], slot): s for (i, slot), s in states.items() if i in mapping}


def restricted(states: Any, ids: Iterable[str]) -> dict[tuple[str, str], str]:
    keep = set(ids)
    return {k: v for k, v in states.items() if k[0] in keep}


def same(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0))


# -- checks shared by the built-ins and the random chains ------------------------


def check_against_plain(rec: Recording, scenario: Scenario) -> None:
    """Grads at each call's end, errors and their texts, grad results."""
    plain = plain_run(scenario)
    assert len(rec.calls) == len(plain), "the recording stops exactly where plain torch raised"
    assert set(rec.leaves) <= set(plain[0].grads)
    for info, expected in zip(rec.calls, plain, strict=True):
        assert info.error == expected.error
        got = rec.grads_at_end(info.index)
        for name, grad in expected.grads.items():
            if name in rec.leaves:
                assert same(got[name], grad), f"{name}.grad after call {info.index}"
            else:  # a leaf outside the graph: no call can reach it
                assert grad is None
        last = rec.timeline[info.last_step]
        assert last.kind == ("error" if expected.error else "call_end")
        assert last.error == expected.error
        if expected.result is not None:
            assert last.result is not None
            assert all(same(v, r) for v, r in zip(last.result.values(), expected.result, strict=True))


def check_against_probes(rec: Recording, scenario: Scenario) -> None:
    """Engine order, slot states and saved bytes at every step."""
    run = probed_run(scenario)
    mapping = match_nodes(rec, run)
    assert len(run.calls) == len(rec.calls)
    assert run.forward is not None and rec.timeline[0].kind == "forward"
    _check_step(rec, 0, run.forward, mapping)
    for info, call in zip(rec.calls, run.calls, strict=True):
        steps = [rec.timeline[i] for i in range(info.first_step, info.last_step + 1)]
        node_steps = [s for s in steps if s.kind == "node"]
        engine = [mapping[p] for p in call.order]
        ran = engine[:-1] if call.error else engine
        assert [s.node for s in node_steps] == ran, f"engine order of call {info.index}"
        if call.error and engine:
            assert steps[-1].node == engine[-1] == info.failed_node
        # snapshots[k] is the state after k nodes of this call ran
        for k, step in enumerate(node_steps, start=1):
            _check_step(rec, step.index, call.snapshots[k], mapping)
        _check_step(rec, steps[-1].index, call.snapshots[-1], mapping)


def _check_step(rec: Recording, index: int, snap: Snapshot, mapping: dict[int, str]) -> None:
    state = rec.timeline.state(index)
    expected = translated(snap.states, mapping)
    assert restricted(state.slots, mapping.values()) == expected, f"slot states at step {index}"
    unmatched = {k: v for k, v in state.slots.items() if k[0] not in mapping.values()}
    assert set(unmatched.values()) <= {"alive", "modified"}, "no call reached these nodes"
    assert {k[0] for k in expected} <= state.visible_nodes
    assert state.step.saved_bytes == snap.saved_bytes, f"saved bytes at step {index}"
    for name, grad in state.grads.items():
        assert same(grad, snap.grads[name]), f"{name}.grad at step {index}"


BUILTINS = builtin_names()


@pytest.fixture(scope="module", params=BUILTINS)
def builtin(request: pytest.FixtureRequest) -> tuple[Scenario, Recording]:
    scenario = load_builtin(request.param)
    return scenario, record(scenario)


def test_every_builtin_is_covered() -> None:
    assert len(BUILTINS) >= 8
    assert {"two-losses", "forgot-retain", "no-saved-values", "square-needs-saved"} <= set(BUILTINS)
    assert {"higher-derivative", "summed-loss", "separate-forwards"} <= set(BUILTINS)


def test_builtin_grads_and_errors_match_plain_torch(builtin: tuple[Scenario, Recording]) -> None:
    scenario, rec = builtin
    check_against_plain(rec, scenario)


def test_builtin_states_order_and_bytes_match_probing(builtin: tuple[Scenario, Recording]) -> None:
    scenario, rec = builtin
    check_against_probes(rec, scenario)


def test_recording_twice_gives_the_same_timeline(builtin: tuple[Scenario, Recording]) -> None:
    scenario, rec = builtin
    again = record(scenario)
    assert [(s.kind, s.node, dict(s.slot_changes), s.saved_bytes) for s in again.timeline.steps] == [
        (s.kind, s.node, dict(s.slot_changes), s.saved_bytes) for s in rec.timeline.steps
    ]


def test_contribution_is_this_calls_share(builtin: tuple[Scenario, Recording]) -> None:
    _, rec = builtin
    previous: dict[str, torch.Tensor | None] = dict(rec.timeline.state(0).grads)
    for info in rec.calls:
        end = rec.grads_at_end(info.index)
        step = rec.timeline[info.last_step]
        if step.kind == "call_end" and info.call.kind == "backward":
            assert step.contribution is not None
            for name, share in step.contribution.items():
                before = previous[name]
                after = end[name]
                assert after is not None and share is not None
                assert torch.equal(share, after if before is None else after - before)
        previous = dict(end)


@pytest.mark.parametrize("last_retains", [True, False])
def test_hooks_are_removed_even_when_a_call_fails(last_retains: bool) -> None:
    """After recording, running backward through the recorded graph adds no step."""
    calls = backward("y.sum()", last_retains) + backward("y.sum()")
    recorder = _Recorder(scenario_of("y = x.exp()\nz = x + 1", calls), torch.device("cpu"), Limits())
    rec = recorder.run()
    assert (rec.calls[-1].error is None) == last_retains
    count = len(recorder.steps)
    recorder.env["z"].sum().backward()  # AddBackward0 and AccumulateGrad were hooked during the calls
    assert len(recorder.steps) == count
    assert torch.equal(recorder.env["x"].grad, rec.grads_at_end(len(rec.calls) - 1)["x"] + 1)


# -- slot-state semantics ------------------------------------------------------


def scenario_of(
    forward: str, calls: str, inputs: str = 'x = "torch.tensor([1., 2.], requires_grad=True)"'
) -> Scenario:
    head = 'name = "t"\ntitle = "t"\nsummary = "t"\n'
    return parse_scenario(f'{head}[inputs]\n{inputs}\n[forward]\ncode = """\n{forward}\n"""\n{calls}')


def backward(loss: str, retain: bool | None = None) -> str:
    flag = "" if retain is None else f"\nretain_graph = {'true' if retain else 'false'}"
    return f'[[calls]]\nkind = "backward"\nloss = "{loss}"{flag}\n'


def node_named(rec: Recording, name: str) -> str:
    return next(n.id for n in rec.graph.nodes if n.name == name)


def test_alive_until_the_node_runs_then_retained_then_freed() -> None:
    rec = record(scenario_of("y = x.exp()", backward("y.sum()", True) + backward("y.sum()")))
    exp = node_named(rec, "ExpBackward0")
    states = [rec.timeline.state(i).slots[(exp, "result")] for i in range(len(rec.timeline))]
    ran_1 = next(s.index for s in rec.timeline.steps if s.node == exp and s.call == 0)
    ran_2 = next(s.index for s in rec.timeline.steps if s.node == exp and s.call == 1)
    assert set(states[:ran_1]) == {"alive"}
    assert set(states[ran_1:ran_2]) == {"retained"}
    assert set(states[ran_2:]) == {"freed"}
    assert rec.freed_by[(exp, "result")] == 1


def test_unreached_node_stays_alive() -> None:
    """Only what a call walks is freed: a branch it never reaches keeps its buffers."""
    rec = record(scenario_of("a = x.exp()\nb = x.sin()", backward("a.sum()")))
    sin = node_named(rec, "SinBackward0")
    exp = node_named(rec, "ExpBackward0")
    end = rec.timeline.state(len(rec.timeline) - 1)
    assert end.slots[(sin, "self")] == "alive"
    assert end.slots[(exp, "result")] == "freed"
    check_against_probes(rec, scenario_of("a = x.exp()\nb = x.sin()", backward("a.sum()")))


def test_inplace_change_of_a_saved_result_is_modified_and_fails() -> None:
    scenario = scenario_of("y = x.exp()\ny.add_(1)", backward("y.sum()"))
    rec = record(scenario)
    exp = node_named(rec, "ExpBackward0")
    assert rec.timeline.state(0).slots[(exp, "result")] == "modified"
    plain = plain_run(scenario)
    assert plain[0].error is not None and "modified by an inplace operation" in plain[0].error
    assert rec.calls[0].error == plain[0].error
    last = rec.timeline[rec.calls[0].last_step]
    assert last.kind == "error" and last.error == plain[0].error
    assert rec.calls[0].failed_node == exp
    check_against_probes(rec, scenario)


def test_modified_slot_still_counts_its_bytes() -> None:
    scenario = scenario_of("y = x.exp()\ny.add_(1)", backward("y.sum()"))
    rec = record(scenario)
    env = build_forward(scenario)
    assert rec.timeline[0].saved_bytes == env["y"].untyped_storage().nbytes()


def test_inplace_on_an_input_saved_by_mul() -> None:
    scenario = scenario_of("w = x * 1\ny = w * w\nw.mul_(2)", backward("y.sum()"))
    rec = record(scenario)
    check_against_plain(rec, scenario)
    check_against_probes(rec, scenario)
    assert rec.calls[0].error is not None
    assert rec.graph.node(rec.calls[0].failed_node or "").name == "MulBackward0"


def test_error_before_any_node_runs() -> None:
    """A loss that does not require grad: PyTorch refuses the call itself."""
    scenario = scenario_of("y = x.detach() * 2", backward("y.sum()"))
    rec = record(scenario)
    check_against_plain(rec, scenario)
    assert rec.calls[0].failed_node is None


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
    assert rec.timeline[0].saved_bytes == slots["self"].nbytes == 16


# -- the oracle itself can fail ------------------------------------------------


def corrupted(rec: Recording, index: int, **changes: Any) -> Recording:
    steps = list(rec.timeline.steps)
    steps[index] = dataclasses.replace(steps[index], **changes)
    return dataclasses.replace(rec, timeline=Timeline(tuple(steps)))


def test_oracle_catches_a_wrong_slot_state() -> None:
    scenario = load_builtin("two-losses")
    rec = record(scenario)
    pow_id = node_named(rec, "PowBackward0")
    step = next(s for s in rec.timeline.steps if s.node == pow_id and s.call == 0)
    bad = corrupted(rec, step.index, slot_changes={(pow_id, "self"): "freed"})
    with pytest.raises(AssertionError, match="slot states"):
        check_against_probes(bad, scenario)


def test_oracle_catches_wrong_bytes_and_order() -> None:
    scenario = load_builtin("two-losses")
    rec = record(scenario)
    with pytest.raises(AssertionError, match="saved bytes"):
        check_against_probes(corrupted(rec, 2, saved_bytes=rec.timeline[2].saved_bytes + 4), scenario)
    first, second = rec.timeline[1], rec.timeline[2]
    swapped = corrupted(corrupted(rec, 1, node=second.node), 2, node=first.node)
    with pytest.raises(AssertionError):
        check_against_probes(swapped, scenario)


def test_oracle_catches_a_wrong_grad_or_error_text() -> None:
    scenario = load_builtin("forgot-retain")
    rec = record(scenario)
    end = rec.calls[0].last_step
    with pytest.raises(AssertionError, match=r"x\.grad"):
        check_against_plain(corrupted(rec, end, grad_changes={"x": torch.tensor([2.0, 4.5])}), scenario)
    failing = rec.calls[1].last_step
    bad = corrupted(rec, failing, error="something else")
    bad = dataclasses.replace(bad, calls=(bad.calls[0], dataclasses.replace(bad.calls[1], error="x")))
    with pytest.raises(AssertionError):
        check_against_plain(bad, scenario)


def test_inplace_change_in_a_later_loss_is_seen_before_the_call_runs() -> None:
    """A loss expression may change a saved tensor in place: the state must follow at once."""
    scenario = scenario_of("y = x.exp()", backward("y.sum()", True) + backward("y.mul_(2).sum()"))
    rec = record(scenario)
    check_against_plain(rec, scenario)
    check_against_probes(rec, scenario)
    exp = node_named(rec, "ExpBackward0")
    first = rec.calls[1].first_step
    assert rec.timeline.state(first).slots[(exp, "result")] == "modified"
    assert "changed in place" in rec.timeline[rec.calls[1].last_step].caption


def test_create_graph_backward_replaces_grad_and_each_change_is_recorded() -> None:
    """With create_graph, AccumulateGrad replaces .grad out of place at every call."""
    calls = "".join('[[calls]]\nkind = "backward"\nloss = "y.sum()"\ncreate_graph = true\n' for _ in range(3))
    scenario = scenario_of("y = x.pow(3)", calls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: create_graph makes a reference cycle
        rec = record(scenario)
        check_against_plain(rec, scenario)
        check_against_probes(rec, scenario)
    changes = [s for s in rec.timeline.steps if "x" in s.grad_changes]
    assert len(changes) == 1 + len(rec.calls)


@pytest.mark.parametrize("only", ["w", "v"])
def test_backward_with_inputs_runs_only_what_it_needs(only: str) -> None:
    scenario = load_builtin("weight-and-input").with_call(0, inputs=(only,))
    rec = record(scenario)
    check_against_plain(rec, scenario)
    check_against_probes(rec, scenario)
    other = "v" if only == "w" else "w"
    assert rec.grads_at_end(0)[other] is None and rec.grads_at_end(0)[only] is not None


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


def test_recording_is_pure_data(builtin: tuple[Scenario, Recording]) -> None:
    """No graph node, no live tensor: only detached CPU copies."""
    _, rec = builtin
    items = list(_contents(rec, set()))
    assert not [v for v in items if hasattr(v, "next_functions")]
    tensors = [v for v in items if isinstance(v, torch.Tensor)]
    assert tensors, "grads are stored as tensors"
    assert all(not t.requires_grad and t.grad_fn is None and t.device.type == "cpu" for t in tensors)


def test_one_element_budget_covers_the_whole_recording():
    """Inputs, forward code and losses draw on one budget, not one budget each."""
    from app.core import Limits, ScenarioError, record
    from app.core.loading import parse_scenario

    text = """
name = "budget"
title = "t"
summary = "s"
[inputs]
a = "torch.ones(100, requires_grad=True)"
b = "torch.ones(100, requires_grad=True)"
c = "torch.ones(100, requires_grad=True)"
[forward]
code = "y = a * b"
[[calls]]
loss = "y.sum()"
"""
    scenario = parse_scenario(text)
    record(scenario, limits=Limits(max_elements=100, max_total_elements=10_000))
    with pytest.raises(ScenarioError) as caught:
        record(scenario, limits=Limits(max_elements=100, max_total_elements=250))
    assert caught.value.field == "inputs.c"


def test_released_slots_are_seen_without_raising_and_agree_with_pytorchs_error() -> None:
    """probe_slot reads a released slot from its raw saved tensor; PyTorch's own refusal agrees."""
    from app.core.recording.recorder import _released, probe_slot

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = torch.stack([x, y]).sum()  # StackBackward0 saves no tensors; ExpBackward0 saves its result
    fn = y.grad_fn
    assert not _released(fn, "result") and probe_slot(fn, "result", has_run=False) == "alive"
    z.backward(retain_graph=True)
    assert not _released(fn, "result") and probe_slot(fn, "result", has_run=True) == "retained"
    y.sum().backward()
    assert _released(fn, "result") and probe_slot(fn, "result", has_run=True) == "freed"
    with pytest.raises(RuntimeError, match="freed"):
        _ = fn._saved_result
