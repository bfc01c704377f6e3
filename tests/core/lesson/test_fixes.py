"""Fixes are edits of the program text; each one, recorded, removes the error it targets.

PyTorch is the oracle: a fixed program is recorded again and must pass, with
the gradients of a plain PyTorch run of the same fix (or of the built-in twin
that shows the same fix).
"""

from __future__ import annotations

import ast

import pytest
import torch

from app.child.proofs import in_process
from app.core.lesson.edits import changed_lines, find_call, set_call_keyword
from app.core.lesson.fix import Fix
from app.core.lesson.prove import proven_fixes
from app.core.lesson.recipes import fixes_for
from app.core.loading import builtin_names, load_builtin
from app.core.model.program import Call, Program
from app.core.model.recording import Recording
from app.core.model.values import Values
from app.core.recorder.recorder import record

# -- set_call_keyword on hand-written calls -----------------------------------------------


def call_in(code: str, index: int = 0) -> Call:
    """The ``index``-th backward/grad call of ``code``, positioned as the recorder reports calls."""
    tree = ast.parse(code)
    lines = code.splitlines(keepends=True)
    found = sorted(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("backward", "grad")
        ),
        key=lambda n: (n.lineno, n.col_offset),
    )
    node = found[index]

    def column(line: int, byte: int) -> int:
        return len(lines[line - 1].encode()[:byte].decode()) + 1

    end_line = node.end_lineno or node.lineno
    text = " ".join((ast.get_source_segment(code, node) or "").split())
    return Call(
        "grad" if node.func.attr == "grad" else "backward",  # type: ignore[attr-defined]
        node.lineno,
        column(node.lineno, node.col_offset),
        end_line,
        column(end_line, node.end_col_offset or 0),
        text,
    )


def keywords_of(code: str, index: int = 0) -> dict[str, str]:
    call = call_in(code, index)
    start, end = find_call(code, call)
    node = ast.parse(code[start:end], mode="eval").body
    assert isinstance(node, ast.Call)
    return {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}


EDITS = [
    # (code, name, value, expected code)
    ("y.sum().backward()\n", "retain_graph", "True", "y.sum().backward(retain_graph=True)\n"),
    ("y.sum().backward( )\n", "retain_graph", "True", "y.sum().backward(retain_graph=True)\n"),
    (
        "y.sum().backward(retain_graph=False)\n",
        "retain_graph",
        "True",
        "y.sum().backward(retain_graph=True)\n",
    ),
    ("y.sum().backward(retain_graph=False)\n", "retain_graph", None, "y.sum().backward()\n"),
    ("y.sum().backward()\n", "retain_graph", None, "y.sum().backward()\n"),
    ("y.sum().backward(g)\n", "create_graph", "True", "y.sum().backward(g, create_graph=True)\n"),
    ("y.sum().backward(g,)\n", "create_graph", "True", "y.sum().backward(g, create_graph=True,)\n"),
    (
        "y.sum().backward(create_graph=True, retain_graph=False)\n",
        "retain_graph",
        None,
        "y.sum().backward(create_graph=True)\n",
    ),
    (
        "y.sum().backward(retain_graph=False, create_graph=True)\n",
        "retain_graph",
        None,
        "y.sum().backward(create_graph=True)\n",
    ),
    (
        "y.sum().backward(\n    g,\n    retain_graph=False,\n)\n",
        "retain_graph",
        None,
        "y.sum().backward(\n    g,\n)\n",
    ),
    (
        "y.sum().backward(\n    g,\n    retain_graph=False,\n)\n",
        "create_graph",
        "True",
        "y.sum().backward(\n    g,\n    retain_graph=False,\n    create_graph=True,\n)\n",
    ),
    (
        "y.sum().backward(\n    g,\n    retain_graph=False  # why\n)\n",
        "create_graph",
        "True",
        "y.sum().backward(\n    g,\n    retain_graph=False,\n    create_graph=True  # why\n)\n",
    ),
    (
        "g = torch.autograd.grad(y.sum(), [x], retain_graph=None)[0]\n",
        "retain_graph",
        None,
        "g = torch.autograd.grad(y.sum(), [x])[0]\n",
    ),
    (
        "s = 'μ∂'; y.sum().backward()\n",
        "retain_graph",
        "True",
        "s = 'μ∂'; y.sum().backward(retain_graph=True)\n",
    ),
]


