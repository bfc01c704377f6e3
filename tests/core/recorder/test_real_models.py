"""Real ``torch.nn`` models recorded as full Python scripts, with PyTorch as the oracle.

Each script is run twice more: through tests/support/oracle.py (the same calls with hooks that change
nothing: engine order, errors, failing nodes, grads after each call) and plainly with ``runpy`` in a
fresh namespace under the same seed (the final grads and parameters). Nodes name the module whose
``forward`` made them and the script line that made them: for a model's own ``forward`` the line in
it, for a torch module the line that called it.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
import torch

from app import lens
from app.core.lensfile import lens_bytes, recording_from_bytes
from app.core.model.graph import GraphNode
from app.core.model.recording import Recording
from app.core.recorder.script import record_script
from app.core.report import to_json
from tests.support.oracle import as_tensor, check_against_plain, run_plainly
from tests.support.real_models import (
    GAN,
    LSTM_LM,
    MLP,
    SCRIPTS,
    TRANSFORMER,
    entered,
)
from tests.support.torchviz_oracle import differences, first_call_make_dot


def line_of(code: str, text: str) -> int:
    """The 1-based line of the script whose stripped text starts with ``text`` (exactly one)."""
    found = [i for i, line in enumerate(code.splitlines(), 1) if line.strip().startswith(text)]
    assert len(found) == 1, (text, found)
    return found[0]


def plain_globals(path: Path) -> dict[str, Any]:
    """The script run plainly as ``__main__`` in a fresh namespace (the caller's random state kept)."""
    with torch.random.fork_rng():
        try:
            return runpy.run_path(str(path), run_name="__main__")
        except RuntimeError as exc:  # the failing scripts end at their error, as Python would
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != str(path):
                tb = tb.tb_next
            assert tb is not None
            return dict(tb.tb_frame.f_globals)


def parameters(names: dict[str, Any]) -> dict[str, torch.Tensor]:
    return {
        f"{name}.{path}": p
        for name, value in names.items()
        if isinstance(value, torch.nn.Module)
        for path, p in value.named_parameters()
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Recording]]:
    folder = tmp_path_factory.mktemp("real")
    out = {}
    for name, (code, _) in SCRIPTS.items():
        path = folder / f"{name.replace('-', '_')}.py"
        path.write_text(code, encoding="utf-8")
        run = record_script(path)
        assert run.exception is None and run.exit_code == 0, run.exception
        out[name] = (path, run.recording)
    return out


def nodes(rec: Recording, name: str) -> list[GraphNode]:
    return [n for n in rec.graph.nodes if n.name == name]


# -- PyTorch as the oracle -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_calls_nodes_errors_and_grads_equal_a_plain_run(recorded, name):
    _, rec = recorded[name]
    code, failing = SCRIPTS[name]
    plain = check_against_plain(rec, run_plainly(code))  # errors, failing nodes, grads after each call
    assert (rec.failed.index if rec.failed else None) == failing
    for index, call in enumerate(plain.calls):
        assert entered(rec, index) == call.entered, f"engine order of call {index}"
        assert len(entered(rec, index)) == len(call.entered) > 0
    if failing is not None:
        assert rec.timeline[-1].kind == "error" and rec.timeline[-1].error == plain.calls[failing].error


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_the_graph_before_the_first_backward_is_what_make_dot_draws(recorded, name):
    """torchviz as the oracle of the drawing (tests/support/torchviz_oracle.py): nodes, edges, leaves named
    from the script's modules, saved tensors and shapes."""
    _, rec = recorded[name]
    drawn = first_call_make_dot(SCRIPTS[name][0], {"__name__": "__main__"})
    assert drawn is not None
    assert differences(rec, drawn) == []
    assert any(leaf for leaf, _ in drawn.leaves.values()), "parameters are named: the names are compared"


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_final_grads_equal_runpy_of_the_same_script(recorded, name):
    path, rec = recorded[name]
    params = parameters(plain_globals(path))
    assert params
    last = rec.timeline.state(len(rec.timeline) - 1).grads
    for leaf, tensor in params.items():
        assert leaf in rec.leaves, leaf
        got = as_tensor(last.get(leaf))
        if tensor.grad is None:
            assert got is None, leaf
        else:
            assert got is not None and torch.equal(got, tensor.grad), leaf


