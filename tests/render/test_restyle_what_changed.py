"""A step restyles what changed and what is seen (restyle_later.py's NOTE [restyle what is seen]).

Counted, never timed: how many items a step restyles, and whether the change sets of hidden
kinds (saved values, edges) are made at all while the overview shows. The oracle for what is
drawn is the per-node definition (``ShownStates.node_state`` of every member of a module's box)
and a scene restyled eagerly at every step.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from app.core.recorder.script import record_script
from app.render.layout import layout_graph
from app.render.modules import module_groups
from app.render.qt.picture import png_bytes
from app.render.states import NODE_SUMMARY, DrawnStates, ShownStates

# two calls (the first keeps the graph), then the optimizer's step outside any call: the step
# after each call's end turns every node the call ran from "done" back to "idle"
SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 4)
out = model(x)
first = out.pow(2).mean()
first.backward(retain_graph=True)
second = out.abs().sum()
second.backward()
opt.step()
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("script")) / "mlp_two_calls.py"
    path.write_text(SCRIPT, encoding="utf-8")
    recording = record_script(path).recording
    assert len(recording.calls) == 2
    return recording


@pytest.fixture(scope="module")
def collapsed(recorded):
    names = frozenset(g.name for g in module_groups(recorded.graph))
    return recorded, layout_graph(recorded.graph, collapsed=names)


def _call_boundaries(recording) -> list[int]:
    """Steps whose call differs from the step before's: where every node the call ran changes."""
    steps = recording.timeline.steps
    return [s.index for s in steps[1:] if s.call != steps[s.index - 1].call]


def _index_looks(monkeypatch) -> list[tuple]:
    """Each look the items left for later take at the scene's index: the areas asked for."""
    from app.render.qt import off_screen

    looks: list[tuple] = []
    within = off_screen.OffScreen._keys_within
    monkeypatch.setattr(
        off_screen.OffScreen,
        "_keys_within",
        lambda self, *areas: (looks.append(areas), within(self, *areas))[1],
    )
    return looks


def _zoomed_at_the_last_call_end(qtbot, recording):
    """A small view zoomed in on a corner of the graph: the node that ran just before the last
    call's end, and its neighbours. Gives the view, its layout and that call end's step."""
    from app.ui.graph.graph_view import GraphView

    lay = layout_graph(recording.graph)
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(320, 240)
    view.show()
    view.set_model(recording, lay, progressive=False)
    view.camera.set_zoom(2.0)
    boundary = _call_boundaries(recording)[-1]
    view.centerOn(
        view.graph_scene.nodes[recording.timeline.steps[boundary - 1].node or recording.graph.nodes[0].id]
    )
    return view, lay, boundary


def test_a_box_sums_up_its_members_as_each_members_own_state_says(recorded):
    """The set operations of ``summary_state`` against a call of ``node_state`` per member."""
    shown = ShownStates(recorded)
    groups = module_groups(recorded.graph)
    for chosen in ({g.name for g in groups}, {groups[0].name}):
        drawn = DrawnStates(shown, _folded(recorded, chosen))
        seen = set()
        for index in range(len(recorded.timeline)):
            state = recorded.timeline.state(index)
            for box, members in drawn.folded.members.items():
                found = {shown.node_state(state, m) for m in members}
                expected = next(s for s in NODE_SUMMARY if s in found)
                assert drawn.node_state(state, box) == expected, (index, box)
                assert dict(drawn.node_states(state, [box])) == {box: expected}
                seen.add(expected)
        assert {"idle", "running", "done"} <= seen  # the cases the sums tell apart were met


def _folded(recording, names):
    from app.render.modules import fold

    return fold(recording.graph, names)


def test_a_step_in_the_overview_makes_no_change_set_of_hidden_items(qtbot, collapsed, monkeypatch):
    """Fitted, a big graph shows only dots: no saved value, edge or box is restyled, and the
    slots' and edges' changes are not even looked up, also where a call ends."""
    from app.render.qt.scene import GraphScene

    rec, lay = collapsed
    scene = GraphScene(rec, lay)
    scene.set_overview(True)
    scene.set_details(False)
    asked = []
    real_changes = scene.drawn.changes
    monkeypatch.setattr(scene.drawn, "changes", lambda *a: asked.append(a) or real_changes(*a))
    boundaries = _call_boundaries(rec)
    assert len(boundaries) >= 3  # each call's start, and the steps after its end
    for index in range(len(rec.timeline)):
        scene.show_state(rec.timeline.state(index))
    for index in reversed(range(len(rec.timeline))):
        scene.show_state(rec.timeline.state(index))
    assert asked == [] and scene.restyled == 0
    eager = GraphScene(rec, lay)
    eager.set_overview(True)
    eager.show_state(scene.state)
    assert scene.overview_drawing.colours == eager.overview_drawing.colours  # every dot in its step's colour