@pytest.mark.parametrize(("code", "name", "value", "expected"), EDITS)
def test_set_call_keyword_edits_only_that_keyword(
    code: str, name: str, value: str | None, expected: str
) -> None:
    before = keywords_of(code)
    edited = set_call_keyword(code, call_in(code), name, value)
    assert edited == expected
    after = keywords_of(edited)
    if value is None:
        assert name not in after
    else:
        assert after[name] == value
    assert {k: v for k, v in after.items() if k != name} == {k: v for k, v in before.items() if k != name}


def test_a_call_is_found_by_its_text_once_the_lines_moved() -> None:
    code = "import torch\ny.sum().backward()\n"
    call = call_in(code)
    moved = "import torch\n\n# a comment\ny.sum().backward()\n"
    assert set_call_keyword(moved, call, "retain_graph", "True").endswith(
        "y.sum().backward(retain_graph=True)\n"
    )


def test_a_call_that_is_gone_is_refused() -> None:
    call = call_in("y.sum().backward()\n")
    with pytest.raises(ValueError, match="not in the program"):
        set_call_keyword("z = 1\n", call, "retain_graph", "True")


def test_only_the_call_at_its_place_is_edited_when_the_same_text_repeats() -> None:
    code = "y.sum().backward()\ny.sum().backward()\n"
    edited = set_call_keyword(code, call_in(code, 1), "retain_graph", "True")
    assert edited == "y.sum().backward()\ny.sum().backward(retain_graph=True)\n"


def test_changed_lines_shows_what_a_fix_removes_and_adds() -> None:
    assert changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == ["- b", "+ B", "+ d"]


# -- fixes chosen from recordings --------------------------------------------------------


def grads_at_end(recording: Recording) -> dict[str, Values | None]:
    return dict(recording.timeline.state(len(recording.timeline) - 1).grads)


def record_fix(recording: Recording, fix: Fix) -> Recording:
    fixed = record(recording.program.with_code(fix.code))
    assert fixed.failed is None and fixed.error is None, (fix.title, fixed.failed, fixed.error)
    return fixed


def offered(recording: Recording) -> list[Fix]:
    """The fixes that hold when recorded: what the window and the command line show."""
    return [p.fix for p in proven_fixes(recording, record=in_process(recording))]


def titled(fixes: list[Fix], start: str) -> Fix:
    matching = [f for f in fixes if f.title.startswith(start)]
    assert matching, [f.title for f in fixes]
    return matching[0]


@pytest.fixture(scope="module")
def recorded() -> dict[str, Recording]:
    return {}


def recording_of(name: str, cache: dict[str, Recording]) -> Recording:
    if name not in cache:
        cache[name] = record(load_builtin(name))
    return cache[name]


PASSING = [
    n
    for n in builtin_names()
    if n
    not in {
        "forgot-retain",
        "square-needs-saved",
        "rnn-no-detach",
        "retain-bandaid",
        "gan-no-detach",
        "inplace-sigmoid",
        "detach-raises",
        "computed-once",
    }
]


@pytest.mark.parametrize("name", PASSING)
def test_a_program_that_passes_gets_no_fix(name: str, recorded: dict[str, Recording]) -> None:
    recording = recording_of(name, recorded)
    assert recording.failed is None
    assert fixes_for(recording) == []


def plain_two_losses_grad() -> list[float]:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.square()
    y.sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    assert x.grad is not None
    return x.grad.tolist()


@pytest.mark.parametrize("name", ["forgot-retain", "square-needs-saved"])
def test_retain_and_summed_fixes_pass_with_the_same_gradient(
    name: str, recorded: dict[str, Recording]
) -> None:
    recording = recording_of(name, recorded)
    fixes = fixes_for(recording)
    retain, summed = titled(fixes, "retain_graph=True on line"), titled(fixes, "add the losses")
    assert changed_lines(recording.program.code, retain.code) == [
        "- y.sum().backward()",
        "+ y.sum().backward(retain_graph=True)",
    ]
    assert changed_lines(recording.program.code, summed.code)[-1] == "+ (y.sum() + (y * 3).sum()).backward()"
    with_retain, with_sum = record_fix(recording, retain), record_fix(recording, summed)
    assert len(with_retain.calls) == 2 and len(with_sum.calls) == 1
    grad_retain, grad_sum = grads_at_end(with_retain)["x"], grads_at_end(with_sum)["x"]
    assert grad_retain is not None and grad_sum is not None
    assert grad_retain.tolist() == grad_sum.tolist()
    if name == "forgot-retain":
        assert grad_sum.tolist() == plain_two_losses_grad()


