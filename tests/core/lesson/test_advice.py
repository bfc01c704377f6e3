"""Advice without an error: a program that keeps every iteration's graph gets the edit that lets it go.

PyTorch is the oracle: the advised program is recorded again and must keep no
graph of an earlier iteration, with the nodes alive at the end and the
gradients of its built-in twin (``logged-item``), or of a plain PyTorch run.
"""

from __future__ import annotations

import pytest
import torch

from app.core.lesson.advice import advice_for, kept_graphs
from app.core.lesson.edits import changed_lines
from app.core.loading import builtin_names, load_builtin
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.recorder.recorder import record
from app.ui.panels.advice_panel import AdvicePanel
from tests.support.oracle import run_plainly, same

LOOP = """\
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
{before}
for i in range(3):
    loss = (w * (i + 1)).square().sum()
    loss.backward()
    {hold}
{after}
"""


def program(hold: str, before: str = "kept = []", after: str = "print(len(kept))") -> Program:
    return Program(LOOP.format(hold=hold, before=before, after=after))


def alive_at_end(recording: Recording) -> int:
    return recording.timeline.steps[-1].alive_nodes


def grads_after_each_call(recording: Recording) -> list[dict[str, object]]:
    return [dict(recording.grads_at_end(i)) for i in range(len(recording.calls))]


@pytest.fixture(scope="module")
def logged() -> dict[str, Recording]:
    return {name: record(load_builtin(name)) for name in ("logged-loss", "logged-item")}


# -- what the recording shows -------------------------------------------------------------


def test_logged_loss_keeps_the_graphs_of_earlier_iterations(logged: dict[str, Recording]) -> None:
    kept = kept_graphs(logged["logged-loss"])
    assert kept is not None and kept.loop_line == 12
    rising = kept.alive_at_ends
    assert list(rising) == sorted(set(rising)) and len(rising) == 3  # a new iteration, more nodes
    graph = logged["logged-loss"].graph
    assert all(graph.node(n).gone_at_step is None and not graph.node(n).is_leaf for n in kept.nodes)
    assert {graph.node(n).loops[0].index for n in kept.nodes} == {0, 1}  # the last one is still in use
    assert kept_graphs(logged["logged-item"]) is None


@pytest.mark.parametrize("name", [n for n in builtin_names() if n != "logged-loss"])
def test_no_other_builtin_gets_advice(name: str) -> None:
    assert advice_for(record(load_builtin(name))) is None


# -- the edit, recorded again -----------------------------------------------------------------


def test_item_on_logged_loss_behaves_as_its_twin(logged: dict[str, Recording]) -> None:
    broken, twin = logged["logged-loss"], logged["logged-item"]
    advice = advice_for(broken)
    assert advice is not None
    assert "line 17" in advice.headline and "6 → 10 → 14" in advice.evidence
    item = advice.fixes[0]
    assert item.title.startswith("loss.item() on line 17")
    assert changed_lines(broken.program.code, item.code) == [
        "-     total_loss += loss          # the tensor, with its graph",
        "+     total_loss += loss.item()          # the tensor, with its graph",
    ]
    fixed = record(broken.program.with_code(item.code))
    assert fixed.failed is None and fixed.error is None
    assert alive_at_end(fixed) == alive_at_end(twin) < alive_at_end(broken)
    assert [s.alive_nodes for s in fixed.timeline.steps] == [s.alive_nodes for s in twin.timeline.steps]
    assert grads_after_each_call(fixed) == grads_after_each_call(twin)
    assert [s.printed for s in fixed.timeline.steps] == [s.printed for s in twin.timeline.steps]
    assert kept_graphs(fixed) is None and advice_for(fixed) is None


