"""Following the running node keeps a steady view: a step whose node is already drawn readable
inside the view, with its saved values where they fit it, moves nothing (no zoom, no scroll),
and a step about a weight every iteration uses stays on the iteration that reads it, where one
of the weight's neighbours is in view.

Whether a node is readable in view is measured from what is drawn (the node item's rectangle
mapped to the viewport, its font size times the view's zoom), not from the camera's own state.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from PySide6.QtCore import QEvent, QObject, QPointF, QRect
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from app.ui.graph.camera import FOCUS_MARGIN
from app.ui.graph.graph_area import step_node
from app.ui.runtime.settings import AppSettings
from app.ui.window.main_window import MainWindow
from tests.support.room_window import training_window

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000
ROOM_PX = 12.0  # the smallest node name the back row reads, at text scale 1


@pytest.fixture
def window(qtbot, tmp_path):
    made = training_window(qtbot, tmp_path)
    yield made
    made.session.worker.wait_idle()


def _camera(view) -> tuple[float, float, int, int]:
    """Where the graph is drawn in the window: its zoom, and where a scene point lands on screen
    (the view's scroll, and where the view sits: a taller caption above it moves neither)."""
    t = view.transform()
    at = view.viewport().mapTo(view.window(), view.mapFromScene(QPointF(0.0, 0.0)))
    return t.m11(), t.m22(), at.x(), at.y()


def _readable_in_view(view, node: str) -> bool:
    """Whether ``node``'s box is drawn whole inside the readable part of the view (the viewport
    less FOCUS_MARGIN a side) with its name >= ROOM_PX tall."""
    graph = view.graph_scene
    item = graph.nodes.get(graph.folded.shown_as(node))
    if item is None:
        return False
    drawn = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    room = view.viewport().rect().adjusted(FOCUS_MARGIN, FOCUS_MARGIN, -FOCUS_MARGIN, -FOCUS_MARGIN)
    inside = QRect(room).contains(drawn)
    return inside and item.font_px * view.transform().m11() >= ROOM_PX * view.font_scale


def _seen_with_saved_values(view, node: str) -> bool:
    """``node`` readable in view (:func:`_readable_in_view`) and its saved values' boxes drawn
    whole in the same room wherever node and boxes together fit it."""
    if not _readable_in_view(view, node):
        return False
    graph = view.graph_scene
    items = graph.scene_items
    shown = graph.folded.shown_as(node)
    rect = items.nodes[shown].sceneBoundingRect()
    for key, slot in items.slots.items():
        if key[0] == shown:
            rect |= slot.sceneBoundingRect()
    drawn = view.mapFromScene(rect).boundingRect()
    room = view.viewport().rect().adjusted(FOCUS_MARGIN, FOCUS_MARGIN, -FOCUS_MARGIN, -FOCUS_MARGIN)
    too_big = drawn.width() > room.width() or drawn.height() > room.height()
    return too_big or QRect(room).contains(drawn)


def _node_steps(recording) -> list[int]:
    return [i for i, step in enumerate(recording.timeline.steps) if step.kind == "node"]


def test_a_step_whose_node_is_already_readable_moves_nothing(qtbot, window):
    view, session = window.graph_view, window.session
    steps = _node_steps(session.recording)
    session.go_to(steps[0])
    qtbot.wait(20)
    kept = 0
    for index in steps[1:]:
        node = step_node(session.recording.timeline.state(index), running=True)
        assert node is not None
        already, before, size = _seen_with_saved_values(view, node), _camera(view), view.viewport().size()
        session.go_to(index)
        qtbot.wait(5)
        assert _readable_in_view(view, node) or not already  # the node a step is about stays readable
        if already and view.viewport().size() == size:  # (a taller caption may cover the node)
            assert _camera(view) == before, f"step {index}: {node} was readable in view, yet the view moved"
            kept += 1
    assert kept >= 3  # the run did come by nodes already in view


def test_a_weight_every_iteration_uses_keeps_the_view_on_the_iteration(qtbot, window):
    view, session = window.graph_view, window.session
    recording = session.recording
    graph, neighbours = recording.graph, recording.graph.neighbours
    shared = {
        n.id
        for n in graph.nodes
        if n.is_leaf and len({graph.node(m).loops for m in neighbours.get(n.id, ())} - {()}) > 1
    }
    assert shared  # the script's weights are read by every batch
    steps = _node_steps(recording)
    checked = 0
    for before_index, index in pairwise(steps):
        node = recording.timeline.steps[index].node
        if node not in shared:
            continue
        session.go_to(before_index)
        qtbot.wait(30)  # the caption and counter laid out
        company = [m for m in neighbours[node] if _readable_in_view(view, m)]
        if not company or _readable_in_view(view, node):
            continue
        where, size = _camera(view), view.viewport().size()
        session.go_to(index)
        qtbot.wait(5)
        if view.viewport().size() != size:  # a taller caption may cover the neighbour
            continue
        assert _camera(view) == where, f"step {index}: the view crossed the graph to the weight {node}"
        checked += 1
    assert checked >= 1


class _Paints(QObject):
    """Paint events a widget receives: how many, and how many pixels they cover."""

    def __init__(self, widget) -> None:
        super().__init__()
        self.count = 0
        self.pixels = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
            self.pixels += sum(r.width() * r.height() for r in event.region())
        return False


def test_a_step_that_moves_the_view_paints_it_once(qtbot, window):
    """The corner map takes its place for the new view before the view paints: placed while
    the view painted, it left its old place to be painted again in a second pass."""
    view, session = window.graph_view, window.session
    steps = _node_steps(session.recording)
    session.go_to(steps[0])
    qtbot.wait(20)
    paints = _Paints(view.viewport())
    corner_moved = 0
    for index in steps[1:60]:
        where, corner, size = _camera(view), view.minimap.geometry(), view.viewport().size()
        before = paints.count
        session.go_to(index)
        for _ in range(3):  # the step's events, its paint, and any paint that paint asked for
            QApplication.processEvents()
        if _camera(view) == where or view.viewport().size() != size:
            continue
        assert paints.count - before == 1, (
            f"step {index} moved the view and painted it {paints.count - before}x"
        )
        corner_moved += view.minimap.isVisible() and view.minimap.geometry() != corner
    view.viewport().removeEventFilter(paints)
    assert corner_moved >= 1  # the run did move the corner map


def _settle(qtbot, paints: _Paints) -> None:
    """Wait until the viewport has had no paint for 100 ms: a panel that lays itself out again
    after a step (an answer from another thread) repaints the whole window once."""

    def quiet() -> bool:
        before = paints.count
        qtbot.wait(100)
        return paints.count == before

    qtbot.waitUntil(quiet, timeout=TIMEOUT)


def test_a_short_pan_paints_the_strip_it_uncovers(qtbot, window):
    """minimap.py's NOTE [a pan paints what it uncovers]: zoomed in, with the corner map shown, a
    pan of 30 pixels paints the strip it uncovers and the corner's places, not the whole view
    (every pan did while the corner was a widget beside the viewport)."""
    view, session = window.graph_view, window.session
    session.go_to(_node_steps(session.recording)[0])
    qtbot.waitUntil(view.minimap.isVisible, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: view.graph_scene.off_screen.waiting == 0, timeout=TIMEOUT)
    bar, viewport = view.horizontalScrollBar(), view.viewport()
    painted = _Paints(viewport)
    _settle(qtbot, painted)  # the step's restyles left for later, and the panels' late relayout, painted
    whole = viewport.width() * viewport.height()
    for shift in (30, -30):
        painted.pixels = 0
        bar.setValue(bar.value() + shift)
        for _ in range(3):
            QApplication.processEvents()
        assert 0 < painted.pixels < whole / 4, (shift, painted.pixels, whole)
    viewport.removeEventFilter(painted)
    corner = view.minimap.geometry()
    assert view.minimap.isVisible() and QRect(viewport.rect()).contains(corner)


def test_a_recording_opens_with_a_node_name_the_room_can_read(qtbot, window):
    """Readable on arrival: a graph whose names fitted are too small to read opens zoomed in on a
    node (the step's, else the newest made, else the first to come), its name >= 12 px."""
    view, session = window.graph_view, window.session
    graph = view.graph_scene
    assert (
        view.camera.fit_zoom() * max(i.font_px for i in graph.nodes.values()) < ROOM_PX
    )  # fitted: unreadable
    assert session.index == 0
    qtbot.waitUntil(lambda: any(_readable_in_view(view, n) for n in graph.nodes), timeout=5000)


def test_after_a_fix_the_lines_it_wrote_are_shown_readable(qtbot, tmp_path):
    """The first step after a fix is applied shows a node its lines made, its name readable."""
    from app.core.lesson.edits import new_line_numbers

    settings = AppSettings(tmp_path / "settings.ini")
    settings.font_scale = 1.5
    made = MainWindow(settings, "gan-no-detach")
    qtbot.addWidget(made)
    made.set_size(1024, 640)
    made.setMaximumSize(1024, 640)
    made.show()
    with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT):
        made.start()
    qtbot.waitUntil(lambda: made.graph_view is not None and bool(made.error_panel.fixes), timeout=TIMEOUT)
    view = made.graph_view
    with qtbot.waitSignal(made.session.recording_applied, timeout=TIMEOUT) as blocker:
        made.error_panel.fix_buttons[0].click()
    fixed = blocker.args[0]
    lines = set(new_line_numbers(*made.session.last_change))
    wrote = [n.id for n in fixed.graph.nodes if n.line in lines]
    assert wrote  # the fix's lines make nodes
    assert view.camera.fit_zoom() * max(i.font_px for i in view.graph_scene.nodes.values()) < ROOM_PX * 1.5
    qtbot.waitUntil(lambda: any(_readable_in_view(view, n) for n in wrote), timeout=5000)
    panel, first = made.code_panel, min(lines)  # and the editor shows the lines the fix wrote
    qtbot.waitUntil(lambda: panel.flashed_lines() == sorted(lines), timeout=5000)
    made.session.go_to(made.session.index)  # a step shown again keeps them in view while they flash
    where = panel.cursorRect(QTextCursor(panel.document().findBlockByNumber(first - 1)))
    assert panel.viewport().rect().contains(where), (first, where, panel.viewport().rect())
    made.session.worker.wait_idle()