def test_retain_fix_reports_the_line_of_the_call_that_freed(recorded: dict[str, Recording]) -> None:
    recording = recording_of("forgot-retain", recorded)
    info = recording.failed
    assert info is not None
    freed_by = {recording.freed_by[k] for k in recording.freed_by if k[0] == info.failed_node}
    lines = {recording.calls[i].call.line for i in freed_by}
    assert titled(fixes_for(recording), "retain_graph").title == f"retain_graph=True on line {min(lines)}"


@pytest.mark.parametrize(
    ("broken", "twin"), [("rnn-no-detach", "rnn-detach"), ("retain-bandaid", "retain-fixed")]
)
def test_detach_of_the_carried_state_matches_the_fixed_twin(
    broken: str, twin: str, recorded: dict[str, Recording]
) -> None:
    recording = recording_of(broken, recorded)
    fixes = offered(recording)
    detach = titled(fixes, "h.detach()")
    assert fixes[0] is detach  # the cause first
    band_aids = [f for f in fixes if "retain_graph" in f.title]  # the same line in a loop: a band-aid
    assert all(f.band_aid and "band-aid" in f.title for f in band_aids)
    assert fixes[len(fixes) - len(band_aids) :] == band_aids
    fixed = record_fix(recording, detach)
    assert "    h = h.detach()" in detach.code.splitlines()
    assert "retain_graph=True" not in detach.code
    assert len(fixed.calls) == len(recording_of(twin, recorded).calls) == 3
    assert grads_at_end(fixed) == grads_at_end(recording_of(twin, recorded))


def test_gan_detach_fix_is_the_twin(recorded: dict[str, Recording]) -> None:
    recording = recording_of("gan-no-detach", recorded)
    fixes = fixes_for(recording)
    detach = titled(fixes, "fake.detach()")
    assert fixes[0] is detach  # the real fix first, the band-aid after it
    assert detach.code == load_builtin("gan-detach").code
    fixed = record_fix(recording, detach)
    assert grads_at_end(fixed) == grads_at_end(recording_of("gan-detach", recorded))
    record_fix(recording, titled(fixes, "retain_graph=True"))


def test_recompute_inside_the_loop_matches_the_twin(recorded: dict[str, Recording]) -> None:
    recording = recording_of("computed-once", recorded)
    fix = titled(fixes_for(recording), "compute scale inside the loop")
    fixed = record_fix(recording, fix)
    twin = recording_of("computed-inside", recorded)
    assert len(fixed.calls) == len(twin.calls) == 3
    assert grads_at_end(fixed) == grads_at_end(twin)


def test_clone_before_the_in_place_write_matches_the_twin(recorded: dict[str, Recording]) -> None:
    recording = recording_of("inplace-sigmoid", recorded)
    fix = titled(fixes_for(recording), "b.clone()")
    assert changed_lines(recording.program.code, fix.code) == ["+ b = b.clone()"]
    fixed = record_fix(recording, fix)
    assert grads_at_end(fixed) == grads_at_end(recording_of("inplace-clone", recorded))


def test_clone_of_a_detached_alias_gives_the_plain_gradient(recorded: dict[str, Recording]) -> None:
    recording = recording_of("detach-raises", recorded)
    fixed = record_fix(recording, titled(fixes_for(recording), "c.clone()"))
    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    out = a.sigmoid()
    c = out.detach().clone()
    c.zero_()
    out.sum().backward()
    grad = grads_at_end(fixed)["a"]
    assert grad is not None and grad.tolist() == a.grad.tolist()  # type: ignore[union-attr]


