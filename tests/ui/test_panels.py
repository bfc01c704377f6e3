"""Each panel shows what the recording holds: the core recording (and PyTorch) is the oracle.

Panels get a :class:`Session` filled through ``apply`` (no worker), so every
check here is about what a panel shows, not about threads.
"""

import itertools
import re
from dataclasses import replace
from difflib import SequenceMatcher
from pathlib import Path

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core import load_builtin, record
from app.core.devices import DeviceInfo
from app.core.lesson.captions import format_values
from app.core.lesson.edits import changed_lines
from app.core.lesson.recipes import fixes_for
from app.core.model.program import Program
from app.core.model.timeline import Timeline
from app.core.model.values import Values
from app.ui.editor.code_panel import CodePanel
from app.ui.panels import device_selector as device_selector_module
from app.ui.panels.call_toggles import UNSET_TIP, CallToggles, call_sites, retain_text
from app.ui.panels.caption_bar import CaptionBar
from app.ui.panels.device_selector import DeviceSelector
from app.ui.panels.error_panel import ErrorPanel
from app.ui.panels.grad_panel import MAX_BARS, GradPanel
from app.ui.panels.memory_chart import MemoryChart
from app.ui.panels.node_details import COLUMNS, NodeDetails
from app.ui.panels.step_counter import StepCounter
from app.ui.panels.timeline_bar import TimelineBar
from app.ui.runtime.session import Session
from app.ui.runtime.settings import AppSettings
from app.ui.style import theme
from app.ui.style.breakable import unbroken
from tests.support.plain_errors import plain_forgot_retain_error
from tests.support.recorded import builtin_recording


def _panel(qtbot, cls, session):
    widget = cls(session)
    qtbot.addWidget(widget)
    return widget


def _node_id(recording, name):
    return next(n.id for n in recording.graph.nodes if n.name == name)


def _plain_torch_two_losses():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.square()
    y.sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    return x.grad


# -- node details ---------------------------------------------------------------------
def test_node_details_show_every_slot_state_as_recorded(qtbot, session, two_losses):
    details = _panel(qtbot, NodeDetails, session)
    session.apply(two_losses)
    pow_id = _node_id(two_losses, "PowBackward0")
    details.show_node(pow_id)
    node = two_losses.graph.node(pow_id)
    assert details.shown_name() == "PowBackward0"
    assert node.label in details.subtitle.text()
    for index in [*range(len(two_losses.timeline)), 2, 0]:
        session.go_to(index)
        oracle = two_losses.timeline.state(index).slots
        shown = details.slot_states()
        for slot in node.tensor_slots:
            assert shown[slot.name] == oracle[(pow_id, slot.name)], index
    column = {name: at for at, name in enumerate(COLUMNS)}
    rows = range(details.table.rowCount())
    self_row = [details.table.item(row, column["Slot"]).text() for row in rows].index("self")
    saved = next(s for s in node.saved if s.name == "self")
    assert details.table.item(self_row, column["Shape"]).text() == f"({saved.shape[0]})"
    assert details.table.item(self_row, column["Dtype"]).text() == saved.dtype
    assert details.table.item(self_row, column["Bytes"]).text() == f"{saved.nbytes} B"


def test_node_details_list_the_saved_tensors_first(qtbot, session):
    recording = builtin_recording("gan-no-detach")
    details = _panel(qtbot, NodeDetails, session)
    session.apply(recording)  # at the error step: the node whose saved tensor was freed
    node = recording.graph.node(recording.failed.failed_node)
    assert node.saved[0].kind != "tensor"  # addmm saves alpha and beta first
    slot_column = COLUMNS.index("Slot")
    names = [details.table.item(row, slot_column).text() for row in range(details.table.rowCount())]
    tensors = [s.name for s in node.saved if s.kind == "tensor"]
    assert names == tensors + [s.name for s in node.saved if s.kind != "tensor"]
    assert details.slot_states()[names[0]] == "freed"


def test_a_node_without_a_label_is_described_by_its_line(qtbot, session, tmp_path):
    """A script's module makes nodes no statement names (the LSTM's own ops): the details give the
    text of the line that made them, not "(no label)"."""
    from app.core.recorder.script import record_script

    script = tmp_path / "rnn.py"
    script.write_text(
        "import torch\nfrom torch import nn\n\nrnn = nn.RNN(3, 4)\nout, h = rnn(torch.randn(2, 1, 3))\n"
        "out.sum().backward()\n",
        encoding="utf-8",
    )
    recording = record_script(script).recording
    node = next(n for n in recording.graph.nodes if not n.label and n.line is not None)
    details = _panel(qtbot, NodeDetails, session)
    session.apply(recording)
    details.show_node(node.id)
    text = unbroken(details.subtitle.text())
    assert text.startswith(recording.program.lines[node.line - 1].strip()) and "no label" not in text


def test_node_details_follow_the_running_node_until_one_is_clicked(qtbot, session, two_losses):
    details = _panel(qtbot, NodeDetails, session)
    session.apply(two_losses)
    running = next(s.index for s in two_losses.timeline.steps if s.node is not None and s.index > 1)
    session.go_to(running)
    assert details.node_id == two_losses.timeline[running].node is not None
    details.show_node(_node_id(two_losses, "AccumulateGrad"))
    session.go_to(1)
    assert details.shown_name() == "AccumulateGrad"


