"""``export --format torchviz``: make_dot's own DOT and SVG of the graph before the first backward,
made in the recording child; torchviz itself, run here on the same program, is the oracle."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.cli import main
from app.core import ProgramError, load_builtin
from app.core.model.program import Program
from app.core.recorder.first_backward import NO_CALL, first_backward_dot
from app.render.layout import LayoutError
from app.render.torchviz_export import check_make_dot_source, write_torchviz
from tests.support.torchviz_oracle import first_call_make_dot, read_make_dot_source, same_drawing

SCRIPTS = Path(__file__).parents[1] / "support" / "scripts" / "training"


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("autograd-lens: "), err
    return lines[0]


@pytest.mark.parametrize("name", ["gan-no-detach", "weight-and-input"])
def test_cli_writes_make_dots_own_drawing_of_the_graph_before_the_first_backward(tmp_path, capsys, name):
    assert main(["export", name, "--format", "torchviz", "--out", str(tmp_path)]) == 0
    assert "wrote 2 files" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torchviz.dot", "torchviz.svg"]
    written = read_make_dot_source((tmp_path / "torchviz.dot").read_text(encoding="utf-8"))
    oracle = first_call_make_dot(load_builtin(name).code)
    assert oracle is not None and same_drawing(written, oracle)
    assert written.saved and any(leaf for leaf, _ in written.leaves.values())
    svg = ET.parse(tmp_path / "torchviz.svg").getroot()
    texts = {"".join(t.itertext()) for t in svg.iter() if t.tag.endswith("}text")}
    assert set(oracle.names.values()) <= texts


def test_a_saved_tensor_written_in_place_leaves_the_saved_boxes_out_and_says_so(tmp_path, capsys):
    assert main(["export", "inplace-sigmoid", "--format", "torchviz", "--out", str(tmp_path)]) == 0
    assert "saved tensors left out" in _one_line(capsys.readouterr().err)
    written = read_make_dot_source((tmp_path / "torchviz.dot").read_text(encoding="utf-8"))
    assert not written.saved and "SigmoidBackward0" in written.names.values()


def test_a_lens_file_runs_the_program_it_keeps_again(tmp_path, capsys):
    saved = tmp_path / "w.lens"
    assert main(["trace", "weight-and-input", "--save", str(saved)]) == 0
    assert main(["export", str(saved), "--format", "torchviz", "--out", str(tmp_path / "out")]) == 0
    written = read_make_dot_source((tmp_path / "out" / "torchviz.dot").read_text(encoding="utf-8"))
    oracle = first_call_make_dot(load_builtin("weight-and-input").code)
    assert oracle is not None and same_drawing(written, oracle)


def test_a_lens_of_a_script_says_make_dot_needs_the_live_program(tmp_path, capsys):
    saved = tmp_path / "mlp.lens"
    script = tmp_path / "mlp_sgd.py"  # with an import the checked language refuses
    script.write_text(
        "import string\n" + (SCRIPTS / "mlp_sgd.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert main(["run", "--out", str(saved), str(script)]) == 0
    capsys.readouterr()
    assert main(["export", str(saved), "--format", "torchviz", "--out", str(tmp_path / "out")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "holds no tensors for make_dot" in line and "'string' cannot be imported" in line
    assert "run --torchviz DIR SCRIPT.py" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("script", ["gan", "lstm_language_model"])
def test_run_torchviz_draws_a_scripts_graph_before_its_first_backward(tmp_path, capsys, script):
    path = SCRIPTS / f"{script}.py"
    assert main(["run", "--torchviz", str(tmp_path), str(path)]) == 0
    written = read_make_dot_source((tmp_path / "torchviz.dot").read_text(encoding="utf-8"))
    oracle = first_call_make_dot(path.read_text(encoding="utf-8"), {"__name__": "__main__"})
    assert oracle is not None and same_drawing(written, oracle)
    assert all(leaf for leaf, _ in written.leaves.values()), "every parameter named from its module"


def test_run_torchviz_shows_the_scripts_own_error_and_records_nothing(tmp_path, capsys):
    script = tmp_path / "bad.py"
    script.write_text("import torch\nx = torch.ones(2, requires_grad=True)\nraise ValueError('boom')\n")
    assert main(["run", "--torchviz", str(tmp_path / "out"), str(script)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "ValueError: boom" in err
    assert (
        main(["run", "--torchviz", str(tmp_path / "out"), "--out", str(tmp_path / "a.lens"), str(script)])
        == 2
    )
    assert "records nothing" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "a.lens").exists()


def test_a_program_without_a_backward_has_nothing_to_draw(tmp_path, capsys):
    program = tmp_path / "forward.py"
    program.write_text("x = torch.ones(2, requires_grad=True)\ny = x * 2\n", encoding="utf-8")
    assert main(["export", str(program), "--format", "torchviz", "--out", str(tmp_path / "out")]) == 2
    assert NO_CALL in _one_line(capsys.readouterr().err)


def test_the_program_stops_at_its_first_call(tmp_path):
    """Nothing after the first backward runs: a program that fails later still draws."""
    code = "x = torch.ones(2, requires_grad=True)\ny = x.exp()\ny.sum().backward()\nz = x.nope()\n"
    drawn = read_make_dot_source(first_backward_dot(Program(code)).source)
    assert sorted(drawn.names.values()) == ["AccumulateGrad", "ExpBackward0", "SumBackward0"]
    assert list(drawn.leaves.values()) == [("x", "(2)")]


def test_a_missing_or_broken_torchviz_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torchviz", None)  # as an import that fails (distutils on 3.12)
    with pytest.raises(ProgramError) as info:
        first_backward_dot(load_builtin("two-losses"))
    assert "torchviz cannot be imported" in str(info.value) and "\n" not in str(info.value)


def test_dot_reads_only_what_make_dot_writes(tmp_path):
    for hostile in ('\t1 [image="/etc/passwd"]\n', '\t1 -> 2 [URL="x"]\n', "\tsubgraph { 3 }\n"):
        with pytest.raises(LayoutError, match="not torchviz's DOT"):
            write_torchviz(f"digraph {{\n{hostile}}}\n", tmp_path)
        assert not (tmp_path / "torchviz.dot").exists()
    check_make_dot_source(first_backward_dot(load_builtin("gan-no-detach")).source)
