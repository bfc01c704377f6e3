"""Every recording draws: real training loops lay out, and a graph ``dot`` refuses is laid out again,
plainer (layout.py's NOTE [layout ladder]).

The training scripts in ``tests/support/scripts/training`` are plain PyTorch programs a learner would write;
each is recorded as ``run`` records it, checked against a plain run of the same script (PyTorch as
the oracle), then laid out by the real ``dot``. The ladder is driven by a ``dot`` on PATH that
refuses what Graphviz 2.43 refuses (or more) and hands everything else to the real one.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import main
from app.core.model.graph import Graph
from app.core.recorder.script import record_script
from app.render import layout as layout_module
from app.render.dot_source import frame_names, iterations
from app.render.layout import INSTALL_HINT, LADDER, Box, Layout, LayoutError, layout_graph
from app.render.layout_store import layout_from_json, layout_json
from app.render.modules import fold, module_groups
from app.render.qt.export import ensure_app, export_recording
from tests.support.oracle import check_against_plain

SCRIPTS = Path(__file__).parents[1] / "support" / "scripts" / "training"
TRAINING = sorted(SCRIPTS.glob("*.py"))
REAL_DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(REAL_DOT is None, reason="Graphviz 'dot' is not installed")
pytestmark = needs_dot


def refusing_dot(folder: Path, refused: str) -> None:
    """Put a ``dot`` first on PATH that fails as Graphviz 2.43 does on a source holding ``refused``
    (a regular expression for grep), and runs the real ``dot`` on any other."""
    folder.mkdir(exist_ok=True)
    script = folder / "dot"
    script.write_text(
        "#!/bin/sh\n"
        f"if grep -q -E '{refused}' \"$4\"; then\n"
        "  echo 'libpath/shortest.c:324: triangulation failed' >&2\n"
        "  exit 1\n"
        "fi\n"
        f'exec "{REAL_DOT}" "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)


@pytest.fixture
def dot_refusing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def install(refused: str) -> None:
        refusing_dot(tmp_path / "bin", refused)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")

    return install


def _within(inner: Box, outer: Box) -> bool:
    return (
        outer.left <= inner.left
        and inner.left + inner.width <= outer.left + outer.width
        and outer.top <= inner.top
        and inner.top + inner.height <= outer.top + outer.height
    )


def assert_complete(graph: Graph, layout: Layout) -> None:
    """A place for every node of the drawn graph, and a frame around each frame's nodes."""
    drawn = fold(graph, layout.collapsed).graph
    assert set(layout.nodes) == {n.id for n in drawn.nodes}
    if layout.simplified == LADDER[-1][1]:
        assert not layout.clusters  # the last rung draws no frames
        return
    assert set(layout.clusters) == set(frame_names(drawn))
    for group in (*iterations(drawn), *module_groups(drawn)):
        for node_id in group.nodes:
            assert _within(layout.nodes[node_id], layout.clusters[group.name]), (node_id, group.name)


# -- real training loops --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def training_runs():  # type: ignore[no-untyped-def]
    return {path.stem: record_script(path).recording for path in TRAINING}


@pytest.fixture(scope="module")
def rung_layouts(training_runs):  # type: ignore[no-untyped-def]
    """``lay(stem, rung)``: the layout of a training run with that rung of the ladder alone, made
    once for the module (each is one run of Graphviz over a few hundred boxes)."""

    @functools.cache
    def lay(stem: str, rung: int) -> Layout:
        return layout_graph(training_runs[stem].graph, ladder=[LADDER[rung]])

    return lay