def test_node_details_name_the_line_and_the_version_of_a_slot_changed_in_place(qtbot, session):
    recording = builtin_recording("inplace-sigmoid")
    details = _panel(qtbot, NodeDetails, session)
    session.apply(recording)  # at the error step
    failed = recording.failed.failed_node
    details.show_node(failed)
    node = recording.graph.node(failed)
    assert f"made by line {node.line}" in details.subtitle.text()
    state = recording.timeline.state(session.index)
    slot = node.tensor_slots[0]
    assert state.slots[(failed, slot.name)] == "modified"
    now = state.versions[(failed, slot.name)]
    assert details.slot_states()[slot.name] == f"modified (saved at v{slot.saved_version}, now v{now})"
    assert slot.saved_version != now


# -- gradients -----------------------------------------------------------------------------
def test_grad_panel_shows_the_recorded_grad_at_every_step(qtbot, session, two_losses):
    panel = _panel(qtbot, GradPanel, session)
    session.apply(two_losses)
    assert panel.leaf_names() == list(two_losses.leaves)
    for index in range(len(two_losses.timeline)):
        session.go_to(index)
        grad = two_losses.timeline.state(index).grads.get("x")
        assert panel.grad_text("x") == f"x.grad = {format_values(grad)}"
        expected = [] if grad is None else grad.tolist()
        assert panel.bars("x").values() == pytest.approx(expected)


def test_grad_panel_views_reused_for_the_next_recording_show_what_new_ones_show(qtbot, session, two_losses):

    two_leaves = builtin_recording("weight-and-input")
    panel = _panel(qtbot, GradPanel, session)
    for recording in (two_leaves, two_losses, two_leaves):  # fewer leaves, then more again
        session.apply(recording)
        fresh_session = Session()
        fresh = _panel(qtbot, GradPanel, fresh_session)
        fresh_session.apply(recording)
        assert panel.leaf_names() == fresh.leaf_names() == list(recording.leaves)
        for index in range(len(recording.timeline)):
            session.go_to(index)
            fresh_session.go_to(index)
            for leaf in recording.leaves:
                assert panel.grad_text(leaf) == fresh.grad_text(leaf)
                assert panel.history_text(leaf) == fresh.history_text(leaf)
                assert panel.bars(leaf).segments() == fresh.bars(leaf).segments()


def test_grad_panel_totals_and_contributions_match_pytorch(qtbot, session, two_losses):
    panel = _panel(qtbot, GradPanel, session)
    session.apply(two_losses)
    session.end()
    torch_grad = _plain_torch_two_losses()
    assert torch_grad.tolist() == [8.0, 16.0]
    assert panel.grad_text("x") == f"x.grad = {format_values(Values.from_list(torch_grad.tolist()))}"
    assert panel.bars("x").values() == torch_grad.tolist()
    history = panel.history_text("x")
    for info in two_losses.calls:
        share = two_losses.timeline[info.last_step].contribution["x"]
        assert f"call {info.index + 1}: +{format_values(share)}" in history
    segments = panel.bars("x").segments()
    assert [[(s.call, s.start, s.end) for s in bar] for bar in segments] == [
        [(0, 0.0, 2.0), (1, 2.0, 8.0)],
        [(0, 0.0, 4.0), (1, 4.0, 16.0)],
    ]


def _stacked_calls(recording, index, leaf):
    """The calls whose parts a bar stacks at ``index``: every finished call since ``.grad`` last
    started from nothing (its part equals ``.grad`` after it: ``zero_grad`` ran before it)."""
    calls = []
    for info in recording.calls:
        if info.last_step > index or info.error is not None:
            continue
        share = recording.timeline[info.last_step].contribution
        after = recording.grads_at_end(info.index).get(leaf)
        if share is not None and after is not None and share.get(leaf) == after:
            calls = []
        calls.append(info.index)
    return calls


@pytest.mark.parametrize("name", ["accumulate-zero-grad", "accumulate-no-zero", "gan-detach"])
def test_grad_bars_stack_the_calls_since_zero_grad_in_any_order_of_steps(qtbot, session, name):
    import random

    from app.core import load_builtin, record

    recording = record(load_builtin(name))
    panel = _panel(qtbot, GradPanel, session)
    session.apply(recording)
    order = list(range(len(recording.timeline)))
    random.Random(7).shuffle(order)  # each call's part is worked out once, whenever first needed
    for index in [*order, *range(len(order))]:
        session.go_to(index)
        state = recording.timeline.state(index)
        running = {state.step.call} if state.step.call is not None else set()
        for leaf in panel.leaf_names():
            grad = state.grads.get(leaf)
            expected = [] if grad is None else [float(v) for v in grad.flat[:MAX_BARS]]
            assert panel.bars(leaf).values() == pytest.approx(expected)
            stacked = set(_stacked_calls(recording, index, leaf)) | running
            assert {s.call for bar in panel.bars(leaf).segments() for s in bar} <= stacked