STEP_BETWEEN = """import torch
import torch.optim as optim

w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = optim.SGD([w], lr=0.1)
y = (w * w).sum()
y.backward(retain_graph=True)
opt.step()
(y * 2).backward()
"""


def assert_w_grad_of_both_backwards_then_the_step(fixed: Recording) -> None:
    """``w.grad`` at the end of ``fixed`` is what PyTorch gives when both backwards run before the
    one optimizer step (the order the step-moving fixes make)."""
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    (y * 2).backward()
    opt.step()
    grad = grads_at_end(fixed)["w"]
    assert grad is not None and grad.tolist() == w.grad.tolist()  # type: ignore[union-attr]


def test_the_optimizer_step_moves_after_both_backwards() -> None:
    recording = record(Program(STEP_BETWEEN))
    assert recording.failed is not None and "modified by an inplace operation" in (
        recording.failed.error or ""
    )
    fix = titled(fixes_for(recording), "opt.step() after both backwards")
    assert fix.code.splitlines()[-2:] == ["(y * 2).backward()", "opt.step()"]
    fixed = record_fix(recording, fix)
    assert_w_grad_of_both_backwards_then_the_step(fixed)


def test_an_optimizer_step_already_after_both_backwards_is_not_taken_twice() -> None:
    code = STEP_BETWEEN + "opt.step()\n"
    recording = record(Program(code))
    fix = titled(fixes_for(recording), "opt.step() after both backwards")
    assert changed_lines(code, fix.code) == ["- opt.step()"]  # the early one goes, none is added
    fixed = record_fix(recording, fix)
    assert fixed.failed is None and fix.code.count("opt.step()") == 1
    assert_w_grad_of_both_backwards_then_the_step(fixed)


STEP_BETWEEN_FREED = """import torch
import torch.optim as optim

w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = optim.SGD([w], lr=0.1)
y = (w * w).sum()
y.backward()
opt.step()
(y * 2).backward()
"""


def test_a_freed_graph_with_a_step_between_gets_retain_and_the_step_moved_together() -> None:
    """NOTE [freed leaves written]: the first backward freed MulBackward0's w, then opt.step()
    wrote w in place. retain_graph=True alone would trade PyTorch's freed error for its version
    error, so it is offered with the step moved after both backwards, and the step's line says so."""
    recording = record(Program(STEP_BETWEEN_FREED))
    assert recording.failed is not None and "second time" in (recording.failed.error or "")
    step_line = next(s for s in recording.timeline.steps if s.line == 8)
    assert step_line.version_changes and "even with retain_graph=True" in step_line.caption
    retain_only = set_call_keyword(STEP_BETWEEN_FREED, recording.calls[0].call, "retain_graph", "True")
    alone = record(recording.program.with_code(retain_only))
    assert alone.failed is not None and "modified by an inplace operation" in (alone.failed.error or "")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):  # PyTorch agrees
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        y = (w * w).sum()
        y.backward(retain_graph=True)
        opt.step()
        (y * 2).backward()
    fixes = fixes_for(recording)
    assert [f.title for f in fixes if f.title.startswith("retain_graph")] == [
        "retain_graph=True on line 7, opt.step() after both backwards (band-aid)"
    ]
    assert not fixes[0].band_aid and fixes[-1].band_aid  # beside a fix of the cause: labelled, last
    assert not [f for f in fixes if f.title == "opt.step() after both backwards"]  # alone it still fails
    fix = fixes[
        [f.title for f in fixes].index(
            "retain_graph=True on line 7, opt.step() after both backwards (band-aid)"
        )
    ]
    shown = changed_lines(STEP_BETWEEN_FREED, fix.code, fix.moved)
    assert sorted(shown[:2]) == ["+ y.backward(retain_graph=True)", "- y.backward()"]
    assert shown[2:] == ["- opt.step()  # moves", "+ opt.step()  # to here"]  # the step, not a backward
    fixed = record_fix(recording, fix)
    assert_w_grad_of_both_backwards_then_the_step(fixed)


