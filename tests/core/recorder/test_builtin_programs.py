"""What each built-in program is there to show, checked against PyTorch.

The general agreement (every grad, error text, state, byte) is in
``test_recorder.py``; here each of the first eight built-ins' own lesson is
stated explicitly, with expected values computed by torch from the program's
input (the programs of the newer built-ins are in ``test_builtin_programs.py``).

The built-in programs, run plainly by PyTorch (the oracle) and recorded.

Each built-in program shows one way people trip over autograd's retention
rules, and has a twin that shows the same code fixed (or, for ``.data``
against ``.detach()``, the other way of writing the same mistake). Here the
tests ``exec`` the program text as trusted code, with ``backward`` and
``torch.autograd.grad`` logged, and check the outcome each file's summary
claims. The app never executes a program; its recording is compared with the
plain run call by call at the end of this file.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from unittest import mock

import pytest
import tomllib
import torch

from app.core import Recording, builtin_names, load_builtin, record
from app.core.resources import resource_path
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


FREED = "backward through the graph a second time"
VERSION = "modified by an inplace operation"


class Outcome(NamedTuple):
    """What plain PyTorch does with a built-in: its calls, and which one fails, where, with what."""

    kinds: tuple[str, ...]
    failed: int | None = None
    error: str | None = None  # FREED or VERSION
    node: str | None = None  # the node the failing call stopped at


OUTCOMES: dict[str, Outcome] = {
    "rnn-no-detach": Outcome(("backward",) * 2, 1, FREED, "TanhBackward0"),
    "rnn-detach": Outcome(("backward",) * 3),
    "retain-bandaid": Outcome(("backward",) * 3, 2, VERSION, "AddmmBackward0"),
    "retain-fixed": Outcome(("backward",) * 3),
    "gan-no-detach": Outcome(("backward",) * 2, 1, FREED, "AddmmBackward0"),
    "gan-detach": Outcome(("backward",) * 4),
    "logged-loss": Outcome(("backward",) * 3),
    "logged-item": Outcome(("backward",) * 3),
    "computed-once": Outcome(("backward",) * 2, 1, FREED, "ExpBackward0"),
    "computed-inside": Outcome(("backward",) * 3),
    "inplace-sigmoid": Outcome(("backward",), 0, VERSION, "SigmoidBackward0"),
    "inplace-clone": Outcome(("backward",)),
    "data-hides": Outcome(("backward",)),
    "detach-raises": Outcome(("backward",), 0, VERSION, "SigmoidBackward0"),
    "gradient-penalty": Outcome(("grad", "backward")),
    "penalty-no-graph": Outcome(("grad", "backward")),
    "accumulate-no-zero": Outcome(("backward",) * 2),
    "accumulate-zero-grad": Outcome(("backward",) * 2),
}
PROGRAMS = sorted(OUTCOMES)
FIELDS = {"title", "summary", "notes", "twin", "program"}
IMPORTS = {"torch", "torch.nn", "torch.nn.functional", "torch.optim"}
REFUSED_NODES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.While,
    ast.Try,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.Dict,
    ast.Global,
    ast.Nonlocal,
    ast.ImportFrom,
)


def program_file(name: str) -> dict[str, Any]:
    with resource_path("programs", f"{name}.toml").open("rb") as handle:
        return tomllib.load(handle)


def code_of(name: str) -> str:
    return str(program_file(name)["program"]["code"])


# -- the plain run ----------------------------------------------------------------------


@dataclass
class PlainCall:
    """One ``backward``/``autograd.grad`` call of a plain run, and the ``.grad`` of every leaf after it."""

    kind: str
    keywords: dict[str, Any]
    error: str | None = None
    grads: dict[str, torch.Tensor | None] = field(default_factory=dict)
    entered: list[str] = field(default_factory=list)  # node names in the order the engine ran them

    @property
    def failed_node(self) -> str | None:
        return self.entered[-1] if self.error is not None and self.entered else None


@dataclass
class PlainRun:
    calls: list[PlainCall]
    error: Exception | None  # the exception that ended the program, as Python would
    names: dict[str, Any]  # the program's names when it ended
    printed: str

    @property
    def failed(self) -> int | None:
        return next((i for i, call in enumerate(self.calls) if call.error is not None), None)


def leaf_grads(names: dict[str, Any]) -> dict[str, torch.Tensor | None]:
    """``.grad`` of the leaves the program names, module parameters as ``model.0.weight``."""
    leaves: dict[str, torch.Tensor] = {}
    for name, value in names.items():
        if isinstance(value, torch.nn.Module):
            leaves.update((f"{name}.{path}", p) for path, p in value.named_parameters())
        elif isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
            leaves[name] = value
    return {name: None if t.grad is None else t.grad.detach().clone() for name, t in leaves.items()}


@contextlib.contextmanager
def logged_autograd(calls: list[PlainCall], names: dict[str, Any]) -> Iterator[None]:
    """Log every top-level autograd call (``Tensor.backward`` goes on to ``autograd.backward``)."""
    depth = 0

    def logged(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal depth
            if depth:
                return real(*args, **kwargs)
            entry = PlainCall(kind, dict(kwargs))
            calls.append(entry)
            watch_nodes(args[0] if args else kwargs.get("outputs", kwargs.get("tensors")), entry.entered)
            depth += 1
            try:
                return real(*args, **kwargs)
            except Exception as exc:
                entry.error = str(exc)
                raise
            finally:
                depth -= 1
                entry.grads = leaf_grads(names)

        return call

    with (
        mock.patch.object(torch.Tensor, "backward", logged("backward", torch.Tensor.backward)),
        mock.patch.object(torch.autograd, "backward", logged("backward", torch.autograd.backward)),
        mock.patch.object(torch.autograd, "grad", logged("grad", torch.autograd.grad)),
    ):
        yield


def watch_nodes(roots: Any, entered: list[str]) -> None:
    """Note each node reachable from ``roots`` as the engine enters it (a pre-hook changes nothing)."""
    roots = [roots] if isinstance(roots, torch.Tensor) else list(roots)
    for fn in graph_nodes([root.grad_fn for root in roots]):
        fn.register_prehook(note_entry(type(fn).__name__, entered))


def note_entry(name: str, entered: list[str]) -> Callable[[Any], None]:
    def hook(grad_outputs: Any) -> None:
        entered.append(name)

    return hook


def graph_nodes(roots: list[Any]) -> list[Any]:
    seen: dict[Any, None] = {}
    stack = list(roots)
    while stack:
        fn = stack.pop()
        if fn is not None and fn not in seen:
            seen[fn] = None
            stack.extend(next_fn for next_fn, _ in fn.next_functions)
    return list(seen)


def run_builtin_plainly(code: str) -> PlainRun:
    """Execute trusted program text under seed 0, as the recorder runs it, logging autograd calls."""
    names: dict[str, Any] = {}
    calls: list[PlainCall] = []
    printed = io.StringIO()
    error: Exception | None = None
    with torch.random.fork_rng(), logged_autograd(calls, names), contextlib.redirect_stdout(printed):
        torch.manual_seed(0)
        try:
            exec(compile(code, "<program>", "exec"), names)
        except Exception as exc:
            error = exc
    names.pop("__builtins__", None)
    return PlainRun(calls, error, names, printed.getvalue())


def error_kind(text: str | None) -> str | None:
    if text is None:
        return None
    return next((kind for kind in (FREED, VERSION) if kind in text), text)


# -- the files --------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROGRAMS)
def test_file_has_exactly_the_program_fields(name: str) -> None:
    data = program_file(name)
    assert set(data) == FIELDS
    assert set(data["program"]) == {"code"}
    assert all(isinstance(data[key], str) and data[key].strip() for key in FIELDS - {"program"})


@pytest.mark.parametrize("name", PROGRAMS)
def test_twins_name_each_other(name: str) -> None:
    twin = program_file(name)["twin"]
    assert twin in OUTCOMES and twin != name
    assert program_file(twin)["twin"] == name
    assert twin in program_file(name)["notes"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_code_stays_inside_the_language(name: str) -> None:
    tree = ast.parse(code_of(name))
    for node in ast.walk(tree):
        assert not isinstance(node, REFUSED_NODES), f"line {node.lineno}: {type(node).__name__}"  # type: ignore[attr-defined]
        if isinstance(node, ast.Import):
            assert {alias.name for alias in node.names} <= IMPORTS
        if isinstance(node, ast.Name | ast.Attribute):
            assert not (node.id if isinstance(node, ast.Name) else node.attr).startswith("_")


def test_the_twins_differ_only_where_the_fix_is() -> None:
    """A twin is the same program with the fix: few changed lines, so the learner sees the cause."""
    for name in PROGRAMS:
        a, b = code_of(name).splitlines(), code_of(program_file(name)["twin"]).splitlines()
        changed = len(set(a) ^ set(b))
        assert 1 <= changed <= 3, name


# -- what plain PyTorch does --------------------------------------------------------------


@pytest.fixture(scope="module")
def plain() -> dict[str, PlainRun]:
    return {name: run_builtin_plainly(code_of(name)) for name in PROGRAMS}


@pytest.mark.parametrize("name", PROGRAMS)
def test_plain_outcome(name: str, plain: dict[str, PlainRun]) -> None:
    run, expected = plain[name], OUTCOMES[name]
    assert tuple(call.kind for call in run.calls) == expected.kinds
    assert run.failed == expected.failed
    assert error_kind(run.calls[-1].error) == expected.error
    assert run.calls[-1].failed_node == expected.node
    if expected.failed is None:
        assert run.error is None
    else:
        assert isinstance(run.error, RuntimeError) and str(run.error) == run.calls[-1].error


def test_retain_bandaid_turns_the_freed_error_into_a_version_error(plain: dict[str, PlainRun]) -> None:
    # the band-aid silences batch 1 (where rnn-style code fails without it) ...
    assert [call.keywords for call in plain["retain-bandaid"].calls] == [{"retain_graph": True}] * 3
    # ... and batch 2 reaches a weight that opt.step() changed after batch 1 saved it
    assert "is at version 3; expected version 2" in (plain["retain-bandaid"].calls[2].error or "")


def test_rnn_second_backward_fails_before_any_gradient_lands(plain: dict[str, PlainRun]) -> None:
    """Each parameter's gradient also waits for batch 0's path, which is where the backward fails."""
    failed = plain["rnn-no-detach"].calls[1]
    assert all(grad is None for grad in failed.grads.values())  # zero_grad() set them to None
    assert set(failed.grads) == {"cell.weight_ih", "cell.weight_hh", "cell.bias_ih", "cell.bias_hh"}


def test_gan_without_detach_gives_g_gradients_from_ds_loss(plain: dict[str, PlainRun]) -> None:
    d_step = plain["gan-no-detach"].calls[0].grads
    assert d_step["G.0.weight"] is not None  # D's backward walked into G
    assert plain["gan-detach"].calls[0].grads["G.0.weight"] is None


def test_logged_loss_keeps_every_iterations_nodes(plain: dict[str, PlainRun]) -> None:
    total = plain["logged-loss"].names["total_loss"]
    assert isinstance(total, torch.Tensor) and total.grad_fn is not None
    assert [n for n in graph_node_names(total) if n == "MseLossBackward0"] == ["MseLossBackward0"] * 3
    assert "grad_fn=<DivBackward0>" in plain["logged-loss"].printed
    with pytest.raises(RuntimeError, match=FREED):
        total.backward()  # what the notes say a final backward would do
    assert isinstance(plain["logged-item"].names["total_loss"], float)
    assert float(plain["logged-item"].printed) == pytest.approx(total.item() / 3)


def graph_node_names(root: torch.Tensor) -> list[str]:
    return sorted(type(fn).__name__ for fn in graph_nodes([root.grad_fn]))


def test_clone_leaves_the_written_element_without_gradient(plain: dict[str, PlainRun]) -> None:
    a = torch.tensor([0.5, -1.0, 2.0])
    derivative = a.sigmoid() * (1 - a.sigmoid())
    expected = torch.stack([derivative[0], torch.tensor(0.0), derivative[2]])
    torch.testing.assert_close(plain["inplace-clone"].calls[0].grads["a"], expected)


def test_data_hides_a_zero_gradient(plain: dict[str, PlainRun]) -> None:
    assert torch.equal(plain["data-hides"].calls[0].grads["a"], torch.zeros(3))  # type: ignore[arg-type]
    assert plain["data-hides"].printed.strip() == "tensor([0., 0., 0.])"
    assert plain["detach-raises"].printed == ""  # the error ended the program before print


def test_gradient_penalty_trains_the_weights(plain: dict[str, PlainRun]) -> None:
    with_graph = plain["gradient-penalty"].calls[1].grads
    without = plain["penalty-no-graph"].calls[1].grads
    loss_alone = (
        run_builtin_plainly(code_of("penalty-no-graph").replace("(loss + 10 * gp)", "loss")).calls[1].grads
    )
    for name in ("D.0.weight", "D.0.bias", "D.2.weight", "D.2.bias"):
        assert torch.equal(without[name], loss_alone[name])  # type: ignore[arg-type]
    assert not torch.allclose(with_graph["D.0.weight"], without["D.0.weight"])  # type: ignore[arg-type]
    assert plain["gradient-penalty"].calls[0].keywords["create_graph"] is True
    assert "create_graph" not in plain["penalty-no-graph"].calls[0].keywords


def test_gradient_penalty_needs_the_retention_create_graph_implies() -> None:
    code = code_of("gradient-penalty").replace("create_graph=True", "create_graph=True, retain_graph=False")
    run = run_builtin_plainly(code)
    assert run.failed == 1 and error_kind(run.calls[1].error) == FREED


def test_without_zero_grad_the_second_grad_is_the_sum(plain: dict[str, PlainRun]) -> None:
    summed, single = plain["accumulate-no-zero"].calls, plain["accumulate-zero-grad"].calls
    torch.testing.assert_close(summed[0].grads["model.weight"], single[0].grads["model.weight"])
    torch.testing.assert_close(
        summed[1].grads["model.weight"],
        single[0].grads["model.weight"] + single[1].grads["model.weight"],  # type: ignore[operator]
    )


def test_plain_runs_leave_the_callers_random_stream_alone() -> None:
    before = torch.random.get_rng_state()
    run_builtin_plainly(code_of("gan-detach"))
    assert torch.equal(torch.random.get_rng_state(), before)


# -- the recording agrees with the plain run, call by call ---------------------------------


@pytest.mark.parametrize("name", PROGRAMS)
def test_recording_agrees_with_the_plain_run(name: str, plain: dict[str, PlainRun]) -> None:
    rec, run = recorded(name), plain[name]
    assert [info.call.kind for info in rec.calls] == [call.kind for call in run.calls]
    for index, (info, call) in enumerate(zip(rec.calls, run.calls, strict=True)):
        assert info.error == call.error, f"call {index}"
        if call.error is not None:
            assert info.failed_node is not None
            assert rec.graph.node(info.failed_node).name == call.failed_node
            continue
        grads = rec.grads_at_end(index)
        for leaf, expected in call.grads.items():
            got = grads.get(leaf)  # a leaf no call has reached yet may be left out
            if expected is None:
                assert got is None, f"call {index}: {leaf}"
            else:
                assert got is not None, f"call {index}: {leaf}"
                torch.testing.assert_close(torch.tensor(got.tolist()), expected, msg=f"call {index}: {leaf}")
    assert (rec.failed is None) == (run.failed is None)


@pytest.mark.parametrize("name", PROGRAMS)
def test_recorded_calls_sit_on_the_lines_that_make_them(name: str) -> None:
    rec = recorded(name)
    lines = code_of(name).splitlines()
    for info in rec.calls:
        written = lines[info.call.line - 1]  # the recorder numbers lines of the program text from 1
        assert ("backward" if info.call.kind == "backward" else "autograd.grad") in written


def alive_after_each_call(name: str) -> list[int]:
    rec = recorded(name)
    return [rec.timeline[info.last_step].alive_nodes for info in rec.calls]


def test_logged_loss_holds_more_nodes_after_every_pass() -> None:
    growing, flat = alive_after_each_call("logged-loss"), alive_after_each_call("logged-item")
    assert growing[0] == flat[0]
    assert growing[1] - growing[0] == growing[2] - growing[1] > 0
    assert flat == [flat[0]] * 3


def test_detached_rnn_state_lets_each_batchs_graph_go() -> None:
    carried, detached = alive_after_each_call("rnn-no-detach"), alive_after_each_call("rnn-detach")
    assert detached == [detached[0]] * 3
    assert carried[1] > detached[1]  # batch 0's nodes still hang on h when batch 1 fails


@pytest.mark.parametrize(
    ("name", "statement"),
    [
        ("inplace-sigmoid", "b[1] = 2.0"),
        ("detach-raises", "c.zero_()"),
        ("retain-bandaid", "opt.step()"),
        ("data-hides", None),  # .data changes the storage without counting a version
        ("inplace-clone", None),
    ],
)
def test_a_saved_tensor_shows_modified_at_the_statement_that_changed_it(
    name: str, statement: str | None
) -> None:
    rec = recorded(name)
    modified = [
        (index, key)
        for index in range(len(rec.timeline))
        for key, state in rec.timeline.state(index).slots.items()
        if state == "modified"
    ]
    if statement is None:
        assert modified == [] and rec.failed is None
        return
    first_step, slot = modified[0]
    line = rec.timeline[first_step].line
    assert line is not None and code_of(name).splitlines()[line - 1].strip() == statement
    assert rec.failed is not None and rec.failed.failed_node == slot[0]
