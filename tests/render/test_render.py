"""The Qt-free drawing layer: DOT source, the one Graphviz layout, styles and shown states."""

import itertools
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from app.core import builtin_names, load_builtin, record, trace
from app.core.recorder.capture import Edge, Graph, GraphNode
from app.render import dot_source as dot_module
from app.render import layout as layout_module
from app.render.dot_source import dot_source, slot_dot_id
from app.render.hover import node_tip, slot_tip
from app.render.labels import drawn_slots, node_kinds
from app.render.layout import Box, LayoutError, layout_graph
from app.render.states import ShownStates
from app.render.style import (
    LEGEND,
    NODE_TAGS,
    PALETTES,
    SLOT_TAGS,
    node_style,
    slot_style,
    text_readable,
)
from tests.support.recorded import builtin_recording

INSTALL = "sudo apt-get install graphviz"


@pytest.fixture(scope="module")
def recordings():
    return {name: record(load_builtin(name)) for name in ("two-losses", "forgot-retain")}


def _mlp_graph() -> Graph:
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    w1 = torch.randn(3, 5, requires_grad=True)
    w2 = torch.randn(5, 2, requires_grad=True)
    h = torch.tanh(x @ w1)
    loss = torch.nn.functional.layer_norm(h @ w2, (2,)).pow(2).mean()
    return trace(loss)


# -- DOT source ---------------------------------------------------------------
def test_dot_source_names_every_node_and_slot_by_our_ids(recordings):
    graph = recordings["two-losses"].graph
    source = dot_source(graph)
    for node in graph.nodes:
        assert f'"{node.id}" [' in source
        left = node.id  # a node's saved values hang in a chain from it (NOTE [flat edges])
        for slot in drawn_slots(node):
            assert f'"{slot_dot_id(node.id, slot.name)}" [' in source
            assert f'"{left}" -> "{slot_dot_id(node.id, slot.name)}" [dir=none, style=dotted]' in source
            left = slot_dot_id(node.id, slot.name)
    for edge in graph.edges:  # torchviz direction: next function -> node
        assert f'"{edge.dst}" -> "{edge.src}" [weight=' in source
    assert "0x" not in source and str(id(graph)) not in source


def test_dot_source_uses_torchviz_colours(recordings):
    rec = recordings["two-losses"]
    source = dot_source(rec.graph)
    kinds = node_kinds(rec.graph)
    assert kinds[rec.leaves["x"]] == "leaf"
    roots = {n for n, k in kinds.items() if k == "root"}
    # the two losses' grad_fns are exactly the nodes nothing points to
    losses = {c.call.text.rsplit(".backward(", 1)[0] for c in rec.calls}
    assert {rec.graph.node(n).label for n in roots} == losses == {"y.sum()", "(y * 3).sum()"}
    for node_id, kind in kinds.items():
        colour = {"leaf": "lightblue", "root": "darkolivegreen1", "op": "lightgrey"}[kind]
        assert f'"{node_id}" [label=' in source
        line = next(ln for ln in source.splitlines() if ln.strip().startswith(f'"{node_id}" [label='))
        assert f"fillcolor={colour}" in line
    pow_line = next(
        ln for ln in source.splitlines() if ln.strip().startswith(f'"{slot_dot_id("n0", "self")}"')
    )
    assert "fillcolor=orange" in pow_line


def test_dot_source_skips_none_slots_and_shows_values(recordings):
    graph = recordings["two-losses"].graph
    mul = next(n for n in graph.nodes if n.name == "MulBackward0")
    assert any(s.kind == "none" for s in mul.saved)
    source = dot_source(graph)
    for slot in mul.saved:
        assert (f'"{slot_dot_id(mul.id, slot.name)}"' in source) == (slot.kind != "none")
    pow_node = next(n for n in graph.nodes if n.name == "PowBackward0")
    exponent = next(s for s in pow_node.saved if s.name == "exponent")
    assert f"= {exponent.value}" in source


