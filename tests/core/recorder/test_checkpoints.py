"""Checkpointed blocks, checked against plain PyTorch: the same gradients, less saved before the
backward by what PyTorch's own pack hooks measure, and a recompute made of the block's forward.

The oracle here runs the program text as trusted test code, with a ``saved_tensors_hooks`` pack
counter of its own around it; it shares nothing with the recorder.
"""

from __future__ import annotations

import io
import runpy
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import torch

from app.child.proofs import in_process
from app.core import Recording, load_builtin, record
from app.core.lesson.advised import advices_of
from app.core.lesson.prove import proven_fixes
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.script import record_script
from tests.support.oracle import program_globals, run_plainly, same, walk


class PackCounter:
    """Bytes of the distinct storages PyTorch packs for backward until the first backward call."""

    def __init__(self) -> None:
        self.storages: dict[tuple[str, int], int] = {}
        self.kept: list[torch.Tensor] = []  # held, so that no storage is reused while counting
        self.open = True

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.open:
            storage = tensor.untyped_storage()
            self.storages[(str(tensor.device), storage.data_ptr())] = storage.nbytes()
            self.kept.append(tensor)
        return tensor

    @property
    def nbytes(self) -> int:
        return sum(self.storages.values())


def packed_before_backward(code: str) -> int:
    """Run ``code`` plainly under a pack counter; the bytes packed before its first backward."""
    counter = PackCounter()
    real = torch.Tensor.backward

    def backward(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        counter.open = False
        return real(self, *args, **kwargs)

    names = program_globals()
    hooks = torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t)
    with mock.patch.object(torch.Tensor, "backward", backward), hooks:
        torch.manual_seed(0)
        exec(compile(code, "<program>", "exec"), names)  # trusted test text, not the app's
    return counter.nbytes


def before_first_call(rec: Recording) -> int:
    return rec.timeline[rec.calls[0].first_step - 1].saved_bytes


def recompute_steps(rec: Recording) -> list[int]:
    return [s.index for s in rec.timeline.steps if s.kind == "recompute"]


def grads(rec: Recording) -> dict[str, Any]:
    return dict(rec.grads_at_end(len(rec.calls) - 1))


@pytest.mark.parametrize("pair", [("checkpoint-saves-memory", "no-checkpoint")])
def test_checkpoint_twin_has_the_same_grads_and_saves_less_by_what_pack_hooks_measure(
    pair: tuple[str, str],
) -> None:
    with_ckpt, plain = (record(load_builtin(name)) for name in pair)
    assert with_ckpt.error is None and plain.error is None
    plain_ckpt, plain_plain = (run_plainly(rec.program.code).calls[-1].grads for rec in (with_ckpt, plain))
    assert set(plain_ckpt) == set(plain_plain) == set(grads(with_ckpt)) == set(grads(plain))
    for name, grad in plain_plain.items():
        assert grad is not None and torch.allclose(plain_ckpt[name], grad)  # PyTorch: the same
        assert same(grads(with_ckpt)[name], plain_ckpt[name])
        assert same(grads(plain)[name], grad)
    measured = [packed_before_backward(rec.program.code) for rec in (with_ckpt, plain)]
    assert measured[0] < measured[1]
    assert [before_first_call(with_ckpt), before_first_call(plain)] == measured


def block_forward(code: str, stop: str) -> tuple[Counter[str], int]:
    """The plain program up to the line starting ``stop``: the kinds of node ``block(x)`` makes
    (leaves aside) and the bytes its nodes pack."""
    names = program_globals()
    torch.manual_seed(0)
    exec(compile(code.split(stop, maxsplit=1)[0], "<program>", "exec"), names)  # trusted test text
    counter = PackCounter()
    with torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t):
        out = names["block"](names["x"])
    kinds = Counter(type(fn).__name__ for fn in walk([out.grad_fn]) if not hasattr(fn, "variable"))
    return kinds, counter.nbytes


def x_bytes(code: str) -> int:
    names = program_globals()
    torch.manual_seed(0)
    exec(compile(code.split("h = ", maxsplit=1)[0], "<program>", "exec"), names)  # trusted test text
    return int(names["x"].untyped_storage().nbytes())