def test_a_shown_step_restyles_only_the_items_that_changed(qtbot, collapsed):
    """Zoomed in, a node step restyles the boxes, saved values and edges its changes name, counted."""
    from app.render.qt.scene import GraphScene

    rec, lay = collapsed
    scene = GraphScene(rec, lay)
    items = len(scene.nodes) + len(scene.slots) + len(scene.edges)
    node_steps = [
        s.index for s in rec.timeline.steps if s.kind == "node" and s.index not in _call_boundaries(rec)
    ]
    assert node_steps
    for index in node_steps:
        before = rec.timeline.state(index - 1)
        scene.show_state(before)
        after = rec.timeline.state(index)
        changes = scene.drawn.changes(before, after)
        expected = (
            len(changes.nodes & scene.nodes.keys())
            + len(changes.slots & scene.slots.keys())
            + len(changes.edges & scene.edges.keys())
        )
        restyled = scene.restyled
        scene.show_state(after)
        assert scene.restyled - restyled == expected < items


@pytest.mark.parametrize("collapse", [True, False])
def test_hidden_items_catch_up_after_jumps_and_a_new_palette(qtbot, recorded, collapse):
    """Put off over jumps back and forth across calls and a palette change, then read or shown:
    every item looks as in a scene restyled eagerly at every step, and draws the same pixels."""
    from app.render.qt.scene import GraphScene
    from app.render.style import PALETTES

    names = {g.name for g in module_groups(recorded.graph)} if collapse else set()
    lay = layout_graph(recorded.graph, collapsed=names)
    eager, read, shown = (GraphScene(recorded, lay) for _ in range(3))
    for scene in (read, shown):
        scene.set_overview(True)
        scene.set_details(False)
    jumps = random.Random(7).choices(range(len(recorded.timeline)), k=40) + _call_boundaries(recorded)
    other = next(name for name in PALETTES if name != eager.graph_palette.name)
    for n, index in enumerate(jumps):
        state = recorded.timeline.state(index)
        for scene in (eager, read, shown):
            scene.show_state(state)
            if n == len(jumps) // 2:
                scene.set_palette(other)

    def looks(scene):
        return (
            {k: (i.state, i.text, i.style) for k, i in scene.nodes.items()},
            {k: (i.state, i.text, i.style) for k, i in scene.slots.items()},
            {k: (i.state, i.style) for k, i in scene.edges.items()},
            {k: (i.state, i.style) for k, i in scene.slot_edges.items()},
        )

    assert any(read.is_stale(item) for item in (*read.nodes.values(), *read.slots.values()))
    assert looks(read) == looks(eager)
    shown.set_overview(False)
    shown.set_details(True)
    assert not any(shown.is_stale(item) for item in (*shown.nodes.values(), *shown.slots.values()))
    assert png_bytes(shown) == png_bytes(eager)  # the same pixels


def test_a_big_step_restyles_what_the_view_shows_and_the_rest_after(qtbot, recorded, monkeypatch):
    """Zoomed in on a corner, a step that changes many items (a call's end) restyles at once only
    those the view shows (NOTE [restyle off screen later]); the rest are restyled on the timer
    after it, and then every item draws the pixels of a scene restyled eagerly at every step."""
    from app.render.qt import off_screen
    from app.render.qt.scene import GraphScene

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 10)  # this small model's call end is "many"
    view, lay, boundary = _zoomed_at_the_last_call_end(qtbot, recorded)
    scene = view.graph_scene
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    eager = GraphScene(recorded, lay)
    for index in (boundary - 1, boundary):
        qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
        scene.show_state(recorded.timeline.state(index))
        eager.show_state(recorded.timeline.state(index))
    changes = scene.drawn.changes(recorded.timeline.state(boundary - 1), recorded.timeline.state(boundary))
    total = len(changes.nodes) + len(changes.slots) + len(changes.edges)
    waiting = scene.off_screen.waiting
    assert 0 < waiting < total  # some were restyled at once, some wait
    assert all(not scene.nodes[n].sceneBoundingRect().intersects(seen) for n in scene.off_screen.nodes)
    assert any(scene.is_stale(item) for item in (*scene.nodes.values(), *scene.edges.values()))
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    assert not any(scene.is_stale(item) for item in (*scene.nodes.values(), *scene.slots.values()))
    assert png_bytes(scene) == png_bytes(eager)