def test_the_classic_failures_say_what_pytorch_says(recorded):
    gan, bptt, step = (
        recorded[n][1].failed for n in ("gan-without-detach", "bptt-without-detach", "step-between-backwards")
    )
    assert gan is not None and "backward through the graph a second time" in str(gan.error)
    assert bptt is not None and "backward through the graph a second time" in str(bptt.error)
    assert step is not None and "modified by an inplace operation" in str(step.error)


def _shape_text(shape: torch.Size) -> str:
    return f"{shape[0]} values" if len(shape) == 1 else "×".join(str(n) for n in shape)


def test_a_models_call_end_names_the_shapes_of_its_gradients(recorded):
    """A step of a model adds to many weights: the caption names their shapes (PyTorch's, from a
    plain run) rather than six numbers of each, and stays one sentence."""
    path, rec = recorded["transformer"]
    params = parameters(plain_globals(path))
    end = rec.timeline[rec.calls[0].last_step]
    assert end.kind == "call_end"
    caption = end.caption or ""
    added = list(end.contribution or {})
    shapes = ", ".join(f"{leaf}: {_shape_text(params[leaf].shape)}" for leaf in added[:3])
    assert f"adding to the .grad of {len(added)} leaves ({shapes}, …)" in caption, caption
    assert len(added) == len(params) and len(caption) < 300


# -- modules and source lines ------------------------------------------------------------------------


def test_an_mlp_names_its_layers_and_the_line_that_called_the_model(recorded):
    path, rec = recorded["mlp"]
    call_line = line_of(MLP, "out = model(x)")
    addmm = nodes(rec, "AddmmBackward0")
    assert {n.module for n in addmm} == {"model.0", "model.2"}
    assert {n.source for n in addmm} == {(str(path), call_line)}
    assert {n.module for n in nodes(rec, "ReluBackward0")} == {"model.1"}
    mse = nodes(rec, "MseLossBackward0")
    assert {n.module for n in mse} == {"loss_fn"}
    assert {n.source.line for n in mse if n.source} == {line_of(MLP, "loss = loss_fn(out, y)")}
    weight = rec.graph.node(rec.leaves["model.0.weight"])
    assert weight.module == "model.0"


def test_a_models_own_forward_gives_its_lines_and_its_submodules(recorded):
    path, rec = recorded["gan-without-detach"]
    assert {n.module for n in nodes(rec, "AddmmBackward0")} == {"G.body.0", "G.body.2", "D.hidden", "D.out"}
    sigmoid = nodes(rec, "SigmoidBackward0")
    assert sigmoid and {n.module for n in sigmoid} == {"D"}  # made in D.forward itself
    assert {n.source.line for n in sigmoid if n.source} == {line_of(GAN, "return torch.sigmoid(self.out(h))")}
    leaky = nodes(rec, "LeakyReluBackward0")
    assert {n.source.line for n in leaky if n.source} == {line_of(GAN, "h = torch.nn.functional.leaky_relu")}
    g_body = [n for n in nodes(rec, "AddmmBackward0") if n.module == "G.body.0"]
    assert {n.source.line for n in g_body if n.source} == {line_of(GAN, "return self.body(z)")}
    add = nodes(rec, "AddBackward0")
    assert [n.module for n in add] == [None]  # the sum of the two losses, at the script's top level
    assert add[0].source == (str(path), line_of(GAN, "d_loss = bce("))