def test_detach_on_logged_loss_keeps_no_graph_either(logged: dict[str, Recording]) -> None:
    broken, twin = logged["logged-loss"], logged["logged-item"]
    advice = advice_for(broken)
    assert advice is not None
    detach = advice.fixes[1]
    assert "total_loss += loss.detach()" in detach.code
    fixed = record(broken.program.with_code(detach.code))
    assert alive_at_end(fixed) == alive_at_end(twin)
    assert grads_after_each_call(fixed) == grads_after_each_call(twin)
    plain = run_plainly(detach.code)
    total = plain.names["total_loss"]
    assert isinstance(total, torch.Tensor) and total.grad_fn is None and not total.requires_grad


@pytest.mark.parametrize(
    ("hold", "before", "held_as"),
    [
        ("kept.append(loss)", "kept = []", "kept.append(loss.item())"),
        ("kept = kept + loss", "kept = 0.0", "kept = kept + loss.item()"),
        ("kept += loss", "kept = 0.0", "kept += loss.item()"),
    ],
)
def test_a_list_or_a_running_sum_of_losses_gets_item(hold: str, before: str, held_as: str) -> None:
    after = "print(kept)"
    broken = record(program(hold, before, after))
    advice = advice_for(broken)
    assert advice is not None, broken.error
    item = advice.fixes[0]
    assert changed_lines(broken.program.code, item.code) == [f"-     {hold}", f"+     {held_as}"]
    fixed = record(broken.program.with_code(item.code))
    plain = run_plainly(item.code)
    assert fixed.failed is None and kept_graphs(fixed) is None
    assert alive_at_end(fixed) < alive_at_end(broken)
    assert same(fixed.grads_at_end(2)["w"], plain.calls[2].grads["w"])
    assert same(fixed.grads_at_end(2)["w"], torch.tensor([28.0, 56.0]))  # 2 w (1 + 4 + 9): accumulated


def test_outputs_kept_without_a_backward_get_detach_only() -> None:
    code = (
        "import torch\n\nw = torch.tensor([1.0, 2.0], requires_grad=True)\nouts = []\n"
        "for i in range(3):\n    out = (w * (i + 1)).exp()\n    outs.append(out)\nprint(len(outs))\n"
    )
    broken = record(Program(code))
    assert broken.timeline.steps[-1].saved_bytes > 0  # never backpropagated: the buffers stay too
    advice = advice_for(broken)
    assert advice is not None
    assert [f.title.split(" on ")[0] for f in advice.fixes] == ["out.detach()"]  # no .item() of 2 values
    fixed = record(broken.program.with_code(advice.fixes[0].code))
    assert kept_graphs(fixed) is None
    assert fixed.timeline.steps[-1].saved_bytes < broken.timeline.steps[-1].saved_bytes


@pytest.mark.parametrize(
    ("hold", "before", "after"),
    [
        # summed over the loop and backpropagated once after it: kept on purpose
        ("total = total + (w * i).sum()", "total = 0.0", "total.backward()"),
        # a list made afresh in each iteration holds only that iteration's graph
        ("kept = []\n    kept.append(loss)", "kept = []", "print(len(kept))"),
        # a number: no graph at all
        ("kept.append(loss.item())", "kept = []", "print(kept)"),
    ],
)
def test_no_advice_without_graphs_kept_for_nothing(hold: str, before: str, after: str) -> None:
    recording = record(program(hold, before, after))
    assert recording.failed is None and recording.error is None
    assert advice_for(recording) is None


def test_a_failed_program_gets_fixes_not_advice() -> None:
    recording = record(load_builtin("rnn-no-detach"))
    assert kept_graphs(recording) is not None  # it keeps old graphs too, and that is why it fails
    assert advice_for(recording) is None


# -- the panel: shown at the end, applied, undone -------------------------------------------


