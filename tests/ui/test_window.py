"""The whole window, driven as a learner would: keys, ticks, fixes, devices, settings, faults."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from app.core import load_builtin
from app.core.devices import DeviceInfo
from app.core.lesson.captions import format_values
from app.core.loading import builtin_names
from app.core.toml_writer import to_toml
from app.render.labels import NODE_FONT_PX
from app.ui.graph.camera import READABLE_NODE_PX
from app.ui.runtime import worker as worker_module
from app.ui.runtime.excepthook import install_exception_handler
from app.ui.runtime.settings import AppSettings
from app.ui.window import slides as slides_module
from app.ui.window.main_window import MainWindow
from tests.support.oracle import run_plainly
from tests.support.plain_errors import plain_forgot_retain_error

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000


@pytest.fixture(scope="module", autouse=True)
def _no_widgets_of_earlier_files(qapp):
    """Windows and panels the earlier test files left behind (closed, never deleted) are deleted
    here, so that this file's windows start from an application holding only their own (each window
    styles only itself: NOTE [a theme per window] in app/ui/style/theme.py)."""
    import gc

    for widget in QApplication.topLevelWidgets():
        widget.close()
        widget.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    gc.collect()


@pytest.fixture
def settings_path(tmp_path):
    return tmp_path / "settings.ini"


@pytest.fixture
def open_window(qtbot, settings_path):
    windows = []

    def make(program: str | None = "two-losses", settings: AppSettings | None = None) -> MainWindow:
        window = MainWindow(settings or AppSettings(settings_path), program)
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=TIMEOUT)
        with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
            window.start()
        qtbot.waitUntil(lambda: window.editor is not None, timeout=TIMEOUT)  # made after the first paint
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.session.worker.wait_idle()


def _rerecorded(qtbot, window, action):
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        action()
    return blocker.args[0]


def _key(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(window, key, modifier)


# -- opening and stepping -------------------------------------------------------------------
def test_opens_on_the_seed_program(qtbot, open_window, two_losses):
    window = open_window(None)  # no program named: the remembered one, at first the seed
    assert window.session.recording.program == two_losses.program
    assert window.picker.combo.current_name() == "two-losses"
    assert window.graph_view is not None and window.graph_area.currentWidget() is window.graph_area.page
    assert "two-losses" in window.windowTitle()
    assert "Device: CPU" in window.bars.device_label.text()


def test_the_graph_view_is_made_while_the_first_recording_is_under_way(
    qtbot, settings_path, monkeypatch, two_losses
):
    """NOTE [fast start]: the graph's widgets are made in the wait for the child, not in the turn
    the first recording arrives (they stood between it and its first paint)."""
    import threading

    release = threading.Event()
    real = worker_module.record_program

    def held(source, device):
        release.wait(TIMEOUT / 1000)
        return real(source, device)

    monkeypatch.setattr(worker_module, "record_program", held)
    window = MainWindow(AppSettings(settings_path), "two-losses")
    qtbot.addWidget(window)
    window.show()
    try:
        window.start()
        qtbot.waitUntil(lambda: window.graph_view is not None, timeout=TIMEOUT)
        assert window.session.recording is None  # nothing has arrived yet
        assert window.graph_area.currentWidget() is not window.graph_area.page  # "Recording two-losses…"
    finally:
        release.set()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        pass
    assert window.graph_area.currentWidget() is window.graph_area.page
    assert len(window.graph_view.graph_scene.nodes) == len(two_losses.graph.nodes)
    window.session.worker.wait_idle()


def test_the_step_counter_and_details_relayout_only_for_new_room(qtbot, open_window):
    """NOTE [layout fences]: once a recording's steps have been shown, stepping them again asks
    the window for no new layout on behalf of the counter or the details, and shows them whole."""
    window = open_window("accumulate-no-zero")
    counter, details = window.step_counter, window.node_details
    last = len(window.session.recording.timeline) - 1
    for index in [*range(last + 1)] * 2:  # each fence grows to what this recording needs (the
        window.session.go_to(index)  # details' labels keep their own tallest heights, so their
        qtbot.wait(1)  # sum can first be reached on a second pass)
    asked = [fence.relayouts for fence in window.fences]
    for index in range(last + 1):
        window.session.go_to(index)
        qtbot.wait(1)
        assert counter.number.width() >= counter.number.sizeHint().width(), index
        assert counter.detail.height() >= counter.detail.heightForWidth(counter.detail.width()), index
        for label in (details.title, details.subtitle):
            assert label.height() >= label.heightForWidth(label.width()), (index, label.text())
    assert [fence.relayouts for fence in window.fences] == asked


def test_a_new_recording_measures_the_fences_at_its_own_first_step(qtbot, open_window):
    """The panels show the last recording's step when a new one is applied: the fences measure
    the new one's first step, not a long counter line of the old one's end."""
    window = open_window("retain-bandaid")
    window.session.go_to(len(window.session.recording.timeline) - 1)  # "... · FAILED"
    qtbot.wait(20)
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.load_program("two-losses")
    qtbot.wait(20)
    kept = [(fence.sizeHint(), fence.minimumSizeHint()) for fence in window.fences]
    for fence in window.fences:
        fence.release()  # measured afresh now, at the step on screen
    qtbot.wait(20)
    assert [(fence.sizeHint(), fence.minimumSizeHint()) for fence in window.fences] == kept


def test_the_graph_view_is_made_after_the_windows_first_paint(qtbot, settings_path, monkeypatch):
    """NOTE [fast start]: made in the wait for the child, but after the window's first frame."""
    import threading

    from app.ui.runtime import after_paint

    release = threading.Event()
    real = worker_module.record_program
    monkeypatch.setattr(after_paint, "FIRST_PAINT_WAIT_MS", 60_000)
    monkeypatch.setattr(worker_module, "record_program", lambda s, d: release.wait(30) and real(s, d))
    window = MainWindow(AppSettings(settings_path), "two-losses")
    qtbot.addWidget(window)
    try:
        window.start()
        qtbot.wait(300)
        assert window.graph_view is None  # not shown, never painted: not yet
        window.show()
        qtbot.waitUntil(lambda: window.graph_view is not None, timeout=TIMEOUT)
    finally:
        release.set()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        pass
    window.session.worker.wait_idle()