DEEPER_WEIGHT_STEPPED = """import torch
import torch.optim as optim

x = torch.randn(2, 3, requires_grad=True)
w1 = torch.randn(3, 3, requires_grad=True)
w2 = torch.randn(3, 3, requires_grad=True)
w3 = torch.randn(3, 1, requires_grad=True)
opt_a = optim.SGD([w2], lr=0.1)
h1 = torch.tanh(x @ w1)
h2 = torch.tanh(h1 @ w2)
loss = (h2 @ w3).sum()
loss.backward()
opt_a.step()
(loss * 2).backward()
"""

MANUAL_UPDATE = """import torch

x = torch.randn(2, 3, requires_grad=True)
w = torch.randn(3, 1, requires_grad=True)
y = (x @ w).sum()
y.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
(y * 2).backward()
"""

TWO_OPTIMIZERS = """import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 2))
D = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
criterion = nn.BCEWithLogitsLoss()
optG = optim.SGD(G.parameters(), lr=0.1)
optD = optim.SGD(D.parameters(), lr=0.1)
fake = G(torch.randn(4, 2))
d_fake = D(fake)
optD.zero_grad()
d_loss = criterion(D(torch.randn(4, 2) + 2.0), torch.ones(4, 1)) + criterion(d_fake, torch.zeros(4, 1))
d_loss.backward()
optD.step()
optG.zero_grad()
g_loss = criterion(d_fake, torch.ones(4, 1))
g_loss.backward()
optG.step()
"""


@pytest.mark.parametrize("code", [DEEPER_WEIGHT_STEPPED, MANUAL_UPDATE, TWO_OPTIMIZERS])
def test_no_fix_offered_for_a_weight_written_after_its_graph_was_freed_fails_or_retrains(code: str) -> None:
    """Where a step wrote a weight a freed node below the failing one saved, or the program wrote
    it by hand, or moving a step would let D train on G's loss: every fix offered records without
    an error, keeps the program's own updates, and moves no step past another optimizer's."""
    recording = record(Program(code))
    assert recording.failed is not None and "second time" in (recording.failed.error or "")
    for fix in offered(recording):
        fixed = record(recording.program.with_code(fix.code))
        assert fixed.failed is None and fixed.error is None, (fix.title, fixed.failed, fixed.error)
        assert "clone()" not in fix.code  # a clone of a trained weight would stop training it
        if code is MANUAL_UPDATE:
            assert "w -= 0.1 * w.grad" in fix.code
        if code is TWO_OPTIMIZERS:  # D's step stays before G's loss: D never trains on it
            assert fix.moved != "optD.step()" and "retain_graph" not in fix.code
            assert fix.code.index("optD.step()") < fix.code.index("g_loss.backward()")
    if code is DEEPER_WEIGHT_STEPPED:  # retain alone fails on w2, in PyTorch too
        assert [f.title for f in offered(recording) if "retain" in f.title] == [
            "retain_graph=True on line 12, opt_a.step() after both backwards (band-aid)"
        ]


def test_summing_is_not_offered_when_code_between_reads_the_gradient() -> None:
    code = (
        "import torch\n\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.square()\n"
        "y.sum().backward()\nprint(x.grad)\n(y * 3).sum().backward()\n"
    )
    recording = record(Program(code))
    fixes = fixes_for(recording)
    assert [f.title for f in fixes] == ["retain_graph=True on line 5"]
    record_fix(recording, fixes[0])


def test_a_program_error_outside_a_call_gets_no_fix() -> None:
    recording = record(Program("import torch\n\nx = torch.ones(2)\ny = x @ torch.ones(3)\n"))
    assert recording.failed is None and recording.error is not None
    assert fixes_for(recording) == []


@pytest.mark.parametrize(
    ("body", "carried"),
    [
        ("for t in range(2):\n    h = cell(t, h)\nloss = f(h)", ["h"]),  # an inner loop's variable is its own
        ("ys = [h * i for i in range(2)]\nh = g(ys)\ni = 0", ["h"]),  # so is a comprehension's
        ("h = h + t\nt = 1", ["h", "t"]),  # read, then bound: carried over
    ],
)
def test_values_carried_into_the_next_iteration(body, carried):
    from app.core.lesson.edits import carried_names as _carried_names

    loop = ast.parse("for c in range(3):\n" + "".join(f"    {line}\n" for line in body.splitlines())).body[0]
    assert isinstance(loop, ast.For)
    assert _carried_names(loop.body) == carried
