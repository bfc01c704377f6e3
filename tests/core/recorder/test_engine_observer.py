"""The engine observer against PyTorch: the nodes it reports done are the ones the engine ran, in
its order, each after it released its buffers; a failing node is the one that raised."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from app.core.recorder.capture import GraphCapture
from app.core.recorder.observer import EngineObserver


def _engine_order(root: torch.Tensor, capture: GraphCapture) -> list[str]:
    """The order PyTorch runs the nodes in, read from pre-hooks of the test's own (retain_graph)."""
    order: list[str] = []
    handles = [fn.register_prehook(lambda g, n=n: order.append(n)) for n, fn in capture.fns.items()]
    root.backward(retain_graph=True)
    for handle in handles:
        handle.remove()
    return order


def test_nodes_are_done_in_the_engines_order_after_releasing_their_buffers() -> None:
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    loss = (torch.tanh(x * w).exp() + w.square()).sum()
    capture = GraphCapture()
    capture.add_roots([loss.grad_fn])
    expected = _engine_order(loss, capture)
    x.grad = w.grad = None
    done: list[tuple[str, bool]] = []

    def node_done(node_id: str, call: int) -> None:
        fn = capture.fns[node_id]
        raws = [getattr(fn, a) for a in dir(fn) if a.startswith("_raw_saved_")]
        released = all(r is None or r.data is None for r in raws if not isinstance(r, (list, tuple)))
        done.append((node_id, released))

    ran: list[str] = []
    observer = EngineObserver(capture, node_done=node_done, ran=ran.append)
    with observer.watching(3):
        loss.backward()
    observer.finish()
    assert [n for n, _ in done] == expected == ran
    assert all(released for _, released in done)
    assert set(observer.needed_by()) == set(expected) and set(observer.needed_by().values()) == {(3,)}
    assert torch.equal(w.grad, x * (1 - torch.tanh(x * w) ** 2) * torch.tanh(x * w).exp() + 2 * w)


class _Fails(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, t: torch.Tensor) -> torch.Tensor:
        return t * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("this node fails")


def test_the_failing_node_is_the_one_that_raised_and_the_hooks_go_even_so() -> None:
    x = torch.ones(2, requires_grad=True)
    y = _Fails.apply(x.exp()).sum()
    capture = GraphCapture()
    capture.add_roots([y.grad_fn])
    done: list[str] = []
    observer = EngineObserver(capture, node_done=lambda n, call: done.append(n))
    with pytest.raises(RuntimeError, match="this node fails"), observer.watching(0):
        y.backward(retain_graph=True)
    observer.finish()
    failed = observer.failed_node()
    assert failed is not None and capture.fns[failed].name() == "_FailsBackward"
    assert [capture.fns[n].name() for n in done] == ["SumBackward0"]
    with pytest.raises(RuntimeError, match="this node fails"):
        y.backward()  # the hooks were removed: nothing more is reported
    assert len(done) == 1
