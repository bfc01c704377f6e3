"""Devices: what torch reports, clear refusals, and a CUDA recording equal to the CPU one."""

from __future__ import annotations

import pytest
import torch

from app.core import Program, ProgramError, Recording, list_devices, load_builtin, record, resolve_device
from tests.support.oracle import check_against_plain, run_plainly

HAS_CUDA = torch.cuda.is_available()


def test_cpu_comes_first_and_is_available() -> None:
    devices = list_devices()
    assert devices[0].name == "cpu" and devices[0].available
    assert resolve_device("cpu") == torch.device("cpu")


def test_cuda_entries_follow_what_torch_reports() -> None:
    cuda = [d for d in list_devices() if d.name.startswith("cuda")]
    if not torch.backends.cuda.is_built():
        assert len(cuda) == 1 and not cuda[0].available
        assert "CPU-only" in cuda[0].reason
    elif not HAS_CUDA:
        assert len(cuda) == 1 and not cuda[0].available and cuda[0].reason
    else:
        assert [d.name for d in cuda] == [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        assert all(d.available and torch.cuda.get_device_name(i) in d.description for i, d in enumerate(cuda))


@pytest.mark.skipif(HAS_CUDA, reason="checks the refusal on a machine without CUDA")
@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:3"])
def test_unavailable_cuda_is_a_clear_error(name: str) -> None:
    with pytest.raises(ProgramError) as exc:
        resolve_device(name)
    text = str(exc.value)
    reason = next(d.reason for d in list_devices() if d.name == "cuda")
    assert f"{name} is unavailable" in text and reason in text and "torch reports: cpu" in text
    with pytest.raises(ProgramError):
        record(load_builtin("two-losses"), device=name)


@pytest.mark.parametrize(("name", "words"), [("gpu", "not a device name"), ("meta", "not a device this")])
def test_unknown_devices_are_refused(name: str, words: str) -> None:
    with pytest.raises(ProgramError, match=words):
        resolve_device(name)


def test_mps_is_offered_only_where_torch_has_it() -> None:
    mps = [d for d in list_devices() if d.name == "mps"]
    built = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_built()
    assert bool(mps) == built
    if not built:
        with pytest.raises(ProgramError, match="mps"):
            resolve_device("mps")


def test_cuda_code_path_with_two_fake_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing and the index checks, with torch told it has two GPUs."""
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: f"Card {i}")
    devices = list_devices()
    assert [(d.name, d.description, d.available) for d in devices[1:3]] == [
        ("cuda:0", "Card 0 (cuda:0)", True),
        ("cuda:1", "Card 1 (cuda:1)", True),
    ]
    assert resolve_device("cuda") == torch.device("cuda", 0)
    assert resolve_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(ProgramError, match="there is no cuda:2"):
        resolve_device("cuda:2")


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize(
    "name",
    ["two-losses", "forgot-retain", "weight-and-input", "higher-derivative", "rnn-no-detach", "logged-loss"],
)
def test_cuda_recording_equals_cpu(name: str) -> None:
    """The same steps, slots, versions and saved bytes as on the CPU; the grads are PyTorch's own on
    the device (a program's random tensors differ: CUDA has its own generator, seeded alike)."""
    program = load_builtin(name)
    on_cpu = record(program)
    on_gpu = record(program, device="cuda")
    assert on_gpu.device == "cuda:0"
    assert [c.error for c in on_gpu.calls] == [c.error for c in on_cpu.calls]
    assert [(s.kind, s.node, s.line, s.loops, s.alive_nodes) for s in on_gpu.timeline.steps] == [
        (s.kind, s.node, s.line, s.loops, s.alive_nodes) for s in on_cpu.timeline.steps
    ]
    assert all(s.device_bytes is not None and s.device_bytes >= 0 for s in on_gpu.timeline.steps)
    assert any(s.device.startswith("cuda") for n in on_gpu.graph.nodes for s in n.tensor_slots if s.device)
    for i in range(len(on_cpu.timeline)):
        cpu, gpu = on_cpu.timeline.state(i), on_gpu.timeline.state(i)
        assert dict(gpu.slots) == dict(cpu.slots)
        assert gpu.step.saved_bytes == cpu.step.saved_bytes
        assert gpu.versions == cpu.versions and gpu.gone == cpu.gone
        assert set(gpu.grads) == set(cpu.grads)
    with torch.device("cuda"):
        plain = run_plainly(program.code)
    check_against_plain(on_gpu, plain)  # errors, failing nodes, every grad after every call


BIG = Program(
    "import torch\n"
    "x = torch.ones(1_000_000, requires_grad=True)\n"
    "y = x.exp().sin()\n"
    "y.sum().backward(retain_graph=True)\n"
    "(y * 3).sum().backward()\n"
)


RETAINED = BIG.with_code(
    BIG.code.replace("(y * 3).sum().backward()", "(y * 3).sum().backward(retain_graph=True)")
)


def big_bytes_freed(rec: Recording) -> int:
    return rec.timeline[rec.calls[0].last_step].saved_bytes - rec.timeline[-1].saved_bytes


def test_the_big_program_frees_four_megabytes_on_cpu() -> None:
    """What the CUDA test below measures on the device, the saved bytes say on any machine."""
    assert RETAINED.code != BIG.code
    assert big_bytes_freed(record(BIG)) >= 4_000_000
    assert big_bytes_freed(record(RETAINED)) == 0


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_cuda_device_bytes_drop_when_buffers_are_freed() -> None:
    """The exp result is held by the graph alone: after the last call, the device holds 4 MB less
    than after the same program whose last call retains the graph (the call's own temporaries and
    gradient buffers are the same in both)."""
    freed = record(BIG, device="cuda").timeline[-1].device_bytes
    kept = record(RETAINED, device="cuda").timeline[-1].device_bytes
    assert kept is not None and freed is not None
    assert kept - freed >= 4_000_000
