"""Python's own errors for Python's own mistakes, recorded as the plain run raises them."""

from __future__ import annotations

import contextlib
import io

import pytest

from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.recorder.recorder import record

MISTAKES = {
    "a flag called": "x.requires_grad()",
    "a size called": "x.shape()",
    "no grad yet, called": "x.grad()",
    "an attribute tensors lack": "print(x.gradient)",
    "a method tensors lack": "x.sumz()",
    "a parameter's missing attribute": "torch.nn.Parameter(x).foo",
}


def _plain_error(code: str) -> BaseException:
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(Exception) as raised:
        exec(compile(code, "plain.py", "exec"), {})  # the oracle: Python and PyTorch, plainly
    return raised.value


@pytest.mark.parametrize("line", MISTAKES.values(), ids=MISTAKES.keys())
def test_the_recording_ends_with_pythons_own_error(line: str) -> None:
    code = f"import torch\nx = torch.ones(3, requires_grad=True)\n{line}\n"
    plain = _plain_error(code)
    recording = record(Program(code))
    assert recording.error is not None
    assert str(plain) in str(recording.error)
    assert recording.timeline.steps[-1].line == 3  # the program's line raised, as in the plain run


def test_the_program_can_catch_them_as_python_does() -> None:
    code = (
        "import torch\nx = torch.ones(3, requires_grad=True)\nseen = []\n"
        + "".join(
            f"try:\n    {line}\nexcept (TypeError, AttributeError) as e:\n    seen.append(str(e))\n"
            for line in MISTAKES.values()
        )
        + "print(seen)\n"
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "plain.py", "exec"), {})
    recording = record(Program(code))
    assert recording.error is None
    assert [line for step in recording.timeline.steps for line in step.printed] == out.getvalue().splitlines()


@pytest.mark.parametrize(
    "line",
    ["x.__dict__", "x._version", "x.untyped_storage()", "x.data_ptr()", "x.__class__", "x.storage"],
)
def test_names_programs_never_read_stay_refused(line: str) -> None:
    code = f"import torch\nx = torch.ones(3)\n{line}\n"
    with pytest.raises(ProgramError) as refused:
        recording = record(Program(code))
        if recording.error is not None:
            raise recording.error
    assert "python -m app run" in str(refused.value)


SUPER_READ = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__
        self.conv = nn.Linear(2, 2)
model = Net()
"""


def test_super_init_read_without_a_call_is_pythons_no_op() -> None:
    plain = _plain_error(SUPER_READ)
    recording = record(Program(SUPER_READ))
    assert recording.error is not None and str(plain) in str(recording.error)


@pytest.mark.parametrize(
    "line",
    ["super().__init__.__func__", "super().__init__.__globals__", "super().__class__", "super().__dict__"],
)
def test_super_opens_no_other_dunder(line: str) -> None:
    code = SUPER_READ.replace("super(Net, self).__init__", f"super().__init__()\n        {line}")
    with pytest.raises(ProgramError) as refused:
        recording = record(Program(code))
        if recording.error is not None:
            raise recording.error
    assert "python -m app run" in str(refused.value)