def test_panels_that_follow_the_step_keep_their_height_within_a_recording(qtbot, session):
    """NOTE [steady heights]: the texts change length at every step; the labels only grow, and the
    text they show is still the step's own."""
    from PySide6.QtWidgets import QSplitter

    recording = builtin_recording("accumulate-no-zero")
    grads, details = GradPanel(session), NodeDetails(session)
    both = QSplitter()
    both.addWidget(grads)
    both.addWidget(details)
    both.resize(700, 600)
    qtbot.addWidget(both)
    both.show()
    session.apply(recording)
    labels = [details.title, details.subtitle]
    labels += [
        label
        for leaf in grads.leaf_names()
        for label in (grads._leaves[leaf].value, grads._leaves[leaf].history)
    ]
    heights: list[list[int]] = []
    texts = set()
    for index in range(len(recording.timeline)):
        session.go_to(index)
        qtbot.wait(1)  # the layout settles as the event loop would
        heights.append([label.height() for label in labels])
        leaf = grads.leaf_names()[0]
        texts.add(grads.history_text(leaf))
        state = recording.timeline.state(index)
        assert grads.grad_text(leaf) == f"{leaf}.grad = {format_values(state.grads.get(leaf))}"
    assert len(texts) > 3  # the history did change length as the calls went on
    for before, after in itertools.pairwise(heights):
        assert all(b <= a for b, a in zip(before, after, strict=True)), (before, after)
    subtitle = details.subtitle
    both.resize(1400, 600)  # wider: the text wraps anew and the label fits it afresh
    qtbot.waitUntil(lambda: subtitle.height() == subtitle.heightForWidth(subtitle.width()))
    tallest = max(h[1] for h in heights)
    session.go_to(0)  # the shortest text, after taller ones: still as tall as before at this width
    qtbot.wait(1)
    kept = subtitle.height()
    assert kept >= subtitle.heightForWidth(subtitle.width())
    assert kept <= tallest
    both.resize(700, 600)
    for index in range(len(recording.timeline)):  # the tallest text at this width again
        session.go_to(index)
        qtbot.wait(1)
    tallest_here = subtitle.height()
    session.apply(record(load_builtin("two-losses")))  # another recording: fitted afresh
    qtbot.waitUntil(lambda: subtitle.height() == subtitle.heightForWidth(subtitle.width()))
    assert subtitle.height() < tallest_here


# -- code, caption, counter, memory ------------------------------------------------------------
def expected_marks(recording, index):
    """1-based lines the code panel marks at ``index``: the running call's lines, else the step's line."""
    step = recording.timeline[index]
    if step.call is not None:
        call = recording.calls[step.call].call
        return list(range(call.line, call.end_line + 1))
    return [] if step.line is None else [step.line]


def test_code_panel_shows_the_program_with_numbers_and_marks_each_steps_line(qtbot, session, two_losses):
    panel = _panel(qtbot, CodePanel, session)
    session.apply(two_losses)
    lines = two_losses.program.lines
    assert panel.text().splitlines() == lines  # the numbers are in the margin, one per line
    assert panel.blockCount() == len(two_losses.program.code.split("\n")) and panel.line_numbers().width() > 0
    for index in [*range(len(two_losses.timeline)), 0]:
        session.go_to(index)
        assert panel.marked_line_numbers() == expected_marks(two_losses, index), index
    session.home()
    assert lines[panel.marked_line_numbers()[0] - 1] == "y = x.square()"
    session.go_to(two_losses.calls[1].first_step)
    assert [lines[n - 1] for n in panel.marked_line_numbers()] == ["(y * 3).sum().backward()"]


def test_code_panel_marks_every_line_of_a_call_written_over_several_lines(qtbot, session):
    code = (
        "import torch\n\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.square()\n"
        "y.sum().backward(\n    retain_graph=True,\n)\n"
    )
    recording = record(Program(code))
    panel = _panel(qtbot, CodePanel, session)
    session.apply(recording)
    session.go_to(recording.calls[0].first_step)
    assert panel.marked_line_numbers() == [5, 6, 7]
    assert [panel.marker(line) for line in range(3, 8)] == ["", "▶", "▶", "▶", ""]


WRAPPING_PROGRAM = """import torch
import torch.nn.functional as F

model = torch.nn.Linear(8, 8)
loss_fn = torch.nn.MSELoss()
x = torch.linspace(-1.5, 2.25, 8).reshape(1, 8)
y = torch.zeros(1, 8)
for step in range(2):
    h = F.layer_norm(model(x), [8])
    loss = loss_fn(h, y) + 0.001 * model.weight.pow(2).sum()
    loss.backward()
print(model.weight.grad.abs().max(), loss_fn(model(x), y).item())
"""


def _shown_lines(panel: CodePanel) -> list[list[tuple[int, int]]]:
    """Each program line as the panel shows it: (start, end) columns of its lines on screen, as
    Qt laid them out."""
    shown = []
    block = panel.document().firstBlock()
    while block.isValid():
        panel.blockBoundingRect(block)  # laid out, as painting it would be
        layout = block.layout()
        lines = [layout.lineAt(i) for i in range(layout.lineCount())]
        shown.append([(line.textStart(), line.textStart() + line.textLength()) for line in lines])
        block = block.next()
    return shown


def _tokens(code: str) -> dict[int, list[tuple[int, int, str]]]:
    """Python's own tokenizer (the oracle): row -> (start, end, text) of each name, number and
    operator; strings and comments are prose, which may wrap at their spaces."""
    import io
    import tokenize

    rows: dict[int, list[tuple[int, int, str]]] = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP):
            rows.setdefault(token.start[0], []).append((token.start[1], token.end[1], token.string))
    return rows


def _cut_tokens(panel: CodePanel, code: str) -> list[tuple[int, str, list[str]]]:
    """(row, token, lines on screen) for each token a line on screen begins or ends inside."""
    tokens, cut = _tokens(code), []
    for row, (text, lines) in enumerate(zip(code.split("\n"), _shown_lines(panel), strict=True), start=1):
        ends = {end for _, end in lines[:-1]}
        for start, end, token in tokens.get(row, ()):
            if any(start < at < end for at in ends):
                cut.append((row, token, [text[a:b] for a, b in lines]))
    return cut


