"""Time in a program: calls and iterations on the timeline, the graph growing and letting go,
nodes alive over the whole run, versions of saved tensors. Every expectation is read from a
recording PyTorch made (``record(load_builtin(name))``), never written by hand."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMainWindow

from app.core import Program, load_builtin, record
from app.core.model.recording import Recording
from app.core.recorder.script import record_script
from app.render.dot_source import dot_source, iterations
from app.render.labels import drawn_slots, version_text
from app.render.layout import Box, layout_graph
from app.render.modules import module_groups
from app.render.qt.frames import CLUSTER_LABEL_ROOM
from app.render.qt.scene import GraphScene
from app.render.style import LEGEND, NODE_TAGS, PALETTES, node_style
from app.ui.panels.memory_chart import MemoryChart, _columns
from app.ui.panels.step_counter import StepCounter
from app.ui.panels.timeline_bar import TimelineBar
from app.ui.panels.timeline_marks import HIT_PX
from app.ui.window.actions import WindowActions

LOOPS = ["logged-loss", "rnn-no-detach", "rnn-detach", "retain-bandaid", "gan-detach"]
_RECORDINGS: dict[str, Recording] = {}


def recorded(name: str) -> Recording:
    if name not in _RECORDINGS:
        _RECORDINGS[name] = record(load_builtin(name))
    return _RECORDINGS[name]


def first_steps_of_iterations(rec: Recording) -> list[int]:
    """The oracle: the first step at which each distinct set of loop counters is seen."""
    seen: dict[tuple, int] = {}
    for step in rec.timeline.steps:
        if step.loops:
            seen.setdefault(tuple((m.line, m.index) for m in step.loops), step.index)
    return sorted(seen.values())


def _bar(qtbot, session, rec: Recording) -> TimelineBar:
    bar = TimelineBar(session)
    qtbot.addWidget(bar)
    bar.resize(1200, 90)
    bar.show()
    session.apply(rec, mode="start")
    qtbot.waitExposed(bar)
    return bar


# -- the timeline's marks ----------------------------------------------------------------
@pytest.mark.parametrize("name", [*LOOPS, "two-losses"])
def test_marks_sit_exactly_where_a_call_or_an_iteration_begins(qtbot, session, name):
    rec = recorded(name)
    bar = _bar(qtbot, session, rec)
    marks = bar.marks.marks()
    assert [m.step for m in marks if m.kind == "call"] == [c.first_step for c in rec.calls]
    assert [m.step for m in marks if m.kind == "iteration"] == first_steps_of_iterations(rec)
    assert session.iteration_stops() == first_steps_of_iterations(rec)


@pytest.mark.parametrize("name", ["logged-loss", "rnn-no-detach"])
def test_a_click_on_a_mark_jumps_to_its_step(qtbot, session, name):
    rec = recorded(name)
    bar = _bar(qtbot, session, rec)
    strip = bar.marks
    for mark in strip.marks():
        if mark.kind == "fail":
            continue
        session.go_to(session.last_index if mark.step == 0 else 0)
        x = round(strip.x_of(mark.step))
        qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(x, strip.height() // 2))
        assert session.index == mark.step, mark
        assert bar.slider.value() == mark.step


@pytest.mark.parametrize("name", ["logged-loss", "gan-detach"])
def test_a_click_on_a_marks_label_jumps_to_its_step(qtbot, session, name):
    """The label is the target a hand aims at ("call 2", "iteration 3"), not only the 2 px tick."""
    rec = recorded(name)
    bar = _bar(qtbot, session, rec)
    strip = bar.marks
    strip.grab()  # the labels are placed when the strip is drawn
    labels = strip.drawn_labels()
    assert "call" in {mark.kind for _, _, mark in labels}
    for tick, right, mark in labels:
        assert right - tick > HIT_PX  # the label's far end is out of the tick's reach
        session.go_to(session.last_index if mark.step == 0 else 0)
        y = strip.height() - 3 if mark.kind == "call" else 3
        qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(round(right) - 1, y))
        assert session.index == mark.step, mark


def test_a_failing_call_is_marked_before_it_runs_without_its_message(qtbot, session):
    rec = recorded("rnn-no-detach")
    failed = rec.failed
    assert failed is not None and failed.error
    bar = _bar(qtbot, session, rec)
    fails = [m for m in bar.marks.marks() if m.kind == "fail"]
    assert [m.step for m in fails] == [failed.first_step]
    assert fails[0].tip == "this call will fail"
    words = set(re.findall(r"[a-z]{5,}", failed.error.lower())) - {"backward"}
    tips = " ".join(m.tip for m in bar.marks.marks()).lower()
    assert not any(word in tips for word in words)  # no spoiler: the message waits for the error step


def test_no_fail_mark_when_every_call_succeeds(qtbot, session):
    bar = _bar(qtbot, session, recorded("logged-loss"))
    assert not [m for m in bar.marks.marks() if m.kind == "fail"]


def _tick_columns(strip) -> set[int]:
    """The x of every column of the strip where a call's tick is drawn (its top rows are inked)."""
    image = strip.grab().toImage()
    return {x for x in range(image.width()) if image.pixelColor(x, 1).alpha() > 128}