def test_each_forward_call_is_captured_once(recorded):
    """D(real) and D(fake) inside one expression: the first call's nodes stay while the line runs."""
    _, rec = recorded["gan-without-detach"]
    d_loss_line = line_of(GAN, "d_loss = bce(")
    hidden = [n for n in nodes(rec, "AddmmBackward0") if n.module == "D.hidden"]
    assert len(hidden) == 3  # D(real), D(fake) and the generator step's D(fake)
    assert all(n.gone_at_step is None or n.gone_at_step > rec.calls[0].first_step for n in hidden[:2])
    assert sum(1 for n in nodes(rec, "BinaryCrossEntropyBackward0") if n.line == d_loss_line) == 2


def test_transformer_layers_name_attention_norms_and_feed_forward(recorded):
    path, rec = recorded["transformer"]
    modules = {n.module for n in rec.graph.nodes}
    assert {
        "layer.self_attn",
        "layer.norm1",
        "layer.norm2",
        "layer.linear1",
        "layer.linear2",
        "head",
    } <= modules
    assert {n.module for n in nodes(rec, "NativeLayerNormBackward0")} == {"layer.norm1", "layer.norm2"}
    call_line = line_of(TRANSFORMER, "loss = (head(layer(x))")
    assert {n.source for n in rec.graph.nodes if n.source is not None} == {(str(path), call_line)}
    assert all(n.source is not None for n in rec.graph.nodes)


def test_lstm_and_cnn_nodes_belong_to_their_layers(recorded):
    _, lm = recorded["lstm-lm"]
    assert {n.module for n in nodes(lm, "EmbeddingBackward0")} == {"model.embed"}
    lstm_nodes = [n for n in lm.graph.nodes if n.module == "model.lstm" and not n.is_leaf]
    assert lstm_nodes
    assert {n.source.line for n in lstm_nodes if n.source} == {line_of(LSTM_LM, "hidden, state = self.lstm(")}
    _, cnn = recorded["cnn-batchnorm"]
    assert {n.module for n in nodes(cnn, "ConvolutionBackward0")} == {"net.conv"}
    assert {n.module for n in nodes(cnn, "NativeBatchNormBackward0")} == {"net.bn"}
    assert {n.module for n in nodes(cnn, "MaxPool2DWithIndicesBackward0")} == {"net"}


def test_modules_and_sources_survive_a_lens_file_and_reach_the_json(recorded):
    path, rec = recorded["mlp"]
    back = recording_from_bytes(lens_bytes(rec))
    assert [(n.module, n.source) for n in back.graph.nodes] == [(n.module, n.source) for n in rec.graph.nodes]
    report = json.loads(json.dumps(to_json(rec)))
    first = next(n for n in report["nodes"] if n["name"] == "AddmmBackward0")
    assert first["module"] in ("model.0", "model.2")
    assert first["source"] == {"file": str(path), "line": line_of(MLP, "out = model(x)")}


def test_lens_record_names_modules_by_the_model_it_was_given():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x = torch.randn(2, 3)
    with lens.record(net) as rec:
        out = net(x).sum()
        out.backward()
    graph = rec.recording.graph
    assert {n.module for n in nodes(rec.recording, "AddmmBackward0")} == {"net.0", "net.2"}
    assert {n.module for n in nodes(rec.recording, "TanhBackward0")} == {"net.1"}
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    call = next(i for i, text in enumerate(lines, 1) if text.strip() == "out = net(x).sum()")
    assert {n.source for n in graph.nodes if n.name == "AddmmBackward0"} == {(__file__, call)}
    assert torch.nn.modules.module._global_forward_hooks == {}
    assert torch.nn.modules.module._global_forward_pre_hooks == {}


def test_module_hooks_are_removed_when_the_block_raises():
    net = torch.nn.Linear(2, 1)
    with pytest.raises(ValueError), lens.record(net):
        net(torch.ones(1, 2)).sum().backward()
        raise ValueError("boom")
    assert torch.nn.modules.module._global_forward_hooks == {}
    assert torch.nn.modules.module._global_forward_pre_hooks == {}