def test_the_recompute_makes_the_blocks_forward_again_and_saves_what_it_saved() -> None:
    rec = record(load_builtin("checkpoint-saves-memory"))
    kinds, nbytes = block_forward(rec.program.code, "h = checkpoint")
    [step] = recompute_steps(rec)
    again = [rec.graph.node(n) for n in rec.timeline[step].added_nodes]
    assert Counter(n.name for n in again if not n.is_leaf) == kinds
    assert {n.module for n in again} == {"checkpoint(block), recomputed"}
    assert all(n.added_at_call == 0 for n in again)
    # by then the head has freed all it saved; the checkpoint still keeps x, which the block's
    # first node saves again (one storage): what is held is what the block's forward packs
    assert rec.timeline[step - 1].saved_bytes == x_bytes(rec.program.code) < nbytes
    assert rec.timeline[step].saved_bytes == nbytes
    assert "recomputed" in rec.timeline[step].caption
    # in the forward, the block's own nodes kept nothing
    forward = [n for n in rec.graph.nodes if n.module == "checkpoint(block)"]
    assert Counter(n.name for n in forward if not n.is_leaf) == kinds
    kept = [(s.name, s.nbytes) for n in forward for s in n.tensor_slots if s.nbytes]
    assert kept == [("checkpoint inputs", x_bytes(rec.program.code))]
    # each recomputed slot is freed by the time the call ends
    end = rec.timeline.state(rec.calls[0].last_step)
    assert all(end.slots[(n.id, s.name)] == "freed" for n in again for s in n.tensor_slots)


def test_the_reentrant_trap_leaves_the_blocks_weights_without_grad_as_pytorch_does() -> None:
    trap, fixed = (
        record(load_builtin("checkpoint-no-input-grad")),
        record(load_builtin("checkpoint-input-grad")),
    )
    plain_trap = run_plainly(trap.program.code)
    plain_fixed = run_plainly(fixed.program.code)
    assert plain_trap.names["block"][0].weight.grad is None  # PyTorch: no gradient reaches it
    assert plain_fixed.names["block"][0].weight.grad is not None
    assert grads(trap).get("block.0.weight") is None
    assert same(grads(fixed)["block.0.weight"], plain_fixed.names["block"][0].weight.grad)
    assert same(grads(trap)["head.weight"], plain_trap.names["head"].weight.grad)
    assert not recompute_steps(trap) and len(recompute_steps(fixed)) == 1


REENTRANT = """
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4), nn.Sigmoid())
x = torch.randn(3, 4, requires_grad=True)
y = CALL
loss = y.pow(2).sum()
loss.backward()
"""


@pytest.mark.parametrize(
    ("call", "recomputes"),
    [
        ("checkpoint(block, x, use_reentrant=True)", 1),
        ("checkpoint(block, x, use_reentrant=False, preserve_rng_state=False)", 1),
        ("checkpoint_sequential(block, 2, x, use_reentrant=False)", 1),
        ("checkpoint_sequential(block, 4, x, use_reentrant=True)", 3),
        ("block(x)", 0),
    ],
)
def test_every_form_gives_pytorchs_grads_with_a_recompute_per_checkpointed_segment(
    call: str, recomputes: int
) -> None:
    code = REENTRANT.replace("CALL", call)
    rec = record(Program(code))
    assert rec.error is None
    plain = run_plainly(code).calls[-1].grads
    assert set(grads(rec)) == set(plain)
    for name, grad in plain.items():
        assert same(grads(rec)[name], grad), name
    assert len(recompute_steps(rec)) == recomputes
    assert before_first_call(rec) == packed_before_backward(code)


def test_a_reentrant_recompute_is_run_node_by_node_by_the_checkpoints_own_backward() -> None:
    code = REENTRANT.replace("CALL", "checkpoint(block, x, use_reentrant=True)")
    rec = record(Program(code))
    [step] = recompute_steps(rec)
    again = set(rec.timeline[step].added_nodes)
    ran = [s.node for s in rec.timeline.steps if s.kind == "node" and s.node in again]
    kinds, _ = block_forward(code, "y = ")
    assert Counter(rec.graph.node(n).name for n in ran if not rec.graph.node(n).is_leaf) == kinds
    assert all(
        rec.timeline[i].caption.startswith("Recomputed")
        for i in range(len(rec.timeline))
        if rec.timeline[i].node in again and not rec.graph.node(rec.timeline[i].node).is_leaf
    )
    # only the block's input is kept in the forward: the checkpoint's node saves x alone
    [node] = [n for n in rec.graph.nodes if n.name == "CheckpointFunctionBackward"]
    assert [(s.shape, s.nbytes) for s in node.tensor_slots] == [(None, 3 * 4 * 4)]


