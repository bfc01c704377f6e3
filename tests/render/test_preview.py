"""The picture a big ``.lens`` file opens with (lensfile.format's NOTE [picture first]): written in a
header member of its own, read back checked, painted by the window before the recording is read."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import math
import struct
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QColor

from app.core import load_builtin, record
from app.core.lensfile import VERSION, LensError, lens_bytes, lens_preview, open_lens, preread_lens, read_lens
from app.core.model.recording import Recording
from app.render import preview as preview_module
from app.render.layout import Layout, layout_graph
from app.render.layout_store import layout_json, save_with_layout
from app.render.preview import Preview, preview_from_json, preview_json
from app.render.qt.scene import GraphScene
from app.render.style import DEFAULT_PALETTE, PALETTES, dot_colour

TIMEOUT = 30_000


@pytest.fixture(scope="module")
def forgot_retain_run() -> tuple[Recording, Layout]:
    """A real PyTorch run that fails: it opens at the error step, on the failing node."""
    recording = record(load_builtin("forgot-retain"))
    return recording, layout_graph(recording.graph)


@pytest.fixture(scope="module")
def logged_loss_run() -> tuple[Recording, Layout]:
    """A loop: frames, and nodes of later iterations not built yet at the step it opens on."""
    recording = record(load_builtin("logged-loss"))
    return recording, layout_graph(recording.graph)


TRAINING_LOOP = """import torch
import torch.nn as nn
import torch.optim as optim

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
x = torch.randn(16, 4)
y = torch.randn(16, 1)
for step in range(100):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
"""


@pytest.fixture(scope="module")
def training_run() -> tuple[Recording, Layout]:
    """A big graph: a preview by default, and a graph view built in slices."""
    from app.core.model.program import Program

    recording = record(Program(TRAINING_LOOP, name="training-loop"))
    return recording, layout_graph(recording.graph)


def _preview(run: tuple[Recording, Layout]) -> Preview:
    raw = preview_json(*run, from_nodes=1)
    assert raw is not None
    back = preview_from_json(json.loads(json.dumps(raw)))
    assert back is not None
    return back


# -- the picture is the graph view's overview ----------------------------------------------------


@pytest.mark.parametrize("run", ["forgot_retain_run", "logged_loss_run"])
def test_the_preview_draws_what_the_graph_view_draws_at_the_opening_step(
    run: str, request: pytest.FixtureRequest, qapp: Any
) -> None:
    recording, layout = request.getfixturevalue(run)
    preview = _preview((recording, layout))
    scene = GraphScene(recording, layout)
    scene.show_state(recording.timeline.state(recording.opening_step))
    palette = PALETTES["light"]
    assert preview.nodes == len(layout.nodes) == len(scene.nodes)
    for index, node_id in enumerate(layout.nodes):
        item = scene.nodes[node_id]
        assert dot_colour(*preview.look(index), palette) == dot_colour(
            scene.drawn.kinds[node_id],
            item.state,
            palette,  # type: ignore[arg-type]
        )
        box = layout.nodes[node_id]
        assert (preview.dots[2 * index], preview.dots[2 * index + 1]) == pytest.approx((box.x, box.y))
    drawn_edges = {(e.src, e.dst) for e in scene.edges}
    ids = list(layout.nodes)
    lines = {(ids[preview.lines[i]], ids[preview.lines[i + 1]]) for i in range(0, len(preview.lines), 2)}
    assert lines == drawn_edges
    frames = {(round(f.x, 3), round(f.y, 3), f.state) for f in preview.frames}
    assert frames == {
        (round(layout.clusters[name].x, 3), round(layout.clusters[name].y, 3), frame.state)
        for name, frame in scene.clusters.items()
    }


def test_a_failed_run_opens_on_pytorchs_failing_node(forgot_retain_run: tuple[Recording, Layout]) -> None:
    recording, layout = forgot_retain_run
    failed = recording.failed
    assert failed is not None and failed.failed_node is not None
    assert recording.opening_step == failed.last_step
    preview = _preview(forgot_retain_run)
    failing = list(layout.nodes).index(failed.failed_node)
    assert preview.look(failing)[1] == "failed"
    assert sum(preview.look(i)[1] == "failed" for i in range(preview.nodes)) == 1


def test_a_loop_opens_with_its_later_iterations_not_built_yet(
    logged_loss_run: tuple[Recording, Layout],
) -> None:
    recording, _ = logged_loss_run
    assert recording.opening_step == 0 and recording.failed is None
    preview = _preview(logged_loss_run)
    states = {preview.look(i)[1] for i in range(preview.nodes)}
    assert "hidden" in states  # step 0 has built only the first line's nodes
    assert {f.state for f in preview.frames} >= {"hidden"}


def test_a_small_graph_gets_no_preview(forgot_retain_run: tuple[Recording, Layout]) -> None:
    assert len(forgot_retain_run[1].nodes) < preview_module.PREVIEW_FROM_NODES
    assert preview_json(*forgot_retain_run) is None


# -- the file: a header member, then the recording ------------------------------------------------


def _saved(tmp_path: Path, run: tuple[Recording, Layout], name: str = "run.lens") -> Path:
    path = tmp_path / name
    recording, layout = run
    path.write_bytes(
        lens_bytes(
            recording, layout=layout_json(layout), preview=preview_json(recording, layout, from_nodes=1)
        )
    )
    return path


def test_the_header_is_a_gzip_member_of_its_own(
    tmp_path: Path, forgot_retain_run: tuple[Recording, Layout]
) -> None:
    data = _saved(tmp_path, forgot_retain_run).read_bytes()
    inflater = zlib.decompressobj(31)
    header = json.loads(inflater.decompress(data))
    assert inflater.eof and inflater.unused_data.startswith(b"\x1f\x8b")
    assert header["format"] == "autograd-lens" and header["version"] == VERSION
    assert set(header) == {"format", "version", "preview"}
    header_line, body_line = gzip.decompress(data).decode().splitlines()  # zcat: two lines of JSON
    assert json.loads(header_line) == header
    assert json.loads(body_line)["steps"]  # the recording, whole, in the second
    assert read_lens(_saved(tmp_path, forgot_retain_run)) == forgot_retain_run[0]


def test_save_with_layout_writes_a_preview_for_a_big_graph_only(
    tmp_path: Path, forgot_retain_run: tuple[Recording, Layout], monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = forgot_retain_run[0]
    save_with_layout(recording, tmp_path / "small.lens")
    assert lens_preview(tmp_path / "small.lens") is None
    monkeypatch.setattr(preview_module, "PREVIEW_FROM_NODES", 1)
    save_with_layout(recording, tmp_path / "big.lens")
    assert preview_from_json(lens_preview(tmp_path / "big.lens")) is not None
    assert open_lens(tmp_path / "big.lens")[0] == recording


def test_a_file_with_a_preview_is_checked_before_the_window_and_read_after(
    tmp_path: Path, forgot_retain_run: tuple[Recording, Layout], lens_reads: list[int]
) -> None:
    path = _saved(tmp_path, forgot_retain_run)
    reads = lens_reads
    preread_lens(path)
    assert reads == []  # its header and compressed bytes only
    assert preview_from_json(lens_preview(path)) is not None
    assert open_lens(path)[0] == forgot_retain_run[0]
    assert len(reads) == 1


@pytest.mark.parametrize("cut", [1, 9, 100])
def test_a_cut_or_corrupt_recording_behind_a_good_header_fails_before_the_window(
    tmp_path: Path, forgot_retain_run: tuple[Recording, Layout], cut: int
) -> None:
    path = _saved(tmp_path, forgot_retain_run)
    data = path.read_bytes()
    path.write_bytes(data[:-cut])
    with pytest.raises(LensError, match="damaged"):
        preread_lens(path)
    middle = len(data) - 2000
    path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    with pytest.raises(LensError, match="damaged"):
        preread_lens(path)


def test_a_header_that_is_not_ours_or_too_new_says_so(
    tmp_path: Path, forgot_retain_run: tuple[Recording, Layout]
) -> None:
    body = lens_bytes(forgot_retain_run[0])
    path = tmp_path / "odd.lens"
    for header, said in [
        (b'{"format": "autograd-lens", "version": 9, "preview": {}}', "newer Autograd Lens"),
        (b'{"format": "other", "version": 1}', "not an Autograd Lens recording"),
        (b"not json", "its header is not JSON"),
    ]:
        path.write_bytes(gzip.compress(header, mtime=0) + body)
        with pytest.raises(LensError, match=said):
            preread_lens(path)
        with pytest.raises(LensError, match=said):
            read_lens(path)
        assert lens_preview(path) is None  # the window's quick look raises nothing


def test_a_file_without_a_header_reads_as_before(
    tmp_path: Path, forgot_retain_run: tuple[Recording, Layout]
) -> None:
    path = tmp_path / "one.lens"
    path.write_bytes(lens_bytes(forgot_retain_run[0], layout=layout_json(forgot_retain_run[1])))
    assert lens_preview(path) is None
    preread_lens(path)  # read whole here, as before
    assert open_lens(path)[0] == forgot_retain_run[0]


# -- a preview from anyone: checked, and dropped when it does not check out ----------------------


def _packed(code: str, numbers: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(numbers)}{code}", *numbers)).decode()


def _edited(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    out[key] = value
    return out


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("size", [1.0]),
        ("size", [math.inf, 2.0]),
        ("box", 0),
        ("looks", [["op", "asleep"]]),
        ("looks", [["node", "idle"]]),
        ("looks", []),
        ("dots", "not base64!"),
        ("dots", _packed("f", [1.0, 2.0, 3.0])),
        ("dots", _packed("f", [math.nan] * 2000)),
        ("dot_looks", base64.b64encode(bytes([200] * 1000)).decode()),
        ("dot_looks", ""),
        ("lines", _packed("I", [0, 10**6])),
        ("lines", _packed("I", [0])),
        ("frames", [[0, 0, 10, 10, "shining"]]),
        ("frames", [[0, 0, -10, 10, "normal"]]),
        ("frames", "none"),
    ],
)
def test_a_preview_that_does_not_check_out_is_dropped(
    key: str, value: Any, forgot_retain_run: tuple[Recording, Layout]
) -> None:
    raw = preview_json(*forgot_retain_run, from_nodes=1)
    assert raw is not None and preview_from_json(raw) is not None
    assert preview_from_json(_edited(raw, key, value)) is None


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["size", "box", "looks", "dots", "dot_looks", "lines", "frames", "other"]),
    value=_JSON,
)
def test_any_json_in_any_field_gives_a_preview_or_none(
    key: str, value: Any, forgot_retain_run: tuple[Recording, Layout]
) -> None:
    raw = preview_json(*forgot_retain_run, from_nodes=1)
    assert raw is not None
    result = preview_from_json(_edited(raw, key, value))
    assert result is None or isinstance(result, Preview)


# -- the window: the picture first, then the graph -------------------------------------------------


def test_a_big_lens_file_opens_on_its_picture_then_on_its_graph(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, training_run: tuple[Recording, Layout]
) -> None:
    from PySide6.QtCore import QEvent, QObject

    from app.ui.runtime import worker as worker_module
    from app.ui.runtime.settings import AppSettings
    from app.ui.window.main_window import MainWindow

    recording, layout = training_run
    assert len(layout.nodes) >= preview_module.PREVIEW_FROM_NODES
    path = tmp_path / "loop.lens"
    save_with_layout(recording, path)
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")), "two-losses")
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.graph_view is not None and window.graph_view.shows_graph, timeout=TIMEOUT)
    view = window.graph_view
    assert view is not None

    painted: list[int] = []
    graph_when_hidden: list[bool] = []

    class Watch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                painted.append(1)
            elif event.type() == QEvent.Type.Hide:
                graph_when_hidden.append(view.shows_graph)
            return False

    watcher = Watch()
    release = threading.Event()
    read_after_paints: list[int] = []
    real = worker_module.recording_of

    def held(source: Any, device: str) -> Any:
        read_after_paints.append(len(painted))
        release.wait(TIMEOUT / 1000)
        return real(source, device)

    monkeypatch.setattr(worker_module, "recording_of", held)
    assert window.graph_preview is None  # made when a file with a preview is first opened
    window.load_program(path)
    assert window.graph_preview is not None
    window.graph_preview.installEventFilter(watcher)  # before the event loop turns: before any paint
    preview = window.graph_preview.preview
    assert window.graph_preview.isVisible() and preview is not None and preview.nodes == len(layout.nodes)
    qtbot.waitUntil(lambda: bool(read_after_paints), timeout=TIMEOUT)
    assert read_after_paints[0] >= 1  # the picture was painted before the recording was read
    picture = window.graph_preview.grab().toImage()
    shown = {dot_colour(*preview.look(i), PALETTES[window.theme]) for i in range(preview.nodes)}
    pixels = {picture.pixel(x, y) for x in range(picture.width()) for y in range(picture.height())}
    assert {QColor(colour).rgb() for colour in shown} <= pixels  # every dot colour is on screen
    assert window.session.recording.program.name == "two-losses"  # nothing to step yet: the old one
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        release.set()
    assert window.graph_preview.isVisible() and view.building  # a big graph: built in slices
    qtbot.waitUntil(lambda: not window.graph_preview.isVisible(), timeout=TIMEOUT)
    assert graph_when_hidden == [True]  # hidden once the view draws the graph: no blank frame between
    assert window.session.recording == recording
    assert window.session.index == recording.opening_step
    window.graph_preview.removeEventFilter(watcher)
    window.session.worker.wait_idle()


def test_a_damaged_recording_behind_its_picture_keeps_the_graph_on_screen(
    qtbot: Any, tmp_path: Path, forgot_retain_run: tuple[Recording, Layout]
) -> None:
    from app.ui.runtime.settings import AppSettings
    from app.ui.window.main_window import MainWindow

    path = _saved(tmp_path, forgot_retain_run)
    path.write_bytes(path.read_bytes()[:-50])  # the header whole, the recording cut short
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")), "two-losses")
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    with qtbot.waitSignal(window.session.failed, timeout=TIMEOUT) as blocker:
        window.load_program(path)
        assert window.graph_preview.isVisible()
    assert "damaged" in blocker.args[0]
    assert not window.graph_preview.isVisible()
    assert window.session.recording.program.name == "two-losses"
    assert window.graph_view is not None and window.graph_view.isVisible()
    window.session.worker.wait_idle()


def test_the_picture_colours_its_dots_once_however_often_it_is_painted(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, training_run: tuple[Recording, Layout]
) -> None:
    """The window repaints the picture while the file is read (its busy line): each paint
    colouring every dot again held the interpreter from the reader. Two paints, one colouring
    of each look (kind, state), and every dot still drawn in its colour."""
    from app.ui.graph import graph_preview

    preview = _preview(training_run)
    calls: list[tuple[Any, ...]] = []
    real = graph_preview.dot_colour

    def counted(*args: Any) -> str:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(graph_preview, "dot_colour", counted)
    widget = graph_preview.GraphPreview()
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show_preview(preview, "reading")
    first = widget.grab().toImage()
    second = widget.grab().toImage()
    assert preview.nodes > 2 * len(preview.looks)
    assert len(calls) == len(preview.looks)  # per look, once: not per dot, not per paint
    assert first == second
    shown = {real(*preview.look(i), PALETTES[DEFAULT_PALETTE]) for i in range(preview.nodes)}
    pixels = {first.pixel(x, y) for x in range(first.width()) for y in range(first.height())}
    assert {QColor(colour).rgb() for colour in shown} <= pixels


def test_the_picture_is_drawn_once_and_copied_at_every_later_paint(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, training_run: tuple[Recording, Layout]
) -> None:
    """A label shown over the picture, or one moved, repaints part of it while the file is read:
    the picture is drawn once, at its size and in its palette, and each paint copies it."""
    from PySide6.QtGui import QImage, QPainter

    from app.ui.graph import graph_preview

    preview = _preview(training_run)
    drawn: list[int] = []
    real = graph_preview.GraphPreview._paint_picture

    def counted(self: Any, painter: Any) -> None:
        drawn.append(1)
        real(self, painter)

    monkeypatch.setattr(graph_preview.GraphPreview, "_paint_picture", counted)
    widget = graph_preview.GraphPreview()
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show_preview(preview, "reading")
    first = widget.grab().toImage()
    widget.repaint(300, 10, 160, 20)  # the busy label's corner
    second = widget.grab().toImage()
    assert len(drawn) == 1
    assert first == second
    direct = QImage(first.size(), first.format())  # what painting straight onto the widget made
    painter = QPainter(direct)
    widget._paint(painter)
    painter.end()
    assert direct == first
    drawn.clear()
    widget.set_palette("dark")
    darker = widget.grab().toImage()
    widget.resize(400, 300)
    smaller = widget.grab().toImage()
    assert len(drawn) == 2  # a new palette and a new size draw it again
    assert darker != first and smaller.size().width() == 400
