"""GraphView and Legend, driven through their methods; the core recording is the oracle."""

import pytest
import torch
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from app.core import load_builtin, parse_program, record
from app.render.labels import NODE_FONT_PX, drawn_slots
from app.render.layout import layout_graph
from app.render.qt.picture import png_bytes
from app.render.style import LEGEND, NODE_TAGS, PALETTES, SLOT_TAGS
from app.ui.graph.camera import READABLE_NODE_PX, ZOOM_STEP
from app.ui.graph.graph_view import GraphView
from app.ui.graph.pointer import tip_at
from app.ui.panels.legend import Legend
from app.ui.runtime.worker import NEVER


@pytest.fixture(scope="module")
def models():
    out = {}
    for name in ("two-losses", "forgot-retain"):
        rec = record(load_builtin(name))
        out[name] = (rec, layout_graph(rec.graph))
    return out


def _shown_view(qtbot, width: int, height: int) -> GraphView:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.fixture
def make_view(qtbot, models):
    def make(name: str) -> tuple[GraphView, object]:
        rec, lay = models[name]
        view = _shown_view(qtbot, 900, 700)
        view.set_model(rec, lay)
        return view, rec

    return make


def _node_named(rec, name: str) -> str:
    return next(n.id for n in rec.graph.nodes if n.name == name)


def _scene_items(view: GraphView) -> list:
    return list(view.graph_scene.items())


@pytest.mark.parametrize("name", ["two-losses", "forgot-retain"])
def test_every_slot_shows_the_recorded_state_at_every_step(make_view, name):
    view, rec = make_view(name)
    for i in range(len(rec.timeline)):
        state = rec.timeline.state(i)
        view.show_state(state)
        for node in rec.graph.nodes:
            for slot in drawn_slots(node):
                item = view.slot_item(node.id, slot.name)
                if node.id not in state.visible_nodes:
                    expected = "hidden"
                elif slot.kind == "value":
                    expected = "value"
                else:
                    expected = state.slots[(node.id, slot.name)]
                assert item.state == expected, (i, node.id, slot.name)
                assert SLOT_TAGS[expected] in item.text  # state in words, not only colour
                assert item.lines[0].startswith(slot.name)


@pytest.mark.parametrize(
    ("name", "retain", "expected"), [("two-losses", True, "retained"), ("forgot-retain", False, "freed")]
)
def test_saved_self_after_first_backward_matches_pytorch(make_view, name, retain, expected):
    # PyTorch itself: is y.grad_fn._saved_self still readable after the first backward?
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.square()
    y.sum().backward(retain_graph=retain)
    try:
        _ = y.grad_fn._saved_self
        probed = "retained"
    except RuntimeError:
        probed = "freed"
    assert probed == expected
    view, rec = make_view(name)
    view.show_state(rec.timeline.state(rec.calls[0].last_step))
    pow_id = _node_named(rec, "PowBackward0")
    item = view.slot_item(pow_id, "self")
    assert item.state == probed
    if probed == "freed":
        assert item.style.hatch is not None and item.style.dash == "dash"


def test_failing_node_is_shown_failed_at_the_error_step(make_view):
    view, rec = make_view("forgot-retain")
    failed = rec.failed
    assert failed is not None
    error_step = rec.timeline[failed.last_step]
    assert error_step.kind == "error"
    view.show_state(rec.timeline.state(error_step.index))
    item = view.node_item(failed.failed_node)
    assert item.node.name == "PowBackward0"
    assert item.state == "failed"
    assert NODE_TAGS["failed"] in item.text
    palette = PALETTES[view.palette_name]
    assert item.style.border == palette.failed.border
    assert item.style.border_width == palette.bold_width
    others = [view.node_item(n.id).state for n in rec.graph.nodes if n.id != failed.failed_node]
    assert "failed" not in others
    view.show_state(rec.timeline.state(error_step.index - 1))
    assert view.node_item(failed.failed_node).state != "failed"


def test_running_node_follows_node_steps(make_view):
    view, rec = make_view("two-losses")
    for step in rec.timeline.steps:
        view.show_state(rec.timeline.state(step.index))
        running = [n.id for n in rec.graph.nodes if view.node_item(n.id).state == "running"]
        assert running == ([step.node] if step.kind == "node" else [])
        if step.kind == "node":
            assert NODE_TAGS["running"] in view.node_item(step.node).text
            for edge in rec.graph.edges:
                if edge.src == step.node:
                    assert view.edge_item(edge.src, edge.dst).state == "flow"


def test_nodes_added_by_call_two_are_hidden_before_and_visible_after(make_view):
    view, rec = make_view("two-losses")
    later = [n.id for n in rec.graph.nodes if n.added_at_call == 1]
    assert later
    first_of_call_2 = rec.calls[1].first_step
    for i in range(len(rec.timeline)):
        view.show_state(rec.timeline.state(i))
        for node_id in later:
            item = view.node_item(node_id)
            if i < first_of_call_2:
                assert item.state == "hidden" and item.painted_opacity < 0.5
                assert all(view.slot_item(node_id, s.name).state == "hidden" for s in drawn_slots(item.node))
            elif item.node.gone_at_step is not None and i >= item.node.gone_at_step:
                assert item.state == "gone" and 0.3 < item.painted_opacity < 1.0  # faded, yet readable
            else:
                assert item.state != "hidden" and item.painted_opacity == 1.0


