"""Headless export: one valid SVG or PNG per recorded step, each in that step's states."""

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtGui import QImage

from app.cli import main
from app.core import ScenarioError, load_builtin, record
from app.render import layout as layout_module
from app.render.export import export_steps, step_file_name
from app.render.labels import drawn_slots
from app.render.layout import LayoutError
from app.render.style import NODE_TAGS, SLOT_TAGS

SVG_NS = "{http://www.w3.org/2000/svg}"


def _svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    return ["".join(el.itertext()) for el in root.iter(f"{SVG_NS}text")]


@pytest.mark.parametrize("name", ["forgot-retain", "two-losses"])
def test_svg_per_step_shows_that_steps_slot_states(tmp_path, name):
    files = export_steps(name, tmp_path, fmt="svg")
    rec = record(load_builtin(name))  # the oracle: an independent recording of the same scenario
    assert [f.name for f in files] == [step_file_name(i, "svg") for i in range(len(rec.timeline))]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f.name for f in files]
    for i, path in enumerate(files):
        state = rec.timeline.state(i)
        texts = _svg_texts(path)
        joined = "\n".join(texts)
        assert f"{rec.program.name} · step {i} of {len(rec.timeline) - 1}" in joined
        for (node_id, slot), slot_state in state.slots.items():
            if node_id in state.visible_nodes:
                assert f"{slot} {SLOT_TAGS[slot_state]}" in texts, (i, node_id, slot)
        for node in rec.graph.nodes:
            for slot in drawn_slots(node):
                if slot.kind == "value" and node.id in state.visible_nodes:
                    assert f"{slot.name} {SLOT_TAGS['value']}" in texts
        step = state.step
        assert (NODE_TAGS["running"] in texts) == (step.kind == "node")
        assert (NODE_TAGS["failed"] in texts) == (step.kind == "error")


def test_error_step_names_the_failure_and_pytorch_message(tmp_path):
    files = export_steps("forgot-retain", tmp_path)
    rec = record(load_builtin("forgot-retain"))
    joined = " ".join(_svg_texts(files[-1]))
    assert NODE_TAGS["failed"] in joined
    assert "PowBackward0" in joined
    assert rec.failed.error.split(".")[0][:40] in " ".join(joined.split())


def test_png_per_step_is_a_real_picture(tmp_path):
    files = export_steps("two-losses", tmp_path, fmt="png")
    assert len(files) == len(record(load_builtin("two-losses")).timeline)
    previous = None
    for path in files:
        image = QImage(str(path))
        assert not image.isNull() and image.width() > 100 and image.height() > 100
        step_x = max(1, image.width() // 60)
        step_y = max(1, image.height() // 60)
        colours = {
            image.pixel(x, y)
            for x in range(0, image.width(), step_x)
            for y in range(0, image.height(), step_y)
        }
        assert len(colours) > 3
        if previous is not None:
            assert image != previous  # each step draws something different (caption, states)
        previous = image


@pytest.mark.parametrize("builtin", ["two-losses", "rnn-no-detach"])  # the older file shape, and a program
def test_export_accepts_a_program_file(tmp_path, builtin):
    src = tmp_path / "mine.toml"
    src.write_bytes(load_builtin(builtin).path.read_bytes())
    files = export_steps(str(src), tmp_path / "out", fmt="svg")
    assert len(files) == len(record(load_builtin(builtin)).timeline)
    assert all(p.parent == tmp_path / "out" for p in files)
    name = "two-losses" if builtin == "two-losses" else "mine"  # an older file names itself
    assert f"{name} · step 0 of" in "\n".join(_svg_texts(files[0]))


def test_export_accepts_a_python_file_and_a_program(tmp_path):
    src = tmp_path / "snippet.py"
    src.write_text(load_builtin("forgot-retain").code, encoding="utf-8")
    from_file = export_steps(src, tmp_path / "py", fmt="svg")
    program = load_builtin("forgot-retain")
    from_object = export_steps(program, tmp_path / "obj", fmt="svg")
    assert len(from_file) == len(from_object) == len(record(program).timeline)


def test_bad_scenario_raises_scenario_error(tmp_path):
    with pytest.raises(ScenarioError):
        export_steps("no-such-scenario", tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[forward]\ncode = 'y = z'\n", encoding="utf-8")
    with pytest.raises(ScenarioError):
        export_steps(bad, tmp_path / "out")


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match="svg"):
        export_steps("two-losses", tmp_path, fmt="gif")  # type: ignore[arg-type]


def test_layout_error_when_dot_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)
    with pytest.raises(LayoutError, match="apt-get install graphviz"):
        export_steps("two-losses", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_export_writes_files(tmp_path, capsys):
    assert main(["export", "forgot-retain", "--out", str(tmp_path), "--format", "png"]) == 0
    rec = record(load_builtin("forgot-retain"))
    assert len(list(tmp_path.glob("step-*.png"))) == len(rec.timeline)
    assert f"wrote {len(rec.timeline)} files" in capsys.readouterr().out


def test_cli_prints_layout_error_as_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)
    assert main(["export", "two-losses", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "install Graphviz" in err and "Traceback" not in err