def test_code_panel_wraps_long_lines_between_tokens_never_inside_a_name(qtbot, session):
    """A narrow dock wraps the code: no line on screen begins or ends inside a name, a number or
    an operator (``F.layer_nor`` / ``m(h, [8])``), at any width down to the longest name's."""
    recording = record(Program(WRAPPING_PROGRAM))
    panel = _panel(qtbot, CodePanel, session)
    panel.set_wrapped(True)
    session.apply(recording)
    panel.show()
    qtbot.waitExposed(panel)
    character = panel.fontMetrics().horizontalAdvance("x")
    widths, wrapped = set(), 0
    for columns in range(12, 60, 2):
        panel.resize(panel.line_number_width() + (columns + 4) * character + 40, 600)
        room = round(panel.document().firstBlock().layout().lineAt(0).width() / character)
        assert room >= len("layer_norm"), room  # no token is wider than a line: none may be cut
        widths.add(room)
        assert _cut_tokens(panel, WRAPPING_PROGRAM) == [], room
        shown = _shown_lines(panel)
        wrapped += sum(len(lines) > 1 for lines in shown)
        assert panel.document().lineCount() == sum(map(len, shown))  # what the scroll bar counts
    assert len(widths) > 10 and wrapped > 20  # many widths, and lines that did wrap at them
    assert panel.text() == recording.program.code  # only the screen's lines differ, not the text


def test_code_panel_cuts_a_name_wider_than_the_panel_anywhere_and_shows_it_whole(qtbot, session):
    name = "a_name_written_far_wider_than_any_narrow_dock_would_show_on_one_line"
    panel = _panel(qtbot, CodePanel, session)
    panel.set_wrapped(True)
    panel.write(f"x = {name} + 1\n")
    panel.show()
    qtbot.waitExposed(panel)
    panel.resize(panel.line_number_width() + 20 * panel.fontMetrics().horizontalAdvance("x") + 40, 300)
    block = panel.document().firstBlock()
    panel.blockBoundingRect(block)
    layout = block.layout()
    lines = [layout.lineAt(i) for i in range(layout.lineCount())]
    pieces = [block.text()[line.textStart() : line.textStart() + line.textLength()] for line in lines]
    assert "".join(pieces) == block.text() and len(pieces) > 3
    assert pieces[0] == "x = "  # the name begins a line of its own, then is cut where it must be
    assert all(line.naturalTextWidth() <= line.width() for line in lines)  # nothing runs off the edge


def test_typing_in_a_wrapped_line_keeps_the_programs_text_and_wraps_it_between_tokens(qtbot, session):
    recording = record(Program(WRAPPING_PROGRAM))
    panel = _panel(qtbot, CodePanel, session)
    panel.set_wrapped(True)
    session.apply(recording)
    panel.show()
    qtbot.waitExposed(panel)
    panel.resize(panel.line_number_width() + 16 * panel.fontMetrics().horizontalAdvance("x") + 40, 600)
    line = panel.document().findBlockByNumber(8)  # h = F.layer_norm(model(x), [8])
    cursor = panel.textCursor()
    cursor.setPosition(line.position() + line.length() - 1)
    panel.setTextCursor(cursor)
    qtbot.keyClicks(panel, " * scale_of_layer")
    typed = WRAPPING_PROGRAM.replace("[8])\n", "[8]) * scale_of_layer\n", 1)
    assert panel.text() == typed
    assert len(_shown_lines(panel)[8]) > 2 and _cut_tokens(panel, typed) == []
    panel.selectAll()
    panel.copy()
    assert QApplication.clipboard().text() == typed  # copied as typed: no character was added


def test_caption_and_counter_follow_the_step(qtbot, session, two_losses):
    caption = _panel(qtbot, CaptionBar, session)
    counter = _panel(qtbot, StepCounter, session)
    session.apply(two_losses)
    last = len(two_losses.timeline) - 1
    for index in range(last + 1):
        session.go_to(index)
        assert caption.caption() == two_losses.timeline[index].caption
        assert counter.number.text() == f"Step {index} / {last}"
    assert counter.detail.text() == f"line {two_losses.timeline[last].line}"  # the statement after call 2
    session.go_to(two_losses.calls[1].last_step)
    assert counter.detail.text() == "call 2 of 2 · finished"


def test_counter_says_which_iteration_runs_inside_a_loop(qtbot, session):
    recording = builtin_recording("rnn-no-detach")
    counter = _panel(qtbot, StepCounter, session)
    session.apply(recording)
    for index in range(len(recording.timeline)):
        session.go_to(index)
        step = recording.timeline[index]
        mark = step.loops[-1]
        assert counter.detail.text().startswith(f"iteration {mark.index + 1} of {mark.count}"), index
    assert counter.detail.text() == f"iteration 2 of 3 · call 2 of {len(recording.calls)} · FAILED"


