"""The graph read from the back of a room: at a projector's size and a large text scale, the
node a step is about is drawn with its name at least 12 px tall on screen, inside the view.

A screen is faked by the window's size held as its maximum (as in ``test_room_layout.py``). The
label's size is measured from what is drawn: the node item's font size in scene units times the
view's zoom.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, QRectF, QSize, Qt

from app.ui.graph.graph_area import step_node
from app.ui.window.main_window import MainWindow
from tests.support.room_window import sized_window

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000
ROOM_PX = 12.0  # the smallest node name the back row reads
ROOMS = [((1280, 720), 1.0), ((1280, 720), 1.3), ((1280, 720), 1.5), ((1024, 640), 1.0), ((1024, 640), 1.5)]
BUILT_INS = ("two-losses", "gan-no-detach", "rnn-no-detach")
TRAINING = Path(__file__).parents[1] / "support" / "scripts" / "training" / "mlp_adam_batches.py"


@pytest.fixture(scope="module")
def training_lens(tmp_path_factory) -> Path:
    from app.core.lensfile import save_lens
    from app.core.recorder.script import record_script

    path = tmp_path_factory.mktemp("training") / "training.lens"
    save_lens(record_script(TRAINING).recording, path)
    return path


@pytest.fixture
def window(qtbot, tmp_path):
    made_windows: list[MainWindow] = []

    def make(size: tuple[int, int], scale: float) -> MainWindow:
        made = sized_window(qtbot, tmp_path, scale, BUILT_INS[0], size)
        made_windows.append(made)
        return made

    yield make
    for made in made_windows:
        made.session.worker.wait_idle()


def _shown_rect(view) -> QRectF:
    return view.mapToScene(view.viewport().rect()).boundingRect()


def label_px(view, node: str) -> float:
    """The on-screen pixel size of ``node``'s name (its module's box when collapsed); 0 when the
    node is not inside the view."""
    graph = view.graph_scene
    item = graph.nodes[graph.folded.shown_as(node)]
    if not _shown_rect(view).contains(item.sceneBoundingRect()):
        return 0.0
    return item.font_px * view.transform().m11()


def _steps_that_matter(recording) -> list[int]:
    """Running-node steps (the first, one in the middle, the last), the error step and a line's
    forward steps that made nodes (the first and the last)."""
    steps = recording.timeline.steps
    nodes = [i for i, step in enumerate(steps) if step.kind == "node"]
    lines = [i for i, step in enumerate(steps) if step.kind == "forward" and step.added_nodes]
    chosen = {nodes[0], nodes[len(nodes) // 2], nodes[-1], lines[0], lines[-1]}
    chosen |= {i for i, step in enumerate(steps) if step.kind == "error" and step.node}
    return sorted(chosen)


def _step_to(session, index: int) -> None:
    if session.index == index:  # opened there, fitted: the learner steps to it
        session.go_to(index + 1)
    session.go_to(index)


def _load(qtbot, window: MainWindow, program: str | Path) -> None:
    if window.session.recording is not None and program == BUILT_INS[0]:
        return
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.load_program(program)
    view = window.graph_view
    qtbot.waitUntil(lambda: not view.building and view.unshown is None, timeout=TIMEOUT)
    qtbot.wait(50)  # a new recording is fitted once its page has its size, a turn later


@pytest.mark.parametrize(("size", "scale"), ROOMS)
def test_the_node_a_step_is_about_is_readable_from_the_back_row(qtbot, window, training_lens, size, scale):
    shown = window(size, scale)
    view, session = shown.graph_view, shown.session
    smallest: dict[str, float] = {}
    for program in (*BUILT_INS, training_lens):
        _load(qtbot, shown, program)
        recording = session.recording
        name = getattr(program, "stem", program)
        for index in _steps_that_matter(recording):
            _step_to(session, index)
            node = step_node(session.state(), running=True)
            assert node is not None
            try:
                qtbot.waitUntil(lambda node=node: label_px(view, node) >= ROOM_PX * scale, timeout=2000)
            except Exception:
                kind = session.state().step.kind
                raise AssertionError(f"{name} step {index} ({kind}): {label_px(view, node):.1f} px") from None
            px = label_px(view, node)
            smallest[name] = min(smallest.get(name, px), px)
    assert min(smallest.values()) >= ROOM_PX * scale, smallest
    assert shown.graph_view.font_scale == scale  # the text scale scales the graph's names too


def test_text_scale_makes_the_graphs_names_larger(qtbot, window, training_lens):
    sizes = []
    for scale in (1.0, 1.5):
        shown = window((1280, 720), scale)
        _load(qtbot, shown, training_lens)
        session, view = shown.session, shown.graph_view
        _step_to(session, _steps_that_matter(session.recording)[0])
        node = step_node(session.state(), running=True)
        qtbot.waitUntil(lambda: label_px(view, node) > 0, timeout=2000)  # noqa: B023
        sizes.append(label_px(view, node))
        shown.hide()
    assert sizes[1] >= 1.4 * sizes[0], sizes


def test_the_whole_graph_in_a_corner_takes_the_view_there(qtbot, window, training_lens):
    shown = window((1280, 720), 1.0)
    _load(qtbot, shown, training_lens)
    view, session, corner = shown.graph_view, shown.session, shown.graph_view.minimap
    _step_to(session, _steps_that_matter(session.recording)[0])
    qtbot.waitUntil(corner.isVisible, timeout=2000)  # zoomed in: the whole graph in a corner
    assert QRectF(corner.geometry()).intersected(QRectF(view.viewport().geometry())) == QRectF(
        corner.geometry()
    )
    target = QPointF(corner.width() - 3, corner.height() - 3)  # the graph's far corner
    wanted = corner.scene_point(target)
    assert not _shown_rect(view).contains(wanted)
    qtbot.mouseClick(corner, Qt.MouseButton.LeftButton, pos=target.toPoint())
    assert _shown_rect(view).adjusted(-2, -2, 2, 2).contains(wanted) or _shown_rect(view).intersects(
        QRectF(wanted, QSize(1, 1)).adjusted(-40, -40, 40, 40)
    )
    session.go_to(session.index + 1)  # the learner went there: stepping does not pull the view back
    qtbot.wait(50)
    assert _shown_rect(view).intersects(QRectF(wanted, QSize(1, 1)).adjusted(-40, -40, 40, 40))
    shown.navigation.fit()  # the whole graph: no corner
    qtbot.waitUntil(lambda: not corner.isVisible(), timeout=2000)


def _step_slots(state, node: str) -> list:
    """The saved values the step is about: its node's slots that changed at this step (freed,
    kept, modified), or at an error step the node's slots already freed."""
    changed = [key for key in state.step.slot_changes if key[0] == node]
    if changed or state.step.kind != "error":
        return changed
    return [key for key, slot in state.slots.items() if key[0] == node and slot == "freed"]