def test_the_reentrant_trap_is_advised_use_reentrant_false_proven_by_recording_it() -> None:
    trap = record(load_builtin("checkpoint-no-input-grad"))
    advice = next(a for a in advices_of(trap) if "checkpoint" in a.headline)
    assert "block.0.weight.grad" in advice.evidence and "None of the inputs" in advice.evidence
    [proven] = proven_fixes(trap, advice.fixes, record=in_process(trap))
    assert all(c.holds for c in proven.checked.claims) and proven.checked.claims
    assert "use_reentrant=False" in proven.fix.code and "use_reentrant=True" not in proven.fix.code
    fixed = record(Program(proven.fix.code))
    plain = run_plainly(proven.fix.code)
    for name in ("block.0.weight", "block.0.bias", "head.weight"):
        module, _, path = name.partition(".")
        assert same(grads(fixed)[name], plain.names[module].get_parameter(path).grad), name
    assert not [a for a in advices_of(fixed) if "checkpoint" in a.headline]
    assert not [
        a for a in advices_of(record(load_builtin("checkpoint-saves-memory"))) if "checkpoint" in a.headline
    ]


SCRIPT = """import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4), nn.Tanh())
head = nn.Linear(4, 1)
x = torch.randn(5, 4, requires_grad=True)


def run_block(t):
    return block(t)


h = checkpoint(run_block, x, use_reentrant=REENTRANT)
loss = head(h).pow(2).mean()
loss.backward()
"""


@pytest.mark.parametrize("reentrant", ["False", "True"])
def test_run_records_a_scripts_checkpoint_and_its_recompute(tmp_path: Path, reentrant: str) -> None:
    code = SCRIPT.replace("REENTRANT", reentrant)
    path = tmp_path / "script.py"
    path.write_text(code, encoding="utf-8")
    rec = record_script(path, stdout=io.StringIO()).recording
    plain = runpy.run_path(str(path), run_name="__main__")  # the script itself, plainly
    assert rec.error is None and len(recompute_steps(rec)) == 1
    for name in ("block.0.weight", "block.2.bias", "head.weight"):
        module, _, inner = name.partition(".")
        assert same(grads(rec)[name], plain[module].get_parameter(inner).grad), name
    assert before_first_call(rec) == packed_before_backward(code)


HOOKED = """import torch

x = torch.linspace(-1.0, 1.0, 6, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t.to(torch.float16), lambda t: t.float()):
    y = x.exp()
with torch.autograd.graph.save_on_cpu():
    z = y.sin()
z.sum().backward()
"""


def test_a_slot_under_saved_tensor_hooks_shows_what_pack_returned(tmp_path: Path) -> None:
    path = tmp_path / "hooked.py"
    path.write_text(HOOKED, encoding="utf-8")
    rec = record_script(path, stdout=io.StringIO()).recording
    plain = runpy.run_path(str(path), run_name="__main__")
    assert same(grads(rec)["x"], plain["x"].grad)
    packed = plain["x"].detach().exp().to(torch.float16)  # what the pack function returns
    exp = next(n for n in rec.graph.nodes if n.name == "ExpBackward0")
    [slot] = exp.tensor_slots
    assert (slot.dtype, slot.shape, slot.nbytes) == (
        "float16",
        tuple(packed.shape),
        packed.untyped_storage().nbytes(),
    )
    sin = next(n for n in rec.graph.nodes if n.name == "SinBackward0")
    assert [(s.dtype, s.device, s.nbytes) for s in sin.tensor_slots] == [("float32", "cpu", 6 * 4)]
    end = rec.timeline.state(rec.calls[0].last_step)
    assert end.slots[(exp.id, slot.name)] == "freed"


PROGRAM_HOOKS = """import torch
from torch.autograd.graph import saved_tensors_hooks


def pack(t):
    return t.to(torch.float16)


def unpack(t):
    return t.float()


x = torch.linspace(-1.0, 1.0, 6, requires_grad=True)
with saved_tensors_hooks(pack, unpack):
    y = x.exp()
with torch.autograd.graph.save_on_cpu():
    z = y.sin()
z.sum().backward()
"""


def test_a_programs_own_pack_and_unpack_run_and_its_slot_shows_what_pack_returned() -> None:
    rec = record(Program(PROGRAM_HOOKS))
    assert rec.error is None
    plain = run_plainly(PROGRAM_HOOKS)
    assert same(grads(rec)["x"], plain.names["x"].grad)
    packed = plain.names["x"].detach().exp().to(torch.float16)
    [slot] = next(n for n in rec.graph.nodes if n.name == "ExpBackward0").tensor_slots
    assert (slot.dtype, slot.nbytes) == ("float16", packed.untyped_storage().nbytes())
    # what the two pack functions returned: the float16 copy of y, and save_on_cpu's copy of y
    on_cpu = plain.names["y"].detach().cpu().clone()
    assert before_first_call(rec) == packed.untyped_storage().nbytes() + on_cpu.untyped_storage().nbytes()


def test_saved_tensors_hooks_takes_its_two_functions() -> None:
    with pytest.raises(ProgramError, match="takes the two functions"):
        record(
            Program(PROGRAM_HOOKS.replace("saved_tensors_hooks(pack, unpack)", "saved_tensors_hooks(pack)"))
        )