def test_memory_chart_draws_the_recorded_bytes_and_marks_the_step(qtbot, session, two_losses):
    chart = _panel(qtbot, MemoryChart, session)
    session.apply(two_losses)
    assert chart.saved_series() == [s.saved_bytes for s in two_losses.timeline.steps]
    assert chart.device_series() is None  # CPU: no allocator line
    session.go_to(4)
    assert chart.marker() == 4
    chart.resize(400, 200)
    chart.show()
    qtbot.mouseClick(
        chart, Qt.MouseButton.LeftButton, pos=chart.rect().bottomRight() - chart.rect().topLeft()
    )
    assert session.index == session.last_index  # a click on the right edge jumps to the last step


def test_a_long_memory_series_is_drawn_a_turn_after_the_first_paint(qtbot, session, two_losses, monkeypatch):
    """NOTE [chart cache]: the first paint shows the title and marker, a timer then draws the series,
    the same picture as drawing it at once."""
    import app.ui.panels.memory_chart as chart_module

    at_once = _panel(qtbot, MemoryChart, session)
    at_once.resize(400, 200)
    session.apply(two_losses)
    expected = at_once.grab().toImage()
    monkeypatch.setattr(chart_module, "DRAW_LATER_STEPS", 0)
    later = _panel(qtbot, MemoryChart, session)
    later.resize(400, 200)
    session.apply(two_losses)
    first = later.grab().toImage()
    assert first != expected  # no series yet
    qtbot.waitUntil(lambda: later.grab().toImage() == expected, timeout=2000)


def test_memory_chart_draws_device_memory_when_the_recording_has_it(qtbot, session, two_losses):
    chart = _panel(qtbot, MemoryChart, session)
    steps = tuple(replace(s, device_bytes=512 * (i + 1)) for i, s in enumerate(two_losses.timeline.steps))
    session.apply(replace(two_losses, timeline=Timeline(steps)))  # what a CUDA recording carries
    assert chart.device_series() == [512 * (i + 1) for i in range(len(steps))]
    assert chart.saved_series() == [s.saved_bytes for s in steps]


# -- errors and fixes ----------------------------------------------------------------------------
def test_error_panel_shows_pytorchs_message_and_the_freeing_call(qtbot, session, forgot_retain):
    panel = _panel(qtbot, ErrorPanel, session)
    session.apply(forgot_retain)  # shown from the failing step
    assert session.index == forgot_retain.failed.last_step
    assert not panel.isHidden()
    assert panel.message.text() == plain_forgot_retain_error()
    assert "PowBackward0" in panel.title.text()
    assert f"(line {forgot_retain.failed.call.line})" in panel.title.text()
    explanation = panel.explanation.text()
    assert "saved self" in explanation
    freed_by = forgot_retain.freed_by[(forgot_retain.failed.failed_node, "self")]
    line = forgot_retain.calls[freed_by].call.line
    assert f"call {freed_by + 1} (line {line}, step " in explanation


def _longest_common(a: str, b: str) -> str:
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return a[match.a : match.a + match.size]


@pytest.mark.parametrize("name", ["forgot-retain", "gan-no-detach", "rnn-no-detach", "inplace-sigmoid"])
def test_the_why_line_adds_to_the_caption_instead_of_saying_it_again(qtbot, session, name):
    """The caption and the error panel show together at the error step: the "Why" line names the
    node and its saved tensor, but says what the caption does not (the line that freed or wrote
    into it), with no phrase of the caption's repeated."""
    recording = record(load_builtin(name))
    panel, caption = _panel(qtbot, ErrorPanel, session), _panel(qtbot, CaptionBar, session)
    session.apply(recording)
    info = recording.failed
    assert not panel.isHidden() and session.index == info.last_step
    said, why = caption.caption(), panel.explanation.text()
    node = recording.graph.node(info.failed_node)
    state = recording.timeline.state(info.last_step).slots
    slot = next(s.name for s in node.tensor_slots if state.get((node.id, s.name)) in ("freed", "modified"))
    assert why.startswith("Why: ") and node.name in why and f"saved {slot}" in why
    assert len(_longest_common(said, why)) < 25, _longest_common(said, why)
    lines = {int(n) for n in re.findall(r"[Ll]ine (\d+)", why)} - {
        int(n) for n in re.findall(r"line (\d+)", said)
    }
    assert lines, (said, why)  # a line of the program the caption does not name


def test_error_panel_appears_only_at_the_error_step(qtbot, session, forgot_retain):
    panel = _panel(qtbot, ErrorPanel, session)
    session.apply(forgot_retain)
    error_step = forgot_retain.failed.last_step
    for index in range(len(forgot_retain.timeline)):
        session.go_to(index)
        assert panel.isHidden() == (index != error_step), index


def test_both_fixes_are_program_edits_that_pytorch_accepts(qtbot, session, forgot_retain):
    panel = _panel(qtbot, ErrorPanel, session)
    with qtbot.waitSignal(panel.lesson_shown, timeout=60_000):  # found and proven on a pool thread
        session.apply(forgot_retain)
    assert panel.fixes == fixes_for(forgot_retain)
    assert [f.title.split(" on ")[0] for f in panel.fixes] == [
        "retain_graph=True",
        "add the losses, one backward",
    ]
    old = forgot_retain.program.code
    for button, code, fix in zip(panel.fix_buttons, panel.fix_codes, panel.fixes, strict=True):
        assert not button.isHidden() and fix.title in button.text()
        mark = "; same .grad as retaining the graph" if fix.title.startswith("add") else ""
        assert code.text() == "\n".join([*changed_lines(old, fix.code), f"✓ recorded: no error{mark}"])
        fixed = record(forgot_retain.program.with_code(fix.code))
        assert fixed.failed is None
        assert fixed.grads_at_end(len(fixed.calls) - 1)["x"].tolist() == _plain_torch_two_losses().tolist()
    asked = []
    session.change_program = asked.append
    for button in panel.fix_buttons:
        button.click()
    assert asked == [forgot_retain.program.with_code(f.code) for f in panel.fixes]


