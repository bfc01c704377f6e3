"""Gradients copied out as bytes while a script runs, read as numbers when asked (NOTE [packed values]).

PyTorch is the oracle: every packed value reads back as ``tensor.tolist()`` does.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import math
import pickle
import re
import struct
import textwrap
from pathlib import Path

import pytest
import torch

from app.core.lensfile import LensError, lens_bytes, recording_from_bytes
from app.core.model.recording import Recording
from app.core.model.values import PackedNumbers, Values
from app.core.recorder.grads import values_of
from app.core.recorder.script import record_script


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
    "expanded": lambda: torch.randn(3, 1).expand(3, 4),
    "a leaf that requires grad": lambda: torch.randn(2, 3, requires_grad=True),
    "a result with a graph": lambda: torch.randn(4, requires_grad=True).exp(),
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
    for code in ("i", "e", "z", ""):  # only the codes a .lens file may name, and nothing struct refuses
        with pytest.raises(ValueError):
            PackedNumbers(b"12345678", code)


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


# --- in .lens files (NOTE [packed values in files]) ---


def _recorded(tmp_path: Path) -> Recording:
    script = tmp_path / "odd.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            w = torch.tensor([1.0, -0.0, 3.0], requires_grad=True)
            d = torch.tensor([2.0, 5.0], dtype=torch.float64, requires_grad=True)
            (w * torch.tensor([float("nan"), float("inf"), -1e-45])).sum().backward()
            (d ** 2).sum().backward()
            """
        ),
        encoding="utf-8",
    )
    return record_script(script).recording


def _bits(values: Values) -> bytes:
    return struct.pack(f"{values.numel()}d", *values.flat)


def test_packed_values_are_written_as_their_bytes_and_read_back_exactly(tmp_path: Path):
    recording = _recorded(tmp_path)
    data = json.loads(gzip.decompress(lens_bytes(recording)))
    stored = [v for step in data["steps"] for v in (step.get("grad_changes") or {}).values() if v]
    assert stored and all("packed" in v and "flat" not in v for v in stored)
    assert {v["packed"] for v in stored} == {"f", "d"}
    back = recording_from_bytes(lens_bytes(recording))
    for call in (0, 1):
        for name, values in recording.grads_at_end(call).items():
            read = back.grads_at_end(call)[name]
            assert isinstance(read.flat, PackedNumbers) and read.dtype == values.dtype
            assert _bits(read) == _bits(values)  # NaN, inf, -0.0 and a float32 subnormal, bit for bit
    assert math.isnan(back.grads_at_end(0)["w"].flat[0])


def test_a_version_1_file_with_number_lists_is_read_as_before(tmp_path: Path):
    recording = _recorded(tmp_path)
    data = json.loads(gzip.decompress(lens_bytes(recording)))
    data["version"] = 1
    for step in data["steps"]:
        for table in (step.get("grad_changes"), step.get("contribution")):
            for name, v in (table or {}).items():
                if v and "packed" in v:
                    numbers = Values(tuple(v["shape"]), _unpacked(v))
                    table[name] = {
                        "shape": v["shape"],
                        "flat": [_text(x) for x in numbers.flat],
                        "dtype": v["dtype"],
                    }
    back = recording_from_bytes(json.dumps(data).encode())
    for name, values in recording.grads_at_end(1).items():
        assert _bits(back.grads_at_end(1)[name]) == _bits(values)
        assert not isinstance(back.grads_at_end(1)[name].flat, PackedNumbers)


def _unpacked(v: dict) -> tuple[float, ...]:
    raw = base64.b64decode(v["data"])
    return struct.unpack(f"<{len(raw) // (4 if v['packed'] == 'f' else 8)}{v['packed']}", raw)


def _text(x: float) -> float | str:
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"data": "not base64!"}, "data: it is not base64"),
        ({"data": "é"}, "data: it is not base64"),
        ({"data": base64.b64encode(b"\0" * 5).decode()}, "does not hold"),
        ({"packed": "q"}, "packed: 'q' is not one of d, f"),
        ({"packed": None}, "packed: expected a string"),
        ({"data": 12}, "data: expected a string"),
    ],
)
def test_damaged_packed_values_are_one_clear_error(tmp_path: Path, change: dict, said: str):
    data = json.loads(gzip.decompress(lens_bytes(_recorded(tmp_path))))
    step = next(s for s in data["steps"] if s.get("grad_changes"))
    name = next(iter(step["grad_changes"]))
    step["grad_changes"][name] |= change
    with pytest.raises(LensError, match=re.escape(said)):
        recording_from_bytes(json.dumps(data).encode())
