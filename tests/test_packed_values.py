"""Gradients copied out as bytes while a script runs, read as numbers when asked (NOTE [packed values]).

PyTorch is the oracle: every packed value reads back as ``tensor.tolist()`` does.
"""

from __future__ import annotations

import copy
import pickle
import struct
import textwrap
from pathlib import Path

import pytest
import torch

from app.core.lens import lens_bytes, recording_from_bytes
from app.core.model.values import PackedNumbers, Values
from app.core.recording.recorder import values_of
from app.core.recording.script import record_script


def _flat(tensor: torch.Tensor) -> list[float]:
    data = tensor.detach()
    return (data.abs() if data.is_complex() else data).reshape(-1).tolist()


TENSORS = {
    "float32": lambda: torch.randn(3, 5),
    "float64": lambda: torch.randn(4, dtype=torch.float64),
    "float16": lambda: torch.randn(2, 3).half(),
    "bfloat16": lambda: torch.randn(7).bfloat16(),
    "complex64": lambda: torch.randn(3, dtype=torch.complex64),
    "int64": lambda: torch.arange(6).reshape(2, 3),
    "bool": lambda: torch.tensor([True, False]),
    "transposed": lambda: torch.randn(3, 4).t(),
    "a slice": lambda: torch.randn(10)[3:8],
    "0-d": lambda: torch.tensor(2.5),
    "empty": lambda: torch.zeros(0, 3),
    "special": lambda: torch.tensor([float("nan"), float("inf"), -0.0, 1e-45]),
}


@pytest.mark.parametrize("make", TENSORS.values(), ids=TENSORS.keys())
def test_values_of_reads_back_as_pytorch_lists_it(make):
    torch.manual_seed(0)
    tensor = make()
    values = values_of(tensor)
    expected = _flat(tensor)
    assert values.shape == tuple(tensor.shape)
    assert values.dtype == str(tensor.dtype).removeprefix("torch.").replace("complex64", "float32")
    assert struct.pack(f"{len(expected)}d", *values.flat) == struct.pack(f"{len(expected)}d", *expected)


def test_a_float_gradient_is_packed_and_reads_its_head_alone():
    tensor = torch.randn(300, 40)
    values = values_of(tensor)
    assert isinstance(values.flat, PackedNumbers)
    assert values.flat[:6] == tuple(_flat(tensor)[:6])
    assert values.flat._numbers is None  # a head or a window reads only its bytes
    assert values.flat[-1] == _flat(tensor)[-1]
    assert values.flat._numbers is not None
    assert values.tolist() == tensor.tolist()


def test_packed_numbers_are_the_tuple_they_hold():
    numbers = (1.0, -2.5, 3.25)
    packed = PackedNumbers(struct.pack("3d", *numbers), "d")
    assert (
        packed == numbers and numbers == packed and packed == PackedNumbers(struct.pack("3f", *numbers), "f")
    )
    assert hash(packed) == hash(numbers)
    assert list(packed) == list(numbers) and packed[1] == -2.5 and packed[::2] == (1.0, 3.25)
    assert Values((3,), packed) == Values((3,), numbers)
    assert hash(Values((3,), packed)) == hash(Values((3,), numbers))
    for copied in (pickle.loads(pickle.dumps(packed)), copy.deepcopy(packed)):
        assert copied == numbers and type(copied) is tuple
    with pytest.raises(ValueError):
        PackedNumbers(b"12345", "f")


def test_a_recorded_model_keeps_its_grads_packed_until_read(tmp_path: Path):
    script = tmp_path / "step.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            from torch import nn

            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
            loss = model(torch.randn(8, 16)).pow(2).mean()
            loss.backward()
            """
        ),
        encoding="utf-8",
    )
    recording = record_script(script).recording
    grads = recording.grads_at_end(0)
    assert all(isinstance(v.flat, PackedNumbers) and v.flat._numbers is None for v in grads.values())
    assert recording.timeline.steps[-1].caption  # captions were written without reading them all
    assert all(v.flat._numbers is None for v in grads.values())

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    model(torch.randn(8, 16)).pow(2).mean().backward()
    plain = {f"model.{name}": p.grad.reshape(-1).tolist() for name, p in model.named_parameters()}
    assert {name: list(v.flat) for name, v in grads.items()} == plain
    assert recording_from_bytes(lens_bytes(recording)).grads_at_end(0) == grads
