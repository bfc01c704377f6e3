"""Predict first: the questions before each call, answered by the recording (PyTorch as the oracle),
and the panel that asks them and reveals the answers only once the call has run."""

from __future__ import annotations

import pytest
import torch
from pytestqt.qtbot import QtBot

from app.core import load_builtin, record
from app.core.lesson.predict import FAILS, NO_FAILURE, SUCCEEDS, Question, call_nodes, questions
from app.ui.panels.predict_panel import PredictPanel, call_in_focus
from app.ui.runtime.session import Session


@pytest.fixture(scope="module")
def rnn_no_detach():
    return record(load_builtin("rnn-no-detach"))


def _answers(recording, call: int) -> list[str]:
    return [q.answer for q in questions(recording, call)]


# -- the questions and answers, against PyTorch ---------------------------------------------------
def test_forgot_retain_second_call_fails_at_pow_backward(forgot_retain) -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.square()
    y.sum().backward()
    after_first = x.grad.tolist()
    with pytest.raises(RuntimeError):
        (y * 3).sum().backward()
    succeeds, where, grad = questions(forgot_retain, 1)
    assert succeeds.answer == FAILS
    assert where.answer.startswith("PowBackward0 ") and where.answer in where.choices
    assert grad.answer == "x.grad = [2, 4]" and x.grad.tolist() == after_first == [2.0, 4.0]
    assert _answers(forgot_retain, 0)[:2] == [SUCCEEDS, NO_FAILURE]


def test_two_losses_grad_after_the_second_call_is_accumulated(two_losses) -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.square()
    y.sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    assert x.grad.tolist() == [8.0, 16.0]
    succeeds, where, grad = questions(two_losses, 1)
    assert (succeeds.answer, where.answer) == (SUCCEEDS, NO_FAILURE)
    assert grad.answer == "x.grad = [8, 16]"
    # The wrong choices are the usual mistakes: no accumulation (6x) and the value before (2x).
    assert {"x.grad = [6, 12]", "x.grad = [2, 4]"} <= set(grad.choices)


def test_rnn_without_detach_fails_in_the_second_batch_at_the_first_batchs_tanh(rnn_no_detach) -> None:
    torch.manual_seed(0)  # the program's seed, as the recorder runs it
    cell = torch.nn.RNNCell(2, 3)
    xs, targets = torch.randn(3, 1, 2), torch.randn(3, 1, 3)
    h = torch.zeros(1, 3)
    failed_at = None
    for i in range(3):
        h = cell(xs[i], h)
        loss = ((h - targets[i]) ** 2).mean()
        cell.zero_grad()
        try:
            loss.backward()
        except RuntimeError:
            failed_at = i
            break
    assert failed_at == 1
    assert _answers(rnn_no_detach, 0)[:2] == [SUCCEEDS, NO_FAILURE]
    succeeds, where, grad = questions(rnn_no_detach, 1)
    assert succeeds.answer == FAILS
    assert where.answer == "TanhBackward0 (made by line 12, iteration 1 of 3)"
    # Both TanhBackward0 nodes are offered: the room must tell the batches apart.
    assert "TanhBackward0 (made by line 12, iteration 2 of 3)" in where.choices
    assert grad.answer.endswith("= None")  # zero_grad() set it to None and the call failed


@pytest.mark.parametrize("name", ["two-losses", "forgot-retain", "rnn-no-detach", "accumulate-no-zero"])
def test_every_answer_is_what_the_recording_shows(name: str) -> None:
    recording = record(load_builtin(name))
    for info in recording.calls:
        asked = questions(recording, info.index)
        assert asked[0].answer == (SUCCEEDS if info.error is None else FAILS)
        failed = info.failed_node
        assert (asked[1].answer == NO_FAILURE) == (failed is None or info.error is None)
        if failed is not None:
            assert failed in call_nodes(recording, info)
        for question in asked:
            assert len(set(question.choices)) == len(question.choices) >= 2
        if len(asked) == 3:
            leaf = asked[2].text.split()[2].removesuffix(".grad")
            value = recording.grads_at_end(info.index)[leaf]
            from app.core.model.text import format_values

            assert asked[2].answer == f"{leaf}.grad = {format_values(value)}"


def test_an_answer_must_be_among_the_choices() -> None:
    with pytest.raises(ValueError):
        Question("?", ("a", "b"), "c")


# -- the panel ---------------------------------------------------------------------------------
def test_call_in_focus_leads_into_each_call_and_reveals_at_its_last_step(forgot_retain) -> None:
    first, second = forgot_retain.calls
    assert call_in_focus(forgot_retain, 0) == (0, False)
    assert call_in_focus(forgot_retain, first.last_step) == (0, True)
    assert call_in_focus(forgot_retain, first.last_step + 1) == (1, False)
    assert call_in_focus(forgot_retain, second.last_step) == (1, True)


def test_the_panel_asks_before_the_call_and_reveals_by_stepping(
    qtbot: QtBot, session: Session, forgot_retain
) -> None:
    panel = PredictPanel(session)
    qtbot.addWidget(panel)
    session.apply(forgot_retain, mode="start")
    assert not panel.isVisibleTo(panel.parentWidget() or panel) and panel.rows == []
    panel.set_active(True)
    second = forgot_retain.calls[1]
    session.go_to(second.first_step - 1)
    assert panel.call_index() == 1 and not panel.revealed()
    assert [row.question for row in panel.rows] == questions(forgot_retain, 1)
    assert all(row.verdict.text() == "" for row in panel.rows)  # no spoilers
    panel.rows[0].choose(SUCCEEDS)
    panel.rows[1].choose(panel.rows[1].question.answer)
    session.go_to(second.first_step)  # inside the call: still asking, the picks kept
    assert not panel.revealed() and panel.rows[0].chosen() == SUCCEEDS
    session.go_to(second.last_step)  # the error step: the answers show
    assert panel.revealed()
    error = second.error.strip().splitlines()[0]  # the recording's outcome: PyTorch's own words
    assert "Trying to backward through the graph a second time" in error
    assert panel.rows[0].verdict.text() == (
        f"✗ Wrong. You said “{SUCCEEDS}”; the answer is “{FAILS}”: PyTorch stopped it with “{error}”"
    )
    assert panel.rows[1].verdict.text().startswith("✓ Right: “PowBackward0")
    assert panel.rows[1].verdict.text().endswith(f"PyTorch stopped it with “{error}”")
    assert panel.rows[2].verdict.text().startswith("The answer is “x.grad = [2, 4]”: PyTorch stopped")
    session.go_to(second.last_step - 1)  # stepping back hides them again
    assert not panel.revealed() and panel.rows[0].verdict.text() == ""


def test_the_panel_is_idle_while_off(qtbot: QtBot, session: Session, two_losses) -> None:
    panel = PredictPanel(session)
    qtbot.addWidget(panel)
    session.apply(two_losses)
    session.go_to(1)
    assert panel.rows == [] and panel.call_index() is None
    with qtbot.waitSignal(panel.active_changed, timeout=1000) as blocker:
        panel.toggle()
    assert blocker.args == [True] and panel.call_index() == 0
    panel.toggle()
    assert not panel.active and panel.isHidden()
