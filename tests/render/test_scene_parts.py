"""The parts a scene is made of, each on its own: the looks of a step (Qt-free), the restyles put
off while hidden (Qt-free), items that compute their look on demand, the overview renderer.

The oracle is the per-item definition (``DrawnStates`` and the style functions of
``app.render.style``) and a scene restyled eagerly at every step.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QPainter

from app.core import load_builtin, record
from app.core.recorder.script import record_script
from app.render.layout import layout_graph
from app.render.modules import fold, module_groups
from app.render.restyle_later import PutOff
from app.render.states import DrawnStates, ShownStates
from app.render.step_style import StepLooks, proxy_style
from app.render.style import PALETTES, dot_colour, edge_style, node_style, slot_style


@pytest.fixture(scope="module")
def two_losses():
    recording = record(load_builtin("two-losses"))
    return recording, layout_graph(recording.graph)


# a loop of two iterations through a module: iteration frames and module groups
SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
for i in range(2):
    loss = model(torch.randn(2, 3)).pow(2).mean()
    loss.backward()
"""


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("script")) / "two_iterations.py"
    path.write_text(SCRIPT, encoding="utf-8")
    recording = record_script(path).recording
    return recording, layout_graph(recording.graph)


def test_step_looks_follow_the_style_functions_at_every_step(two_losses):
    recording, _ = two_losses
    drawn = DrawnStates(ShownStates(recording))
    palette = PALETTES["dark"]
    looks = StepLooks(drawn, palette)
    node = recording.graph.nodes[0].id
    assert looks.node(node) == ("hidden", node_style(drawn.kinds[node], "hidden", palette))
    seen = set()
    for index in range(len(recording.timeline)):
        looks.state = state = recording.timeline.state(index)
        for graph_node in recording.graph.nodes:
            expected = drawn.node_state(state, graph_node.id)
            seen.add(expected)
            assert looks.node(graph_node.id) == (
                expected,
                node_style(drawn.kinds[graph_node.id], expected, palette),
            )
            assert looks.proxy(graph_node.id)[1] == proxy_style(looks.node(graph_node.id)[1])
            assert looks.dot(graph_node.id) == dot_colour(drawn.kinds[graph_node.id], expected, palette)
            for slot in graph_node.saved:
                key = (graph_node.id, slot.name)
                shown, style, note = looks.slot(key)
                assert shown == drawn.slot_state(state, key) and note == drawn.version_note(state, key)
                assert style.fill == slot_style(shown, palette).fill
        for edge in recording.graph.edges:
            expected_edge = drawn.edge_state(state, edge)
            assert looks.edge(edge) == (expected_edge, edge_style(expected_edge, palette))
    assert {"idle", "running", "done"} <= seen


def test_a_new_palette_gives_every_dot_its_colour_there(two_losses):
    recording, _ = two_losses
    drawn = DrawnStates(ShownStates(recording))
    looks = StepLooks(drawn, PALETTES["light"], recording.timeline.state(len(recording.timeline) - 1))
    node = recording.graph.nodes[0].id
    light = looks.dot(node)
    looks.palette = PALETTES["dark"]
    state = looks.node_state(node)
    assert looks.dot(node) == dot_colour(drawn.kinds[node], state, PALETTES["dark"]) != light


def test_a_collapsed_module_is_a_round_box(loop):
    recording, _ = loop
    groups = module_groups(recording.graph)
    assert groups
    folded = fold(recording.graph, {g.name for g in groups})
    looks = StepLooks(DrawnStates(ShownStates(recording), folded), PALETTES["light"])
    box = next(iter(folded.members))
    assert looks.node(box)[1].rounded
    assert not looks.node(next(n.id for n in folded.graph.nodes if not folded.is_box(n.id)))[1].rounded


def test_put_off_restyles_add_up_to_the_changes_since_the_kind_was_hidden(two_losses):
    recording, _ = two_losses
    drawn = DrawnStates(ShownStates(recording))
    put_off = PutOff(drawn)
    states = [recording.timeline.state(i) for i in range(len(recording.timeline))]
    put_off.step(states[0], boxes_hidden=True, slots_hidden=False)
    for before in states[1:-1]:  # hidden from states[0] on: later steps change nothing waiting
        put_off.step(before, boxes_hidden=True, slots_hidden=False)
    assert put_off.hidden("boxes") and not put_off.hidden("slots")
    nodes, slots, edges = put_off.take(states[-1])
    expected = drawn.changes(states[0], states[-1])
    assert (nodes, slots, edges) == (set(expected.nodes), set(), set(expected.edges))
    assert nodes  # the recording's steps change some nodes
    assert not put_off.hidden("boxes") and put_off.take(states[-1]) == (set(), set(), set())


def test_an_item_reads_the_step_shown_without_its_scene(qtbot, two_losses, monkeypatch):
    """Items compute their look on demand: a hidden item's read does not restyle it, and needs no
    scene (one taken out of its scene still reads the step its looks are at)."""
    from app.render.qt.scene import GraphScene

    recording, layout = two_losses
    eager, hidden = GraphScene(recording, layout), GraphScene(recording, layout)
    hidden.set_overview(True)
    hidden.set_details(False)
    last = recording.timeline.state(len(recording.timeline) - 1)
    for scene in (eager, hidden):
        scene.show_state(last)
    monkeypatch.setattr(hidden, "is_stale", lambda item: pytest.fail("an item asked its scene"))
    stale = [k for k, item in hidden.nodes.items() if item.painted_state != item.state]
    assert stale  # restyles put off: painted in the look of step 0
    for key in stale:
        item = hidden.nodes[key]
        hidden.removeItem(item)
        assert (item.state, item.style, item.text) == (
            eager.nodes[key].state,
            eager.nodes[key].style,
            eager.nodes[key].text,
        )
        assert item.painted_state != item.state  # read, not restyled
    for key, slot in hidden.slots.items():
        assert (slot.state, slot.style, slot.lines) == (
            eager.slots[key].state,
            eager.slots[key].style,
            eager.slots[key].lines,
        )
    for edge, line in hidden.edges.items():
        assert (line.state, line.style) == (eager.edges[edge].state, eager.edges[edge].style)


def test_the_overview_renderer_draws_every_node_as_a_dot_of_its_colour(qtbot, loop):
    from app.render.qt.scene import GraphScene

    recording, layout = loop
    scene = GraphScene(recording, layout)
    scene.show_state(recording.timeline.state(len(recording.timeline) - 1))
    overview = scene.overview_drawing
    assert overview.colours == {n: scene.looks.dot(n) for n in layout.nodes}
    rect = scene.sceneRect()
    image = QImage(round(rect.width()), round(rect.height()), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.translate(-rect.left(), -rect.top())
    overview.paint(painter)
    painter.end()
    for node_id, centre in overview.centres.items():
        pixel = image.pixelColor(round(centre.x() - rect.left()), round(centre.y() - rect.top()))
        assert pixel.name() == QColor(overview.colours[node_id]).name(), node_id
    some = next(iter(overview.centres))
    assert overview.node_at(overview.centres[some] + QPointF(1, 1), 3.0) == some
    assert scene.node_at_dot(QPointF(-1e6, -1e6), 3.0) is None
