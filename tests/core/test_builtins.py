"""What each built-in scenario is there to show, checked against PyTorch.

The general agreement (every grad, error text, state, byte) is in
``test_recorder.py``; here each of the first eight built-ins' own lesson is
stated explicitly, with expected values computed by torch from the program's
input (the programs of the newer built-ins are in ``test_builtin_programs.py``).
"""

from __future__ import annotations

import re

import pytest
import torch

from app.core import Recording, builtin_names, load_builtin, record
from tests.support.oracle import as_tensor, leaf_values, run_plainly, same


def recorded(name: str) -> Recording:
    return record(load_builtin(name))


def input_x(name: str) -> torch.Tensor:
    return leaf_values(load_builtin(name).code, "x")


def node_named(rec: Recording, name: str) -> str:
    return next(n.id for n in rec.graph.nodes if n.name == name)


def grad_at_end(rec: Recording, call: int, leaf: str) -> torch.Tensor | None:
    return as_tensor(rec.grads_at_end(call).get(leaf))


def states_of(rec: Recording, node: str, slot: str) -> list[str]:
    return [rec.timeline.state(i).slots[(node, slot)] for i in range(len(rec.timeline))]


@pytest.mark.parametrize("name", ["two-losses", "summed-loss", "separate-forwards"])
def test_shared_square_gives_8x(name: str) -> None:
    rec = recorded(name)
    assert rec.failed is None
    final = grad_at_end(rec, len(rec.calls) - 1, "x")
    assert final is not None
    assert torch.equal(final, 8 * input_x(name))
    assert same(final, run_plainly(rec.program.code).calls[-1].grads["x"])


def test_two_losses_keeps_then_frees_the_saved_x() -> None:
    rec = recorded("two-losses")
    pow_id = node_named(rec, "PowBackward0")
    first = grad_at_end(rec, 0, "x")
    assert first is not None and torch.equal(first, 2 * input_x("two-losses"))
    assert rec.timeline.state(rec.calls[0].last_step).slots[(pow_id, "self")] == "retained"
    assert rec.timeline.state(rec.calls[1].last_step).slots[(pow_id, "self")] == "freed"
    assert rec.freed_by[(pow_id, "self")] == 1
    assert rec.needed_by[pow_id] == (0, 1)


@pytest.mark.parametrize(
    ("name", "node"), [("forgot-retain", "PowBackward0"), ("square-needs-saved", "MulBackward0")]
)
def test_without_retention_the_second_call_fails(name: str, node: str) -> None:
    rec = recorded(name)
    plain = run_plainly(rec.program.code).calls
    assert [c.error is None for c in plain] == [True, False]
    assert len(rec.calls) == 2
    assert rec.calls[0].error is None
    assert rec.calls[1].error == plain[1].error
    assert rec.graph.node(rec.calls[1].failed_node or "").name == plain[1].failed_node
    assert rec.failed is rec.calls[1]
    assert rec.graph.node(rec.calls[1].failed_node or "").name == node
    failing = rec.timeline[rec.calls[1].last_step]
    assert failing.kind == "error" and failing.node == rec.calls[1].failed_node
    assert all(rec.freed_by[(failing.node, s.name)] == 0 for s in rec.graph.node(failing.node).tensor_slots)


def test_forgot_retain_error_is_pytorchs_own_text() -> None:
    x = input_x("forgot-retain").requires_grad_()
    y = x.square()
    y.sum().backward()
    with pytest.raises(RuntimeError) as exc:
        (y * 3).sum().backward()
    assert recorded("forgot-retain").calls[1].error == str(exc.value)


def test_no_saved_values_succeeds_twice_and_frees_nothing_it_needs() -> None:
    rec = recorded("no-saved-values")
    assert [c.error for c in rec.calls] == [None, None]
    x = input_x("no-saved-values")
    assert torch.equal(grad_at_end(rec, 1, "x"), torch.full_like(x, 4.0))  # type: ignore[arg-type]
    add = node_named(rec, "AddBackward0")
    assert rec.graph.node(add).tensor_slots == ()
    # y = x + 2 saves nothing: only the second loss's y * 3 keeps its 3 until it runs
    assert all(step.saved_bytes == 0 for step in rec.timeline.steps if step.call in (None, 0))


def test_higher_derivative_returns_6x_and_leaves_x_grad_alone() -> None:
    rec = recorded("higher-derivative")
    x = input_x("higher-derivative")
    first, second = (rec.timeline[c.last_step].result for c in rec.calls)
    assert first is not None and second is not None
    assert torch.equal(as_tensor(first["result"]), 3 * x**2)  # type: ignore[arg-type]
    assert torch.equal(as_tensor(second["result"]), 6 * x)  # type: ignore[arg-type]
    assert rec.grads_at_end(1).get("x") is None
    # create_graph made a gradient graph on the line of the first call, which the second walks
    grad_line = rec.calls[0].call.line
    made = [n for n in rec.graph.nodes if n.line == grad_line]
    assert {n.name for n in made} >= {"MulBackward0", "PowBackward0"}
    assert all(rec.needed_by[n.id] == (1,) for n in made)
    assert any(n.label and n.label.startswith("g = torch.autograd.grad(") for n in made)
    assert [n.name for n in rec.graph.nodes if n.added_at_call == 1] == ["SumBackward0"]  # g.sum()


def test_summed_loss_needs_no_retention() -> None:
    rec = recorded("summed-loss")
    assert len(rec.calls) == 1 and rec.calls[0].call.retain_graph is None
    pow_id = node_named(rec, "PowBackward0")
    assert states_of(rec, pow_id, "self")[-1] == "freed"
    assert rec.timeline[-1].saved_bytes == 0


