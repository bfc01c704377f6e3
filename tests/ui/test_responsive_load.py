"""Loading a recording without stalling the GUI thread: what each change keeps true.

No timing is asserted (that is the benchmark's job, ``benchmarks/bench.py``):
these tests check that the cheaper paths show the same thing as the plain ones
(the layout parsed in pieces equals ``json.loads``, a code panel marked step by
step equals one marked from scratch), and that the garbage-collector pause is
held and given back exactly.
"""

import gc
import json
import shutil
import subprocess
import time
import weakref

import pytest
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from app.core import load_builtin, record
from app.core.json_reading import loads_in_pieces
from app.render.dot_source import dot_source
from app.render.layout import LayoutError, parse_layout
from app.render.states import ShownStates
from app.ui.editor import code_panel as code_panel_module
from app.ui.editor.code_panel import FAILED, RUNNING, CodePanel
from app.ui.graph.graph_view import GraphView
from app.ui.runtime import worker as worker_module
from app.ui.runtime.session import Session
from app.ui.runtime.worker import NEVER, GcPause

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed")


# -- layout: decoded in pieces, the same data -------------------------------------------------
def _dot_json(recording) -> str:
    source = dot_source(recording.graph, reserve_tags=True)
    done = subprocess.run(["dot", "-Tjson0"], input=source.encode(), capture_output=True, check=True)
    return done.stdout.decode()


@needs_dot
@pytest.mark.parametrize("name", ["two-losses", "forgot-retain"])
def test_layout_json_decoded_in_pieces_equals_json_loads(name):
    text = _dot_json(record(load_builtin(name)))
    assert loads_in_pieces(text) == json.loads(text)


@needs_dot
@pytest.mark.parametrize("piece", [1, 3, 7, 64, 4096])
def test_layout_json_read_in_byte_pieces_equals_json_loads(piece):
    """As ``layout_graph`` reads dot's file: pieces cut anywhere, inside numbers, strings and the
    multi-byte characters of the labels (◆, ◌, ·)."""
    text = _dot_json(record(load_builtin("forgot-retain")))
    data = text.encode("utf-8")
    assert len(data) > len(text)  # the labels' characters are more than one byte each
    pieces = [data[i : i + piece] for i in range(0, len(data), piece)]
    assert loads_in_pieces(pieces) == json.loads(text)


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": [1, 2', '{"a": "x', '{"a": 1} 2'])
def test_truncated_json_in_pieces_is_refused(text):
    with pytest.raises(ValueError):
        loads_in_pieces([text[i : i + 2].encode() for i in range(0, len(text), 2)])


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        ' { "a" : [ ] , "b":[1, [2, {"c": "]},["}], 3] ,"d" : "x\\"[y" } ',
        '{"objects": [{"name": "é\\u00e9", "pos": "1,2"}], "edges": [{"tail": 0, "head": 1}]}',
    ],
)
def test_json_decoded_in_pieces_equals_json_loads(text):
    assert loads_in_pieces(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "[1, 2]", '{"a": [1, 2}', '{"a" 1}', '{"a": [1 2]}', '{"a": 1'])
def test_broken_layout_json_is_a_layout_error(text, two_losses):
    with pytest.raises(LayoutError, match="could not read Graphviz's layout"):
        parse_layout(text, two_losses.graph)


# -- code panel: marks changed in place equal marks written from scratch -----------------------
def _fresh_marks(recording, index: int, qtbot) -> tuple[str, list[int], list[str]]:
    """The text, marked lines and margin glyphs of a panel that shows step ``index`` first."""
    session = Session()
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(recording)
    session.go_to(index)
    lines = panel.highlighted_lines()
    return panel.text(), lines, [panel.marker(line) for line in lines]


def _selected_lines(panel: CodePanel) -> list[int]:
    """The lines the background selection covers (one selection spanning them all)."""
    selections = panel.extraSelections()
    if not selections:
        return []
    assert len(selections) == 1
    cursor = selections[0].cursor
    doc = panel.document()
    first = doc.findBlock(cursor.selectionStart()).blockNumber()
    end = cursor.selectionEnd()
    last = doc.findBlock(end).blockNumber()
    if cursor.hasSelection() and doc.findBlock(end).position() == end:
        last -= 1  # the selection ends at the start of the next line, to paint the last one full width
    return list(range(first, last + 1))


@pytest.fixture(scope="module")
def long_call():
    """The seed with more forward lines and a call written over four lines (the mark spans them all)."""
    seed = load_builtin("two-losses")
    code = seed.code.replace("y = x.square()\n", "y = x.square()\nz = y * 2\nw = z.exp()\n").replace(
        "(y * 3).sum().backward()",
        "(y * 3).sum().backward(\n    retain_graph=False,\n    create_graph=False,\n)",
    )
    return record(seed.with_code(code))