def test_items_left_for_later_wait_while_the_steps_go_on(qtbot, recorded, monkeypatch):
    """NOTE [restyle off screen later]: the events each step posts (a step's paint) restyle none of
    the items a big step left for later; once the steps pause, the timer restyles them all."""
    import time

    from PySide6.QtWidgets import QApplication

    from app.render.qt import off_screen
    from app.render.qt import scene as scene_module

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 10)  # this small model's call end is "many"
    view, _, boundary = _zoomed_at_the_last_call_end(qtbot, recorded)
    scene = view.graph_scene
    scene.show_state(recorded.timeline.state(boundary - 1))
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    start = time.perf_counter()
    scene.show_state(recorded.timeline.state(boundary))
    waiting = scene.off_screen.waiting
    assert waiting
    for _ in range(2):  # what a step's events are: the scene's change signal, the view's paint
        QApplication.processEvents()
    if (time.perf_counter() - start) * 1000 < scene_module.LATER_AFTER_MS:  # (a stalled machine: no check)
        assert scene.off_screen.waiting == waiting
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    assert not any(scene.is_stale(item) for item in (*scene.nodes.values(), *scene.edges.values()))


def test_a_paint_of_what_the_step_restyled_asks_the_index_no_more(qtbot, recorded, monkeypatch):
    """A view painting the part of the scene a big step just restyled (nearly every step, zoomed
    in) finds nothing waiting there without a look at the scene's index; a pan looks again, and
    what it shows is restyled before it is painted."""
    from app.render.qt import off_screen

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 10)  # this small model's call end is "many"
    looks = _index_looks(monkeypatch)
    view, _, boundary = _zoomed_at_the_last_call_end(qtbot, recorded)
    scene = view.graph_scene
    scene.show_state(recorded.timeline.state(boundary - 1))
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    looks.clear()
    scene.show_state(recorded.timeline.state(boundary))
    assert scene.off_screen.waiting and len(looks) == 1  # the step's split
    view.viewport().repaint()
    assert len(looks) == 1
    waiting = {n for n in scene.off_screen.nodes}
    far = next(n for n in waiting if n in scene.nodes)
    before = view.seen_rect()
    view.centerOn(scene.nodes[far])
    panned = len(looks)  # the pan looks as it scrolls: once for each scroll bar it moved
    assert panned in (2, 3) and far not in scene.off_screen.nodes  # restyled before it is painted
    assert all(not area.intersects(before) for area in looks[1])  # nothing shown before is asked
    seen = view.seen_rect()
    drawn = [scene.nodes[n].sceneBoundingRect() for n in scene.off_screen.nodes if n in scene.nodes]
    assert not any(rect.intersects(seen) for rect in drawn)  # and still nothing waits in view
    view.viewport().repaint()
    assert len(looks) == panned  # the paint finds nothing waiting without a look
    assert not scene.is_stale(scene.nodes[far])


def test_a_short_pan_looks_up_only_the_strip_it_brings_into_view(qtbot, recorded, monkeypatch):
    """What a view showed is clear of items left for later: a pan of a few pixels asks the scene's
    index for the strip it brings in, and after it nothing left for later is drawn in the view."""
    from app.render.qt import off_screen

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 10)  # this small model's call end is "many"
    looks = _index_looks(monkeypatch)
    view, _, boundary = _zoomed_at_the_last_call_end(qtbot, recorded)
    scene = view.graph_scene
    scene.show_state(recorded.timeline.state(boundary - 1))
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    scene.show_state(recorded.timeline.state(boundary))
    assert scene.off_screen.waiting
    for bar, step in ((view.horizontalScrollBar(), 24), (view.verticalScrollBar(), -16)):
        before, looked = view.seen_rect(), len(looks)
        bar.setValue(bar.value() + step)
        after = view.seen_rect()
        assert before != after and len(looks) == looked + 1
        strip = looks[-1]
        area = sum(a.width() * a.height() for a in strip)
        moved = after.united(before).width() * after.united(before).height() - after.width() * after.height()
        assert area <= 1.01 * abs(moved) + 1e-6 < 0.5 * after.width() * after.height()
        assert all(not a.intersects(before) and after.contains(a) for a in strip)
        drawn = [scene.nodes[n].sceneBoundingRect() for n in scene.off_screen.nodes if n in scene.nodes]
        assert not any(rect.intersects(after) for rect in drawn)