def test_restyling_never_rebuilds_items(make_view):
    view, rec = make_view("two-losses")
    scene = view.graph_scene
    before = _scene_items(view)
    nodes = {n.id: view.node_item(n.id) for n in rec.graph.nodes}
    for i in [*range(len(rec.timeline)), *reversed(range(len(rec.timeline)))]:
        view.show_state(rec.timeline.state(i))
    after = _scene_items(view)
    assert len(after) == len(before)
    assert set(map(id, after)) == set(map(id, before))
    assert all(view.node_item(k) is v for k, v in nodes.items())
    assert view.graph_scene is scene
    assert view.show_state(rec.timeline.state(3)) >= 0
    assert view.show_state(rec.timeline.state(3)) == 0  # same step again: nothing restyled


def _on_screen(view: GraphView) -> QImage:
    """The viewport's pixels on screen: what the window flushed, not a new paint (``grab`` would
    paint the whole viewport again and hide a restyle that was never repainted)."""
    viewport = view.viewport()
    at = viewport.mapTo(viewport.window(), QPoint(0, 0))
    window = viewport.window().winId()
    return view.screen().grabWindow(window, at.x(), at.y(), viewport.width(), viewport.height()).toImage()


def test_a_step_repaints_what_it_restyled_and_marks_no_item_dirty(qtbot, models):
    """repaint.py's NOTE [a restyle repaints without a walk]: after each step and its events, the
    screen shows what a view painted afresh at that step shows, faded boxes and edges faded; no
    item carries Qt's own opacity (setting it marks the item dirty: Qt then walks every item)."""
    rec, lay = models["forgot-retain"]
    stepped, fresh = _shown_view(qtbot, 500, 400), _shown_view(qtbot, 500, 400)
    stepped.set_model(rec, lay, progressive=False)
    faded = 0
    for i in [*range(len(rec.timeline)), *reversed(range(len(rec.timeline) - 1))]:
        state = rec.timeline.state(i)
        stepped.show_state(state)
        for _ in range(3):  # the step's repaint request, the paint, and a paint that asks for one
            QApplication.processEvents()
        fresh.set_model(rec, lay, progressive=False)
        fresh.show_state(state)
        fresh.setTransform(stepped.transform())
        fresh.horizontalScrollBar().setValue(stepped.horizontalScrollBar().value())
        fresh.verticalScrollBar().setValue(stepped.verticalScrollBar().value())
        fresh.viewport().repaint()
        assert _on_screen(stepped) == _on_screen(fresh), f"step {i}"
        items = stepped.graph_scene.items()
        assert all(item.opacity() == 1.0 for item in items)
        faded += sum(getattr(item, "painted_opacity", 1.0) < 1.0 for item in items)
    assert faded  # the recording fades nodes (gone) and saved values (freed)


def test_stepping_back_shows_the_same_as_stepping_forward(make_view):
    view, rec = make_view("forgot-retain")

    def snapshot():
        return {k: it.state for k, it in view.graph_scene.slots.items()} | {
            k: it.state for k, it in view.graph_scene.nodes.items()
        }

    forward = []
    for i in range(len(rec.timeline)):
        view.show_state(rec.timeline.state(i))
        forward.append(snapshot())
    for i in reversed(range(len(rec.timeline))):
        view.show_state(rec.timeline.state(i))
        assert snapshot() == forward[i]


def test_zoom_in_out_and_fit(make_view):
    view, _ = make_view("two-losses")
    start = view.camera.zoom
    view.camera.zoom_in()
    assert view.camera.zoom == pytest.approx(start * ZOOM_STEP)
    view.camera.zoom_out()
    view.camera.zoom_out()
    assert view.camera.zoom == pytest.approx(start / ZOOM_STEP)
    for _ in range(40):
        view.camera.zoom_in()
    view.camera.fit()
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    scene_rect = view.graph_scene.sceneRect()
    assert shown.adjusted(-2, -2, 2, 2).contains(scene_rect)


def _wheel(view: GraphView, dy: int, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    centre = QPointF(view.viewport().rect().center())
    event = QWheelEvent(
        centre,
        QPointF(view.viewport().mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, dy),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), event)


def test_wheel_zooms_but_ctrl_wheel_is_left_to_the_window(make_view):
    view, _ = make_view("two-losses")
    start = view.camera.zoom
    _wheel(view, 120)
    assert view.camera.zoom == pytest.approx(start * ZOOM_STEP)
    _wheel(view, -240)
    assert view.camera.zoom == pytest.approx(start / ZOOM_STEP)
    before = view.camera.zoom
    _wheel(view, 120, Qt.KeyboardModifier.ControlModifier)
    assert view.camera.zoom == pytest.approx(before)


def test_saved_value_text_hidden_when_zoomed_far_out(make_view):
    view, _ = make_view("two-losses")
    view.camera.fit()
    assert view.camera.details_visible
    for _ in range(30):
        view.camera.zoom_out()
    assert not view.camera.details_visible
    view.camera.fit()
    assert view.camera.details_visible


def test_level_of_detail_drops_text_but_keeps_state_colour(make_view):
    view, rec = make_view("forgot-retain")
    view.show_state(rec.timeline.state(len(rec.timeline) - 1))
    scene = view.graph_scene
    item = view.slot_item(_node_named(rec, "PowBackward0"), "self")
    rect = item.sceneBoundingRect()

    def render(scale: float) -> QImage:
        image = QImage(
            max(1, round(rect.width() * scale)),
            max(1, round(rect.height() * scale)),
            QImage.Format.Format_RGB32,
        )
        image.fill(Qt.GlobalColor.white)
        from PySide6.QtGui import QPainter

        painter = QPainter(image)
        scene.render(painter, image.rect(), rect)
        painter.end()
        return image

    def dark_pixels(image: QImage) -> int:
        return sum(
            1
            for y in range(image.height())
            for x in range(image.width())
            if QImage.pixelColor(image, x, y).lightness() < 80
        )

    near, far = render(1.0), render(0.2)
    assert dark_pixels(near) > 0  # text drawn
    # far away: no text, only the state's glyph (a few dark pixels), and the box is still there
    assert dark_pixels(far) < dark_pixels(near) * 0.2**2
    assert len({far.pixel(x, y) for y in range(far.height()) for x in range(far.width())}) > 1


