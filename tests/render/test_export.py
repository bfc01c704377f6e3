"""Headless export: one valid SVG or PNG per recorded step, each in that step's states."""

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtGui import QImage

from app import cli
from app.cli import main
from app.core import ProgramError, load_builtin, record
from app.render import layout as layout_module
from app.render.export_budget import ExportTooLarge
from app.render.labels import drawn_slots
from app.render.layout import LayoutError
from app.render.qt.export import export_recording, export_steps, step_file_name
from app.render.style import NODE_TAGS, SLOT_TAGS
from tests.support.recorded import builtin_recording

SVG_NS = "{http://www.w3.org/2000/svg}"


def _svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    return ["".join(el.itertext()) for el in root.iter(f"{SVG_NS}text")]


@pytest.mark.parametrize("name", ["forgot-retain", "two-losses"])
def test_svg_per_step_shows_that_steps_slot_states(tmp_path, name):
    files = export_steps(name, tmp_path, fmt="svg")
    rec = record(load_builtin(name))  # the oracle: an independent recording of the same program
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
    rec = builtin_recording("forgot-retain")
    joined = " ".join(_svg_texts(files[-1]))
    assert NODE_TAGS["failed"] in joined
    assert "PowBackward0" in joined
    assert rec.failed.error.split(".")[0][:40] in " ".join(joined.split())


def test_png_per_step_is_a_real_picture(tmp_path):
    files = export_steps("two-losses", tmp_path, fmt="png")
    assert len(files) == len(builtin_recording("two-losses").timeline)
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


def test_bad_program_raises_program_error(tmp_path):
    with pytest.raises(ProgramError):
        export_steps("no-such-program", tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[forward]\ncode = 'y = z'\n", encoding="utf-8")
    with pytest.raises(ProgramError):
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
    rec = builtin_recording("forgot-retain")
    assert len(list(tmp_path.glob("step-*.png"))) == len(rec.timeline)
    assert f"wrote {len(rec.timeline)} files" in capsys.readouterr().out


def test_cli_prints_layout_error_as_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)
    assert main(["export", "two-losses", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "install Graphviz" in err and "Traceback" not in err


# -- budgets: past one, nothing is written ---------------------------------------------------------


def test_past_max_steps_nothing_is_written(tmp_path):
    rec = builtin_recording("rnn-no-detach")
    with pytest.raises(ExportTooLarge) as info:
        export_recording(rec, tmp_path / "out", max_steps=len(rec.timeline) - 1)
    assert (info.value.what, info.value.needed, info.value.limit) == (
        "steps",
        len(rec.timeline),
        len(rec.timeline) - 1,
    )
    assert not (tmp_path / "out").exists()
    assert len(export_recording(rec, tmp_path / "out", max_steps=len(rec.timeline))) == len(rec.timeline)


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_past_max_bytes_nothing_is_written_and_the_estimate_bounds_the_files(tmp_path, fmt):
    rec = builtin_recording("forgot-retain")
    files = export_recording(rec, tmp_path / "all", fmt=fmt)
    written = sum(p.stat().st_size for p in files)
    with pytest.raises(ExportTooLarge) as info:
        export_recording(rec, tmp_path / "out", fmt=fmt, max_bytes=written // 2)
    assert info.value.what == "bytes" and info.value.needed >= written // 2 and info.value.written == 0
    assert not (tmp_path / "out").exists()
    biggest = max(p.stat().st_size for p in files)
    assert written <= info.value.needed <= biggest * len(files)  # the largest drawn step, times the steps


def test_cli_export_refuses_past_max_steps_in_one_line(tmp_path, capsys):
    steps = len(builtin_recording("forgot-retain").timeline)
    assert (
        main(["export", "forgot-retain", "--out", str(tmp_path / "out"), "--max-steps", str(steps - 1)]) == 2
    )
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"{steps} steps" in captured.err and "--max-steps N" in captured.err
    assert not (tmp_path / "out").exists()


def test_cli_export_refuses_past_max_mb_in_one_line(tmp_path, capsys):
    assert main(["export", "forgot-retain", "--out", str(tmp_path / "out"), "--max-mb", "0.001"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-mb MB" in err and "nothing was written" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_a_file_that_cannot_be_written_says_why(tmp_path, capsys, fmt):
    """Qt's SVG writer failed without a word (the export said it wrote every file); PNG said only
    'could not write'. Now the operating system's reason and the file reach the one line."""
    (tmp_path / f"step-001.{fmt}").mkdir()
    assert main(["export", "forgot-retain", "--out", str(tmp_path), "--format", fmt]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == f"autograd-lens: Is a directory: {tmp_path / f'step-001.{fmt}'}"


def test_an_os_error_without_a_reason_still_says_something(monkeypatch, capsys):
    def fail(args: object) -> int:
        raise OSError()

    monkeypatch.setattr(cli, "_export", fail)
    assert main(["export", "two-losses", "--out", "x"]) == 2
    assert capsys.readouterr().err.strip() == "autograd-lens: OSError, with no message"