def test_hostile_labels_are_escaped_and_laid_out():
    label = 'a "quoted" \\N back\\slash } ; -> [x]' + "\nnew line" + "z" * 200
    graph = Graph(
        (GraphNode("n0", "SumBackward0", label), GraphNode("n1", "AccumulateGrad", "x", is_leaf=True)),
        (Edge("n0", "n1"),),
    )
    lay = layout_graph(graph)
    assert set(lay.nodes) == {"n0", "n1"}
    assert lay.nodes["n0"].width < 600  # long user text is clipped, not a 2,000-point box


# -- layout ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["two-losses", "forgot-retain", "mlp"])
def test_layout_has_a_box_for_every_node_and_drawn_slot(recordings, name):
    graph = _mlp_graph() if name == "mlp" else recordings[name].graph
    lay = layout_graph(graph)
    assert set(lay.nodes) == {n.id for n in graph.nodes}
    assert set(lay.slots) == {(n.id, s.name) for n in graph.nodes for s in drawn_slots(n)}
    assert set(lay.edges) == set(graph.edges)
    assert set(lay.slot_edges) == set(lay.slots)
    for box in [*lay.nodes.values(), *lay.slots.values()]:
        assert box.width > 0 and box.height > 0
        assert box.left >= -1 and box.left + box.width <= lay.width + 1
        assert box.top >= -1 and box.top + box.height <= lay.height + 1


@pytest.mark.parametrize("name", ["two-losses", "forgot-retain"])
def test_layout_edges_connect_the_right_boxes(recordings, name):
    graph = recordings[name].graph
    lay = layout_graph(graph)
    slack = 2.0
    for edge, path in lay.edges.items():
        child, parent = lay.nodes[edge.dst], lay.nodes[edge.src]
        assert child.contains(path.points[0], slack)  # drawn from the next function...
        assert path.arrow is not None and parent.contains(path.arrow, slack)  # ...to the node
    for key, path in lay.slot_edges.items():
        assert lay.nodes[key[0]].contains(path.points[0], slack)
        assert lay.slots[key].contains(path.points[-1], slack)
        assert path.arrow is None


def test_layout_boxes_do_not_overlap(recordings):
    lay = layout_graph(recordings["two-losses"].graph)
    boxes = [*lay.nodes.values(), *lay.slots.values()]
    for a, b in itertools.combinations(boxes, 2):
        apart_x = abs(a.x - b.x) >= (a.width + b.width) / 2 - 0.5
        apart_y = abs(a.y - b.y) >= (a.height + b.height) / 2 - 0.5
        assert apart_x or apart_y, (a, b)


def test_leaves_on_top_losses_at_bottom_as_torchviz(recordings):
    rec = recordings["two-losses"]
    lay = layout_graph(rec.graph)
    leaf_y = lay.nodes[rec.leaves["x"]].y
    for node in rec.graph.nodes:
        if node.id != rec.leaves["x"]:
            assert lay.nodes[node.id].y > leaf_y


def test_box_sizes_leave_room_for_the_widest_state_tag(recordings):
    graph = recordings["two-losses"].graph
    plain = layout_graph(graph)
    source = dot_source(graph, reserve_tags=True)
    assert NODE_TAGS["hidden"] in source and SLOT_TAGS["retained"] in source
    assert all(b.height > 40 for b in plain.nodes.values())  # name, label and tag lines


def _fake_dot(folder: Path, body: str) -> None:
    script = folder / "dot"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_missing_dot_raises_layout_error_with_install_hint(recordings, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no dot anywhere
    with pytest.raises(LayoutError, match=INSTALL):
        layout_graph(recordings["two-losses"].graph)


def test_which_none_raises_layout_error(recordings, monkeypatch):
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)
    with pytest.raises(LayoutError, match="not found"):
        layout_graph(recordings["two-losses"].graph)


def test_crashing_dot_raises_layout_error(recordings, monkeypatch, tmp_path):
    _fake_dot(tmp_path, "echo 'Error: syntax error in line 1' >&2\nexit 3")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LayoutError, match="exited with status 3") as info:
        layout_graph(recordings["two-losses"].graph)
    said = str(info.value)  # dot is there and ran: what happened, not how to install it
    assert said.startswith("Graphviz could not lay out this graph (") and "syntax error" in said
    assert INSTALL not in said