def test_find_node_selects_centres_and_cycles(make_view):
    view, rec = make_view("two-losses")
    for _ in range(10):
        view.camera.zoom_out()
    found = view.find_node("powbackward")
    assert found == _node_named(rec, "PowBackward0")
    assert view.selected_node == found and view.node_item(found).selected
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.node_item(found).sceneBoundingRect())
    assert view.camera.details_visible  # zoomed in far enough to read it
    sums = {n.id for n in rec.graph.nodes if n.name == "SumBackward0"}
    first = view.find_node("SumBackward0")
    second = view.find_node("SumBackward0")
    assert {first, second} == sums
    assert view.find_node("y * 3") == _node_named(rec, "MulBackward0")  # by label
    assert view.find_node("n1") == "n1"  # by id
    assert view.find_node("no such node") is None
    assert view.selected_node == "n1"


def test_clicking_a_node_emits_its_id(qtbot, make_view):
    view, rec = make_view("two-losses")
    target = _node_named(rec, "PowBackward0")
    pos = view.mapFromScene(view.node_item(target).pos())
    with qtbot.waitSignal(view.node_clicked, timeout=2000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [target]
    assert view.selected_node == target
    slot_pos = view.mapFromScene(view.slot_item(target, "self").pos())
    with qtbot.waitSignal(view.node_clicked, timeout=2000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=slot_pos)
    assert blocker.args == [target]  # a saved-value box belongs to its node


def test_palette_and_font_scale_restyle_in_place(make_view):
    view, rec = make_view("forgot-retain")
    view.show_state(rec.timeline.state(len(rec.timeline) - 1))
    failed = rec.failed.failed_node
    item = view.node_item(failed)
    width = item.rect().width()
    view.set_palette("projector")
    assert view.node_item(failed) is item
    assert item.state == "failed"
    assert item.style.border_width == PALETTES["projector"].bold_width
    assert item.style.fill == PALETTES["projector"].failed.fill
    assert view.backgroundBrush().color().name() == PALETTES["projector"].background
    view.set_palette("dark")
    assert item.style.text == PALETTES["dark"].text
    view.set_font_scale(2.0)
    assert item.rect().width() > width
    assert view.font_scale == 2.0
    with pytest.raises(ValueError, match="unknown palette"):
        view.set_palette("neon")


def test_set_model_twice_replaces_the_scene(make_view, models):
    view, _ = make_view("two-losses")
    old = view.graph_scene
    rec, lay = models["forgot-retain"]
    view.set_model(rec, lay)
    assert view.graph_scene is not old
    assert set(view.graph_scene.nodes) == {n.id for n in rec.graph.nodes}
    view.clear()
    assert view.graph_scene is None
    assert view.show_state(rec.timeline.state(0)) == 0
    assert view.find_node("Pow") is None


def test_view_exports_current_state(make_view, tmp_path):
    view, rec = make_view("forgot-retain")
    view.show_state(rec.timeline.state(len(rec.timeline) - 1))
    svg = view.export_svg(tmp_path / "g.svg", title="error step")
    png = view.export_png(tmp_path / "g.png")
    text = svg.read_text(encoding="utf-8")
    assert NODE_TAGS["failed"] in text and "error step" in text
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 0


def test_empty_view_refuses_to_export(qtbot, tmp_path):
    view = GraphView()
    qtbot.addWidget(view)
    with pytest.raises(RuntimeError, match="no recording"):
        view.export_svg(tmp_path / "x.svg")


# -- legend --------------------------------------------------------------------------
def test_legend_shows_every_state_with_swatch_and_tag(qtbot):
    legend = Legend(columns=2)
    qtbot.addWidget(legend)
    entries = dict(legend.entries())
    assert set(entries) == {e.state for e in LEGEND}
    for entry in LEGEND:
        assert entry.tag in entries[entry.state] and entry.meaning in entries[entry.state]
        assert not legend.swatch(entry.state).isNull()
    light = legend.swatch("alive").toImage()
    legend.set_palette("dark")
    dark = legend.swatch("alive").toImage()
    assert light != dark
    with pytest.raises(ValueError):
        legend.set_palette("neon")


# -- large graphs: proxies, level of detail, progressive building ------------------------
DEEP = """title = "A weight shared by every layer"
summary = "w is used at every depth, so most of its edges are long"
[program]
code = \"\"\"
import torch

x = torch.tensor([0.5, -1.0], requires_grad=True)
w = torch.tensor([1.5, 0.5], requires_grad=True)
h = x.tanh()
{body}
h.sum().backward()
\"\"\"
"""


@pytest.fixture(scope="module")
def deep():
    rec = record(parse_program(DEEP.format(body="\n".join(["h = (h * w).sin()"] * 8)), name="deep-shared"))
    return rec, layout_graph(rec.graph)


def test_a_proxy_sits_on_its_users_row_to_its_left_with_a_straight_arrow(deep):
    """On a rank of its own a proxy cost Graphviz a pivot across the whole graph (NOTE [large graphs])."""
    _, lay = deep
    assert lay.proxies
    for edge, proxy in lay.proxies.items():
        user = lay.nodes[edge.src]
        assert proxy.y == pytest.approx(user.y) and proxy.x + proxy.width / 2 <= user.left
        path = lay.edges[edge]
        assert path.points[0] == pytest.approx((proxy.x + proxy.width / 2, proxy.y))
        assert path.arrow == pytest.approx((user.left, user.y))
        others = [b for n, b in lay.nodes.items() if n != edge.src] + list(lay.slots.values())
        assert not [b for b in others if b.contains((proxy.x, proxy.y), slack=-1.0)]  # never on a box


def test_proxies_mirror_their_node_and_lead_to_it(qtbot, deep):
    rec, lay = deep
    assert lay.proxies, "a weight used at every depth should get proxy boxes"
    view = _shown_view(qtbot, 900, 700)
    view.set_model(rec, lay)
    w = rec.leaves["w"]
    proxies = view.graph_scene.proxies[w]
    assert len(proxies) == sum(1 for e in lay.proxies if e.dst == w)
    for step in rec.timeline.steps:
        view.show_state(rec.timeline.state(step.index))
        for proxy in proxies:
            assert proxy.state == view.node_item(w).state
            assert proxy.painted_opacity == view.node_item(w).painted_opacity
    view.camera.zoom_in()
    view.camera.zoom_in()
    proxy = proxies[0]
    view.centerOn(proxy)
    with qtbot.waitSignal(view.node_clicked, timeout=2000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(proxy.pos()))
    assert blocker.args == [w]
    assert view.selected_node == w
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.node_item(w).pos())  # the click went to the real node