def test_a_refused_call_shows_pytorchs_message_without_fixes(qtbot, session, two_losses):
    panel = _panel(qtbot, ErrorPanel, session)
    code = two_losses.program.code.replace("y.sum().backward(retain_graph=True)", "y.backward()")
    refused = record(two_losses.program.with_code(code))  # a non-scalar loss
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.square().backward()
    session.apply(refused)
    assert not panel.isHidden()
    assert panel.message.text() == str(info.value)
    assert "refused" in panel.explanation.text()
    assert panel.fixes == []
    assert all(b.isHidden() for b in panel.fix_buttons)


def test_a_program_error_outside_any_call_shows_its_message_and_line(qtbot, session):
    panel = _panel(qtbot, ErrorPanel, session)
    recording = record(Program("import torch\n\nx = torch.ones(2)\ny = x @ torch.ones(3)\n"))
    with pytest.raises(RuntimeError) as info:
        torch.ones(2) @ torch.ones(3)
    session.apply(recording)
    assert recording.failed is None and recording.error_line == 4
    assert session.index == session.last_index
    assert not panel.isHidden()
    assert "Line 4" in panel.title.text()
    assert str(info.value) in panel.message.text()
    session.home()
    assert panel.isHidden() or session.last_index == 0


def test_error_panel_hides_without_a_failure(qtbot, session, two_losses, forgot_retain):
    panel = _panel(qtbot, ErrorPanel, session)
    session.apply(forgot_retain)
    session.apply(two_losses)
    assert panel.isHidden()
    assert panel.fixes == []


# -- call toggles ------------------------------------------------------------------------------
def test_call_toggles_show_each_calls_flags(qtbot, session, two_losses):
    toggles = _panel(qtbot, CallToggles, session)
    session.apply(two_losses)
    calls = [info.call for info in two_losses.calls]
    assert [c.retain_graph for c in calls] == [True, None]
    # two states only: ticked when the call keeps its graph, its unset value included
    assert [b.isTristate() for b in toggles.retain_boxes] == [False, False]
    assert [b.checkState() for b in toggles.retain_boxes] == [Qt.CheckState.Checked, Qt.CheckState.Unchecked]
    unset = toggles.retain_boxes[1]
    assert UNSET_TIP in unset.toolTip()
    assert f"unset → {calls[1].effective_retain}" in unset.text()
    assert [b.isChecked() for b in toggles.create_boxes] == [c.create_graph for c in calls]


def test_unticking_retain_asks_for_the_edited_program(qtbot, session, two_losses):
    toggles = _panel(qtbot, CallToggles, session)
    session.apply(two_losses)
    asked = []
    session.change_program = asked.append
    toggles.retain_boxes[0].click()  # Checked -> Unchecked
    toggles.create_boxes[1].click()
    code = two_losses.program.code
    assert asked == [
        two_losses.program.with_code(
            code.replace("y.sum().backward(retain_graph=True)", "y.sum().backward(retain_graph=False)")
        ),
        two_losses.program.with_code(
            code.replace("(y * 3).sum().backward()", "(y * 3).sum().backward(create_graph=True)")
        ),
    ]
    assert toggles.retain_boxes[0].text() == "retain_graph=False"


def test_a_toggle_records_the_edited_program_and_undo_takes_it_back(qtbot, session, two_losses):
    toggles = _panel(qtbot, CallToggles, session)
    session.apply(two_losses)
    with qtbot.waitSignal(session.recording_applied, timeout=60_000) as blocker:
        toggles.retain_boxes[0].click()  # Checked -> Unchecked: the second backward fails
    recording = blocker.args[0]
    assert "y.sum().backward(retain_graph=False)" in recording.program.code
    assert recording.failed is not None and recording.failed.index == 1
    assert toggles.retain_boxes[0].checkState() == Qt.CheckState.Unchecked
    assert session.can_undo
    with qtbot.waitSignal(session.recording_applied, timeout=60_000) as blocker:
        session.undo()
    assert blocker.args[0].program == two_losses.program
    assert not session.can_undo


def test_a_call_in_a_loop_is_one_row_with_its_count(qtbot, session):
    recording = builtin_recording("rnn-detach")
    toggles = _panel(qtbot, CallToggles, session)
    session.apply(recording)
    call = recording.calls[0].call
    assert len(recording.calls) == 3 and {(i.call.line, i.call.col) for i in recording.calls} == {
        (call.line, call.col)
    }
    assert toggles.call_texts() == [f"Line {call.line}: loss.backward()  ×3"]
    asked = []
    session.change_program = asked.append
    toggles.create_boxes[0].click()
    assert asked == [
        recording.program.with_code(
            recording.program.code.replace("    loss.backward()", "    loss.backward(create_graph=True)")
        )
    ]