def test_a_step_scrolls_each_bar_at_most_once(qtbot, window):
    """Following the run sets each scroll bar once a step: Qt's ensureVisible of a rectangle too
    wide for the view scrolls to its left edge and then to its right, and the camera asked for
    three of them a step (a scroll each time, with what a scroll costs)."""
    view, session = window.graph_view, window.session
    steps = _node_steps(session.recording)
    session.go_to(steps[0])
    qtbot.wait(20)
    moves: list[str] = []
    view.horizontalScrollBar().valueChanged.connect(lambda _: moves.append("h"))
    view.verticalScrollBar().valueChanged.connect(lambda _: moves.append("v"))
    moved = 0
    for index in steps[1:80]:
        moves.clear()
        session.go_to(index)
        assert moves.count("h") <= 1 and moves.count("v") <= 1, (index, moves)
        moved += bool(moves)
    assert moved >= 3  # the run did move the view


def test_the_cameras_one_scroll_lands_where_qts_ensure_visible_calls_do(qtbot, window):
    """For rectangles of every size and place, with margins, in turn, the camera's single scroll
    leaves the bars where Qt's own ``ensureVisible`` calls, one after another, leave them."""
    import random

    from PySide6.QtCore import QRectF

    view, session = window.graph_view, window.session
    session.go_to(_node_steps(session.recording)[0])
    qtbot.wait(20)
    bars = view.horizontalScrollBar(), view.verticalScrollBar()
    assert bars[0].maximum() > 0 and bars[1].maximum() > 0  # zoomed in: both bars can move
    scene = view.graph_scene.sceneRect()
    rng = random.Random(7)
    for _ in range(300):
        start = (
            rng.randint(bars[0].minimum(), bars[0].maximum()),
            rng.randint(bars[1].minimum(), bars[1].maximum()),
        )
        wanted = []
        for _ in range(rng.randint(1, 3)):
            w, h = rng.uniform(1, scene.width() / 2), rng.uniform(1, scene.height() / 2)
            x, y = rng.uniform(scene.left(), scene.right() - w), rng.uniform(scene.top(), scene.bottom() - h)
            wanted.append((QRectF(x, y, w, h), rng.randint(0, 200), rng.randint(0, 200)))
        for bar, value in zip(bars, start, strict=True):
            bar.setValue(value)
        for rect, xm, ym in wanted:
            view.ensureVisible(rect, xm, ym)
        expected = (bars[0].value(), bars[1].value())
        for bar, value in zip(bars, start, strict=True):
            bar.setValue(value)
        view.camera._ensure_visible(wanted)
        assert (bars[0].value(), bars[1].value()) == expected, wanted