def test_the_corpus_holds_the_training_loops_a_learner_writes() -> None:
    names = {path.stem for path in TRAINING}
    assert {"mlp_sgd", "mlp_adam_batches", "cnn_batchnorm", "gan", "transformer_encoder"} <= names
    assert {"gru_classifier", "gru_language_model", "lstm_classifier", "lstm_language_model"} <= names
    assert {"nested_sequential", "manual_sgd"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("script", TRAINING, ids=[p.stem for p in TRAINING])
def test_a_recorded_training_loop_is_laid_out_in_full(training_runs, rung_layouts, script: Path) -> None:
    rec = training_runs[script.stem]
    plain = check_against_plain(rec)  # the recording is what PyTorch did
    assert len(plain.calls) >= 3, "three iterations or more"
    layout = rung_layouts(script.stem, 0)  # the ladder's first rung: the full drawing, or an error
    assert layout.simplified == "", "Graphviz 2.43 draws these in full (dot_source's NOTE [flat edges])"
    assert_complete(rec.graph, layout)
    assert len(iterations(fold(rec.graph, layout.collapsed).graph)) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("script", TRAINING, ids=[p.stem for p in TRAINING])
def test_every_rung_of_the_ladder_lays_out_a_training_loop(training_runs, rung_layouts, script: Path) -> None:
    rec = training_runs[script.stem]
    for i, rung in enumerate(LADDER):
        layout = rung_layouts(script.stem, i)
        assert layout.simplified == rung[1]
        assert_complete(rec.graph, layout)


def test_the_mlp_a_learner_records_saves_with_its_layout_and_exports(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    saved = tmp_path / "mlp.lens"
    assert main(["run", "--out", str(saved), str(SCRIPTS / "mlp_sgd.py")]) == 0
    err = capsys.readouterr().err
    assert "without a layout" not in err and "Graphviz" not in err
    assert main(["export", str(saved), "--out", str(tmp_path / "slides")]) == 0
    from app.core.lensfile import open_lens

    rec, stored = open_lens(saved)
    assert stored is not None and layout_from_json(stored, rec.graph).simplified == ""
    assert len(list((tmp_path / "slides").glob("step-*.svg"))) == len(rec.timeline)


# -- the ladder -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("refused", "rung"),
    [
        ("splines=spline", 1),  # curves: edges drawn straight
        ('cluster_[^"]*_m_', 2),  # a module's frame inside an iteration's: placed by us
        ("subgraph", 4),  # any cluster: every frame placed by us
        ("subgraph|rank=same", 5),  # rank constraints too: the plainest drawing
    ],
    ids=["routing", "nested-clusters", "clusters", "rank-constraints"],
)
def test_a_layout_dot_refuses_is_retried_plainer_and_each_refusal_logged(
    training_runs, dot_refusing, caplog, refused: str, rung: int
) -> None:
    rec = training_runs["mlp_sgd"]
    dot_refusing(refused)
    with caplog.at_level(logging.INFO, logger=layout_module.__name__):
        layout = layout_graph(rec.graph)
    assert layout.simplified == LADDER[rung][1]
    assert_complete(rec.graph, layout)
    refusals = [r for r in caplog.records if "triangulation failed" in r.getMessage()]
    assert len(refusals) == rung  # one line per rung refused, saying what dot said
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"Graphviz could not lay out the full drawing: {LADDER[rung][1]}"]


def test_a_simplified_layout_is_stored_and_read_back_as_it_was(training_runs, rung_layouts) -> None:
    rec = training_runs["nested_sequential"]
    for i in range(len(LADDER)):
        layout = rung_layouts("nested_sequential", i)
        assert layout_from_json(layout_json(layout), rec.graph) == layout


def test_a_stored_layout_says_only_what_the_ladder_says(training_runs, rung_layouts) -> None:
    rec = training_runs["mlp_sgd"]
    stored = layout_json(rung_layouts("mlp_sgd", 1))
    stored["simplified"] = "\x1b]0;owned\x07 any text"
    with pytest.raises(LayoutError, match="unknown simplification"):
        layout_from_json(stored, rec.graph)


def test_dot_refusing_every_rung_says_graphviz_could_not_lay_it_out(training_runs, dot_refusing) -> None:
    dot_refusing(".")
    with pytest.raises(LayoutError) as info:
        layout_graph(training_runs["mlp_sgd"].graph)
    said = str(info.value)
    assert said.startswith("Graphviz could not lay out this graph (dot exited with status 1: ")
    assert "triangulation failed" in said and INSTALL_HINT not in said


