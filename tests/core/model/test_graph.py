"""Graph capture: ids, edges and saved slots agree with a direct walk of next_functions."""

from __future__ import annotations

from typing import Any

import torch

from app.core import Graph, Program, record, trace
from app.core.recorder.capture import GraphCapture
from tests.support.oracle import as_tensor, children, walk


def program(*lines: str) -> Program:
    return Program("\n".join(["import torch", *lines]) + "\n")


LEAF = "x = torch.tensor([1., 2.], requires_grad=True)"


def direct(root: Any) -> tuple[list[Any], set[tuple[int, int]]]:
    """Every node and edge reachable from ``root``, by identity."""
    fns = list(walk([root]))
    return fns, {(id(f), id(c)) for f in fns for c in children(f)}


def check_against_walk(graph: Graph, capture: GraphCapture, root: Any) -> None:
    fns, edges = direct(root)
    assert len(graph) == len(fns) == len({n.id for n in graph.nodes})
    ours = {node_id: fn for node_id, fn in capture.fns.items()}
    assert {id(f) for f in ours.values()} == {id(f) for f in fns}
    assert {(id(ours[e.src]), id(ours[e.dst])) for e in graph.edges} == edges
    assert len(graph.edges) == len(edges)
    for node in graph.nodes:
        assert node.name == type(ours[node.id]).__name__
        assert node.is_leaf == hasattr(ours[node.id], "variable")


def captured(loss: torch.Tensor) -> tuple[Graph, GraphCapture]:
    capture = GraphCapture()
    capture.add_roots([loss.grad_fn])
    return capture.freeze(), capture


def test_shared_node_is_one_node_with_two_parents() -> None:
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    a = x.exp()
    loss = (a.sin() + a.cos()).sum()
    graph, capture = captured(loss)
    check_against_walk(graph, capture, loss.grad_fn)
    exp = next(n.id for n in graph.nodes if n.name == "ExpBackward0")
    parents = sorted(graph.node(e.src).name for e in graph.edges if e.dst == exp)
    assert parents == ["CosBackward0", "SinBackward0"]


def test_input_used_twice_is_one_edge() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    graph, capture = captured(loss)
    check_against_walk(graph, capture, loss.grad_fn)
    mul = next(n for n in graph.nodes if n.name == "MulBackward0")
    assert [e.dst for e in graph.edges if e.src == mul.id] == [next(n.id for n in graph.nodes if n.is_leaf)]


def test_deep_and_wide_graph_matches_the_walk() -> None:
    x = torch.ones(3, requires_grad=True)
    w = torch.ones(3, 3, requires_grad=True)
    h = x
    for i in range(30):
        h = torch.tanh(w @ h) + (h * i if i % 3 else h.sin())
    loss = h.sum()
    graph, capture = captured(loss)
    check_against_walk(graph, capture, loss.grad_fn)
    assert len(graph) > 100


def test_ids_are_discovery_order_and_stable() -> None:
    def build() -> Graph:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        return trace(x.square().exp().sum())

    first, second = build(), build()
    assert [n.id for n in first.nodes] == [f"n{i}" for i in range(len(first))]
    assert [(n.id, n.name) for n in first.nodes] == [(n.id, n.name) for n in second.nodes]
    assert first.edges == second.edges


def test_saved_slots_describe_what_pytorch_holds() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    y = x.pow(3)
    graph = trace(y)
    slots = {s.name: s for s in graph.node("n0").saved}
    assert slots["exponent"].kind == "value" and slots["exponent"].value == repr(y.grad_fn._saved_exponent)
    me = slots["self"]
    held = y.grad_fn._saved_self
    assert me.kind == "tensor"
    assert me.shape == tuple(held.shape) and me.dtype == "float32" and me.device == "cpu"
    assert me.nbytes == held.untyped_storage().nbytes()
    assert me.storage == ("cpu", held.untyped_storage().data_ptr())


def test_list_slot_with_none_entries_is_a_tensor_slot() -> None:
    x = torch.ones(3, 3, requires_grad=True)
    y = x[:, torch.tensor([0, 2])]
    slots = {s.name: s for s in trace(y).node("n0").saved}
    indices = slots["indices"]
    assert indices.kind == "tensor"
    assert indices.nbytes == torch.tensor([0, 2]).untyped_storage().nbytes()


def test_slot_freed_before_capture_is_a_tensor_without_details() -> None:
    x = torch.ones(2, requires_grad=True)
    y = x.exp()
    y.sum().backward()
    slot = next(s for s in trace(y).node("n0").saved if s.name == "result")
    assert slot.kind == "tensor" and slot.nbytes is None and slot.storages == ()