@pytest.mark.parametrize("fixture", ["two_losses", "forgot_retain", "long_call"])
def test_code_panel_marked_step_by_step_equals_marked_from_scratch(qtbot, session, fixture, request):
    recording = request.getfixturevalue(fixture)
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(recording, mode="start")
    last = len(recording.timeline) - 1
    for index in [*range(last + 1), 0, last, 1, 0]:  # forward, each call step, jumps back and forth
        session.go_to(index)
        marked = panel.highlighted_lines()
        glyphs = [panel.marker(line) for line in marked]
        assert (panel.text(), marked, glyphs) == _fresh_marks(recording, index, qtbot)
        assert _selected_lines(panel) == marked
        assert set(glyphs) <= {RUNNING, FAILED} and len(set(glyphs)) <= 1


def test_code_panel_marks_a_call_over_several_lines_with_one_selection(qtbot, session, long_call):
    panel = CodePanel(session)
    qtbot.addWidget(panel)
    session.apply(long_call)
    session.go_to(long_call.calls[1].first_step)
    lines = long_call.program.lines
    call = list(range(lines.index("(y * 3).sum().backward("), lines.index(")") + 1))
    assert len(call) == 4
    assert panel.highlighted_lines() == call
    assert _selected_lines(panel) == call
    session.home()
    assert panel.highlighted_lines() == [long_call.timeline[0].line - 1]
    assert not panel.document().isUndoAvailable()  # marks are not edits: no undo history


def test_a_long_text_is_written_in_a_turn_of_its_own(qtbot, session, monkeypatch, two_losses):
    """NOTE [marks cost what changed]: a long text waits for the panel's paint and for what came due
    by then (a 0 ms timer started in that paint), then for the window's graph, one look past it; a
    panel that never paints is written all the same."""
    monkeypatch.setattr(code_panel_module, "FILL_LATER_LINES", 2)
    order: list[str] = []
    drawing = [True]

    class Watch(QObject):
        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint and "paint" not in order:
                order.append("paint")
                QTimer.singleShot(0, lambda: order.append("due at the paint"))
            return False

    def still_drawing() -> bool:
        order.append(f"look {'drawing' if drawing[0] else 'drawn'}")
        return drawing[0]

    panel = CodePanel(session)
    qtbot.addWidget(panel)
    panel.fill_wait = still_drawing
    panel.resize(400, 300)
    panel.show()
    qtbot.waitExposed(panel)
    watch = Watch()
    panel.viewport().installEventFilter(watch)
    panel.text_written.connect(lambda: order.append("text"))
    session.apply(two_losses)
    time.sleep(0.01)  # the paint comes later than a timer armed by the recording would be due
    qtbot.waitUntil(lambda: order.count("look drawing") >= 3, timeout=5_000)
    assert order[:3] == ["paint", "due at the paint", "look drawing"] and "text" not in order
    assert not panel.filled and panel.known_text() != two_losses.program.code
    drawing[0] = False
    qtbot.waitUntil(lambda: "text" in order, timeout=5_000)
    assert order[-3:] == ["look drawn", "look drawn", "text"]
    assert panel.filled and panel.known_text() == two_losses.program.code

    other = Session()
    hidden = CodePanel(other)  # never painted: written after FILL_UNPAINTED_MS
    qtbot.addWidget(hidden)
    other.apply(two_losses)
    assert not hidden.filled
    qtbot.waitUntil(lambda: hidden.filled, timeout=5_000)
    assert hidden.known_text() == two_losses.program.code


# -- the garbage-collector pause -----------------------------------------------------------------
@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield before
    assert not GcPause.held()
    gc.set_threshold(*before)


def test_gc_pause_is_counted_and_restores_the_thresholds_exactly(thresholds):
    gc.set_threshold(500, 7, 9)
    try:
        GcPause.hold("a")
        GcPause.hold("b")
        assert gc.get_threshold() == (0, 7, NEVER)  # no automatic collection on any thread
        GcPause.release("a")
        assert gc.get_threshold() == (0, 7, NEVER)  # "b" still holds it
        GcPause.release("a")  # a second release of the same key changes nothing
        assert GcPause.held()
        GcPause.release("b")
        assert gc.get_threshold() == (500, 7, 9)
        GcPause.release("b")
        assert gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*thresholds)


def test_gc_pause_freezes_at_the_last_release_when_asked(thresholds):
    GcPause.hold("view")
    GcPause.hold("worker")
    kept = [[n] for n in range(1000)]  # tracked containers that outlive the pause
    frozen = gc.get_freeze_count()
    GcPause.release("worker", freeze=True)
    assert gc.get_freeze_count() == frozen  # someone still holds it: nothing frozen yet
    GcPause.release("view")
    assert gc.get_freeze_count() >= frozen + len(kept)
    assert gc.get_threshold() == thresholds