def test_the_command_line_draws_a_refused_graph_and_says_so_in_one_line(
    training_runs, dot_refusing, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    from app.core.lensfile import save_lens

    source = tmp_path / "mlp.lens"
    save_lens(training_runs["mlp_sgd"], source)  # no layout stored: export lays it out
    dot_refusing("subgraph")
    assert main(["export", str(source), "--out", str(tmp_path / "slides")]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("wrote ") and "install" not in err
    said = f"autograd-lens: Graphviz could not lay out the full drawing: {LADDER[4][1]}"
    assert err.strip().splitlines() == [said]


# -- any module tree, any loop ---------------------------------------------------------------------

LAYERS = ["nn.Linear({d}, {d})", "nn.ReLU()", "nn.Tanh()", "nn.LayerNorm({d})", "nn.Dropout(0.0)"]


@st.composite
def module_trees(draw: st.DrawFn, depth: int = 0) -> str:
    """A ``nn.Sequential`` of layers and of smaller trees, as nested as a learner's models get."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth < 1 and draw(st.booleans()):
            parts.append(draw(module_trees(depth + 1)))
        else:
            parts.append(draw(st.sampled_from(LAYERS)).format(d=4))
    if depth == 0 and draw(st.booleans()):
        return f"Block(nn.Sequential({', '.join(parts)}))"
    return f"nn.Sequential({', '.join(parts)})"


@st.composite
def training_scripts(draw: st.DrawFn) -> str:
    tree = draw(module_trees())
    epochs, batches = draw(st.integers(1, 3)), draw(st.integers(1, 2))  # up to six iterations
    optimizer = draw(st.sampled_from(["SGD(model.parameters(), lr=0.1)", "Adam(model.parameters())"]))
    inner = (
        f"    for batch in range({batches}):\n"
        "        opt.zero_grad()\n"
        f"        loss = ((model(x[batch::{batches}]) - y[batch::{batches}]) ** 2).mean()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
    )
    return (
        "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n\n\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, body):\n"
        "        super().__init__()\n"
        "        self.body = body\n"
        "        self.out = nn.Linear(4, 4)\n\n"
        "    def forward(self, x):\n"
        "        return self.out(torch.relu(self.body(x)) + x)\n\n\n"
        f"model = nn.Sequential(nn.Linear(3, 4), {tree}, nn.Linear(4, 1))\n"
        f"opt = torch.optim.{optimizer}\n"
        "x, y = torch.randn(6, 3), torch.randn(6, 1)\n"
        f"for epoch in range({epochs}):\n{inner}"
    )


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=training_scripts())
def test_any_module_tree_trained_in_any_loop_lays_out_and_exports(tmp_path: Path, code: str) -> None:
    script = tmp_path / "train.py"
    script.write_text(code, encoding="utf-8")
    rec = record_script(script).recording
    assert rec.error is None and len(rec.calls) >= 1
    layout = layout_graph(rec.graph)
    assert_complete(rec.graph, layout)
    ensure_app()
    shutil.rmtree(tmp_path / "slides", ignore_errors=True)
    everything = {"max_steps": len(rec.timeline), "max_bytes": 1 << 40}  # not the budget's test
    files = export_recording(rec, tmp_path / "slides", fmt="svg", **everything)
    assert len(files) == len(rec.timeline) and all(f.stat().st_size > 0 for f in files)


def test_dot_runs_below_the_windows_priority() -> None:
    """dot lays out while the window paints (NOTE [helpers below the window]): the command
    started as dot is reads its own nice value from the kernel, and it is this process's plus
    ``DOT_NICE``; what it prints comes back as ``subprocess.run`` would give it. The priority is
    lowered just after the start, so the command reads it a moment later, as a layout is."""
    from app.render import layout

    read_later = "sleep 0.5; cut -d' ' -f19 /proc/$$/stat; echo said >&2"
    done = layout._run_dot(["sh", "-c", read_later], 1, 30.0)
    assert done.returncode == 0 and done.stderr == b"said\n"
    assert int(done.stdout) == os.getpriority(os.PRIO_PROCESS, 0) + layout.DOT_NICE