def test_labels_from_statements_expressions_leaves_and_losses() -> None:
    forward = ["y = x.square()", "z = y", "u = x.exp().sin()", "v = (u +", "     1)"]
    calls = ["(y * 3).sum().backward(retain_graph=True)", "v.sum().backward()"]
    rec = record(program(LEAF, *forward, *calls))
    by_name = {n.name: n for n in rec.graph.nodes}
    assert by_name["PowBackward0"].label == "y = x.square()"  # not overwritten by z = y
    assert by_name["SinBackward0"].label == "u = x.exp().sin()"
    assert by_name["ExpBackward0"].label == "x.exp()"
    assert by_name["AddBackward0"].label == "v = (u + 1)"
    assert by_name["AccumulateGrad"].label == "x" and by_name["AccumulateGrad"].is_leaf
    assert by_name["MulBackward0"].label == "y * 3" and by_name["MulBackward0"].added_at_call == 0
    sums = [n for n in rec.graph.nodes if n.name == "SumBackward0"]
    assert [(n.label, n.added_at_call) for n in sums] == [("(y * 3).sum()", 0), ("v.sum()", 1)]
    assert by_name["PowBackward0"].added_at_call is None
    assert (by_name["PowBackward0"].line, by_name["AddBackward0"].line, by_name["MulBackward0"].line) == (
        3,
        6,
        8,
    )


def test_unnamed_leaf_gets_a_name_that_clashes_with_nothing() -> None:
    first = "leaf0 = torch.tensor([1., 2.], requires_grad=True)"
    forward = "y = torch.tensor([3., 4.], requires_grad=True) * leaf0"  # the unnamed leaf is met first
    rec = record(program(first, forward, "y.sum().backward()"))
    assert len(rec.leaves) == 2
    assert "leaf0" in rec.leaves
    assert rec.graph.node(rec.leaves["leaf0"]).label == "leaf0"
    other = next(k for k in rec.leaves if k != "leaf0")
    assert rec.grads_at_end(0)[other] is not None
    assert torch.equal(as_tensor(rec.grads_at_end(0)["leaf0"]), torch.tensor([3.0, 4.0]))  # type: ignore[arg-type]


def test_input_rebound_by_forward_code_keeps_its_name() -> None:
    rec = record(program(LEAF, "x = x * 2", "y = x.exp()", "y.sum().backward()"))
    assert list(rec.leaves) == ["x"]
    assert rec.graph.node(rec.leaves["x"]).label == "x"
    expected = 2 * torch.tensor([2.0, 4.0]).exp()
    assert torch.allclose(as_tensor(rec.grads_at_end(0)["x"]), expected)  # type: ignore[arg-type]


def test_module_parameters_are_leaves_named_by_their_path() -> None:
    code = ["torch.manual_seed(1)", "lin = torch.nn.Linear(2, 1)", "out = lin(torch.ones(3, 2)).sum()"]
    rec = record(program(*code, "out.backward()"))
    assert set(rec.leaves) == {"lin.weight", "lin.bias"}
    for name, leaf in rec.leaves.items():
        assert rec.graph.node(leaf).is_leaf and rec.graph.node(leaf).label == name
    assert rec.grads_at_end(0)["lin.bias"].tolist() == [3.0]  # type: ignore[union-attr]


def test_equal_values_in_slots_keep_their_own_text() -> None:
    # Value slots alike are shared; 1, 1.0 and True are equal keys in Python but print apart.
    x = torch.ones(2, requires_grad=True)
    powers = (1, 1.0, True)
    graphs = [trace(x.pow(p)) for p in powers]
    exponents = [next(s.value for s in g.node("n0").saved if s.name == "exponent") for g in graphs]
    assert exponents == [repr(x.pow(p).grad_fn._saved_exponent) for p in powers]
    assert len(set(exponents)) == 3


def test_alike_sizes_are_one_shared_slot_read_from_each_node() -> None:
    a, b = torch.ones(2, 3, requires_grad=True), torch.ones(2, 3, requires_grad=True)
    graph = trace(a.view(6), b.view(6))
    sizes = [next(s for s in n.saved if s.name == "self_sym_sizes") for n in graph.nodes if n.saved]
    assert [s.value for s in sizes] == [repr(a.view(6).grad_fn._saved_self_sym_sizes)] * 2
    assert sizes[0] is sizes[1]