def test_call_rows_reused_for_the_next_recording_show_what_new_ones_show(qtbot, session, two_losses):
    """Rows are reused across recordings with more or fewer calls; showing one never records again."""
    toggles = _panel(qtbot, CallToggles, session)
    asked = []
    session.rerecord = asked.append
    session.change_program = asked.append
    session.apply(two_losses)
    first_box = toggles.retain_boxes[0]
    counts = set()
    for name in ("higher-derivative", "forgot-retain", "summed-loss", "rnn-detach", "two-losses"):
        recording = record(load_builtin(name))
        counts.add(len(call_sites(recording)))
        session.apply(recording)
        fresh_session = Session()
        fresh = _panel(qtbot, CallToggles, fresh_session)
        fresh_session.apply(recording)

        def shown(panel):
            return (
                panel.call_texts(),
                [(b.text(), b.checkState(), b.toolTip()) for b in panel.retain_boxes],
                [(b.text(), b.isChecked(), b.toolTip()) for b in panel.create_boxes],
            )

        assert shown(toggles) == shown(fresh)
        sites = call_sites(recording)
        calls = [site.call for site in sites]
        assert toggles.call_texts() == [
            f"Line {c.line}: {c.text}" + (f"  ×{s.calls}" if s.calls > 1 else "")
            for c, s in zip(calls, sites, strict=True)
        ]
        assert [b.text() for b in toggles.retain_boxes] == [retain_text(c) for c in calls]
        assert [b.isChecked() for b in toggles.retain_boxes] == [c.effective_retain for c in calls]
        assert [b.isChecked() for b in toggles.create_boxes] == [c.create_graph for c in calls]
    assert len(counts) > 1  # the sequence grows and shrinks the rows
    assert toggles.retain_boxes[0] is first_box
    assert asked == []


# -- devices ------------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only listing")
def test_device_selector_lists_cpu_and_disables_cuda_with_the_reason(qtbot, session, two_losses):
    from app.child.client import POOL, record_in_child
    from app.core.devices import list_devices

    record_in_child("two-losses")  # the recording child lists the devices: its torch owns them
    assert [d.name for d in POOL.devices or ()] == [d.name for d in list_devices()]
    selector = _panel(qtbot, DeviceSelector, session)
    session.apply(two_losses)
    names = selector.device_names()
    assert names[0] == "cpu"
    assert selector.item_for("cpu").isEnabled()
    cuda = selector.item_for("cuda")
    assert cuda is not None and not cuda.isEnabled()
    assert "CUDA" in cuda.toolTip()
    asked = []
    session.set_device = asked.append
    selector.choose("cuda")
    assert asked == []  # a disabled device cannot be chosen
    assert selector.current_device() == "cpu"


def test_device_selector_offers_every_reported_device(qtbot, session, two_losses, monkeypatch):
    fake = [
        DeviceInfo("cpu", "CPU", True),
        DeviceInfo("cuda:0", "Big GPU (cuda:0)", True),
        DeviceInfo("cuda:1", "Small GPU (cuda:1)", True),
        DeviceInfo("mps", "Apple GPU (MPS)", False, "MPS needs macOS"),
    ]
    monkeypatch.setattr("app.ui.panels.device_selector._devices", lambda: fake)
    selector = _panel(qtbot, DeviceSelector, session)
    session.apply(two_losses)
    assert selector.device_names() == ["cpu", "cuda:0", "cuda:1", "mps"]
    assert [selector.item_for(n).isEnabled() for n in selector.device_names()] == [True, True, True, False]
    assert selector.item_for("mps").toolTip() == "MPS needs macOS"
    asked = []
    monkeypatch.setattr(session, "set_device", asked.append)
    selector.choose("cuda:1")
    assert asked == ["cuda:1"]
    session.failed.emit("CUDA error: device-side assert")  # the recording failed: back to what is shown
    assert selector.current_device() == "cpu"
    assert Qt.ItemDataRole.UserRole == device_selector_module.NAME_ROLE


# -- timeline bar ---------------------------------------------------------------------------------
def test_timeline_bar_buttons_and_slider_drive_the_session(qtbot, session, two_losses):
    bar = _panel(qtbot, TimelineBar, session)
    session.apply(two_losses)
    last = len(two_losses.timeline) - 1
    assert bar.slider.maximum() == last
    bar.next_button.click()
    assert session.index == 1 and bar.slider.value() == 1
    bar.next_call_button.click()
    assert session.index == two_losses.calls[0].last_step
    bar.end_button.click()
    assert session.index == last
    assert not bar.next_button.isEnabled()
    bar.prev_call_button.click()
    assert session.index == two_losses.calls[1].last_step  # a forward step follows the last call
    bar.prev_call_button.click()
    assert session.index == two_losses.calls[0].last_step
    bar.prev_button.click()
    assert session.index == two_losses.calls[0].last_step - 1
    bar.home_button.click()
    assert session.index == 0
    bar.slider.setValue(5)
    assert session.index == 5
    bar.play_button.click()
    assert session.playing and "Pause" in bar.play_button.text()
    bar.play_button.click()
    assert not session.playing and "Play" in bar.play_button.text()


# -- theme and settings ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["light", "dark", "projector"])
def test_theme_combines_the_base_file_with_its_own_file_only(name):
    files = [p.name for p in theme.theme_files(name)]
    assert files == ["00-base.qss", f"10-{name}.qss"]
    sheet = theme.stylesheet(name, 1.5)
    assert "$" not in sheet  # every size placeholder filled in
    assert f"font-size: {theme.BASE_PT * 1.5:.1f}pt" in sheet


def test_font_sizes_scale_with_the_setting():
    small, large = theme.font_sizes(1.0), theme.font_sizes(2.0)
    for key in small:
        assert float(large[key][:-2]) == pytest.approx(2 * float(small[key][:-2]), abs=0.1)