def test_a_pan_onto_items_left_for_later_paints_the_view_once(qtbot, recorded, monkeypatch):
    """A pan that brings items left for later into view restyles them as it scrolls, before the
    paint: restyled in the paint itself, their repaint asked for a second pass over the view."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from app.render.qt import off_screen

    class Paints(QObject):
        count = 0

        def eventFilter(self, watched, event) -> bool:
            self.count += event.type() == QEvent.Type.Paint
            return False

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 10)  # this small model's call end is "many"
    view, _, boundary = _zoomed_at_the_last_call_end(qtbot, recorded)
    scene = view.graph_scene
    scene.show_state(recorded.timeline.state(boundary - 1))
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    scene.show_state(recorded.timeline.state(boundary))
    for _ in range(3):
        QApplication.processEvents()
    far = next(n for n in scene.off_screen.nodes if n in scene.nodes)
    paints = Paints()
    view.viewport().installEventFilter(paints)
    view.centerOn(scene.nodes[far])
    for _ in range(4):  # the pan's paint, and any paint that paint asked for
        QApplication.processEvents()
    view.viewport().removeEventFilter(paints)
    assert not scene.is_stale(scene.nodes[far])
    assert paints.count == 1


def test_a_slow_steps_own_events_start_no_later_restyle_while_the_steps_go_on(qtbot, recorded, monkeypatch):
    """The pause before the later restyles is timed from the end of a step's work: a step whose
    other handling (the panels following it, on a loaded machine) takes longer than the pause
    starts none of them; they begin once the steps stop."""
    import time

    from PySide6.QtWidgets import QApplication

    from app.render.qt import off_screen
    from app.render.qt import scene as scene_module

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 10)  # this small model's call end is "many"
    ran: list[str] = []
    some = off_screen.OffScreen.restyle_some
    monkeypatch.setattr(
        off_screen.OffScreen,
        "restyle_some",
        lambda self, seconds: (ran.append("later"), some(self, seconds))[1],
    )
    view, _, boundary = _zoomed_at_the_last_call_end(qtbot, recorded)
    scene = view.graph_scene
    scene.show_state(recorded.timeline.state(boundary - 1))
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    ran.clear()
    for index in (boundary, boundary - 1, boundary, boundary - 1, boundary):
        scene.show_state(recorded.timeline.state(index))
        ran.append(f"step {index}" + (" left some" if scene.off_screen.waiting else ""))
        time.sleep(scene_module.LATER_AFTER_MS / 1000 + 0.05)  # the rest of a slow step's handling
        for _ in range(2):  # the step's events: the scene's change signal, the view's paint
            QApplication.processEvents()
    steps = list(ran)
    assert steps[0] == f"step {boundary} left some", steps
    assert "later" not in steps, steps
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)  # the steps paused
    assert ran[: len(steps)] == steps and set(ran[len(steps) :]) == {"later"}, ran
    assert not any(scene.is_stale(item) for item in (*scene.nodes.values(), *scene.edges.values()))


def test_a_collapsed_graphs_changes_are_its_nodes_changes_drawn(recorded):
    """With modules collapsed, what a step restyles is what changed among the nodes, saved values
    and edges, each drawn as what stands for it: its box, the box's summary value, the edge
    between the boxes (an edge inside a box is not drawn). Computed here from every node's own
    changes, mapped through the fold, for steps one apart, across calls and jumps."""
    from app.render.modules import fold

    names = frozenset(g.name for g in module_groups(recorded.graph))
    folded = fold(recorded.graph, names)
    shown = ShownStates(recorded)
    drawn = DrawnStates(shown, folded)
    assert folded.members
    box_of = dict(folded.box_of)
    drawn_edges: dict[str, set] = {}
    for edge in folded.graph.edges:
        for end in (edge.src, edge.dst):
            drawn_edges.setdefault(end, set()).add(edge)
    summary = {b: folded.graph.node(b).saved[0].name for b in folded.members if folded.graph.node(b).saved}
    total = len(recorded.timeline)
    rng = random.Random(3)
    pairs = [(i, i + 1) for i in range(total - 1)] + [tuple(rng.sample(range(total), 2)) for _ in range(60)]
    big = 0
    for a, b in pairs:
        before, after = recorded.timeline.state(a), recorded.timeline.state(b)
        real = shown.changes(before, after)
        nodes = {box_of.get(n, n) for n in real.nodes}
        boxes = {n for n in nodes if n in folded.members} | {
            box_of[k[0]] for k in real.slots if k[0] in box_of
        }
        slots = {k for k in real.slots if k[0] not in box_of} | {
            (x, summary[x]) for x in boxes if x in summary
        }
        edges = {folded.edge_of.get(e, e) for e in real.edges} - {None}
        edges |= {e for x in boxes for e in drawn_edges.get(x, ())}
        got = drawn.changes(before, after)
        assert (set(got.nodes), set(got.slots), set(got.edges)) == (nodes, slots, edges), (a, b)
        big += len(real.nodes) > len(folded.members)
    assert big  # some steps changed more nodes than there are boxes (a call's end)