def test_hanging_dot_raises_layout_error(recordings, monkeypatch, tmp_path):
    _fake_dot(tmp_path, f"exec {shutil.which('sleep')} 30")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LayoutError, match="took longer than") as info:
        layout_graph(recordings["two-losses"].graph, timeout_s=0.5)
    assert INSTALL not in str(info.value)


def test_garbage_from_dot_raises_layout_error(recordings, monkeypatch, tmp_path):
    cat = shutil.which("cat")
    # called as: dot -Tjson0 -o OUT SOURCE
    _fake_dot(tmp_path, cat + ' "$4" >/dev/null; echo \'{"bb": "0,0,1,1", "objects": []}\' >"$3"')
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LayoutError, match="no place for n0"):
        layout_graph(recordings["two-losses"].graph)


def test_dot_that_writes_no_layout_raises_layout_error(recordings, monkeypatch, tmp_path):
    _fake_dot(tmp_path, "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LayoutError, match="wrote no layout") as info:
        layout_graph(recordings["two-losses"].graph)
    assert INSTALL not in str(info.value)


def test_layout_is_plain_frozen_data(recordings):
    lay = layout_graph(recordings["two-losses"].graph)
    with pytest.raises(AttributeError):
        lay.width = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        lay.nodes["n9"] = Box(0, 0, 1, 1)  # type: ignore[index]
    json.dumps({k: [b.x, b.y, b.width, b.height] for k, b in lay.nodes.items()})


def test_render_model_modules_load_no_qt():
    code = (
        "import sys, app.render.layout, app.render.dot_source, app.render.style, app.render.states, "
        "app.render.hover; "
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_layout_from_a_worker_thread(recordings):
    from concurrent.futures import ThreadPoolExecutor

    graph = recordings["forgot-retain"].graph
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(layout_graph, [graph, graph])
    assert a == b


# -- styles ------------------------------------------------------------------------
SLOT_STATES = ("alive", "retained", "freed", "modified", "value")


@pytest.mark.parametrize("palette", sorted(PALETTES))
def test_every_state_has_a_distinct_tag_and_look(palette):
    pal = PALETTES[palette]
    styles = {s: slot_style(s, pal) for s in SLOT_STATES}
    assert len({st.tag for st in styles.values()}) == len(SLOT_STATES)
    assert all(st.tag.split()[0] != st.tag for st in styles.values())  # a symbol and a word
    looks = {(st.fill, st.dash, st.hatch, st.rounded) for st in styles.values()}
    assert len(looks) == len(SLOT_STATES)
    freed = styles["freed"]
    assert freed.hatch is not None and freed.dash == "dash"  # pattern, not only colour
    idle = node_style("op", "idle", pal)
    for state in ("running", "failed"):
        st = node_style("op", state, pal)
        assert st.border_width > idle.border_width and st.border != idle.border
        assert st.tag == NODE_TAGS[state] and st.tag
    assert node_style("op", "hidden", pal).opacity < 0.5
    assert node_style("op", "idle", pal).opacity == 1.0


def test_projector_palette_is_bolder():
    light, projector = PALETTES["light"], PALETTES["projector"]
    assert projector.line_width > light.line_width and projector.bold_width > light.bold_width
    assert projector.text_scale > 1.0 and projector.bold_text
    assert (projector.background, projector.text) == ("#ffffff", "#000000")


def test_legend_covers_every_state():
    states = {e.state for e in LEGEND}
    assert set(SLOT_STATES) <= states
    assert {"running", "failed", "done", "hidden"} <= states
    assert all(e.tag and e.meaning for e in LEGEND)


def test_text_readable_threshold():
    assert text_readable(1.0, 11.0)
    assert not text_readable(0.2, 11.0)


# -- shown states -------------------------------------------------------------------
def _look(shown: ShownStates, rec, index: int):
    state = rec.timeline.state(index)
    return (
        {n.id: shown.node_state(state, n.id) for n in rec.graph.nodes},
        {k: shown.slot_state(state, k) for keys in shown.slots_of.values() for k in keys},
        {e: shown.edge_state(state, e) for e in rec.graph.edges},
    )


@pytest.mark.parametrize("name", builtin_names())
def test_changes_cover_every_difference_between_any_two_steps(name):
    rec = record(load_builtin(name))
    shown = ShownStates(rec)
    looks = [_look(shown, rec, i) for i in range(len(rec.timeline))]
    for a, b in itertools.product(range(len(rec.timeline)), repeat=2):
        changes = shown.changes(rec.timeline.state(a), rec.timeline.state(b))
        nodes_a, slots_a, edges_a = looks[a]
        nodes_b, slots_b, edges_b = looks[b]
        assert {n for n in nodes_a if nodes_a[n] != nodes_b[n]} <= changes.nodes
        assert {k for k in slots_a if slots_a[k] != slots_b[k]} <= changes.slots
        assert {e for e in edges_a if edges_a[e] != edges_b[e]} <= changes.edges


def test_running_done_failed_follow_the_recorded_steps(recordings):
    rec = recordings["forgot-retain"]
    shown = ShownStates(rec)
    failed = rec.calls[1].failed_node
    assert rec.graph.node(failed).name == "PowBackward0"
    for step in rec.timeline.steps:
        state = rec.timeline.state(step.index)
        active = shown.active(state)
        if step.kind == "node":
            assert active[step.node] == "running"
        if step.kind == "error":
            assert active == {**active, failed: "failed"}
        if step.kind == "forward":
            assert active == {}
    end_of_call_1 = rec.timeline.state(rec.calls[0].last_step)
    done = {rec.graph.node(n).name for n, s in shown.active(end_of_call_1).items() if s == "done"}
    # what backward of y.sum() runs, asked of PyTorch itself
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = x.square().sum()
    expected = {type(loss.grad_fn).__name__}
    stack = [loss.grad_fn]
    while stack:
        fn = stack.pop()
        for child, _ in fn.next_functions:
            if child is not None:
                expected.add(type(child).__name__)
                stack.append(child)
    assert done == expected


def test_value_slots_are_values_and_tensor_slots_follow_the_recording(recordings):
    rec = recordings["two-losses"]
    shown = ShownStates(rec)
    for i in range(len(rec.timeline)):
        state = rec.timeline.state(i)
        for node in rec.graph.nodes:
            for slot in drawn_slots(node):
                got = shown.slot_state(state, (node.id, slot.name))
                if node.id not in state.visible_nodes:
                    assert got == "hidden"
                elif slot.kind == "value":
                    assert got == "value"
                else:
                    assert got == state.slots[(node.id, slot.name)]


def test_unknown_slot_state_when_the_recording_has_none(recordings):
    rec = recordings["two-losses"]
    state = rec.timeline.state(0)
    visible = sorted(state.visible_nodes)[0]
    assert ShownStates(rec).slot_state(state, (visible, "not_recorded")) == "unknown"


# -- large graphs ----------------------------------------------------------------
def _shared_weight_chain(blocks: int, weights: int = 2) -> Graph:
    """A deep chain whose few weights are used at every depth (as a benchmark model is)."""
    nodes = [GraphNode("n0", "SumBackward0", "h.sum()")]
    edges = []
    prev = "n0"
    for b in range(blocks):
        tanh, mm = f"t{b}", f"m{b}"
        nodes += [GraphNode(tanh, "TanhBackward0", "h.tanh()"), GraphNode(mm, "MmBackward0", "h @ W")]
        edges += [Edge(prev, tanh), Edge(tanh, mm), Edge(mm, f"w{b % weights}")]
        prev = mm
    nodes += [GraphNode(f"w{k}", "AccumulateGrad", f"W{k}", is_leaf=True) for k in range(weights)]
    return Graph(tuple(nodes), tuple(edges))


def test_depths_follow_the_longest_path_from_the_loss():
    graph = _shared_weight_chain(4)
    depth = dot_module.depths(graph)
    assert depth["n0"] == 0 and depth["t0"] == 1 and depth["m3"] == 8
    assert depth["w1"] == depth["m3"] + 1  # below its deepest user
    for edge in graph.edges:
        assert depth[edge.dst] > depth[edge.src]


def test_long_edges_get_proxies_and_the_deepest_user_keeps_a_real_edge():
    graph = _shared_weight_chain(12)
    proxied = dot_module.long_edges(graph)
    depth = dot_module.depths(graph)
    assert proxied == {e for e in graph.edges if depth[e.dst] - depth[e.src] > dot_module.MAX_SPAN}
    assert proxied  # the shared weights are far from their first users
    for leaf in ("w0", "w1"):
        users = [e for e in graph.edges if e.dst == leaf]
        assert any(e not in proxied for e in users)
    lay = layout_graph(graph)
    assert set(lay.proxies) == proxied
    assert set(lay.edges) == set(graph.edges)  # every edge is drawn, real or from a proxy
    for edge in proxied:
        path = lay.edges[edge]
        assert lay.proxies[edge].contains(path.points[0], 2.0)
        assert lay.nodes[edge.src].contains(path.arrow, 2.0)
        # the proxy sits next to its user, not far away where the real node is
        assert abs(lay.proxies[edge].y - lay.nodes[edge.src].y) < abs(
            lay.nodes[edge.dst].y - lay.nodes[edge.src].y
        )
    source = dot_source(graph)
    for edge in proxied:
        assert f'"{edge.dst}" -> "{edge.src}"' not in source


@pytest.mark.parametrize("name", ["two-losses", "forgot-retain", "mlp"])
def test_saved_values_sit_beside_their_node(recordings, name):
    graph = _mlp_graph() if name == "mlp" else recordings[name].graph
    lay = layout_graph(graph)
    assert lay.slots
    for (node_id, _), box in lay.slots.items():
        assert box.y == pytest.approx(lay.nodes[node_id].y, abs=1.0)  # same rank, one row


def test_a_long_chain_stays_a_column():
    graph = _shared_weight_chain(60)
    lay = layout_graph(graph)
    xs = [lay.nodes[n.id].x for n in graph.nodes if n.name == "TanhBackward0"]
    assert max(xs) - min(xs) < lay.height / 10  # no staircase drifting sideways


def test_arrowheads_match_qts_normal_vector_construction():
    """Arrowheads are computed without Qt objects (a wrapper fewer per edge); Qt's geometry is the oracle."""
    import random

    from PySide6.QtCore import QLineF, QPointF

    from app.render.qt.edges import ARROW_HALF_WIDTH, _arrowhead

    rng = random.Random(4)
    for _ in range(200):
        base = (rng.uniform(-500, 500), rng.uniform(-500, 500))
        tip = (base[0] + rng.uniform(-20, 20), base[1] + rng.uniform(-20, 20))
        line = QLineF(QPointF(*tip), QPointF(*base))
        normal = line.normalVector()
        normal.setLength(line.length() * ARROW_HALF_WIDTH)
        offset = normal.p2() - normal.p1()
        want = [(p.x(), p.y()) for p in (QPointF(*tip), line.p2() + offset, line.p2() - offset)]
        got = _arrowhead(base, tip)
        assert [pytest.approx(p, abs=1e-9) for p in want] == list(got)


def test_edge_bounds_hold_the_drawn_curve_and_arrow(qtbot):
    """An edge's bounds come from its control points; they must contain Qt's exact curve bounds."""
    from PySide6.QtCore import QPointF

    from app.render.qt.edges import EdgeItem, _spline_path
    from app.render.style import PALETTES, edge_style

    rec = builtin_recording("two-losses")
    lay = layout_graph(rec.graph)
    for path in (*lay.edges.values(), *lay.slot_edges.values()):
        item = EdgeItem(path, "normal", edge_style("normal", PALETTES["light"]))
        exact, bounds = _spline_path(path.points).boundingRect(), item.boundingRect()
        assert bounds.left() <= exact.left() and exact.right() <= bounds.right()  # a straight edge's
        assert bounds.top() <= exact.top() and exact.bottom() <= bounds.bottom()  # rect is empty
        if path.arrow:
            assert item.has_arrow and item.boundingRect().contains(QPointF(*path.arrow))


def test_a_nodes_tip_names_its_recorded_line_iteration_and_state():
    rec = builtin_recording("rnn-no-detach")
    shown = ShownStates(rec)
    for index in (0, len(rec.timeline) // 2, len(rec.timeline) - 1):
        state = rec.timeline.state(index)
        for node in rec.graph.nodes:
            (loop,) = node.loops
            lines = node_tip(shown, state, node.id).splitlines()
            assert lines[0].startswith(node.name)
            assert lines[1] == f"made by line {node.line}, iteration {loop.index + 1} of {loop.count}"
            shown_state = shown.node_state(state, node.id)
            assert lines[2].startswith(f"{NODE_TAGS[shown_state] or shown_state}: ")
    assert node_tip(shown, state, "no-such-node") == ""


def test_a_saved_values_tip_names_its_state_and_version_as_recorded():
    rec = builtin_recording("inplace-sigmoid")
    shown = ShownStates(rec)
    seen = set()
    for index in range(len(rec.timeline)):
        state = rec.timeline.state(index)
        for key, saved in shown.saved_versions.items():
            lines = slot_tip(shown, state, key).splitlines()
            assert lines[0] == f"saved tensor {key[1]} of {rec.graph.node(key[0]).name}"
            assert lines[2].startswith(SLOT_TAGS[shown.slot_state(state, key)])
            now = state.versions.get(key, saved)
            version = f"saved at v{saved}, now v{now}" if now != saved else f"saved at v{saved}"
            assert lines[3].endswith(version)
            seen.add(now != saved)
    assert seen == {True, False}  # the program changes a saved tensor in place: both are shown
    value = next((n.id, s.name) for n in rec.graph.nodes for s in n.saved if s.kind == "value")
    assert slot_tip(shown, state, value).splitlines()[2].startswith(SLOT_TAGS["value"])


def test_a_nodes_values_share_one_box_and_its_tip_lists_them_all():
    """``AddmmBackward0`` saves six values (``alpha``, ``*_sym_sizes``...): one narrow box, not six."""
    from app.render.labels import SharedValues, slot_lines

    rec = builtin_recording("rnn-no-detach")
    lay = layout_graph(rec.graph)
    shown = ShownStates(rec)
    state = rec.timeline.state(len(rec.timeline) - 1)
    for node in rec.graph.nodes:
        values = [s for s in node.saved if s.kind == "value"]
        boxes = [s for s in drawn_slots(node) if s.kind == "value"]
        assert len(boxes) == min(len(values), 1)
        assert [s for s in drawn_slots(node) if s.kind == "tensor"] == [
            s for s in node.saved if s.kind == "tensor"
        ]
        if len(values) < 2:
            assert boxes == values  # a lone value keeps its own box: "exponent ▪ value" / "= 2"
            continue
        (box,) = boxes
        assert isinstance(box, SharedValues) and box.members == tuple(values)
        assert (node.id, box.name) in lay.slots
        lines = slot_lines(box, SLOT_TAGS["value"])
        assert lines[0] == f"{len(values)} values {SLOT_TAGS['value']}"
        assert lines[1] == f"{values[0].name} = {values[0].value}"
        tip = slot_tip(shown, state, (node.id, box.name))
        assert all(f"\n{v.name} = {v.value}" in tip for v in values)
    assert any(len([s for s in n.saved if s.kind == "value"]) > 3 for n in rec.graph.nodes)  # a real test


@pytest.mark.parametrize("where", ["name", "module", "id"])
def test_a_name_too_long_for_graphviz_says_so_without_an_install_hint(where):
    """A recording read from a file may name a node with any text; Graphviz refuses a string past
    16,384 characters, and that is the file's doing, not a missing Graphviz."""
    from app.core.model.graph import Edge, Graph, GraphNode
    from app.render.layout import INSTALL_HINT, LayoutError, layout_graph

    long = "A" * 20_000
    node = GraphNode(long if where == "id" else "n0", long if where == "name" else "SumBackward0", "y.sum()")
    if where == "module":
        node = GraphNode("n0", "SumBackward0", "y.sum()", module=long)
    leaf = GraphNode("n1", "AccumulateGrad", "x", is_leaf=True)
    graph = Graph((node, leaf), (Edge(node.id, "n1"),))
    with pytest.raises(LayoutError) as info:
        layout_graph(graph)
    said = str(info.value)
    assert "characters is longer than Graphviz draws" in said and INSTALL_HINT not in said
    short = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), leaf), (Edge("n0", "n1"),))
    assert set(layout_graph(short).nodes) == {"n0", "n1"}  # the same graph with short names is drawn