def test_a_weights_proxies_off_screen_wait_and_those_in_view_are_restyled_at_once(qtbot, deep, monkeypatch):
    """NOTE [a proxy goes with its edge]: zoomed in on one use of a weight every depth reads, a
    step about the weight restyles at once the proxies the view shows; the others wait, and once
    restyled on the timer every proxy is painted in its node's state."""
    from app.render.qt import off_screen

    monkeypatch.setattr(off_screen, "LATER_ABOVE", 4)  # this small model's weight is "many"
    rec, lay = deep
    view = _shown_view(qtbot, 320, 240)
    view.set_model(rec, lay, progressive=False)
    view.camera.set_zoom(2.0)
    scene, w = view.graph_scene, rec.leaves["w"]
    proxies = scene.proxies[w]
    view.centerOn(proxies[len(proxies) // 2])
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    in_view = [p for p in proxies if p.sceneBoundingRect().intersects(seen)]
    assert in_view and len(in_view) < len(proxies)
    waited = 0
    for step in rec.timeline.steps:
        qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
        scene.show_state(rec.timeline.state(step.index))
        assert all(p.painted_state == view.node_item(w).state for p in in_view), step.index
        waited += sum(p.painted_state != view.node_item(w).state for p in proxies)
    assert waited  # some off-screen proxies waited at a step about the weight
    qtbot.waitUntil(lambda: scene.off_screen.waiting == 0, timeout=5000)
    assert all(p.painted_state == view.node_item(w).state for p in proxies)


def test_the_corner_draws_the_boxes_once_for_each_size_it_takes(make_view):
    """Following a run, the corner map takes its full size or half of it at nearly every pan: its
    boxes are drawn once for each size, and a size taken again paints what it painted before."""
    view, _ = make_view("forgot-retain")
    corner, full = view.minimap, QSize(160, 100)
    corner.resize(full)
    first = corner.grab().toImage()  # a paint of the corner, as the view's own paints cause
    drawn = corner.boxes_drawn
    for size in (full / 2, full, full / 2, full):
        corner.resize(size)
        corner.grab()
    assert corner.boxes_drawn == drawn + 1
    assert corner.grab().toImage() == first


def test_zoomed_far_out_hides_saved_value_boxes(make_view):
    view, _ = make_view("two-losses")
    scene = view.graph_scene
    assert view.camera.boxes_visible and all(item.isVisible() for item in scene.slots.values())
    while view.camera.boxes_visible:
        view.camera.zoom_out()
    assert view.camera.zoom >= scene.overview_zoom  # small boxes go well before the overview
    assert not any(item.isVisible() for item in scene.slots.values())
    assert not any(line.isVisible() for line in scene.slot_edges.values())
    assert all(item.isVisible() for item in scene.nodes.values())  # nodes stay
    view.camera.fit()
    assert view.camera.boxes_visible and all(item.isVisible() for item in scene.slots.values())


def test_progressive_build_ends_equal_to_a_direct_build(qtbot, deep):
    import gc

    rec, lay = deep
    direct = GraphView()
    sliced = GraphView()
    for view in (direct, sliced):
        qtbot.addWidget(view)
    thresholds = gc.get_threshold()
    direct.set_model(rec, lay)
    with qtbot.waitSignal(sliced.model_ready, timeout=20000):
        sliced.set_model(rec, lay, progressive=True)
        assert sliced.building
        assert gc.get_threshold() == (0, thresholds[1], NEVER)  # no automatic collection while slices run
        sliced.show_state(rec.timeline.state(5))  # stepping while it builds is fine
    assert not sliced.building and gc.get_threshold() == thresholds
    direct.show_state(rec.timeline.state(5))

    def looks(view):
        scene = view.graph_scene
        return (
            {k: (i.state, i.text, i.pos().toTuple()) for k, i in scene.nodes.items()},
            {k: (i.state, i.text, i.pos().toTuple()) for k, i in scene.slots.items()},
            {k: i.state for k, i in scene.edges.items()},
            len(scene.items()),
        )

    assert looks(sliced) == looks(direct)
    state = rec.timeline.state(5)
    for key, item in sliced.graph_scene.slots.items():
        if key in state.slots:
            assert item.state == state.slots[key]


def test_a_new_model_while_building_stops_the_old_build(qtbot, deep, models):
    rec, lay = deep
    view = GraphView()
    qtbot.addWidget(view)
    view.set_model(rec, lay, progressive=True)
    assert view.building
    small, small_layout = models["two-losses"]
    with qtbot.waitSignal(view.model_ready, timeout=5000):
        view.set_model(small, small_layout)
    assert not view.building
    assert set(view.graph_scene.nodes) == {n.id for n in small.graph.nodes}


def test_a_progressive_model_goes_on_screen_at_the_next_tick_fitted(qtbot, deep, models):
    """NOTE [swap in a turn of its own]: the old drawing stays for the turn of set_model."""
    rec, lay = deep
    view = _shown_view(qtbot, 700, 500)
    view.set_model(*models["two-losses"])
    old = view.scene()
    view.set_model(rec, lay, progressive=True)
    assert view.building and view.scene() is old and view.graph_scene is not old
    view.camera.fit()  # the window asks for a fit once its page has its size: done when shown
    qtbot.waitUntil(lambda: view.scene() is view.graph_scene, timeout=5000)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.adjusted(-2, -2, 2, 2).contains(view.graph_scene.sceneRect())
    qtbot.waitUntil(lambda: not view.building, timeout=20000)
    assert view.scene() is view.graph_scene and len(view.graph_scene.nodes) == len(rec.graph.nodes)


def test_progressive_build_stays_fitted_unless_the_user_zoomed(qtbot, deep):
    rec, lay = deep
    view = _shown_view(qtbot, 700, 500)
    view.set_palette("projector")  # bigger text: the first slice spreads the layout out
    with qtbot.waitSignal(view.model_ready, timeout=20000):
        view.set_model(rec, lay, progressive=True)
    assert view.graph_scene.spread > 1.0
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.adjusted(-2, -2, 2, 2).contains(view.graph_scene.sceneRect())
    with qtbot.waitSignal(view.model_ready, timeout=20000):
        view.set_model(rec, lay, progressive=True)
        view.camera.zoom_in()  # the learner zooms while it builds: the view must not jump back to fit
        zoom = view.camera.zoom
    assert view.camera.zoom == pytest.approx(zoom)


def _visible(view: GraphView):
    return view.mapToScene(view.viewport().rect()).boundingRect()


def test_show_readable_zooms_in_on_a_node_only_where_the_fitted_graph_is_too_small(qtbot, models):
    rec, lay = models["forgot-retain"]
    failing = rec.failed.failed_node
    big = _shown_view(qtbot, 1200, 900)
    big.set_model(rec, lay)
    assert not big.camera.show_readable(failing)  # readable fitted: the whole graph stays
    assert big.camera.reading is None and _visible(big).adjusted(-2, -2, 2, 2).contains(
        big.graph_scene.sceneRect()
    )
    small = _shown_view(qtbot, 220, 130)
    small.set_model(rec, lay)
    small.camera.fit()
    assert small.camera.zoom * NODE_FONT_PX < READABLE_NODE_PX  # fitted, its names are too small to read
    assert small.camera.show_readable(failing) and small.camera.reading == failing
    assert small.camera.zoom * NODE_FONT_PX >= READABLE_NODE_PX
    assert _visible(small).contains(small.node_item(failing).sceneBoundingRect())
    small.camera.zoom_in()  # the learner's zoom ends it
    assert small.camera.reading is None


def test_showing_one_node_readable_after_another_pans_without_fitting_between(qtbot, deep, monkeypatch):
    """Following a backward node by node: a fit in between hid and showed every item of a big
    graph's overview twice a step; the zoom a fit would take is computed, not set."""
    rec, lay = deep
    view = _shown_view(qtbot, 100, 60)
    view.set_model(rec, lay)
    view.camera.fit()
    fitted = view.camera.zoom
    assert view.camera.fit_zoom() == pytest.approx(fitted)
    assert view.camera.overview  # so small, fitted, that boxes are dots
    first, second = rec.graph.nodes[0].id, rec.graph.nodes[-1].id
    assert view.camera.show_readable(first)
    toggles: list[bool] = []
    original = view.graph_scene.set_overview
    monkeypatch.setattr(view.graph_scene, "set_overview", lambda on: (toggles.append(on), original(on)))
    zoom = view.camera.zoom
    assert view.camera.show_readable(second) and view.camera.reading == second
    assert view.camera.zoom == pytest.approx(zoom) and True not in toggles
    assert _visible(view).intersects(view.node_item(second).sceneBoundingRect())  # a tiny view: part of it
    view.camera.fit()
    assert view.camera.zoom == pytest.approx(fitted) and view.camera.reading is None


def test_show_readable_asked_while_a_big_graph_builds_holds_once_it_is_shown(qtbot, deep):
    rec, lay = deep
    node = rec.graph.nodes[0].id
    view = _shown_view(qtbot, 300, 200)
    view.set_palette("projector")  # bigger text: the first slice spreads the layout out
    view.set_model(rec, lay, progressive=True)
    assert not view.camera.show_readable(node)  # not on screen yet: done when it is
    qtbot.waitUntil(lambda: view.scene() is view.graph_scene, timeout=5000)
    assert view.camera.reading == node
    qtbot.waitUntil(lambda: not view.building, timeout=20000)
    assert view.graph_scene.spread > 1.0 and view.camera.reading == node
    assert _visible(view).contains(view.node_item(node).sceneBoundingRect())


def _zoom_to_overview(view) -> None:
    while not view.camera.overview:
        view.camera.zoom_out()


def test_overview_hides_the_items_and_draws_every_node_in_its_state_colours(make_view):
    """NOTE [overview]: zoomed out so far that boxes are dots, the scene draws nodes itself."""
    view, rec = make_view("forgot-retain")
    scene = view.graph_scene
    background = scene.graph_palette.background.lower()

    def dot_colour(item) -> str:  # the node's fill, or its border where the fill is pale (background, gone)
        pale = item.style.fill.lower() == background or item.state == "gone"
        return (item.style.border if pale else item.style.fill).lower()

    _zoom_to_overview(view)
    assert view.camera.zoom < scene.overview_zoom
    assert not any(item.isVisible() for item in (*scene.nodes.values(), *scene.edges.values()))
    for index in range(len(rec.timeline)):
        view.show_state(rec.timeline.state(index))
        # the hidden items are restyled as ever: the overview must say the same
        assert {n: c.lower() for n, c in scene.overview_drawing.colours.items()} == {
            n: dot_colour(item) for n, item in scene.nodes.items()
        }
    assert len({dot_colour(item) for item in scene.nodes.values()}) > 1  # states differ: a real test
    image = view.viewport().grab().toImage()
    for item in scene.nodes.values():
        centre = view.mapFromScene(item.scenePos())
        assert image.pixelColor(centre).name() == dot_colour(item)
    view.camera.fit()
    assert not view.camera.overview and all(item.isVisible() for item in scene.nodes.values())


def test_pictures_show_every_box_whatever_the_view_hides(make_view, tmp_path):
    view, _ = make_view("two-losses")
    scene = view.graph_scene
    _zoom_to_overview(view)
    with scene.drawn_in_full():
        assert not scene.overview and scene.details
        assert all(item.isVisible() for item in (*scene.nodes.values(), *scene.slots.values()))
    assert scene.overview and not scene.details  # as the view left them
    fitted = tmp_path / "fitted.png"
    view.export_png(tmp_path / "overview.png")
    view.camera.fit()
    view.export_png(fitted)
    assert (tmp_path / "overview.png").read_bytes() == fitted.read_bytes()


def test_a_graph_drawn_as_an_overview_is_repainted_once_its_overview_is_made(qtbot, deep):
    """The items built after the overview are hidden in it: only the overview's own repaint puts
    the graph on screen (without it the window showed an empty canvas until a step or a click)."""
    from app.render.qt.scene import GraphScene

    rec, lay = deep
    scene = GraphScene(rec, lay, populate=False)
    scene.set_overview(True)
    QApplication.processEvents()  # the repaint set_overview asks for is done
    build = scene.populate(chunk=4)
    with qtbot.waitSignal(scene.changed, timeout=2000) as repaint:
        while not scene.shows_graph:
            next(build)
    assert repaint.args[0] == [scene.sceneRect()]  # all of it


def test_the_overview_is_drawn_before_the_boxes_are_measured_then_placed_anew(qtbot, deep):
    """Big text spreads the layout; the overview, first drawn where Graphviz put the nodes, moves
    with it, so fitted it is the same picture and zoomed in it matches the boxes."""
    from app.render.qt.scene import GraphScene

    rec, lay = deep
    scene = GraphScene(rec, lay, palette="projector", populate=False)
    scene.set_overview(True)
    build = scene.populate(chunk=4)
    while not scene.shows_graph:
        next(build)
    first = dict(scene.overview_drawing.centres)
    assert scene.spread == 1.0 and first == {n: QPointF(b.x, b.y) for n, b in lay.nodes.items()}
    for _ in build:
        pass
    spread = scene.spread
    assert spread > 1.0  # the projector's text grew the boxes
    assert scene.overview_drawing.centres == {
        n: QPointF(p.x() * spread, p.y() * spread) for n, p in first.items()
    }
    for node_id, item in scene.nodes.items():
        assert scene.overview_drawing.centres[node_id] == item.scenePos()


def test_a_step_shown_while_the_overview_is_made_colours_every_dot(deep):
    from app.render.qt.scene import GraphScene

    rec, lay = deep

    def looks_at(index: int) -> dict[str, str]:
        eager = GraphScene(rec, lay)
        eager.show_state(rec.timeline.state(index))
        return eager.overview_drawing.colours

    first, placed = looks_at(0), list(lay.nodes)[: len(lay.nodes) // 2]
    index = next(i for i in range(len(rec.timeline)) if any(looks_at(i)[n] != first[n] for n in placed))
    scene = GraphScene(rec, lay, populate=False)
    scene.set_overview(True)
    build = scene.populate(chunk=1)
    for _ in placed:  # half of the nodes placed, in step 0's colours; then a step recolours one of them
        next(build)
    scene.show_state(rec.timeline.state(index))
    while not scene.shows_graph:
        next(build)
    assert scene.overview_drawing.colours == looks_at(index)


@pytest.mark.parametrize("name", ["two-losses", "forgot-retain"])
def test_hidden_items_are_restyled_when_read_or_shown(qtbot, models, name):
    """NOTE [restyle what is seen]: an overview puts off restyling; reads and showing catch up."""
    from app.render.qt.scene import GraphScene

    rec, lay = models[name]
    eager, read, shown = (GraphScene(rec, lay) for _ in range(3))
    for scene in (read, shown):
        scene.set_overview(True)
        scene.set_details(False)
    for index in range(len(rec.timeline)):
        state = rec.timeline.state(index)
        for scene in (eager, read, shown):
            scene.show_state(state)
    assert any(read.is_stale(item) for item in read.nodes.values())  # put off, not done
    assert any(read.is_stale(item) for item in read.slots.values())

    def looks(scene):
        return (
            {k: (i.state, i.text, i.style) for k, i in scene.nodes.items()},
            {k: (i.state, i.text, i.style) for k, i in scene.slots.items()},
            {k: (i.state, i.style) for k, i in scene.edges.items()},
            {k: (i.state, i.style) for k, i in scene.slot_edges.items()},
        )

    assert looks(read) == looks(eager)  # each read brought its item up to date
    last = rec.timeline.state(len(rec.timeline) - 1)
    assert all(item.state == last.slots[key] for key, item in read.slots.items() if key in last.slots)
    shown.set_overview(False)
    shown.set_details(True)
    assert not any(shown.is_stale(item) for item in (*shown.nodes.values(), *shown.slots.values()))
    assert png_bytes(shown) == png_bytes(eager)  # drawn as if restyled at every step


def test_the_views_size_hint_does_not_follow_the_graph(qtbot, deep, models):
    """QGraphicsView's own hint follows the scene: a new graph would relayout the whole window."""
    view = GraphView()
    qtbot.addWidget(view)
    hints = set()
    for rec, lay in (models["two-losses"], deep, models["forgot-retain"]):
        view.set_model(rec, lay)
        hints.add(view.sizeHint().toTuple())
    assert len(hints) == 1


# -- hovering ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rnn():
    rec = record(load_builtin("rnn-no-detach"))
    return rec, layout_graph(rec.graph)


def _hover(qtbot, view: GraphView, item) -> str:
    """Rest the pointer on ``item``: the text of the tooltip the view shows."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QToolTip

    view.centerOn(item)
    pos = view.mapFromScene(item.scenePos())
    QToolTip.hideText()
    event = QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    return QToolTip.text()


def test_hovering_a_node_names_the_line_and_iteration_that_made_it(qtbot, rnn):
    rec, lay = rnn
    view = _shown_view(qtbot, 900, 700)
    view.set_model(rec, lay)
    error = rec.timeline.state(len(rec.timeline) - 1)
    view.show_state(error)
    view.select_node(rec.graph.nodes[0].id)  # readable zoom
    assert {len(n.loops) for n in rec.graph.nodes} == {1}  # every node made inside the loop
    for node in rec.graph.nodes:
        (loop,) = node.loops
        text = tip_at(view, view.mapFromScene(view.node_item(node.id).scenePos()))
        assert f"made by line {node.line}, iteration {loop.index + 1} of {loop.count}\n" in text
        state = view.node_item(node.id).state
        assert text.splitlines()[-1].startswith(NODE_TAGS[state] or state)
    failed = rec.calls[-1].failed_node
    assert _hover(qtbot, view, view.node_item(failed)).endswith("✖ failed: the node where the call failed")


def test_hovering_a_saved_value_names_its_slot_state_and_version(qtbot):
    rec = record(load_builtin("inplace-sigmoid"))
    view = _shown_view(qtbot, 900, 700)
    view.set_model(rec, layout_graph(rec.graph))
    sigmoid = _node_named(rec, "SigmoidBackward0")
    item = view.slot_item(sigmoid, "result")
    view.select_node(sigmoid)
    view.show_state(rec.timeline.state(0))
    assert "saved at v0\n" in tip_at(view, view.mapFromScene(item.scenePos())) + "\n"
    modified = next(i for i in range(len(rec.timeline)) if rec.timeline.state(i).versions.get(item.key))
    view.show_state(rec.timeline.state(modified))
    text = _hover(qtbot, view, item)
    assert text.startswith("saved tensor result of SigmoidBackward0\n")
    assert "⚠ modified" in text and text.endswith("saved at v0, now v1")
    assert item.state == "modified"


def test_hovering_between_boxes_shows_no_tooltip(make_view):
    view, _ = make_view("two-losses")
    assert tip_at(view, view.mapFromScene(view.graph_scene.sceneRect().topLeft())) == ""


def test_hovering_an_overview_dot_names_its_node(qtbot, rnn):
    rec, lay = rnn
    view = _shown_view(qtbot, 900, 700)
    view.set_model(rec, lay)
    _zoom_to_overview(view)
    for node in rec.graph.nodes:
        dot = view.mapFromScene(view.graph_scene.nodes[node.id].scenePos())
        assert tip_at(view, dot).startswith(f"{node.name}")
        assert f"made by line {node.line}, iteration {node.loops[0].index + 1} " in tip_at(view, dot)


# -- saved values too small for their text ---------------------------------------------
def _paint_alone(item, scale: float) -> QImage:
    """``item`` painted by itself at view zoom ``scale`` on white."""
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

    rect = item.rect()
    image = QImage(
        round(rect.width() * scale) + 4, round(rect.height() * scale) + 4, QImage.Format.Format_RGB32
    )
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.translate(image.width() / 2, image.height() / 2)
    painter.scale(scale, scale)
    item.paint(painter, QStyleOptionGraphicsItem())
    painter.end()
    return image


def _darker_centre(image: QImage, than: QImage) -> int:
    """Pixels in the middle of ``image`` clearly darker than in ``than`` (where the glyph sits)."""
    w, h = image.width(), image.height()
    return sum(
        1
        for y in range(h // 4, h - h // 4)
        for x in range(w // 3, w - w // 3)
        if image.pixelColor(x, y).lightness() < than.pixelColor(x, y).lightness() - 60
    )


@pytest.mark.parametrize("state", ["alive", "retained", "freed", "modified", "value"])
def test_a_box_too_small_for_its_text_draws_its_state_glyph(qtbot, models, monkeypatch, state):
    from app.render.labels import slot_lines
    from app.render.qt.boxes import SlotItem
    from app.render.style import slot_style, text_readable

    view = _shown_view(qtbot, 900, 700)
    view.set_model(*models["forgot-retain"])
    kind = "value" if state == "value" else "tensor"
    item = next(i for i in view.graph_scene.slots.values() if i.slot.kind == kind)
    item.set_look(state, slot_style(state, PALETTES["light"]))
    small = 0.25
    assert not text_readable(small, item._font_px) and small >= item.min_lod
    near, far = _paint_alone(item, 1.0), _paint_alone(item, small)
    monkeypatch.setattr(SlotItem, "_paint_small", lambda self, painter: None)  # the glyph disabled
    assert _paint_alone(item, 1.0) == near  # at a readable zoom: the text, no glyph
    blank = _paint_alone(item, small)  # the box's fill, hatch and border, saying nothing
    assert _darker_centre(far, than=blank) >= 5  # the glyph: pixels of text colour in the middle
    assert item.painted_lines == slot_lines(item.slot, SLOT_TAGS[state])  # the chosen text is unchanged


class _FirstPaint(QObject):
    """At the first paint of ``view``'s viewport showing its model's scene: the layout's nodes
    drawn within the viewport that have no item yet."""

    def __init__(self, view: GraphView) -> None:
        super().__init__()
        self.view = view
        self.missing: list[str] | None = None
        self.complete: bool | None = None

    def eventFilter(self, watched, event) -> bool:
        view = self.view
        if self.missing is None and event.type() == QEvent.Type.Paint and view.scene() is view.graph_scene:
            graph, seen = view.graph_scene, _visible(view)
            spread = graph.spread
            self.missing = [
                node_id
                for node_id, box in graph.layout.nodes.items()
                if seen.intersects(
                    QRectF(
                        box.x * spread - box.width / 2, box.y * spread - box.height / 2, box.width, box.height
                    )
                )
                and node_id not in graph.nodes
            ]
            self.complete = graph.complete
        return False


def test_a_big_graph_opened_readable_draws_its_nodes_in_view_at_its_first_paint(qtbot, deep):
    """scene_items.py's NOTE [build what is seen first]: a graph built in slices and opened zoomed
    in on its last node draws every node in view at its first paint, before the rest is built;
    the rest is built later, each item where a build at once puts it."""
    rec, lay = deep
    last = rec.graph.nodes[-1].id
    view = _shown_view(qtbot, 300, 200)
    watcher = _FirstPaint(view)
    view.viewport().installEventFilter(watcher)
    view.set_model(rec, lay, progressive=True)
    view.camera.show_readable(last)  # done when the scene is on screen
    qtbot.waitUntil(lambda: watcher.missing is not None, timeout=5000)
    assert view.camera.reading == last
    assert watcher.missing == [] and watcher.complete is False
    qtbot.waitUntil(lambda: not view.building, timeout=20000)
    direct = GraphView()
    qtbot.addWidget(direct)
    direct.set_model(rec, lay, progressive=False)
    built, whole = view.graph_scene, direct.graph_scene
    assert built.nodes.keys() == whole.nodes.keys() and built.edges.keys() == whole.edges.keys()
    for node_id, item in whole.nodes.items():
        assert built.nodes[node_id].sceneBoundingRect() == item.sceneBoundingRect()
    for key, item in whole.slots.items():
        assert built.slots[key].sceneBoundingRect() == item.sceneBoundingRect()


def _missing_in_view(view: GraphView) -> list[str]:
    """The layout's nodes drawn within ``view``'s viewport that have no item yet."""
    graph, seen = view.graph_scene, _visible(view)
    spread = graph.spread
    return [
        node_id
        for node_id, box in graph.layout.nodes.items()
        if seen.intersects(
            QRectF(box.x * spread - box.width / 2, box.y * spread - box.height / 2, box.width, box.height)
        )
        and node_id not in graph.nodes
    ]


def test_a_graph_being_built_is_built_where_a_resize_or_a_scroll_shows_it_before_the_paint(
    qtbot, monkeypatch, deep
):
    """scene_items.py's NOTE [build what is seen first]: the view, made wider or scrolled while its
    graph is built in slices (a panel appears beside it), makes what comes into view at once, so
    the paint that shows it draws it (a paint's own build came after the paint's start)."""
    from app.ui.graph import graph_view as graph_view_module

    monkeypatch.setattr(graph_view_module, "SLICE_S", 0.0)  # one chunk a tick: the build outlasts this test
    rec, lay = deep
    view = _shown_view(qtbot, 160, 120)
    view.set_model(rec, lay, progressive=True)
    view.camera.show_readable(rec.graph.nodes[-1].id)
    qtbot.waitUntil(lambda: view.unshown is None, timeout=5000)
    assert view.building and view.camera.zoom > view.graph_scene.overview_zoom
    view.resize(700, 500)
    assert view.building and _missing_in_view(view) == []
    bar = view.horizontalScrollBar()
    bar.setValue(bar.minimum() if bar.value() > bar.minimum() else bar.maximum())
    assert view.building and _missing_in_view(view) == []
