"""The grad watch against PyTorch: each change it reports is the leaf's ``.grad`` at that moment."""

from __future__ import annotations

import torch

from app.core.recorder.capture import GraphCapture
from app.core.recorder.grads import GradWatch
from app.core.recorder.leaves import LeafNames
from tests.support.oracle import as_tensor


def _watch(**leaves: torch.Tensor) -> GradWatch:
    names = LeafNames(GraphCapture(), name_of=lambda t: None, in_use=lambda name: False)
    for name, tensor in leaves.items():
        names.known(tensor, name)
    return GradWatch(names)


def test_a_change_is_reported_once_with_the_values_pytorch_accumulated() -> None:
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    watch = _watch(x=x)
    assert watch.changes("forward", None) == {}  # no .grad yet: nothing changed
    (x**3).sum().backward()
    first = watch.changes("forward", None)
    assert torch.equal(as_tensor(first["x"]), 3 * x.detach() ** 2)
    assert watch.changes("forward", None) == {}
    (x * 2).sum().backward()  # accumulates into the same tensor, in place
    assert torch.equal(as_tensor(watch.changes("forward", None)["x"]), 3 * x.detach() ** 2 + 2)
    x.grad = None
    assert watch.changes("forward", None) == {"x": None}


def test_a_node_step_reads_only_its_own_leaf() -> None:
    a, b = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    watch = _watch(a=a, b=b)
    watch.changes("forward", None)  # both read: none unread any more
    (a + b).sum().backward()
    watch.leaves.names["n7"] = "a"  # as if n7 were a's AccumulateGrad
    assert list(watch.changes("node", "n7")) == ["a"]
    assert watch.changes("node", "n8") == {}  # an operation's node: no .grad read
    assert list(watch.changes("call_end", None)) == ["b"]


def test_a_calls_contribution_is_what_pytorch_added() -> None:
    w = torch.tensor([0.5, 1.5], requires_grad=True)
    fresh = torch.ones(2, requires_grad=True)
    watch = _watch(w=w, fresh=fresh)
    (w * 4).sum().backward()
    watch.changes("forward", None)
    before = watch.before_call()
    assert before["fresh"] is None and torch.equal(before["w"], torch.full((2,), 4.0))
    (w**2 + fresh).sum().backward()
    watch.changes("call_end", None)
    added = watch.contributions(before)
    assert torch.equal(as_tensor(added["w"]), w.grad - before["w"])
    assert torch.equal(as_tensor(added["w"]), 2 * w.detach())
    assert torch.equal(as_tensor(added["fresh"]), fresh.grad)  # had none: all of it


WRITTEN_THROUGH_DATA = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
for i in range(2):
    loss = (w * 3).sum()
    loss.backward()
    w.data -= 0.1 * w.grad.data
    w.grad.data.zero_()
z = w * 1
"""


def test_a_grad_zeroed_through_data_is_seen(tmp_path) -> None:
    """``w.grad.data.zero_()`` writes through an alias whose version counter is its own: the
    grad's own version does not move, yet PyTorch's ``w.grad`` is zeros after it."""
    import runpy

    from app.core.lesson.prove import final_grads
    from app.core.model.program import Program
    from app.core.recorder.recorder import record

    path = tmp_path / "data.py"
    path.write_text(WRITTEN_THROUGH_DATA)
    plain = runpy.run_path(str(path))["w"].grad.tolist()
    grads = final_grads(record(Program(WRITTEN_THROUGH_DATA)))
    assert grads["w"] is not None and [float(v) for v in grads["w"].flat] == plain