def _wait_applied(qtbot, session: Session, source) -> None:
    with qtbot.waitSignal(session.recording_applied, timeout=30_000):
        session.load(source)


def test_the_worker_builds_the_shown_states_and_the_view_uses_them(qtbot, session, thresholds):
    view = GraphView()
    qtbot.addWidget(view)
    session.recording_applied.connect(
        lambda recording: view.set_model(recording, session.layout, shown=session.shown)
    )
    _wait_applied(qtbot, session, "two-losses")
    if session.layout is None:
        pytest.skip(f"no layout: {session.layout_error}")
    assert isinstance(session.shown, ShownStates)
    assert session.shown.recording is session.recording
    assert view.graph_scene is not None and view.graph_scene.shown is session.shown
    qtbot.waitUntil(lambda: not GcPause.held())  # the first result also imports the checks, then hands back
    assert gc.get_threshold() == thresholds


def test_a_frozen_recording_is_still_freed_once_replaced(qtbot, session, thresholds, monkeypatch):
    """NOTE [no full GC while loading]: what the freeze keeps must be freed by reference counting."""
    monkeypatch.setattr(worker_module, "FREEZE_NODES", 1)  # freeze even the seed
    view = GraphView()
    qtbot.addWidget(view)
    session.recording_applied.connect(lambda recording: view.set_model(recording, session.layout))
    _wait_applied(qtbot, session, "two-losses")
    if session.layout is None:
        pytest.skip(f"no layout: {session.layout_error}")
    assert gc.get_freeze_count() > 0
    first = weakref.ref(session.recording)
    first_scene = weakref.ref(view.graph_scene)
    _wait_applied(qtbot, session, "forgot-retain")
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)  # the old scene's deleteLater
    assert first() is None
    assert first_scene() is None


@pytest.mark.parametrize("damaged", [True, False])
def test_a_value_that_needs_all_the_pieces_copies_the_text_a_few_times(damaged, monkeypatch):
    """A syntax error near the start of a big text in small pieces (or one long string): the
    window grows by doubling, so the characters copied stay a few times the text, not once per
    piece (that was quadratic: 1.3 s for an 80 MB file whose error was near its start)."""
    from app.core import json_reading

    text = '{"a": {"b": [1, 2}' + " " * 400_000 if damaged else '{"a": "' + "x" * 400_000 + '"}'
    pieces = [text[i : i + 100].encode() for i in range(0, len(text), 100)]
    copied = []
    real = json_reading._JsonStream._more

    def more(stream, *args):
        grew = real(stream, *args)
        copied.append(len(stream.text))
        return grew

    monkeypatch.setattr(json_reading._JsonStream, "_more", more)
    if damaged:
        with pytest.raises(ValueError):
            loads_in_pieces(pieces)
    else:
        assert loads_in_pieces(pieces) == json.loads(text)
    assert len(pieces) > 4000
    assert sum(copied) < 4 * len(text)  # a piece at a time: ~2,000 times the text


# -- compact JSON: an element per C call -------------------------------------------------------------
COMPACT = json.dumps(
    {
        "steps": [{"k": i, "s": "é,]" * (i % 3), "n": [i, -1.5e3, None, True]} for i in range(300)],
        "e": [],
        "x": 12,
    },
    separators=(",", ":"),
    ensure_ascii=False,
)


@pytest.mark.parametrize("piece", [1, 2, 5, 33, 1000, 1 << 20])
def test_compact_json_in_byte_pieces_equals_json_loads(piece):
    """Pieces cut anywhere: inside numbers ("12" then "34"), strings holding "," and "]", and the
    two bytes of "é"; the compact path must hand over to the careful one at every cut."""
    data = COMPACT.encode("utf-8")
    pieces = [data[i : i + piece] for i in range(0, len(data), piece)]
    assert loads_in_pieces(pieces, depth=2, errors="strict") == json.loads(COMPACT)


@pytest.mark.parametrize("text", ['{"a":[1,2,]}', '{"a":[1,,2]}', '{"a":[1 2]}', '{"a":[1,2}', '{"a":[,]}'])
def test_broken_compact_arrays_are_refused(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads_in_pieces(text)


def test_a_compact_array_takes_no_element_the_careful_way(monkeypatch):
    """The careful way costs a dozen Python calls an element (0.3 s of a 5,000-node recording's
    ~60,000); compact text in one piece never needs it past its first element."""
    from app.core import json_reading

    careful = []
    real = json_reading._JsonStream.value

    def value(stream):
        careful.append(stream.pos)
        return real(stream)

    monkeypatch.setattr(json_reading._JsonStream, "value", value)
    text = json.dumps({"items": [[i, str(i)] for i in range(5000)]}, separators=(",", ":"))
    assert loads_in_pieces(text) == json.loads(text)
    assert len(careful) <= 2  # the key; no element of the 5,000
