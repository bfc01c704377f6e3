"""The size guard prices every operation without loading the compiler stack (NOTE [meta runs
without Dynamo]): recording every built-in program (but those that call PyTorch's checkpoint,
which imports Dynamo itself) and a hostile set of ops whose meta kernels are
Python references (and importing the script recorder) imports no ``torch._dynamo``,
``torch._inductor`` or ``onnx``, and leaves no ``torchinductor_*`` folder in a fresh ``$TMPDIR``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.core.lensfile import read_lens
from tests.support.oracle import check_against_plain

ROOT = Path(__file__).resolve().parents[3]

# Each line's meta kernel is a Python reference that promotes dtypes (roll, cumprod, log_sigmoid,
# normal_, uniform_, random_): the first of them imported Dynamo, Inductor and onnx.
HOSTILE = """\
import torch
import torch.nn.functional as F

x = torch.randn(4, requires_grad=True)
y = x.roll(1) + torch.cumprod(x, 0) + F.logsigmoid(x)
z = torch.randn_like(y) + torch.rand_like(y)
g = torch.manual_seed(3)
w = torch.randn(4, generator=g) + torch.rand(4, generator=g) + torch.randint(0, 5, (4,), generator=g)
(y * z * w).sum().backward()
"""

RECORD_ALL = """\
import json, os, sys, torch
seed = torch.manual_seed
from app.core.lensfile import save_lens
from app.core.loading import builtin_names, load_builtin
from app.core.model.program import Program
from app.core.recorder.recorder import record
import app.core.recorder.script  # the script recorder's own set-up builds no Dynamo-wrapped optimizer
# PyTorch's own torch.utils.checkpoint imports Dynamo when it is called (its functions are wrapped
# in torch._disable_dynamo), and Dynamo makes a torchinductor_<user> folder in $TMPDIR: the
# checkpoint built-ins are recorded last, after the count.
later = [name for name in builtin_names() if "checkpoint" in load_builtin(name).code]
errors = {name: record(load_builtin(name)).error for name in builtin_names() if name not in later}
hostile = record(Program(sys.argv[2], name="hostile"))
save_lens(hostile, sys.argv[1])
loaded = sorted(m for m in sys.modules if m.startswith(("torch._dynamo", "torch._inductor", "onnx")))
own_seed, temp = torch.manual_seed is seed, sorted(os.listdir(os.environ["TMPDIR"]))
errors.update({name: record(load_builtin(name)).error for name in later})
print(json.dumps({"loaded": loaded, "errors": errors, "seed": own_seed, "temp": temp}))
"""


def test_recording_loads_no_compiler_and_writes_no_temp_files(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    saved = tmp_path / "hostile.lens"
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-c", RECORD_ALL, str(saved), HOSTILE],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["loaded"] == []
    assert report["seed"] is True  # torch.manual_seed is still PyTorch's own, not Dynamo's wrapper
    assert not [name for name in report["temp"] if name.startswith("torchinductor_")]
    assert report["temp"] == []
    assert set(report["errors"]) >= {
        "two-losses",
        "rnn-no-detach",
        "gan-no-detach",
        "checkpoint-saves-memory",
    }
    hostile = read_lens(saved)
    assert hostile.error is None
    check_against_plain(hostile)  # the same grads as the program run by PyTorch alone
