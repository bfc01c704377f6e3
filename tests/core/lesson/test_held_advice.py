"""Advice for graphs held in an item, an attribute, or inside a function or method.

Each program keeps every iteration's loss somewhere other than a plain name; the recording
must show the graphs kept (NOTE [held is reachable]) and the advice must name the place and
the line, with an edit that is proven by recording the edited program (``prove``), checked
against a plain PyTorch run of the edited text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from app.child.proofs import in_process
from app.core.lesson.advice import advice_for, kept_graphs
from app.core.lesson.edits import changed_lines
from app.core.lesson.prove import prove
from app.core.model.program import Program
from app.core.recorder.recorder import record
from app.core.recorder.script import record_script
from tests.support.alive_oracle import alive_by_python
from tests.support.oracle import run_plainly, same

LOSS = "(w * (i + 1)).square().sum()"
HEAD = "import torch\n\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"

PROGRAMS: dict[str, tuple[str, str, str, str]] = {  # name -> code, place, line, edited line
    "item of a dict": (
        HEAD + "history = {'loss': []}\nfor i in range(3):\n"
        f"    loss = {LOSS}\n    loss.backward()\n    history['loss'].append(loss)\n"
        "print(len(history['loss']))\n",
        "history['loss']",
        "line 8",
        "    history['loss'].append(loss.item())",
    ),
    "attribute in a method": (
        HEAD + "class Tracker:\n    def __init__(self):\n        self.total = 0.0\n\n"
        "    def add(self, v):\n        self.total += v\n\ntracker = Tracker()\nfor i in range(3):\n"
        f"    loss = {LOSS}\n    loss.backward()\n    tracker.add(loss)\nprint(tracker.total)\n",
        "self.total",
        "line 9",
        "        self.total += v.item()",
    ),
    "loop in a function": (
        HEAD + "def train(steps):\n    history = {'loss': []}\n    for i in range(steps):\n"
        f"        loss = {LOSS}\n        loss.backward()\n        history['loss'].append(loss)\n"
        "    return history\n\nh = train(3)\nprint(len(h['loss']))\n",
        "history['loss']",
        "line 9",
        "        history['loss'].append(loss.item())",
    ),
    "attribute at top level": (
        HEAD + "class Log:\n    pass\n\nlog = Log()\nlog.total = 0.0\nfor i in range(3):\n"
        f"    loss = {LOSS}\n    loss.backward()\n    log.total = log.total + loss\nprint(log.total)\n",
        "log.total",
        "line 12",
        "    log.total = log.total + loss.item()",
    ),
}


def _alive_at_end(code: str, tmp_path: Path) -> int:
    """Non-leaf nodes alive when the plain run ends, by the independent oracle."""
    states = alive_by_python(code, str(tmp_path / "plain.py"))
    return sum(states[-1].values()) if states else 0


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_held_graphs_get_advice_naming_the_place_with_a_proven_edit(name: str, tmp_path: Path) -> None:
    code, place, line, edited = PROGRAMS[name]
    broken = record(Program(code))
    assert broken.error is None and kept_graphs(broken) is not None
    advice = advice_for(broken)
    assert advice is not None
    assert f"{line} keeps every iteration's graph alive in {place}" in advice.headline
    item = advice.fixes[0]
    assert item.title.split(":")[0].endswith(f"item() on {line}")
    added = [c for c in changed_lines(code, item.code) if c.startswith("+")]
    assert added == ["+ " + edited]
    for fix in advice.fixes:
        assert prove(broken, fix, in_process(broken)).holds, fix.title
    fixed = record(broken.program.with_code(item.code))
    assert kept_graphs(fixed) is None and advice_for(fixed) is None
    # PyTorch and CPython say the same of the two plain runs: the edit lets the graphs go
    assert _alive_at_end(item.code, tmp_path) < _alive_at_end(code, tmp_path)
    plain = run_plainly(item.code)
    assert same(fixed.grads_at_end(2)["w"], plain.calls[2].grads["w"])
    assert same(fixed.grads_at_end(2)["w"], torch.tensor([28.0, 56.0]))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_script_gets_the_same_advice(name: str, tmp_path: Path) -> None:
    code, place, line, _ = PROGRAMS[name]
    path = tmp_path / "train.py"
    path.write_text(code)
    broken = record_script(path).recording
    advice = advice_for(broken)
    assert advice is not None
    assert f"{line} keeps every iteration's graph alive in {place}" in advice.headline
    path.write_text(advice.fixes[0].code)
    fixed = record_script(path).recording
    assert kept_graphs(fixed) is None
