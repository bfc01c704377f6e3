"""Speed settings (cuDNN, TF32, matmul precision) accepted, changing nothing a recording shows."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.recorder import record

SETTINGS = """import torch
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.enabled = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision('high')
torch.manual_seed(0)
a = torch.randn(3, 3, requires_grad=True)
(a @ a).sum().backward()
print(a.grad)
"""


def test_settings_change_nothing_the_recording_shows() -> None:
    before = (torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(SETTINGS, "plain.py", "exec"), {})  # the oracle: PyTorch, plainly
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = False, False  # the oracle's, undone
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision(before[1])
    recording = record(Program(SETTINGS))
    assert recording.error is None
    ours = "\n".join(line for step in recording.timeline.steps for line in step.printed)
    assert ours.splitlines() == out.getvalue().splitlines()
    assert (torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision()) == before


def test_a_wrong_precision_raises_what_pytorch_raises() -> None:
    code = "import torch\ntorch.set_float32_matmul_precision(3)\n"
    with pytest.raises(RuntimeError) as plain:
        exec(compile(code, "plain.py", "exec"), {})
    recording = record(Program(code))
    assert recording.error is not None and str(plain.value) in str(recording.error)


@pytest.mark.parametrize(
    "line",
    [
        "torch.backends.cudnn.benchmark = 'yes'",
        "torch.backends.cudnn.version = 1",
        "torch.backends.cuda.matmul.__dict__",
        "torch.backends.cuda.cufft_plan_cache = 1",
        "torch.backends.cudnn.enabled.__class__",
        "x = torch.set_float32_matmul_precision.__globals__",
    ],
)
def test_settings_reach_no_real_module(line: str) -> None:
    with pytest.raises(ProgramError) as refused:
        recording = record(Program(f"import torch\n{line}\n"))
        if recording.error is not None:
            raise recording.error
    assert "python -m app run" in str(refused.value)