def test_marks_are_drawn_once_and_copied_as_the_steps_go(qtbot, session):
    rec = recorded("rnn-no-detach")
    bar = _bar(qtbot, session, rec)
    strip = bar.marks
    picture = strip.grab().toImage()
    drawn = strip.strips_drawn()
    for index in range(0, session.last_index, 3):
        session.go_to(index)
        qtbot.wait(1)
        assert strip.grab().toImage() == picture  # copied, the same pixels at every step
    assert strip.strips_drawn() == drawn
    calls = [_handle_x(bar, m.step) for m in strip.marks() if m.kind == "call"]
    assert all({x - 1, x, x + 1} & _tick_columns(strip) for x in calls)
    bar.resize(700, 90)  # the slider is shorter: the strip is drawn again, the ticks follow it
    qtbot.waitUntil(lambda: strip.width() < 650)
    moved = [_handle_x(bar, m.step) for m in strip.marks() if m.kind == "call"]
    assert moved != calls
    assert all({x - 1, x, x + 1} & _tick_columns(strip) for x in moved)
    assert strip.strips_drawn() > drawn


def _handle_x(bar, value: int) -> int:
    """The centre of the slider's handle at ``value``, asked of the slider's own style, in the
    strip's coordinates (the oracle for where a tick belongs)."""
    from PySide6.QtWidgets import QStyle, QStyleOptionSlider

    option = QStyleOptionSlider()
    bar.slider.initStyleOption(option)
    option.sliderPosition = option.sliderValue = value
    handle = bar.slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, bar.slider
    )
    return round(bar.marks.mapFrom(bar, bar.slider.mapTo(bar, handle.center())).x())


# -- stepping by iteration -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["logged-loss", "rnn-detach"])
def test_next_iteration_lands_on_the_first_step_of_each_iteration_in_turn(session, name):
    rec = recorded(name)
    session.apply(rec, mode="start")
    starts = first_steps_of_iterations(rec)
    landed = []
    while session.index < session.last_index:
        session.next_iteration()
        landed.append(session.index)
    assert landed == [s for s in starts if s > 0] + (
        [session.last_index] if starts[-1] < session.last_index else []
    )
    back = []
    while session.index > 0:
        session.previous_iteration()
        back.append(session.index)
    assert back == sorted({*starts, 0} - {session.last_index}, reverse=True)


def test_previous_iteration_goes_to_the_start_of_the_current_one_first(session):
    rec = recorded("logged-loss")
    session.apply(rec, mode="start")
    starts = first_steps_of_iterations(rec)
    session.go_to(starts[1] + 2)
    session.previous_iteration()
    assert session.index == starts[1]
    session.previous_iteration()
    assert session.index == starts[0]


