"""The checked language's cost: a ``class Net(nn.Module)`` training loop written once as program text,
run by plain Python, by the evaluator without recording hooks, and recorded, side by side."""

from __future__ import annotations

import gc
import statistics
from dataclasses import dataclass, field
from typing import Any

import torch

from app.core import Program, record
from app.core.recorder.recorder import SEED
from benchmarks.common import BIG_LIMITS, timed
from benchmarks.recording_cost import one_intra_op_thread, run_plainly

LANGUAGE_ITERATIONS = 20


def net_program(iterations: int = LANGUAGE_ITERATIONS) -> Program:
    """A small MLP as a forum snippet writes it: a module class, SGD, a few iterations."""
    code = f"""import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, inputs, hidden):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = Net(4, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 4)
y = torch.randn(32, 1)
for step in range({iterations}):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""
    return Program(code, name=f"net-class-{iterations}", title=f"A Net(nn.Module) trained {iterations} steps")


def run_as_python(program: Program) -> None:
    """The same text as ordinary Python, with the recording's seed. Only ever given this module's
    own constant text (``net_program``), never a program from outside the benchmark."""
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        exec(compile(program.code, f"<{program.name}>", "exec"), {"__name__": "__net__"})


@dataclass
class LanguageCost:
    plain_python_s: list[float] = field(default_factory=list)
    evaluator_s: list[float] = field(default_factory=list)  # run_plainly: the evaluator, no hooks
    record_s: list[float] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        return {
            "plain_python_s": round(statistics.median(self.plain_python_s), 4),
            "evaluator_s": round(statistics.median(self.evaluator_s), 4),
            "record_s": round(statistics.median(self.record_s), 4),
        }


def measure_language(repeats: int, iterations: int = LANGUAGE_ITERATIONS) -> LanguageCost:
    """The three runs interleaved, one intra-op thread (a 2-core machine's thread pool swamps small
    ops with waits), after one warm-up of each."""
    program = net_program(iterations)
    cost = LanguageCost()
    with one_intra_op_thread():
        run_as_python(program)
        run_plainly(program)
        recording = record(program, limits=BIG_LIMITS)
        if recording.failed is not None:
            raise RuntimeError(f"the Net program failed to record: {recording.failed}")
        for _ in range(repeats):
            cost.plain_python_s.append(timed(lambda: run_as_python(program)))
            cost.evaluator_s.append(timed(lambda: run_plainly(program)))
            cost.record_s.append(timed(lambda: record(program, limits=BIG_LIMITS)))
            gc.collect()
    return cost
