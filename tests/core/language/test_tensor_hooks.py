"""``t.register_hook(fn)`` with the program's own function, against a plain PyTorch run."""

from __future__ import annotations

import contextlib
import io

import pytest

from app.core.lesson.prove import final_grads
from app.core.model.program import Program
from app.core.recorder.recorder import record

HOOKED = """import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
seen = []
def double(g):
    seen.append(g.sum().item())
    return g * 2
h = x.register_hook(double)
y = (x * x).sum()
y.backward()
print(x.grad, seen)
h.remove()
(x * 3).sum().backward()
m = x * 1
m.register_hook(lambda g: print('m grad', g))
m.register_hook(print)
m.sum().backward()
print(x.grad)
"""

NON_LEAF = """import torch
w = torch.ones(2, 2, requires_grad=True)
a = w * 3
a.register_hook(lambda g: g.clamp(max=0.5))
(a * a).sum().backward()
"""


def _plain(code: str) -> tuple[dict[str, object], list[str]]:
    out = io.StringIO()
    names: dict[str, object] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "plain.py", "exec"), names)  # the oracle: PyTorch and Python, plainly
    return names, out.getvalue().splitlines()


@pytest.mark.parametrize("code", [HOOKED, NON_LEAF], ids=["leaf hooks, removed", "non-leaf hook"])
def test_a_hook_changes_the_grads_as_pytorch_does(code: str) -> None:
    names, printed = _plain(code)
    recording = record(Program(code))
    assert recording.error is None
    grads = final_grads(recording)
    leaf = "x" if "x" in grads else "w"
    assert [float(v) for v in grads[leaf].flat] == names[leaf].grad.flatten().tolist()
    assert [line for step in recording.timeline.steps for line in step.printed] == printed
