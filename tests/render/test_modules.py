"""Module groups: nodes grouped by the nn.Module that made them, a group collapsed to one box and
expanded again (NOTE [module groups] in app/render/modules.py). The recording is the oracle: a
box's node count and saved bytes are sums over the recording's nodes of that module, and every
state shown after stepping is the recording's."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.recorder.script import record_script
from app.render.layout import layout_graph
from app.render.modules import COLLAPSE_ABOVE, default_collapsed, fold, module_groups
from app.render.states import ShownStates

SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
x, y = torch.randn(8, 4), torch.randn(8, 1)
loss = ((model(x) - y) ** 2).mean()
loss.backward()
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("script")) / "mlp.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return record_script(path).recording


def _nodes_of(recording, group):
    return [recording.graph.node(n) for n in group.nodes]


def test_every_node_a_module_made_is_in_its_group(recorded):
    groups = {g.module: g for g in module_groups(recorded.graph)}
    assert set(groups) == {"model.0", "model.1", "model.2"}
    for node in recorded.graph.nodes:
        if node.module:
            assert node.id in groups[node.module].nodes
        else:
            assert all(node.id not in g.nodes for g in groups.values())


def test_a_collapsed_group_is_one_box_and_edges_go_to_it(recorded):
    first = module_groups(recorded.graph)[0]
    folded = fold(recorded.graph, {first.name})
    (box,) = folded.members
    assert folded.members[box] == first.nodes
    drawn = {n.id for n in folded.graph.nodes}
    assert drawn == ({n.id for n in recorded.graph.nodes} - set(first.nodes)) | {box}
    inside = set(first.nodes)
    for edge in recorded.graph.edges:
        ends = {edge.src, edge.dst} & inside
        if len(ends) == 2:
            assert folded.edge_of[edge] is None  # inside the box: not drawn
        elif ends:
            drawn_edge = folded.edge_of[edge]
            assert drawn_edge in folded.graph.edges and box in drawn_edge
            assert edge in folded.real_edges[drawn_edge]
        else:
            assert edge in folded.graph.edges


def test_small_graphs_open_expanded(recorded):
    assert len(recorded.graph) <= COLLAPSE_ABOVE and default_collapsed(recorded.graph) == frozenset()


def test_the_layout_has_a_frame_per_module_and_a_place_per_box(recorded):
    names = {g.name for g in module_groups(recorded.graph)}
    expanded = layout_graph(recorded.graph, collapsed=())
    assert names <= set(expanded.clusters) and not expanded.collapsed
    collapsed = layout_graph(recorded.graph, collapsed=names)
    assert collapsed.collapsed == names and not names & set(collapsed.clusters)
    folded = fold(recorded.graph, names)
    assert set(collapsed.nodes) == {n.id for n in folded.graph.nodes}


def _expected_node_state(shown, state, nodes):
    found = {shown.node_state(state, n) for n in nodes}
    return next(s for s in ("failed", "running", "done", "idle", "gone", "hidden") if s in found)


def _check_states(view, recording, index):
    """Every drawn item's state is the recording's at ``index`` (boxes: summed over their nodes)."""
    state = recording.timeline.state(index)
    view.show_state(state)
    scene = view.graph_scene
    shown = ShownStates(recording)
    for node_id, item in scene.nodes.items():
        members = scene.folded.members.get(node_id)
        if members is None:
            assert item.state == shown.node_state(state, node_id), (index, node_id)
        else:
            assert item.state == _expected_node_state(shown, state, members), (index, node_id)
    for (node_id, slot), item in scene.slots.items():
        if node_id not in scene.folded.members:
            assert item.state == shown.slot_state(state, (node_id, slot)), (index, node_id, slot)


def test_collapse_expand_and_step_in_the_view(qtbot, recorded):
    from app.ui.graph.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.set_model(recorded, layout_graph(recorded.graph), shown=ShownStates(recorded))
    last = len(recorded.timeline) - 1
    _check_states(view, recorded, last)
    group = next(g for g in view.modules.groups if g.module == "model.2")
    with qtbot.waitSignal(view.modules_changed, timeout=30_000):
        view.modules.collapse(group.name)
    assert view.modules.collapsed == {group.name}
    box = view.modules.box(group.name)
    assert box is not None
    nodes = _nodes_of(recorded, group)
    saved = sum(slot.nbytes or 0 for node in nodes for slot in node.tensor_slots)
    assert box.node.name == "model.2"
    assert box.node.label.startswith(f"{len(nodes)} nodes · ")
    (summary,) = box.node.saved
    assert summary.nbytes == saved > 0
    assert view.graph_scene.state is not None and view.graph_scene.state.step.index == last
    for index in (0, last // 2, last):
        _check_states(view, recorded, index)
    worst = {recorded.timeline.state(last).slots.get((n.id, s.name)) for n in nodes for s in n.tensor_slots}
    slot_item = view.graph_scene.slots[(box.node_id, summary.name)]
    order = ("modified", "freed", "retained", "alive")
    assert slot_item.state == next(s for s in order if s in worst)
    with qtbot.waitSignal(view.modules_changed, timeout=30_000):
        view.modules.expand(group.name)
    assert view.modules.collapsed == frozenset() and view.modules.box(group.name) is None
    assert {n.id for n in nodes} <= set(view.graph_scene.nodes)
    for index in range(len(recorded.timeline)):
        _check_states(view, recorded, index)


def test_collapse_all_then_expand_all_comes_back_from_the_cache(qtbot, recorded):
    from app.ui.graph.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.set_model(recorded, layout_graph(recorded.graph), shown=ShownStates(recorded))
    assert view.modules.collapse_all_action.isEnabled() and not view.modules.expand_all_action.isEnabled()
    with qtbot.waitSignal(view.modules_changed, timeout=30_000):
        view.modules.collapse_all_action.trigger()
    assert view.modules.collapsed == {g.name for g in view.modules.groups}
    assert view.modules.expand_all_action.isEnabled() and not view.modules.collapse_all_action.isEnabled()
    with qtbot.waitSignal(view.modules_changed, timeout=1_000):  # laid out before: no Graphviz run
        view.modules.expand_all_action.trigger()
    assert view.modules.collapsed == frozenset()


def test_a_double_click_on_a_frame_collapses_its_module_and_on_the_box_expands_it(qtbot, recorded):
    from PySide6.QtCore import QPoint, Qt

    from app.ui.graph.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(1000, 800)
    view.show()
    qtbot.waitExposed(view)
    view.set_model(recorded, layout_graph(recorded.graph), shown=ShownStates(recorded))
    frame = next(f for f in view.graph_scene.clusters.values() if f.module)
    inside = view.mapFromScene(frame.frame_rect.bottomLeft()) + QPoint(6, -6)  # in the frame, off its boxes
    assert view.modules.group_at(inside) == frame.module
    with qtbot.waitSignal(view.modules_changed, timeout=30_000):
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=inside)
    assert view.modules.collapsed == {frame.module}
    box = view.modules.box(frame.module)
    with qtbot.waitSignal(view.modules_changed, timeout=30_000):
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(box.scenePos()))
    assert view.modules.collapsed == frozenset()
    labels = [a.text() for a in view.modules.menu(view.mapFromScene(box.scenePos())).actions()]
    assert "Collapse all modules" in labels
