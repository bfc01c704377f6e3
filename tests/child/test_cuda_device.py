"""On a real CUDA device: the recording child owns the device, real models record there as they
run plainly there, and a real out-of-memory error is the script's error, not the window's.

Every test here skips without a CUDA device (``tests/core/recorder/test_devices.py`` covers the
listing and the refusals on any machine, and fakes two GPUs for the CUDA branch of the code).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from app.core.loading import load_program
from app.core.recorder.recorder import record
from app.core.report import to_json

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    pytest.mark.skipif(sys.platform == "win32", reason="child recording needs POSIX limits"),
]

ROOT = Path(__file__).resolve().parents[2]


def _without_device_bytes(report: Any) -> Any:
    """A recording's JSON less what depends on the process (the device memory other tensors use)."""
    if isinstance(report, dict):
        return {k: _without_device_bytes(v) for k, v in report.items() if k != "device_bytes"}
    if isinstance(report, list):
        return [_without_device_bytes(v) for v in report]
    return report


@pytest.mark.parametrize("name", ["two-losses", "forgot-retain", "rnn-no-detach", "higher-derivative"])
def test_the_child_records_on_cuda_what_this_process_records(name: str) -> None:
    from app.child.client import ChildPool, record_in_child

    pool = ChildPool()
    try:
        shown = record_in_child(name, "cuda", pool=pool)
    finally:
        pool.close()
    here = record(load_program(name), device="cuda")
    assert shown.device == here.device == "cuda:0"
    assert all(s.device_bytes is not None for s in shown.timeline.steps)
    assert _without_device_bytes(to_json(shown)) == _without_device_bytes(to_json(here))


@pytest.mark.parametrize("name", ["mlp", "transformer", "gan-without-detach", "step-between-backwards"])
def test_a_real_model_recorded_on_cuda_equals_a_plain_run_on_cuda(name: str, tmp_path: Path) -> None:
    """The script under ``torch.device("cuda")`` both times: the recording's calls, errors, failing
    node, engine order and grads after each call equal PyTorch's own, on the device."""
    from app.core.recorder.script import record_script
    from tests.support.oracle import check_against_plain, run_plainly
    from tests.support.real_models import SCRIPTS, entered

    code, failing = SCRIPTS[name]
    path = tmp_path / "script.py"
    path.write_text(code, encoding="utf-8")
    run = record_script(path, device="cuda")
    assert run.exception is None and run.exit_code == 0, run.exception
    rec = run.recording
    assert rec.device == "cuda:0"
    assert any(s.device.startswith("cuda") for n in rec.graph.nodes for s in n.tensor_slots if s.device)
    with torch.device("cuda"):
        plain = check_against_plain(rec, run_plainly(code))
    assert (rec.failed.index if rec.failed else None) == failing
    for index, call in enumerate(plain.calls):
        assert entered(rec, index) == call.entered, f"engine order of call {index}"


OOM_SCRIPT = """\
import torch

x = torch.tensor([1., 2.], requires_grad=True)
y = x.square()
y.sum().backward()
print(x.grad.tolist())
free, total = torch.cuda.mem_get_info()
too_much = torch.empty(total + 2**30, dtype=torch.uint8)
"""


def test_a_real_cuda_out_of_memory_ends_the_script_and_a_fresh_child_records(tmp_path: Path) -> None:
    """The script's own error (its traceback, exit 1) with its recording so far; the next child
    has the whole device again."""
    from app.child.client import ChildPool, record_in_child
    from app.core.lensfile import read_lens

    script = tmp_path / "oom.py"
    script.write_text(OOM_SCRIPT, encoding="utf-8")
    out = tmp_path / "oom.lens"
    done = subprocess.run(
        [sys.executable, "-m", "app", "run", "--device", "cuda", "--out", str(out), str(script)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 1, done.stderr
    assert "[2.0, 4.0]" in done.stdout
    assert "CUDA out of memory" in done.stderr and "oom.py" in done.stderr
    saved = read_lens(out)
    assert saved.device == "cuda:0" and len(saved.calls) == 1 and saved.failed is None
    pool = ChildPool()
    try:
        again = record_in_child("two-losses", "cuda", pool=pool)
    finally:
        pool.close()
    expected = json.dumps(_without_device_bytes(to_json(record(load_program("two-losses"), device="cuda"))))
    assert json.dumps(_without_device_bytes(to_json(again))) == expected