def test_the_panel_shows_the_advice_at_the_last_step_only(qtbot, session, logged) -> None:
    panel = AdvicePanel(session)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.lesson_shown, timeout=60_000):  # found and proven on a pool thread
        session.apply(logged["logged-loss"])
    advice = advice_for(logged["logged-loss"])
    assert advice is not None and panel.fixes == list(advice.fixes)
    for index in range(len(logged["logged-loss"].timeline)):
        session.go_to(index)
        assert panel.isHidden() == (index != session.last_index), index
    assert panel.title.text().endswith(advice.headline)
    old = logged["logged-loss"].program.code
    for button, diff, fix in zip(panel.fix_buttons, panel.fix_codes, advice.fixes, strict=True):
        assert not button.isHidden() and fix.title.split(":")[0] in button.text()
        assert diff.text() == "\n".join(
            [
                *(
                    line.replace("-     ", "- ").replace("+     ", "+ ")
                    for line in changed_lines(old, fix.code)
                ),
                "✓ recorded: no error; no graph kept past its iteration",
            ]
        )
    session.apply(logged["logged-item"])
    session.end()
    assert panel.isHidden() and panel.fixes == []


def test_applying_the_advice_records_the_twin_and_undo_brings_the_leak_back(qtbot, session, logged) -> None:
    panel = AdvicePanel(session)
    qtbot.addWidget(panel)
    recorded: list[Recording] = []

    def rerecord(program: Program) -> int:  # the worker's job, done here: the test stays on one thread
        recorded.append(record(program))
        session.apply(recorded[-1], mode="keep")
        return len(recorded)

    session.rerecord = rerecord
    with qtbot.waitSignal(panel.lesson_shown, timeout=60_000):
        session.apply(logged["logged-loss"])
    session.end()
    panel.fix_buttons[0].click()  # Session.change_program: remembered for undo, then recorded
    fixed = recorded[-1]
    assert session.recording is fixed and "total_loss += loss.item()" in fixed.program.code
    assert alive_at_end(fixed) == alive_at_end(logged["logged-item"])
    session.end()
    assert panel.isHidden() and panel.fixes == []
    assert session.can_undo
    session.undo()
    assert recorded[-1].program == logged["logged-loss"].program and session.recording is recorded[-1]
    assert not session.can_undo
    session.end()
    qtbot.waitUntil(lambda: len(panel.fixes) == 2, timeout=60_000)
    assert not panel.isHidden()


def test_the_memory_chart_shows_the_advice_under_its_rising_line(qtbot, session, logged) -> None:
    from app.ui.panels.memory_chart import MemoryChart

    chart = MemoryChart(session)
    qtbot.addWidget(chart)
    chart.resize(420, 480)
    chart.show()
    with qtbot.waitSignal(chart.advice.lesson_shown, timeout=60_000):
        session.apply(logged["logged-loss"])
    session.home()
    full = chart._plot_area()
    assert chart.advice.isHidden()
    session.end()
    assert not chart.advice.isHidden()
    qtbot.waitUntil(lambda: chart._plot_area().bottom() < full.bottom())
    assert chart._plot_area().bottom() <= chart.advice.geometry().top()
    assert chart.alive_series()[-1] == alive_at_end(logged["logged-loss"])


def test_one_lesson_parses_its_program_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every advice reads the same program: it is parsed once (a 3,000-line program's parse holds
    the interpreter for 0.1-0.5 s, the window's GUI thread waiting meanwhile), and the advices are
    those of a fresh parse per reader."""
    import ast

    from app.core.lesson import edits
    from app.core.lesson.advised import advices_of

    recording = record(program("kept.append(loss)", before="kept = []  # parsed once"))
    edits.parsed.cache_clear()
    fresh = advices_of(recording)
    edits.parsed.cache_clear()
    parses: list[str] = []
    real_parse = ast.parse

    def counting_parse(source: str, *args: object, **kwargs: object) -> ast.Module:
        parses.append(source)
        return real_parse(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", counting_parse)
    found = advices_of(recording)
    assert found, "the program keeps every iteration's graph: there is advice"
    assert parses.count(recording.program.code) == 1
    assert found == fresh
