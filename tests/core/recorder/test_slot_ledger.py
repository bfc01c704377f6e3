"""The slot ledger against PyTorch: each state it keeps is what reading ``_saved_*`` says."""

from __future__ import annotations

import pytest
import torch

from app.core.recorder.capture import GraphCapture
from app.core.recorder.ledger import SlotLedger, probe_slot, released


def _ledger(*roots: torch.Tensor, watch_writes: bool = False) -> tuple[SlotLedger, list[str]]:
    capture = GraphCapture()
    new = capture.add_roots([r.grad_fn for r in roots])
    ledger = SlotLedger(capture, watch_writes=watch_writes)
    for node_id in new:
        ledger.add_node(node_id)
    return ledger, new


def _pytorch_says(fn: object, name: str) -> str:
    """``readable``, or the kind of error PyTorch raises reading the slot."""
    try:
        getattr(fn, f"_saved_{name}")
    except RuntimeError as exc:
        return "modified" if "inplace operation" in str(exc) else "freed"
    return "readable"


@pytest.mark.parametrize("retain", [False, True])
def test_a_backward_frees_or_retains_as_pytorch_says(retain: bool) -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    ledger, (exp_id, _) = _ledger(y)
    fn = y.grad_fn
    assert ledger.states[(exp_id, "result")] == "alive" and _pytorch_says(fn, "result") == "readable"
    y.sum().backward(retain_graph=retain)
    ledger.ran(exp_id)
    ledger.probe_node(exp_id, call=0)
    state = ledger.states[(exp_id, "result")]
    assert _pytorch_says(fn, "result") == ("readable" if retain else "freed")
    assert state == ("retained" if retain else "freed")
    assert ledger.freed_by == ({} if retain else {(exp_id, "result"): 0})
    assert released(fn, "result") == (not retain)


def test_a_saved_tensor_written_in_place_is_modified_as_pytorch_says() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.sigmoid()
    ledger, (node_id, _) = _ledger(y)
    with torch.no_grad():
        y.mul_(2)
    assert _pytorch_says(y.grad_fn, "result") == "modified"
    ledger.probe_node(node_id, call=None)
    assert ledger.states[(node_id, "result")] == "modified"
    assert ledger.versions[(node_id, "result")] == y._version == 1
    with pytest.raises(RuntimeError, match="inplace operation"):
        y.sum().backward()


def test_the_held_bytes_are_the_storages_pytorch_keeps() -> None:
    x = torch.ones(3, 4, requires_grad=True)
    w = torch.ones(4, 5, requires_grad=True)
    y = (x @ w).tanh()
    ledger, _ = _ledger(y)
    kept = {x.untyped_storage().data_ptr(): x.untyped_storage().nbytes()}
    kept[w.untyped_storage().data_ptr()] = w.untyped_storage().nbytes()
    kept[y.untyped_storage().data_ptr()] = y.untyped_storage().nbytes()  # tanh saved its result
    assert ledger.held_bytes == sum(kept.values()) == (12 + 20 + 15) * 4
    y.sum().backward()
    for node_id in ledger.capture.fns:
        ledger.probe_node(node_id, call=0)
    assert ledger.held_bytes == 0
    assert all(state == "freed" for state in ledger.states.values())


def test_changes_are_handed_over_once() -> None:
    x = torch.ones(2, requires_grad=True)
    ledger, (node_id, _) = _ledger(x.exp())
    slots, _ = ledger.take_changes()
    assert slots == {(node_id, "result"): "alive"} and not ledger.changed
    assert ledger.take_changes() == ({}, {})


def test_written_nodes_are_the_ones_whose_saved_tensor_moved() -> None:
    x = torch.ones(2, requires_grad=True)
    a, b = x * 1, x * 1
    y, z = a.sin(), b.cos()  # each saves its input
    ledger, _ = _ledger(y, z, watch_writes=True)
    sin_id, cos_id = ledger.capture.id_of(y.grad_fn), ledger.capture.id_of(z.grad_fn)
    assert ledger.written_nodes() == []
    with torch.no_grad():
        b.add_(1)
    assert ledger.written_nodes() == [cos_id] and sin_id not in ledger.written_nodes()
    assert probe_slot(z.grad_fn, "self", has_run=False) == "modified"
    ledger.probe_node(cos_id, call=None)
    assert ledger.written_nodes() == []  # looked at again: known now


def test_a_freed_slot_that_saved_a_leaf_follows_the_leafs_version() -> None:
    w = torch.ones(2, requires_grad=True)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * x).sum()  # MulBackward0 saves w as self (for x's grad) and x as other
    ledger, _ = _ledger(y)
    ledger.watch_leaves({"w": w, "x": x})
    mul_id = ledger.capture.id_of(y.grad_fn.next_functions[0][0])
    key = (mul_id, "self")
    y.backward()
    ledger.probe_node(mul_id, call=0)
    assert ledger.states[key] == "freed" and _pytorch_says(y.grad_fn.next_functions[0][0], "self") == "freed"
    ledger.take_changes()
    with torch.no_grad():
        w.sub_(0.1)  # an optimizer step writing the leaf the freed slot had saved
    ledger.note_freed_leaves_written()
    assert w._version == 1
    assert ledger.take_changes()[1] == {key: 1}