def test_settings_round_trip_in_an_isolated_file(tmp_path: Path):
    path = tmp_path / "settings.ini"
    first = AppSettings(path)
    assert (first.theme, first.font_scale, first.last_program) == ("light", 1.0, "two-losses")
    first.theme, first.font_scale, first.last_program = "projector", 1.7, "forgot-retain"
    first.sync()
    second = AppSettings(path)
    assert (second.theme, second.font_scale, second.last_program) == ("projector", 1.7, "forgot-retain")
    second.theme, second.font_scale = "neon", 99
    assert (second.theme, second.font_scale) == ("light", 3.0)  # unknown theme, clamped scale


def test_memory_chart_columns_keep_every_peak() -> None:
    """Thousands of steps are drawn one pixel column each, as the largest value it covers."""
    import random

    from app.ui.panels.memory_chart import _columns

    assert _columns([1, 5, 2, 2, 9, 0], 3) == [5, 2, 9]
    assert _columns([1, 2], 10) == [1, 2]  # fewer steps than columns: drawn as they are
    rng = random.Random(7)
    values = [rng.randrange(10**6) for _ in range(10_007)]
    columns = _columns(values, 613)
    assert len(columns) == 613 and max(columns) == max(values)
    # every step lies in exactly one column, and that column is at least as high
    covered = [c * len(values) // 613 for c in range(614)]
    for c, value in enumerate(columns):
        assert value == max(values[covered[c] : covered[c + 1]])


def test_a_long_node_name_wraps_at_its_words(qtbot):
    """At a large text size a name like BinaryCrossEntropyBackward0 is wider than a narrow dock:
    shown breakable, it wraps at its inner words and reads the same; short names stay whole."""
    from PySide6.QtWidgets import QLabel

    from app.ui.style.breakable import BREAK, breakable, unbroken

    name = "BinaryCrossEntropyBackward0"
    assert breakable(f"{name} ran").split(BREAK) == ["Binary", "Cross", "Entropy", "Backward0 ran"]
    assert breakable("AccumulateGrad ran and PowBackward0") == "AccumulateGrad ran and PowBackward0"
    assert unbroken(breakable(name)) == name
    plain, wrapping = QLabel(name), QLabel(breakable(name))
    for label in (plain, wrapping):
        label.setWordWrap(True)
        label.setStyleSheet("QLabel { font-size: 28pt; font-weight: bold; }")
        qtbot.addWidget(label)
    assert wrapping.minimumSizeHint().width() < plain.minimumSizeHint().width() / 2


def test_code_wraps_at_its_dots_and_reads_the_same() -> None:
    from app.ui.style.breakable import BREAK, breakable_code, unbroken

    call = "y.sum().backward(retain_graph=True)"
    # at the points the Code panel wraps at (code_breaks): an empty "()" and a keyword stay whole
    assert breakable_code(call).split(BREAK) == ["y.", "sum().", "backward(", "retain_graph=True)"]
    assert unbroken(breakable_code(call)) == call and breakable_code("x.grad") == "x.grad"


def test_the_memory_charts_call_labels_never_overlap_and_the_last_is_named() -> None:
    from app.ui.panels.memory_chart import named_stops

    xs, widths = [100.0, 105.0, 140.0, 300.0], [40.0] * 4
    named = named_stops(xs, widths, 4.0)
    assert named[-1] == 3 and named == sorted(named)
    spans = [(xs[i] - widths[i], xs[i]) for i in named]
    assert all(right + 4.0 <= left for (_, right), (left, _) in itertools.pairwise(spans))
    assert named_stops([10.0, 200.0], [40.0, 40.0], 4.0) == [0, 1]  # room for both: both named


def test_grad_panel_shows_a_name_holding_a_copy_with_grad_none_as_pytorch_does(qtbot, session, tmp_path):
    """``inputs = inputs.to(...)`` after ``inputs.requires_grad = True``: PyTorch's ``inputs.grad``
    is None with a warning; the leaf's own gradient is in the row of the line that named it."""
    import contextlib
    import io
    import runpy
    import warnings

    from app.core.recorder.script import record_script
    from tests.core.recorder.test_leaf_names import LOST_LEAF

    path = tmp_path / "lost.py"
    path.write_text(LOST_LEAF, encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plain = runpy.run_path(str(path), run_name="__main__")
        plain_grad = plain["inputs"].grad
    assert plain_grad is None and any("not a leaf Tensor" in str(w.message) for w in caught)
    recording = record_script(path, stdout=io.StringIO()).recording
    panel = _panel(qtbot, GradPanel, session)
    session.apply(recording)
    session.go_to(len(recording.timeline) - 1)
    assert panel.leaf_names() == ["inputs (line 5)"]
    assert panel.copy_text().startswith(
        f"inputs.grad = {plain_grad}: inputs now holds a copy that is not a leaf"
    )
    assert "backward()" in panel.copy_text() and "retain_grad()" in panel.copy_text()
    leaf = recording.timeline.state(len(recording.timeline) - 1).grads["inputs (line 5)"]
    assert leaf is not None and list(leaf.flat) == pytest.approx(
        (2 * plain["inputs"].detach()).flatten().tolist()
    )
    session.apply(two_losses_recording := builtin_recording("forgot-retain"))
    assert panel.copy_text() == "" and "x" in two_losses_recording.leaves