@pytest.mark.parametrize("zoom", [2.0, 40.0])  # 40: one piece runs far past the view, split in parts
@pytest.mark.parametrize("state", ["normal", "flow", "gone"])
def test_a_long_edge_drawn_in_part_is_the_same_pixels_as_drawn_whole(qtbot, monkeypatch, state, zoom):
    """NOTE [long edges]: a view showing part of a long edge strokes only the pieces it meets, the
    same pixels as the whole path; a dashed one's dashes start where the whole path's would be."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

    from app.render.layout import EdgePath
    from app.render.qt.edges import LONG_EDGE_POINTS, EdgeItem
    from app.render.style import PALETTES, edge_style

    points = [(0.0, 0.0)]
    for i in range(1, 13):  # a wavy edge of 12 Bezier pieces, 1,200 units long
        points += [(i * 100 - 70, 60.0 * (-1) ** i), (i * 100 - 30, -60.0 * (-1) ** i), (i * 100.0, 0.0)]
    assert len(points) > LONG_EDGE_POINTS
    scene = QGraphicsScene()
    scene.setSceneRect(QRectF(-20, -80, 1240, 160))
    style = edge_style(state, PALETTES["light"])
    edge = EdgeItem(EdgePath(tuple(points), (1210.0, 0.0)), state, style)
    scene.addItem(edge)
    view = QGraphicsView(scene)
    qtbot.addWidget(view)
    view.resize(420, 340)
    view.scale(zoom, zoom)
    view.show()
    qtbot.waitExposed(view)
    view.centerOn(710, 0 if zoom < 10 else 20)  # the 7th and 8th pieces, and a bit of their neighbours

    def drawn() -> QImage:
        return view.viewport().grab().toImage()

    part = drawn()
    assert edge._pieces is not None  # drawn in part
    monkeypatch.setattr(EdgeItem, "_long", property(lambda self: False))
    whole = drawn()
    inked = differ = 0
    for y in range(part.height()):
        for x in range(part.width()):
            mine, theirs = part.pixel(x, y), whole.pixel(x, y)
            inked += theirs != 0xFFFFFFFF
            differ += mine != theirs
    assert inked > 500  # the edge crosses this part
    if style.dash == "solid" and zoom < 10:
        assert differ == 0, (differ, inked)
    elif style.dash == "solid":  # halves trace the same curve; anti-aliasing may differ at a seam
        assert differ <= inked // 50, (differ, inked)
    elif zoom < 10:  # the phase is measured along each flattened piece: a dash's end may move a pixel
        assert differ <= inked // 10, (differ, inked)
    # far zoomed in, a dash is tens of pixels long and the parts' lengths are measured in item
    # units, so a dashed edge's phase may differ from the whole path's: only the parts are checked


def test_a_piece_far_larger_than_the_view_is_stroked_only_where_the_view_is():
    """NOTE [long edges]: zoomed in, a piece is cut in halves until its parts fit the view, and only
    the parts meeting the view are kept; together they trace the curve there."""
    from PySide6.QtCore import QRectF

    from app.render.qt.edges import SPLIT_BEYOND, _curve_path, _hull, _seen_parts

    curve = ((0.0, 0.0), (300.0, 400.0), (700.0, -400.0), (1000.0, 0.0))
    seen = QRectF(480.0, -40.0, 10.0, 80.0)
    parts = _seen_parts(curve, seen, 0.0)
    assert 0 < len(parts) < 8
    for _, part in parts:
        hull = _hull(part)
        assert hull.intersects(seen)
        assert hull.width() <= SPLIT_BEYOND * seen.width() or hull.height() <= SPLIT_BEYOND * seen.height()
    whole = _curve_path(curve)
    # every point of the curve inside the view lies on one of the kept parts
    for t in [i / 2000 for i in range(2001)]:
        point = whole.pointAtPercent(t)
        if seen.contains(point):
            assert any(_hull(p).adjusted(-1, -1, 1, 1).contains(point) for _, p in parts), point
