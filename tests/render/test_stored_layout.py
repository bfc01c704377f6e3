"""A layout kept in a .lens file (layout_store's NOTE [stored layouts]): read back equal to Graphviz's,
opened without Graphviz, and dropped for Graphviz's own when it does not fit the graph."""

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core import load_builtin, record
from app.core.lensfile import lens_bytes, open_lens, save_lens
from app.core.recorder.script import record_script
from app.render import layout as layout_module
from app.render.layout import LayoutError, layout_graph
from app.render.layout_store import STYLE, layout_from_json, layout_json, save_with_layout
from app.render.modules import module_groups
from app.ui.runtime import worker as worker_module

TIMEOUT = 30_000

SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
for step in range(2):
    loss = ((model(torch.randn(8, 4)) - torch.randn(8, 1)) ** 2).mean()
    loss.backward()
"""


@pytest.fixture(scope="module")
def rnn():
    return record(load_builtin("rnn-no-detach"))  # iteration clusters, a carried hidden state


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("script")) / "mlp.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return record_script(path).recording  # module groups inside iterations


def through_a_file(data):
    return json.loads(json.dumps(data, allow_nan=False))


def test_a_stored_layout_reads_back_equal_to_graphvizs(rnn, model):
    collapsed = {g.name for g in module_groups(model.graph)}
    cases = [(rnn, None), (model, None), (model, collapsed), (model, set(sorted(collapsed)[:1]))]
    for recording, groups in cases:
        made = layout_graph(recording.graph, collapsed=groups)
        assert made.edges and made.slots  # something to keep
        read = layout_from_json(through_a_file(layout_json(made)), recording.graph)
        assert read == made
        assert read.collapsed == made.collapsed
    assert layout_graph(rnn.graph).clusters  # the iteration frames went through too


def test_a_saved_file_keeps_the_recording_and_the_default_layout(tmp_path, rnn):
    path = tmp_path / "rnn.lens"
    save_with_layout(rnn, path)
    recording, raw = open_lens(path)
    assert recording == rnn
    assert layout_from_json(raw, recording.graph) == layout_graph(rnn.graph)


def test_a_copy_made_by_trace_keeps_the_layout_without_graphviz(tmp_path, rnn, monkeypatch, capsys):
    from app.cli import main

    source, copy_path = tmp_path / "rnn.lens", tmp_path / "copy.lens"
    save_with_layout(rnn, source)
    expected = layout_graph(rnn.graph)
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)  # no dot on this machine
    assert main(["trace", str(source), "--save", str(copy_path)]) == 0
    assert "saved the recording" in capsys.readouterr().out
    recording, raw = open_lens(copy_path)
    assert recording == rnn
    assert raw is not None and layout_from_json(raw, recording.graph) == expected


def test_a_copy_of_a_layout_that_does_not_fit_is_laid_out_again(tmp_path, rnn):
    data = through_a_file(layout_json(layout_graph(rnn.graph)))
    data["nodes"]["xywh"][0] = "left"  # not a number: the stored layout is refused
    data["extra"] = "x" * 100  # and nothing of a file's layout but what was checked is written again
    path = tmp_path / "copy.lens"
    save_with_layout(rnn, path, stored=data)
    _, raw = open_lens(path)
    assert raw is not None and "extra" not in raw
    assert layout_from_json(raw, rnn.graph) == layout_graph(rnn.graph)
    fits = through_a_file(layout_json(layout_graph(rnn.graph))) | {"extra": "x"}
    save_with_layout(rnn, path, stored=fits)
    _, raw = open_lens(path)
    assert raw is not None and "extra" not in raw and raw == layout_json(layout_graph(rnn.graph))


def test_a_lens_file_without_a_layout_has_none(tmp_path, rnn):
    path = tmp_path / "plain.lens"
    save_lens(rnn, path)
    assert open_lens(path) == (rnn, None)


# -- a layout that does not fit is refused, with LayoutError only --------------------------------------
def _broken(rnn, change):
    data = through_a_file(layout_json(layout_graph(rnn.graph)))
    change(data)
    return data


BREAKAGES = {
    "another style": lambda d: d.update(style=STYLE + 1),
    "no style": lambda d: d.pop("style"),
    "a node missing": lambda d: (d["nodes"]["keys"].pop(), [d["nodes"]["xywh"].pop() for _ in range(4)]),
    "a node twice": lambda d: d["nodes"]["keys"].__setitem__(1, d["nodes"]["keys"][0]),
    "a node the graph has not": lambda d: d["nodes"]["keys"].__setitem__(0, "n99999"),
    "a box short of a number": lambda d: d["nodes"]["xywh"].pop(),
    "NaN": lambda d: d["slots"]["xywh"].__setitem__(0, math.nan),
    "infinity": lambda d: d["edges"]["points"].__setitem__(3, math.inf),
    "far away": lambda d: (
        d["proxies"]["xywh"].__setitem__(0, 1e300)
        if d["proxies"]["xywh"]
        else d["nodes"]["xywh"].__setitem__(0, 1e300)
    ),
    "text for a number": lambda d: d["nodes"]["xywh"].__setitem__(2, "12"),
    "a spline of two points": lambda d: d["edges"]["sizes"].__setitem__(0, 2),
    "more points than sizes say": lambda d: d["edges"]["points"].extend([1.0, 2.0]),
    "an arrow flag of 2": lambda d: d["edges"]["with_arrow"].__setitem__(0, 2),
    "an edge the graph has not": lambda d: d["edges"]["keys"].__setitem__(0, ["n0", "n0"]),
    "a slot edge named by a list in a list": lambda d: d["slot_edges"]["keys"].__setitem__(0, [["n1"], "x"]),
    "an unknown module group": lambda d: d.update(collapsed=["cluster_m_nothing"]),
    "a cluster without its prefix": lambda d: d["clusters"]["keys"].__setitem__(0, "frame"),
    "no nodes": lambda d: d.pop("nodes"),
    "a huge whole number": lambda d: d["nodes"]["xywh"].__setitem__(0, 10**400),
    "two numbers whose sum overflows": lambda d: d.update(size=[1e308, 1e308]),
    "infinity and minus infinity": lambda d: d.update(size=[math.inf, -math.inf]),
    "true and false for numbers": lambda d: d.update(size=[True, True]),
    "style true": lambda d: d.update(style=True),
    "style 1.0": lambda d: d.update(style=float(STYLE)),
    "a style nested deep": lambda d: d.update(style=_nested(2000)),
    "a negative size": lambda d: d.update(size=[-1.0, 10.0]),
    "a box of negative width": lambda d: d["nodes"]["xywh"].__setitem__(2, -5.0),
    "a slot box as large as the canvas": lambda d: d["slots"]["xywh"].__setitem__(2, 1e8),
    "a node box too tall": lambda d: d["nodes"]["xywh"].__setitem__(3, 5_001.0),
    "the iteration frames dropped": lambda d: d.update(clusters={"keys": [], "xywh": []}),
    "a frame the graph has not": lambda d: d["clusters"]["keys"].__setitem__(0, "cluster_bogus"),
    "a list for the layout": lambda d: d.clear(),
}


def _nested(depth):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("what", sorted(BREAKAGES))
def test_a_layout_that_does_not_fit_is_refused(rnn, what):
    data = _broken(rnn, BREAKAGES[what])
    with pytest.raises(LayoutError, match="stored layout"):
        layout_from_json([] if what == "a list for the layout" else data, rnn.graph)


class _Count(int):
    """A whole number that is not an ``int`` (json never makes one; a Python caller might)."""


FAR = "holds a number that is not finite or is too large"
NOT_A_NUMBER = "holds something that is not a number"
# the numbers' faults named exactly, whichever way the numbers are checked
WORDED = {
    "a whole number just past the canvas": (
        lambda d: d["nodes"]["xywh"].__setitem__(0, 100_000_001),
        f"nodes.xywh {FAR}",
    ),
    "a point just past the canvas's left": (
        lambda d: d["edges"]["points"].__setitem__(0, -100_000_000.5),
        f"edges.points {FAR}",
    ),
    "an arrow tip past the canvas": (
        lambda d: d["edges"]["arrows"].__setitem__(1, 1.5e8),
        f"edges.arrows {FAR}",
    ),
    "NaN": (lambda d: d["slots"]["xywh"].__setitem__(0, math.nan), f"slots.xywh {FAR}"),
    "minus infinity": (
        lambda d: d["slot_edges"]["points"].__setitem__(2, -math.inf),
        f"slot_edges.points {FAR}",
    ),
    "a huge whole number": (lambda d: d["nodes"]["xywh"].__setitem__(1, -(10**400)), f"nodes.xywh {FAR}"),
    "true for a number": (lambda d: d.update(size=[True, 10.0]), f"size {NOT_A_NUMBER}"),
    "text and NaN": (
        lambda d: d["nodes"]["xywh"].__setitem__(slice(0, 2), ["1", math.nan]),
        f"nodes.xywh {NOT_A_NUMBER}",
    ),
    "a subclass of int": (
        lambda d: d["nodes"]["xywh"].__setitem__(0, _Count(3)),
        f"nodes.xywh {NOT_A_NUMBER}",
    ),
}


@pytest.mark.parametrize("what", sorted(WORDED))
def test_a_layouts_bad_number_is_named(rnn, what):
    change, said = WORDED[what]
    data = _broken(rnn, change)
    with pytest.raises(LayoutError) as caught:
        layout_from_json(data, rnn.graph)
    assert str(caught.value) == f"the recording's stored layout does not fit its graph ({said})"


def test_numbers_at_the_canvas_edge_are_kept_as_written(rnn):
    data = _broken(rnn, lambda d: d.update(size=[100_000_000, 1e8]))
    data["edges"]["points"][:2] = [-100_000_000, -1e8]
    layout = layout_from_json(data, rnn.graph)
    assert (layout.width, layout.height) == (100_000_000, 1e8)
    assert (type(layout.width), type(layout.height)) == (int, float)  # a whole number stays one
    first = next(iter(layout.edges.values())).points[0]
    assert first == (-100_000_000, -1e8) and type(first[0]) is int


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from _leaves(item, (*path, i))
    else:
        yield path


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**400, -(10**400), 1e308, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_one_changed_value_gives_a_layout_or_layout_error(rnn, data):
    stored = through_a_file(layout_json(layout_graph(rnn.graph)))
    paths = list(_leaves(stored))
    changed = copy.deepcopy(stored)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        holder = changed
        try:
            for key in path[:-1]:
                holder = holder[key]
            holder[path[-1]] = data.draw(JUNK)
        except (KeyError, IndexError, TypeError):  # an earlier change replaced a container
            continue
    try:
        layout = layout_from_json(changed, rnn.graph)
    except LayoutError:
        return
    assert set(layout.nodes) == {n.id for n in rnn.graph.nodes}  # what it gives is whole


# -- the window --------------------------------------------------------------------------------------------
def _load(qtbot, session, source):
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT) as blocker:
        session.load(source)
    return blocker.args[0]


def test_the_window_opens_a_stored_layout_without_graphviz(qtbot, session, tmp_path, rnn, monkeypatch):
    path = tmp_path / "rnn.lens"
    save_with_layout(rnn, path)
    expected = layout_graph(rnn.graph)
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)  # no dot on this machine
    recording = _load(qtbot, session, path)
    assert recording == rnn
    assert session.layout_error is None
    assert session.layout == expected


def test_a_stored_layout_that_does_not_fit_is_laid_out_again(qtbot, session, tmp_path, rnn, monkeypatch):
    data = through_a_file(layout_json(layout_graph(rnn.graph)))
    data["nodes"]["xywh"][0] = "left"
    path = tmp_path / "bad-layout.lens"
    path.write_bytes(lens_bytes(rnn, layout=data))
    runs = []
    real = worker_module.layout_recording
    monkeypatch.setattr(worker_module, "layout_recording", lambda rec: runs.append(rec) or real(rec))
    recording = _load(qtbot, session, path)
    assert recording == rnn and runs == [recording]
    assert session.layout == layout_graph(rnn.graph)


def test_a_box_is_hatched_with_a_bounded_number_of_lines():
    """A freed slot's hatch is drawn at every paint; a huge box gets a coarser one, not millions."""
    from PySide6.QtCore import QRectF

    from app.render.qt.box_paint import HATCH_STEP, MAX_HATCH_LINES, hatch_lines

    assert len(hatch_lines(QRectF(0, 0, 1e8, 1e8))) <= MAX_HATCH_LINES
    small = QRectF(0, 0, 140, 30)
    assert len(hatch_lines(small)) == math.ceil((140 + 30) / HATCH_STEP) - 1  # the usual box: as before
