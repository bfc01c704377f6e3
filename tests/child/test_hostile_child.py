"""The recording child never loads the compiler stack, whatever the program's ops.

Many meta kernels the size guard runs are PyTorch's Python references wrapped in
``torch._disable_dynamo``: the first call of one imported Dynamo, Inductor and onnx, which leave a
``torchinductor_<user>`` folder in ``$TMPDIR``. The child froze the collector's objects before the
wrappers were disarmed, so they were never found there. Each program goes through ``trace`` (the
child), in a fresh ``$TMPDIR``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPS = {
    "roll": "y = x.roll(1)",
    "logsigmoid": "y = F.logsigmoid(x)",
    "generator": "y = x * torch.randn(4, generator=None)",
    "cumprod": "y = torch.cumprod(x, 0)",
    "randn_like": "y = x + torch.randn_like(x)",
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_trace_imports_no_compiler_for_an_op(tmp_path: Path, name: str) -> None:
    program = tmp_path / "op.py"
    program.write_text(
        "import torch\nimport torch.nn.functional as F\n"
        f"x = torch.ones(4, requires_grad=True)\n{OPS[name]}\ny.sum().backward()\n",
        encoding="utf-8",
    )
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "app", "trace", str(program)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, done.stderr
    assert "backward" in done.stdout
    assert sorted(p.name for p in temporary.iterdir()) == []