def test_separate_forwards_has_two_squares_each_freed_by_its_own_call() -> None:
    rec = recorded("separate-forwards")
    squares = [n.id for n in rec.graph.nodes if n.name == "PowBackward0"]
    assert len(squares) == 2
    assert sorted(rec.freed_by[(n, "self")] for n in squares) == [0, 1]
    assert {rec.needed_by[n] for n in squares} == {(0,), (1,)}


def test_weight_and_input_fills_both_grads() -> None:
    rec = recorded("weight-and-input")
    plain = run_plainly(rec.program.code).calls
    assert set(rec.leaves) == {"w", "v"}
    for call in (0, 1):
        for leaf in ("w", "v"):
            got, want = grad_at_end(rec, call, leaf), plain[call].grads[leaf]
            assert got is not None and want is not None and torch.equal(got, want)


# -- captions ----------------------------------------------------------------


NODE_NAME = re.compile(r"\b(?:[A-Z]\w*Backward\w*|AccumulateGrad)\b")  # a name, not a new sentence


@pytest.mark.parametrize("name", builtin_names())
def test_every_caption_is_one_sentence_that_matches_the_step(name: str) -> None:
    rec = recorded(name)
    for step in rec.timeline.steps:
        text = step.caption
        assert text.endswith(".") and text[0].isupper(), text
        words = NODE_NAME.sub("node", text.replace("PyTorch", "pytorch"))
        assert not re.search(r"[.;:]\s+[A-Z][a-z]", words), text
        if step.kind == "node":
            assert step.node is not None
            node = rec.graph.node(step.node)
            assert text.startswith(node.name)
            changed = {s for (n, _), s in step.slot_changes.items() if n == step.node}
            now = {s for (n, _), s in rec.timeline.state(step.index).slots.items() if n == step.node}
            assert ("released" in text) == ("freed" in changed), text
            assert ("kept its saved" in text) == ("retained" in now), text
        if step.kind == "error":
            assert "failed" in text


def test_captions_name_what_a_later_call_needs() -> None:
    rec = recorded("forgot-retain")
    pow_id = node_named(rec, "PowBackward0")
    ran = next(s for s in rec.timeline.steps if s.node == pow_id and s.kind == "node")
    assert ran.caption == (
        "PowBackward0 (y = x.square()) ran and released its saved self; the second backward will need it."
    )
    error = rec.timeline[-1].caption
    assert "its saved self was freed by the first backward" in error
    kept = recorded("two-losses")
    kept_pow = node_named(kept, "PowBackward0")
    step = next(s for s in kept.timeline.steps if s.node == kept_pow and s.call == 0)
    assert "kept its saved self (retain_graph=True), so the second backward can reuse it" in step.caption


def test_a_call_into_many_leaves_counts_them_and_names_three_by_shape() -> None:
    from app import lens

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(4)])
    with lens.record(model) as rec:
        model(torch.randn(2, 3)).sum().backward()
        leaves = sum(p.grad is not None for p in model.parameters())
        model.zero_grad()  # sets each of them to None
    end = next(s for s in rec.recording.timeline.steps if s.kind == "call_end")
    added = list(end.contribution or {})
    assert len(added) == leaves
    assert f"adding to the .grad of {leaves} leaves ({added[0]}: 3×3, {added[1]}: 3 values" in end.caption
    assert f"{added[2]}: " in end.caption and f"{added[3]}: " not in end.caption and ", …)" in end.caption
    zeroed = rec.recording.timeline[-1]
    assert zeroed.caption.count(".grad") == 3 and f"and {leaves - 3} more." in zeroed.caption


def test_a_call_end_counts_only_the_leaves_the_call_reached() -> None:
    """The GAN with fake.detach(): D's backward reaches D's four parameters, not G's, and its
    caption counts four (by shape, not a page of values); PyTorch leaves G's .grad None."""
    rec = recorded("gan-detach")
    first = rec.calls[0]
    plain = run_plainly(rec.program.code).calls[0].grads
    reached = [leaf for leaf, grad in plain.items() if grad is not None]
    assert 0 < len(reached) < len(plain)
    caption = rec.timeline[first.last_step].caption
    assert f"adding to the .grad of {len(reached)} leaves" in caption
    assert not any(f"{leaf}:" in caption for leaf in plain if leaf not in reached)
    assert "None" not in caption and "[" not in caption


def test_a_call_end_leaves_out_a_leaf_whose_grad_it_did_not_touch() -> None:
    """w holds the first call's gradient; the second call never reaches it, and PyTorch leaves
    w.grad as it was: the caption names x alone (a share of zeros is no share)."""
    from app.core.model.program import Program

    code = (
        "import torch\n\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "w = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "(x * w).sum().backward()\n(x * 2).sum().backward()\n"
    )
    rec = record(Program(code))
    plain = run_plainly(code).calls
    assert same(plain[0].grads["w"], plain[1].grads["w"])  # the second call left w.grad alone
    caption = rec.timeline[rec.calls[1].last_step].caption
    assert "to x.grad" in caption and "w.grad" not in caption


def test_an_ordinary_training_step_is_not_warned_about() -> None:
    """opt.step() writes the weights the iteration's freed graph saved, but no later call walks
    that graph: no caption says a second backward would fail."""
    from app.core.model.program import Program

    code = (
        "import torch\nimport torch.optim as optim\n\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "opt = optim.SGD([w], lr=0.1)\nfor i in range(2):\n    opt.zero_grad()\n"
        "    loss = (w * w).sum()\n    loss.backward()\n    opt.step()\n"
    )
    rec = record(Program(code))
    assert rec.failed is None
    assert any(s.version_changes for s in rec.timeline.steps if s.line == 10)  # the write is recorded
    assert not any("second backward through it would fail" in s.caption for s in rec.timeline.steps)