def test_ctrl_arrows_are_the_iteration_keys(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    actions = WindowActions(window)
    assert actions.next_iteration.shortcut() == QKeySequence("Ctrl+Right")
    assert actions.previous_iteration.shortcut() == QKeySequence("Ctrl+Left")


def test_step_counter_names_the_iteration_and_the_call_and_wraps(qtbot, session):
    rec = recorded("logged-loss")
    counter = StepCounter(session)
    qtbot.addWidget(counter)
    session.apply(rec, mode="start")
    session.go_to(rec.calls[1].first_step)
    mark = rec.timeline[session.index].loops[-1]
    assert counter.detail.text().startswith(f"iteration {mark.index + 1} of {mark.count} · call 2 of 3")
    assert counter.detail.label.wordWrap()  # text scale 1.5 in a narrow dock: wrapped, never cut


NESTED = """\
w = torch.tensor([1.0, 2.0], requires_grad=True)
for epoch in range(2):
    for batch in range(3):
        loss = (w * (batch + 1)).sum()
        loss.backward()
"""


def test_step_counter_tells_nested_loops_apart_by_their_variables(qtbot, session):
    rec = record(Program(NESTED, name="nested"))
    counter = StepCounter(session)
    qtbot.addWidget(counter)
    session.apply(rec, mode="start")
    session.go_to(rec.calls[4].first_step)  # the fifth backward: epoch 2, its second batch
    outer, inner = rec.timeline[session.index].loops
    assert (outer.index, inner.index) == (1, 1)  # the recording's own marks
    assert counter.detail.text().startswith("epoch 2 of 2, batch 2 of 3 · call 5 of 6")


# -- nodes alive over the whole run ------------------------------------------------------------
@pytest.mark.parametrize("name", ["logged-loss", "logged-item", "rnn-detach"])
def test_the_chart_draws_alive_nodes_as_recorded(qtbot, session, name):
    rec = recorded(name)
    chart = MemoryChart(session)
    qtbot.addWidget(chart)
    session.apply(rec)
    alive = [s.alive_nodes for s in rec.timeline.steps]
    assert chart.alive_series() == alive
    assert chart.drawn_alive(7) == _columns(alive, 7)  # a narrow chart keeps each column's peak
    session.go_to(3)
    assert chart.alive_title() == f"╌ Nodes alive: {alive[3]} · peak {max(alive)} (own scale)"


def test_logging_the_loss_tensor_is_a_rising_line_and_item_is_flat(session):
    for name, rising in (("logged-loss", True), ("logged-item", False)):
        rec = recorded(name)
        ends = [rec.timeline[c.last_step].alive_nodes for c in rec.calls]  # after each iteration's backward
        assert (ends == sorted(ends) and ends[-1] > ends[0]) == rising, (name, ends)


def test_the_alive_line_changes_the_picture(qtbot, session):
    rec = recorded("logged-loss")
    chart = MemoryChart(session)
    qtbot.addWidget(chart)
    chart.resize(500, 220)
    session.apply(rec)
    with_alive = chart.grab().toImage()
    chart.setProperty("aliveColor", chart.palette().window().color())
    assert chart.grab().toImage() != with_alive


# -- the graph grows, lets go, and groups iterations -----------------------------------------------
@pytest.fixture(scope="module")
def laid_out():
    made = {}

    def make(name: str):
        if name not in made:
            rec = recorded(name)
            made[name] = (rec, layout_graph(rec.graph))
        return made[name]

    return make


@pytest.mark.parametrize("name", ["logged-item", "rnn-no-detach", "two-losses"])
def test_gone_nodes_are_drawn_gone_exactly_from_their_gone_step(qtbot, laid_out, name):
    rec, layout = laid_out(name)
    scene = GraphScene(rec, layout)
    assert any(n.gone_at_step is not None for n in rec.graph.nodes)
    for i in range(len(rec.timeline)):
        scene.show_state(rec.timeline.state(i))
        for node in rec.graph.nodes:
            item = scene.nodes[node.id]
            gone = node.gone_at_step is not None and i >= node.gone_at_step
            assert (item.state == "gone") == gone, (i, node.id)
            if gone:
                assert NODE_TAGS["gone"] in item.text and item.painted_opacity < 1.0
                for slot in drawn_slots(node):
                    assert scene.slots[(node.id, slot.name)].painted_opacity < 1.0
            built = node.created_at_step is None or i >= node.created_at_step
            assert (item.state == "hidden") == (not built), (i, node.id)


def test_gone_reads_on_a_projector_and_in_the_legend():
    for palette in PALETTES.values():
        style = node_style("op", "gone", palette)
        assert style.dash == "dash" and palette.hidden_opacity < style.opacity < 1.0
    assert "gone" in {e.state for e in LEGEND if e.box == "node"}


def test_each_loop_iteration_is_a_cluster_in_the_dot_source(laid_out):
    rec, layout = laid_out("rnn-no-detach")
    source = dot_source(rec.graph, reserve_tags=True)
    loops = {node.loops for node in rec.graph.nodes if node.loops and not node.is_leaf}
    groups = iterations(rec.graph)
    assert len(groups) == len(loops) == 2  # two iterations made nodes before the failure
    for group in groups:
        block = source.split(f'subgraph "{group.name}" {{', 1)[1].split("\n  }", 1)[0]
        members = {n.id for n in rec.graph.nodes if n.id in group.nodes}
        assert members == set(re.findall(r'^\s+"(n\d+)" \[label', block, re.MULTILINE))
        assert group.label in block
    for leaf in (n for n in rec.graph.nodes if n.is_leaf):
        assert all(leaf.id not in g.nodes for g in groups)  # parameters belong to the program
    assert set(layout.clusters) == {g.name for g in groups}  # laid out in the same one run
    for group in groups:
        frame = layout.clusters[group.name]
        for node_id in group.nodes:
            box = layout.nodes[node_id]
            assert frame.left <= box.left and box.left + box.width <= frame.left + frame.width + 0.5


def test_a_program_without_loops_has_no_clusters(laid_out):
    rec, layout = laid_out("two-losses")
    assert "cluster" not in dot_source(rec.graph) and not layout.clusters


def test_the_carried_hidden_state_chains_the_iteration_frames(qtbot, laid_out):
    rec, layout = laid_out("rnn-no-detach")
    scene = GraphScene(rec, layout)
    first, second = (g.name for g in iterations(rec.graph))
    member = {n: g.name for g in iterations(rec.graph) for n in g.nodes}
    assert any(member.get(e.src) == second and member.get(e.dst) == first for e in rec.graph.edges)
    built = {g.name: min(rec.graph.node(n).created_at_step for n in g.nodes) for g in iterations(rec.graph)}
    for i in range(len(rec.timeline)):
        scene.show_state(rec.timeline.state(i))
        for name, frame in scene.clusters.items():
            assert (frame.state == "hidden") == (i < built[name]), (i, name)


# -- frames read left to right, and nothing covers their titles --------------------------------
NESTED_LOOPS = """
import torch
import torch.nn as nn
import torch.optim as optim

model = nn.Linear(3, 1)
opt = optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
total = 0.0
for epoch in range(3):
    for batch in range(4):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        total = total + loss
"""
SUMMED_AFTER_THE_LOOP = """
import torch

w = torch.randn(3, requires_grad=True)
losses = []
for i in range(10):
    losses.append((torch.randn(3) * w).sum() ** 2)
sum(losses).backward()
"""  # each iteration hangs a little lower than the one before: a staircase of frames
SCRIPT_WITH_MODULES = """\
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
"""
PROGRAMS = {"nested-loops": NESTED_LOOPS, "summed-after-the-loop": SUMMED_AFTER_THE_LOOP}
READ_IN_ORDER = [*LOOPS, "retain-fixed", "logged-item", "accumulate-no-zero", *PROGRAMS]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The graph as drawn and its layout, for a built-in, one of ``PROGRAMS``, or a script with modules."""
    made = {}

    def make(name: str):
        if name not in made:
            if name in PROGRAMS:
                graph = record(Program(PROGRAMS[name], name=name, title=name)).graph
            elif name == "script-with-modules":
                path = tmp_path_factory.mktemp("script") / "train.py"
                path.write_text(SCRIPT_WITH_MODULES, encoding="utf-8")
                graph = record_script(path).recording.graph
            else:
                graph = recorded(name).graph
            layout = layout_graph(graph)
            assert not layout.collapsed  # the layout's boxes are the graph's own nodes
            made[name] = (graph, layout)
        return made[name]

    return make


def _share_a_row(a: Box, b: Box) -> bool:
    return a.top < b.top + b.height and b.top < a.top + a.height


def _overlap(a: Box, left: float, top: float, right: float, bottom: float) -> bool:
    return a.left < right and left < a.left + a.width and a.top < bottom and top < a.top + a.height


@pytest.mark.parametrize("name", READ_IN_ORDER)
def test_iteration_frames_read_left_to_right(drawn, name):
    """Frames that share a row are in the order the program ran them (dot_source's NOTE [reading order])."""
    graph, layout = drawn(name)
    frames = [(g.label, layout.clusters[g.name]) for g in iterations(graph)]
    beside = [(a, b) for a, b in pairwise(frames) if _share_a_row(a[1], b[1])]
    if name in ("logged-loss", *PROGRAMS):
        assert beside  # the case this guards: iterations drawn side by side
    for (first, a), (then, b) in beside:
        assert a.left + a.width <= b.left, f"{first!r} is not left of {then!r}"


@pytest.mark.parametrize("name", [*LOOPS, "gan-no-detach", *PROGRAMS, "script-with-modules"])
def test_no_box_outside_a_frame_covers_its_title(drawn, name):
    """Zoomed out, a frame's title is drawn in the band above it (``ClusterItem``); a leaf on the row
    above once sat on it (dot_source's NOTE [frame titles])."""
    graph, layout = drawn(name)
    members = {g.name: set(g.nodes) for g in (*iterations(graph), *module_groups(graph))}
    assert layout.clusters and set(layout.clusters) <= set(members)
    boxes = [
        *layout.nodes.items(),
        *((node_id, box) for (node_id, _), box in layout.slots.items()),
        *((edge.src, box) for edge, box in layout.proxies.items()),  # a proxy sits beside its user
    ]
    for frame_name, frame in layout.clusters.items():
        right, bottom = frame.left + frame.width, frame.top + frame.height
        band = (frame.left, frame.top - CLUSTER_LABEL_ROOM, right, frame.top)
        for node_id, box in boxes:
            if node_id in members[frame_name]:  # the frame still holds every box of its own
                assert _overlap(box, frame.left, frame.top, right, bottom), (frame_name, node_id)
                assert frame.top <= box.top and box.top + box.height <= bottom, (frame_name, node_id)
            else:
                assert not _overlap(box, *band), f"{node_id} covers the title of {frame_name}"


# -- versions of saved tensors --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["inplace-sigmoid", "retain-bandaid"])
def test_slot_boxes_say_saved_at_and_now_while_modified(qtbot, laid_out, name):
    rec, layout = laid_out(name)
    scene = GraphScene(rec, layout)
    saw = 0
    for i in range(len(rec.timeline)):
        state = rec.timeline.state(i)
        scene.show_state(state)
        for node in rec.graph.nodes:
            for slot in node.tensor_slots:
                key = (node.id, slot.name)
                item = scene.slots[key]
                now = state.versions.get(key)
                changed = node.id in state.visible_nodes and now is not None and now != slot.saved_version
                expected = version_text(slot.saved_version, now) if changed else ""
                assert item.note == expected, (i, key)
                assert (expected in item.lines) == changed
                if changed:
                    assert state.slots[key] == item.state == "modified"  # drawn in the modified state
                    saw += 1
    assert saw


def test_a_narrow_bar_gives_the_track_a_row_of_its_own_and_its_marks_still_jump(qtbot, session):
    rec = recorded("logged-loss")
    bar = _bar(qtbot, session, rec)
    assert not bar.track_on_own_row
    bar.resize(600, 120)
    qtbot.waitUntil(lambda: bar.track_on_own_row, timeout=2000)
    qtbot.waitUntil(lambda: bar.slider.width() > 500, timeout=2000)  # the whole width, not a sliver
    mark = [m for m in bar.marks.marks() if m.kind == "call"][-1]
    x = round(bar.marks.x_of(mark.step))
    qtbot.mouseClick(bar.marks, Qt.MouseButton.LeftButton, pos=QPoint(x, bar.marks.height() // 2))
    assert session.index == mark.step
    bar.resize(1400, 90)
    qtbot.waitUntil(lambda: not bar.track_on_own_row, timeout=2000)