def test_stepping_with_keys_shows_the_recorded_states_and_grads(qtbot, open_window, two_losses):
    window = open_window()
    pow_id = next(n.id for n in two_losses.graph.nodes if n.name == "PowBackward0")
    window.node_details.show_node(pow_id)
    last = len(two_losses.timeline) - 1
    for index in range(last + 1):
        assert window.session.index == index
        oracle = two_losses.timeline.state(index)
        assert window.node_details.slot_states()["self"] == oracle.slots[(pow_id, "self")]
        assert window.grad_panel.grad_text("x") == f"x.grad = {format_values(oracle.grads.get('x'))}"
        assert window.caption_bar.caption() == oracle.step.caption
        assert window.graph_view.slot_item(pow_id, "self").state == oracle.slots[(pow_id, "self")]
        _key(qtbot, window, Qt.Key.Key_Right)
    assert window.session.index == last
    assert window.grad_panel.bars("x").values() == [8.0, 16.0]  # PyTorch's own x.grad


def test_every_step_shortcut(qtbot, open_window, two_losses):
    window = open_window()
    session = window.session
    ends = [info.last_step for info in two_losses.calls]
    last = len(two_losses.timeline) - 1
    _key(qtbot, window, Qt.Key.Key_Right)
    assert session.index == 1
    _key(qtbot, window, Qt.Key.Key_Left)
    assert session.index == 0
    _key(qtbot, window, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert session.index == ends[0]
    _key(qtbot, window, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert session.index == ends[1]
    _key(qtbot, window, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    assert session.index == ends[0]
    _key(qtbot, window, Qt.Key.Key_Home)
    assert session.index == 0
    _key(qtbot, window, Qt.Key.Key_End)
    assert session.index == last
    session.set_speed(0.5)
    _key(qtbot, window, Qt.Key.Key_Space)
    assert session.playing
    _key(qtbot, window, Qt.Key.Key_Space)
    assert not session.playing


def test_classroom_shortcuts(qtbot, open_window):
    window = open_window()
    _key(qtbot, window, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: bool(window.windowState() & Qt.WindowState.WindowFullScreen), timeout=TIMEOUT)
    _key(qtbot, window, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: not window.windowState() & Qt.WindowState.WindowFullScreen, timeout=TIMEOUT)
    zoom = window.graph_view.camera.zoom
    _key(qtbot, window, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert window.graph_view.camera.zoom > zoom
    _key(qtbot, window, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    _key(qtbot, window, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert window.graph_view.camera.zoom < zoom
    window.graph_view.camera.fit()
    fitted = window.graph_view.camera.zoom
    _key(qtbot, window, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    _key(qtbot, window, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert window.graph_view.camera.zoom == pytest.approx(fitted)
    scale = window.font_scale
    ctrl_alt = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    _key(qtbot, window, Qt.Key.Key_Equal, ctrl_alt)
    assert window.font_scale == pytest.approx(scale + 0.1)
    assert window.graph_view.font_scale == pytest.approx(scale + 0.1)


def test_legend_and_find_shortcuts(qtbot, open_window, two_losses):
    window = open_window()
    legend = window.docks.dock("legend")
    assert not legend.isHidden()
    _key(qtbot, window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert legend.isHidden()
    _key(qtbot, window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert not legend.isHidden()
    _key(qtbot, window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(window.bars.find_field.hasFocus, timeout=TIMEOUT)
    qtbot.keyClicks(window.bars.find_field, "PowBackward")
    _key(qtbot, window.bars.find_field, Qt.Key.Key_Return)
    pow_id = next(n.id for n in two_losses.graph.nodes if n.name == "PowBackward0")
    assert window.graph_view.selected_node == pow_id
    assert window.node_details.shown_name() == "PowBackward0"


def test_an_exception_in_a_slot_is_shown_and_the_window_keeps_working(qtbot, open_window):
    window = open_window()

    def broken_slot(index):
        raise ZeroDivisionError("a bug in a slot")

    uninstall = install_exception_handler(window.show_notice)
    window.session.step_applied.connect(broken_slot)
    try:
        with qtbot.waitSignal(window.notice_shown, timeout=TIMEOUT) as blocker:
            _key(qtbot, window, Qt.Key.Key_Right)
        assert "ZeroDivisionError: a bug in a slot" in blocker.args[0]
        assert window.session.index == 1
    finally:
        window.session.step_applied.disconnect(broken_slot)
        uninstall()
    _key(qtbot, window, Qt.Key.Key_Right)
    assert window.session.index == 2
    assert window.caption_bar.caption() == window.session.recording.timeline[2].caption


def test_arrow_keys_stay_inside_a_text_editor(qtbot, open_window):
    window = open_window()
    assert window.editor is not None
    edit = window.editor.findChildren(QPlainTextEdit)[0]
    assert edit is window.code_panel  # one code editor: it also marks the steps
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus, timeout=TIMEOUT)
    _key(qtbot, edit, Qt.Key.Key_Right)
    _key(qtbot, edit, Qt.Key.Key_Space)
    assert window.session.index == 0
    assert not window.session.playing


def test_ctrl_wheel_scales_the_text_everywhere(qtbot, open_window):
    window = open_window()
    scale = window.font_scale
    viewport = window.graph_view.viewport()
    centre = QPointF(viewport.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(viewport.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.ControlModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    zoom = window.graph_view.camera.zoom
    QApplication.sendEvent(viewport, event)
    assert window.font_scale == pytest.approx(scale + 0.1)
    assert window.graph_view.camera.zoom == pytest.approx(zoom)  # the wheel scaled text, it did not zoom


def test_busy_indicator_shows_while_recording(qtbot, open_window):
    window = open_window()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.load_program("forgot-retain")
        assert not window.bars.busy_label.isHidden()
        assert window.bars.busy_label.text().startswith("Recording…")
    assert window.bars.busy_label.isHidden()


def test_starting_the_window_does_not_import_torch():
    code = (
        "import sys, app.ui.main; "
        "print(sorted(m for m in ('torch', 'app.core.recorder', 'app.core.language', 'app.render') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # torch loads in the worker, after the window is up


def test_a_missing_last_program_falls_back_to_the_seed(
    qtbot, open_window, settings_path, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # a short path, whole in the notice (a long one is cut)
    settings = AppSettings(settings_path)
    settings.last_program = "gone.toml"
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT) as blocker:
        window.start()
    assert blocker.args[0].program.name == "two-losses"
    assert "gone.toml" in window.notice.text()
    window.session.worker.wait_idle()


def test_a_bad_edit_is_shown_in_the_editor_and_the_window_still_steps(qtbot, open_window):
    window = open_window()
    before = window.session.recording
    code = before.program.code.replace(
        "torch.tensor([1., 2.], requires_grad=True)", "torch.ones(10**12, requires_grad=True)"
    )
    with qtbot.waitSignal(window.session.failed, timeout=TIMEOUT) as blocker:
        window.session.rerecord(before.program.with_code(code))
    assert "10,000,000" in blocker.args[0]
    error = window.editor.error()
    assert error is not None and (error.field, error.line, error.col) == ("program", 3, 5)
    assert window.editor.code_edit.error_line == 3
    assert window.session.recording is before
    _key(qtbot, window, Qt.Key.Key_Right)
    assert window.session.index == 1


# -- retain_graph toggles and the error panel ------------------------------------------------------------
def test_unticking_retain_shows_pytorchs_error_at_powbackward0(qtbot, open_window):
    window = open_window()
    recording = _rerecorded(qtbot, window, window.call_toggles.retain_boxes[0].click)
    failed = recording.failed
    assert failed is not None
    assert not window.error_panel.isHidden()
    assert window.error_panel.message.text() == plain_forgot_retain_error()
    assert recording.graph.node(failed.failed_node).name == "PowBackward0"
    assert window.session.state().step.kind == "error"
    assert window.graph_view.node_item(failed.failed_node).state == "failed"
    qtbot.waitUntil(lambda: window.graph_view.selected_node == failed.failed_node, timeout=TIMEOUT)
    assert window.node_details.shown_name() == "PowBackward0"
    assert window.code_panel.marked_line_numbers() == [failed.call.line]
    assert "y.sum().backward(retain_graph=False)" in recording.program.code


@pytest.mark.parametrize("index", [0, 1])
def test_each_fix_removes_the_error_and_ctrl_z_brings_it_back(qtbot, open_window, index):
    window = open_window("forgot-retain")
    broken = window.session.recording
    assert broken.failed is not None
    qtbot.waitUntil(lambda: len(window.error_panel.fixes) == 2, timeout=TIMEOUT)  # found on a pool thread
    assert [f.title.split(" on ")[0] for f in window.error_panel.fixes] == [
        "retain_graph=True",
        "add the losses, one backward",
    ]
    fixes = window.error_panel.fixes
    fixed = _rerecorded(qtbot, window, window.error_panel.fix_buttons[index].click)
    assert fixed.failed is None
    assert fixed.program.code == fixes[index].code
    assert window.error_panel.isHidden()
    window.session.end()
    assert window.grad_panel.bars("x").values() == [8.0, 16.0]
    # the code shows the fix at once; the editor counts it an unsaved change once the graph is built
    assert window.editor.current_program() == fixed.program and window.code_panel.marks_shown
    qtbot.waitUntil(window.editor.is_modified, timeout=5000)
    assert window.editor.current_program() == fixed.program
    assert window.commands.undo.isEnabled()
    window.setFocus()
    undone = _rerecorded(
        qtbot, window, lambda: _key(qtbot, window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    )
    assert undone.program == broken.program
    assert undone.failed is not None and window.session.index == undone.failed.last_step
    assert not window.error_panel.isHidden()
    assert not window.commands.undo.isEnabled()


def _whole_graph_shown(view) -> bool:
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    return view.camera.reading is None and shown.adjusted(-2, -2, 2, 2).contains(view.graph_scene.sceneRect())


def _readable(view, node_id: str) -> bool:
    """``node_id`` shown by ``show_readable``, its name drawn large enough and all of it in view."""
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    return (
        view.camera.reading == node_id
        and view.camera.zoom * NODE_FONT_PX >= READABLE_NODE_PX
        and shown.contains(view.node_item(node_id).sceneBoundingRect())
    )


def test_the_error_step_shows_the_failing_node_readable_on_a_projector(qtbot, open_window):
    """NOTE [auto fit]: a real model's graph fitted to a 1280x720 window draws names too small to
    read; its error step shows the node PyTorch failed at instead, until the learner zooms."""
    window = open_window("gan-no-detach")
    window.resize(1280, 720)
    window.commands.follow.setChecked(False)  # the error step alone
    view, session = window.graph_view, window.session
    failing = session.recording.failed.failed_node
    assert (
        session.recording.graph.node(failing).name == "AddmmBackward0"
    )  # fake = G(z), freed by D's backward

    def whole_graph_shown() -> bool:
        return _whole_graph_shown(view)

    def failing_node_readable() -> bool:
        return _readable(view, failing)

    session.home()
    qtbot.waitUntil(whole_graph_shown, timeout=TIMEOUT)
    assert view.camera.zoom * NODE_FONT_PX < READABLE_NODE_PX  # fitted, this graph's names cannot be read
    session.end()
    assert session.state().step.kind == "error"
    qtbot.waitUntil(failing_node_readable, timeout=TIMEOUT)
    session.prev_step()
    assert whole_graph_shown()
    session.end()
    assert failing_node_readable()
    window.navigation.fit()  # "Fit": the whole graph, at the error step too
    assert whole_graph_shown()
    session.prev_step()
    session.end()
    assert failing_node_readable()
    _key(qtbot, window, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)  # the learner zooms
    zoom = view.camera.zoom
    session.prev_step()
    session.end()
    assert view.camera.reading is None and view.camera.zoom == pytest.approx(zoom)


def test_following_the_running_node_pans_with_the_run_on_a_projector(qtbot, open_window, settings_path):
    """NOTE [auto fit]: at 1280x720 the GAN's names are unreadable fitted. Turned on, following
    shows each backward step's node and each line's newest node at one zoom, panning; a call's end
    keeps the view; Fit shows the whole graph until the next step about a node."""
    window = open_window("gan-no-detach")
    window.resize(1280, 720)
    view, session, follow = window.graph_view, window.session, window.commands.follow
    steps = session.recording.timeline.steps
    assert follow.isChecked() and AppSettings(settings_path).follow_nodes  # on by default
    follow.trigger()  # off: the whole graph
    first = next(i for i, step in enumerate(steps) if step.kind == "node")
    assert steps[first + 1].kind == "node" and steps[first + 1].node != steps[first].node
    session.go_to(first)
    qtbot.waitUntil(lambda: _whole_graph_shown(view), timeout=TIMEOUT)
    assert view.camera.zoom * NODE_FONT_PX < READABLE_NODE_PX  # fitted, this graph's names cannot be read
    follow.trigger()  # View ▸ Follow the running node
    assert _readable(view, steps[first].node) and AppSettings(settings_path).follow_nodes
    zoom = view.camera.zoom
    session.next_step()
    assert _readable(view, steps[first + 1].node) and view.camera.zoom == pytest.approx(zoom)  # it pans
    end = next(i for i in range(first, len(steps)) if steps[i].kind == "call_end")
    session.go_to(end - 1)
    session.next_step()  # a call's end is about no node: the view stays
    assert view.camera.reading == steps[end - 1].node and view.camera.zoom == pytest.approx(zoom)
    line = next(i for i in range(end, len(steps)) if steps[i].kind == "forward" and steps[i].added_nodes)
    session.go_to(line)
    assert _readable(view, steps[line].added_nodes[-1])  # where the graph just grew
    window.navigation.fit()
    assert _whole_graph_shown(view)
    session.go_to(first)
    assert _readable(view, steps[first].node)
    follow.trigger()  # off again: the whole graph, and remembered
    assert _whole_graph_shown(view)
    session.next_step()
    assert _whole_graph_shown(view) and not AppSettings(settings_path).follow_nodes


def test_predict_first_fits_a_projector_and_its_choices_wrap(qtbot, open_window):
    """P at 1280x720 with the GAN's questions (a call's long text, nine nodes, gradients as
    choices): the window may not need more than the screen, nothing is wider than its column,
    and a click on a choice's text picks it."""
    window = open_window("gan-no-detach")
    window.resize(1280, 720)
    window.session.home()  # before the first call: its questions are open
    _key(qtbot, window, Qt.Key.Key_P)
    panel = window.predict_panel
    qtbot.waitUntil(lambda: bool(panel.rows), timeout=TIMEOUT)
    assert not panel.revealed()
    qtbot.wait(200)  # the relayout that grew the window past the screen came a turn later
    assert window.height() <= 720 and window.width() <= 1280, window.size()
    content = panel.scroll_area.widget()
    qtbot.waitUntil(lambda: content.width() <= panel.scroll_area.viewport().width(), timeout=TIMEOUT)
    assert content.minimumSizeHint().width() <= panel.scroll_area.viewport().width()
    row = next(r for r in panel.rows if r.labels)
    qtbot.mouseClick(row.labels[-1], Qt.MouseButton.LeftButton)
    assert row.chosen() == row.question.choices[-1]


def test_the_gradients_panel_says_which_line_reset_a_grad_after_a_call(qtbot, open_window):
    """In the GAN, optG.zero_grad() sets G's .grad to None after D's backward wrote it: the panel
    names that line instead of showing None under the call's gradient unexplained."""
    window = open_window("gan-no-detach")
    recording = window.session.recording
    line = next(i + 1 for i, text in enumerate(recording.program.lines) if "optG.zero_grad()" in text)
    step = next(s for s in recording.timeline.steps if s.kind == "forward" and s.line == line)
    assert step.grad_changes and all(v is None for v in step.grad_changes.values())
    plain = run_plainly(recording.program.code).calls[0].grads  # after D's backward, as PyTorch left it
    leaf = next(name for name in step.grad_changes if plain.get(name) is not None)
    window.session.go_to(step.index)
    assert f"line {line} (optG.zero_grad()) set it to None" in window.grad_panel.history_text(leaf)
    window.session.go_to(step.index - 1)
    assert "set it to" not in window.grad_panel.history_text(leaf)


def _dark_pixels(widget) -> int:
    image = widget.grab().toImage()
    return sum(
        1
        for y in range(image.height())
        for x in range(image.width())
        if max(image.pixelColor(x, y).getRgb()[:3]) < 140  # the text or arrow: borders are lighter
    )


def test_the_overflow_buttons_show_their_arrows_on_a_small_projector(qtbot, open_window):
    """At 1024x768 the toolbar hides Theme and Text behind its overflow button and the docks'
    tabs scroll: those buttons draw a glyph, not an empty box (the theme's padding squeezed it out)."""
    from PySide6.QtWidgets import QTabBar, QToolButton

    window = open_window()
    window.set_theme("light")
    window.resize(1024, 768)
    extension = window.bars.toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
    qtbot.waitUntil(extension.isVisible, timeout=TIMEOUT)
    assert _dark_pixels(extension) > 5
    arrows = [
        b
        for bar in window.findChildren(QTabBar)
        for b in bar.findChildren(QToolButton)
        if b.isVisible() and b.isEnabled()
    ]
    assert all(_dark_pixels(b) > 5 for b in arrows), [(b.size(), _dark_pixels(b)) for b in arrows]


DEEP_FAILING_SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
layers = []
for _ in range(12):
    layers += [nn.Linear(8, 8), nn.Tanh()]
model = nn.Sequential(*layers, nn.Linear(8, 1))
out = model(torch.randn(4, 8)).sum()
out.backward()
out.backward()
"""


def test_the_failing_node_stays_readable_through_modules_resizes_and_presentation(
    qtbot, open_window, tmp_path
):
    """A recorded model's error step: collapsing a module, resizing the window and the
    presentation layout keep its failing node readable; a zoom by the learner (a click on a
    stand-in box included) is never undone by stepping."""
    from app.core.lensfile import save_lens
    from app.core.recorder.script import record_script

    script = tmp_path / "deep.py"
    script.write_text(DEEP_FAILING_SCRIPT, encoding="utf-8")
    save_lens(record_script(script).recording, tmp_path / "deep.lens")
    window = open_window("two-losses")
    window.resize(1280, 720)
    window.commands.follow.setChecked(False)  # the error step alone is about a node
    _rerecorded(qtbot, window, lambda: window.load_program(tmp_path / "deep.lens"))
    view, session = window.graph_view, window.session
    failing = session.recording.failed.failed_node
    assert "Trying to backward through the graph a second time" in session.recording.failed.error

    def failing_node_readable() -> bool:
        shown = view.mapToScene(view.viewport().rect()).boundingRect()
        drawn = view.graph_scene.folded.shown_as(failing)
        return (
            view.camera.reading == failing
            and view.camera.zoom * NODE_FONT_PX >= READABLE_NODE_PX
            and shown.contains(view.graph_scene.nodes[drawn].sceneBoundingRect())
        )

    session.end()
    qtbot.waitUntil(failing_node_readable, timeout=TIMEOUT)
    own = session.recording.graph.node(failing).module
    other = next(g.name for g in view.modules.groups if g.module != own)
    qtbot.wait(300)  # resizes still queued from opening the window would show the node again
    with qtbot.waitSignal(view.modules_changed, timeout=TIMEOUT):
        view.modules.collapse(other)
    qtbot.waitUntil(failing_node_readable, timeout=2000)
    size = view.viewport().size()
    window.resize(1100, 650)
    qtbot.waitUntil(lambda: view.viewport().size() != size, timeout=TIMEOUT)
    qtbot.waitUntil(failing_node_readable, timeout=TIMEOUT)
    _key(qtbot, window, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)  # the learner zooms out
    assert view.camera.reading is None
    _key(qtbot, window, Qt.Key.Key_F5)  # presentation: fitted again, so the failing node again
    qtbot.waitUntil(failing_node_readable, timeout=TIMEOUT)
    _key(qtbot, window, Qt.Key.Key_F5)
    qtbot.waitUntil(failing_node_readable, timeout=TIMEOUT)
    session.home()
    qtbot.waitUntil(lambda: view.camera.reading is None, timeout=TIMEOUT)
    scene = view.graph_scene
    drawn = next(n for n in scene.nodes if n != failing and not scene.folded.is_box(n))
    view.select_node(drawn)  # as a click on a stand-in box does

    def held() -> QPointF:  # the scene point at the bottom of the view: the error panel above
        rect = view.viewport().rect()  # it takes height from the top, the graph stays on screen
        return view.mapToScene(QPoint(rect.center().x(), rect.bottom()))

    zoom, where = view.camera.zoom, held()
    session.end()
    assert view.camera.reading is None and view.camera.zoom == pytest.approx(zoom)
    assert held() == where


def test_a_fixed_builtin_is_shown_as_an_edit(qtbot, open_window):
    """After a fix the program is no longer the built-in: the picker says "(edited)" and the
    summary that tells the broken story says it is where the edit began; Ctrl+Z restores both."""
    window = open_window("gan-no-detach")
    summary = window.code_column.summary.text()
    qtbot.waitUntil(lambda: bool(window.error_panel.fixes), timeout=TIMEOUT)  # offered once proven
    fixed = _rerecorded(qtbot, window, window.error_panel.fix_buttons[0].click)
    assert fixed.failed is None
    assert window.picker.combo.currentText() == "gan-no-detach (edited)"
    assert window.code_column.summary.text().startswith(
        "Your edit of the built-in gan-no-detach"
    ) and summary in (window.code_column.summary.text())
    window.setFocus()
    _rerecorded(qtbot, window, lambda: _key(qtbot, window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier))
    assert (
        window.picker.combo.current_name() == "gan-no-detach" and window.code_column.summary.text() == summary
    )


def test_one_click_retains_the_unset_graph_and_the_next_frees_it(qtbot, open_window):
    window = open_window("forgot-retain")
    box = window.call_toggles.retain_boxes[0]
    assert window.session.recording.calls[0].call.retain_graph is None
    assert not box.isChecked() and "unset → False" in box.text()  # the value in effect
    recording = _rerecorded(qtbot, window, box.click)  # unset (False) -> True: one click
    assert recording.calls[0].call.keywords["retain_graph"] == "True"
    assert recording.failed is None  # PyTorch ran the second backward
    assert len(recording.calls) == 2 and all(info.error is None for info in recording.calls)
    box = window.call_toggles.retain_boxes[0]
    assert box.isChecked() and box.text() == "retain_graph=True"
    recording = _rerecorded(qtbot, window, box.click)  # True -> False: one click again
    assert recording.calls[0].call.keywords["retain_graph"] == "False"
    assert recording.failed is not None and recording.failed.index == 1
    assert "Trying to backward through the graph a second time" in (recording.failed.error or "")
    box = window.call_toggles.retain_boxes[0]
    assert not box.isChecked() and box.text() == "retain_graph=False"
    recording = _rerecorded(qtbot, window, box.click)  # False -> True: one click, not two
    assert recording.calls[0].call.keywords["retain_graph"] == "True" and recording.failed is None


# -- devices and faults --------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only listing")
def test_device_selector_lists_cpu_and_disables_cuda(qtbot, open_window):
    window = open_window()
    selector = window.device_selector
    assert selector.device_names()[0] == "cpu"
    cuda = selector.item_for("cuda")
    assert not cuda.isEnabled()
    assert cuda.toolTip()  # the reason, as PyTorch's build reports it


def test_a_file_recorded_on_a_device_not_listed_here_shows_that_device(qtbot, open_window, tmp_path):
    """A teacher's recording from a GPU, opened on a machine that lists no such device: the box and
    the status bar say where it was made, and choosing the CPU records the program again here."""
    import dataclasses

    from app.core import record
    from app.core.lensfile import save_lens

    made = dataclasses.replace(record(load_builtin("two-losses")), device="cuda:7")
    path = tmp_path / "from-the-gpu.lens"
    save_lens(made, path)
    window = open_window(str(path))
    selector = window.device_selector
    assert window.session.recording.device == "cuda:7"
    assert selector.current_device() == "cuda:7" and "cuda:7" in selector.currentText()
    shown = selector.item_for("cuda:7")
    assert shown is not None and not shown.isEnabled() and "cuda:7" in shown.toolTip()
    assert "Device: cuda:7 · PyTorch" in window.bars.device_label.text()
    again = _rerecorded(qtbot, window, lambda: selector.choose("cpu"))
    assert again.device == "cpu" and again.program == made.program
    assert selector.current_device() == "cpu" and selector.item_for("cuda:7") is None
    assert "cuda:7" not in selector.device_names()


def test_a_failed_recording_on_another_device_keeps_the_previous_one(qtbot, open_window, monkeypatch):
    monkeypatch.setattr(
        "app.ui.panels.device_selector._devices",
        lambda: [DeviceInfo("cpu", "CPU", True), DeviceInfo("cuda:0", "Test GPU (cuda:0)", True)],
    )
    window = open_window()
    window.device_selector.refresh()
    window.session.go_to(4)
    before = window.session.recording

    def lost_device(program, device):
        raise torch.OutOfMemoryError(f"CUDA out of memory on {device}. Tried to allocate 20.00 GiB")

    monkeypatch.setattr(worker_module, "record_program", lost_device)
    with qtbot.waitSignal(window.session.failed, timeout=TIMEOUT):
        window.device_selector.choose("cuda:0")
    assert window.session.recording is before
    assert window.session.index == 4
    assert not window.notice.isHidden()
    assert "CUDA out of memory on cuda:0" in window.notice.text()
    assert window.device_selector.current_device() == "cpu"
    assert "Device: CPU" in window.bars.device_label.text()
    monkeypatch.undo()
    again = _rerecorded(qtbot, window, lambda: window.load_program("forgot-retain"))  # CPU still works
    assert again.device == "cpu"


def test_missing_dot_still_opens_with_the_data_panels(qtbot, open_window, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere
    window = open_window()
    assert window.graph_area.currentWidget() is window.graph_area.message
    message = window.graph_area.message.text()
    assert "dot" in message and "apt-get install graphviz" in message
    window.session.end()
    assert window.grad_panel.grad_text("x") == "x.grad = [8, 16]"
    assert window.caption_bar.caption() == window.session.recording.timeline[-1].caption


# -- settings --------------------------------------------------------------------------------------------
def test_theme_font_scale_and_last_program_persist(qtbot, open_window, settings_path):
    first = open_window()
    first.set_theme("projector")
    first.set_font_scale(1.6)
    _rerecorded(qtbot, first, lambda: first.load_program("forgot-retain"))
    first.close()
    second = open_window(None, AppSettings(settings_path))
    assert second.theme == "projector"
    assert second.font_scale == pytest.approx(1.6)
    assert second.session.recording.program.name == "forgot-retain"
    assert second.graph_view.palette_name == "projector"
    assert second.graph_view.font_scale == pytest.approx(1.6)
    assert second.bars.theme_picker.currentText() == "projector"


def test_geometry_persists(qtbot, open_window, settings_path, monkeypatch):
    first = open_window()
    first.resize(1234, 777)
    saved = first.saveGeometry()
    first.close()
    assert AppSettings(settings_path).geometry == saved
    restored = []
    monkeypatch.setattr(MainWindow, "restoreGeometry", lambda self, data: restored.append(data) or True)
    open_window(None, AppSettings(settings_path))
    # compared as bytes: the offscreen test screen (800x800) would clamp a real restore
    assert restored == [saved]


def test_program_picker_loads_a_builtin(qtbot, open_window):
    window = open_window()
    position = window.picker.combo.findData("weight-and-input")
    recording = _rerecorded(qtbot, window, lambda: window.picker.combo.activated.emit(position))
    assert recording.program.name == "weight-and-input"
    assert window.grad_panel.leaf_names() == list(recording.leaves)


def test_an_opened_file_is_shown_in_the_picker_and_remembered(qtbot, open_window, settings_path, tmp_path):
    mine = tmp_path / "my-losses.toml"
    mine.write_text(to_toml(load_builtin("two-losses")), encoding="utf-8")
    window = open_window()
    recording = _rerecorded(qtbot, window, lambda: window.files.open_path(mine))
    assert recording.program.name == "my-losses"
    assert recording.program.code == load_builtin("two-losses").code
    assert window.picker.combo.currentText() == "my-losses (my-losses.toml)"
    assert Path(window.picker.combo.currentData()) == mine
    window.close()
    again = open_window(None, AppSettings(settings_path))
    assert again.session.recording.program.path == mine


def test_a_plain_python_file_opens_as_a_program(qtbot, open_window, tmp_path):
    mine = tmp_path / "pasted.py"
    mine.write_text("# My two losses\n" + load_builtin("forgot-retain").code, encoding="utf-8")
    window = open_window()
    recording = _rerecorded(qtbot, window, lambda: window.files.open_path(mine))
    assert (recording.program.name, recording.program.title) == ("pasted", "My two losses")
    assert recording.failed is not None  # the snippet as written: its second backward fails
    assert window.picker.combo.currentText() == "pasted (pasted.py)"
    assert window.editor.code_edit.text() == recording.program.code


def test_a_lens_file_opens_without_recording(qtbot, open_window, tmp_path, monkeypatch, forgot_retain):
    from app.core.lensfile import save_lens

    path = tmp_path / "saved.lens"
    save_lens(forgot_retain, path)
    window = open_window()

    def no_recording(program, device):
        raise AssertionError("a .lens file is read, never recorded")

    monkeypatch.setattr(worker_module, "record_program", no_recording)
    recording = _rerecorded(qtbot, window, lambda: window.files.open_path(path))
    assert recording.program == forgot_retain.program
    assert [s.caption for s in recording.timeline.steps] == [s.caption for s in forgot_retain.timeline.steps]
    assert window.picker.combo.currentText() == "forgot-retain (saved.lens)"
    assert window.session.index == recording.failed.last_step
    assert window.error_panel.message.text() == forgot_retain.failed.error


# -- every built-in, old and new ---------------------------------------------------------------------------
def expected_marks(recording, index):
    step = recording.timeline[index]
    if step.call is not None:
        call = recording.calls[step.call].call
        return list(range(call.line, call.end_line + 1))
    return [] if step.line is None else [step.line]


def test_every_builtin_steps_with_its_lines_and_grads(qtbot, open_window):
    window = open_window()
    for name in builtin_names():
        recording = _rerecorded(qtbot, window, lambda name=name: window.load_program(name))
        assert recording.program.name == name
        assert window.code_panel.text().splitlines() == recording.program.lines
        leaves = window.grad_panel.leaf_names()
        assert leaves == list(recording.leaves)[: len(leaves)] and leaves
        for index in range(len(recording.timeline)):
            window.session.go_to(index)
            state = recording.timeline.state(index)
            assert window.code_panel.marked_line_numbers() == expected_marks(recording, index), (name, index)
            for leaf in leaves:
                assert (
                    window.grad_panel.grad_text(leaf)
                    == f"{leaf}.grad = {format_values(state.grads.get(leaf))}"
                )
            assert window.caption_bar.caption() == state.step.caption
            at_error = state.step.kind == "error"
            assert window.error_panel.isHidden() != at_error, (name, index)
        assert window.session.index == len(recording.timeline) - 1


# -- export ----------------------------------------------------------------------------------------------
def test_export_current_view_to_svg_and_png(qtbot, open_window, tmp_path, monkeypatch):
    window = open_window()
    window.session.go_to(3)
    for fmt in ("svg", "png"):
        target = tmp_path / f"view.{fmt}"
        monkeypatch.setattr(slides_module, "ask_export_file", lambda parent, f, s, t=target: t)
        getattr(window.commands, f"export_{fmt}").trigger()
        assert target.stat().st_size > 0
    assert ET.parse(tmp_path / "view.svg").getroot().tag.endswith("svg")
    assert not QImage(str(tmp_path / "view.png")).isNull()


def test_export_every_step_writes_one_file_per_step(qtbot, open_window, tmp_path, monkeypatch, two_losses):
    window = open_window()
    folder = tmp_path / "slides"
    monkeypatch.setattr(slides_module, "ask_export_folder", lambda parent: folder)
    with qtbot.waitSignal(window.slides_exported, timeout=TIMEOUT) as blocker:
        window.commands.export_slides.trigger()
    files = blocker.args[0]
    assert [f.name for f in files] == [f"step-{i:03d}.png" for i in range(len(two_losses.timeline))]
    assert all(not QImage(str(f)).isNull() for f in files)
    svg = tmp_path / "svg"
    with qtbot.waitSignal(window.slides_exported, timeout=TIMEOUT) as blocker:
        window.export_slides(svg, "svg")
    assert len(blocker.args[0]) == len(two_losses.timeline)
    assert all(ET.parse(Path(f)).getroot().tag.endswith("svg") for f in blocker.args[0])


def test_slides_past_the_export_budget_write_nothing_and_say_how_to_go_on(
    open_window, qtbot, monkeypatch, tmp_path, two_losses
) -> None:
    from app.render.qt import export as export_module

    window = open_window()
    folder = tmp_path / "slides"
    monkeypatch.setattr(slides_module, "ask_export_folder", lambda parent: folder)
    limit = len(two_losses.timeline) - 1  # one step too many for the budget
    monkeypatch.setitem(export_module.write_steps.__kwdefaults__, "max_steps", limit)
    with qtbot.waitSignal(window.exporter.failed, timeout=TIMEOUT) as blocker:
        window.commands.export_slides.trigger()
    said = blocker.args[0]
    assert said.startswith("Export stopped (nothing was written): this recording needs ")
    assert f"{len(two_losses.timeline)} steps, one slide each; slides stop at {limit}" in said
    assert "--max-steps" in said and not folder.exists()
    assert not window.exporter.busy


def test_export_torchviz_writes_make_dots_drawing_of_the_shown_program(
    qtbot, open_window, tmp_path, monkeypatch
):
    from app.ui.window import torchviz_exporter
    from tests.support.torchviz_oracle import first_call_make_dot, read_make_dot_source, same_drawing

    window = open_window()
    folder = tmp_path / "torchviz"
    monkeypatch.setattr(torchviz_exporter, "ask_torchviz_folder", lambda parent: folder)
    assert window.commands.export_torchviz in window.menu_named("&File").actions()
    with qtbot.waitSignal(window.torchviz_exporter.wrote, timeout=TIMEOUT) as blocker:
        window.commands.export_torchviz.trigger()
    assert "make_dot" in blocker.args[0] and not window.torchviz_exporter.busy
    written = read_make_dot_source((folder / "torchviz.dot").read_text(encoding="utf-8"))
    oracle = first_call_make_dot(window.session.recording.program.code)
    assert oracle is not None and same_drawing(written, oracle)
    assert ET.parse(folder / "torchviz.svg").getroot().tag.endswith("svg")


def test_the_view_menu_holds_the_graphs_module_commands(open_window) -> None:
    from app.render.modules import module_groups

    window = open_window()
    view_menu = window.menu_named("&View")
    assert view_menu is not None and window.graph_view is not None
    actions = view_menu.actions()
    assert (
        window.graph_view.modules.collapse_all_action in actions
        and window.graph_view.modules.expand_all_action in actions
    )
    has_modules = bool(module_groups(window.session.recording.graph))  # a program names no modules
    assert window.graph_view.modules.collapse_all_action.isEnabled() == has_modules
    assert not window.graph_view.modules.expand_all_action.isEnabled()