@pytest.mark.parametrize("program", ["two-losses", "forgot-retain", "gan-no-detach", "rnn-no-detach"])
def test_following_shows_the_node_and_the_saved_value_it_changes_whole(qtbot, window, program):
    """At 1280x720 and text 1.5, following the run: the node a step runs and the saved value it
    frees or keeps are drawn whole in the view wherever the two fit it at the zoom shown."""
    shown = window((1280, 720), 1.5)
    _load(qtbot, shown, program)
    view, session = shown.graph_view, shown.session
    assert shown.commands.follow.isChecked()
    cut = []
    for index in range(session.last_index + 1):
        session.go_to(index)
        qtbot.wait(5)
        state = session.state()
        node = step_node(state, running=True)
        if node is None or node not in view.graph_scene.scene_items.nodes:
            continue
        items = view.graph_scene.scene_items
        keys = [key for key in _step_slots(state, node) if key in items.slots]
        if not keys:
            continue
        rect = items.nodes[node].sceneBoundingRect()
        for key in keys:
            rect |= items.slots[key].sceneBoundingRect()
        drawn = view.mapFromScene(rect).boundingRect()
        room = view.viewport().rect()
        fits = drawn.width() <= room.width() - 32 and drawn.height() <= room.height() - 32
        if fits and not room.contains(drawn):  # 32: the camera's margins, 16 px a side
            cut.append((index, node, keys, drawn, room))
    assert not cut, cut
