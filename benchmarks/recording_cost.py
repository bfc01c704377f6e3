"""Recording cost: ``record`` against the same program through the evaluator alone."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from app.core import Limits, Program, Recording, record
from app.core.language.evaluator import Evaluator
from app.core.language.parsing import parse
from app.core.recorder.recorder import SEED
from benchmarks.common import BIG_LIMITS, median, median_of_ratios, ratio, timed
from benchmarks.programs import (
    chain_spec,
    plain_chain,
)

# -- 2. recording cost -----------------------------------------------------------------------------


def run_plainly(program: Program, limits: Limits = BIG_LIMITS) -> None:
    """The program through the project's evaluator, with the same seed and checks as a recording but
    no hooks, no snapshots, no labels: what ``record`` adds on top of this is the cost of recording."""
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        Evaluator({}, field="program", limits=limits).run(parse(program.code, field="program", mode="exec"))


@dataclass
class RecordCost:
    record_s: list[float] = field(default_factory=list)
    evaluated_s: list[float] = field(default_factory=list)  # run_plainly
    native_s: list[float] = field(default_factory=list)  # plain Python, no evaluator
    record_1t_s: list[float] = field(default_factory=list)  # the same two with one intra-op thread
    evaluated_1t_s: list[float] = field(default_factory=list)

    @property
    def vs_plain(self) -> float:
        return median_of_ratios(self.record_s, self.evaluated_s)

    @property
    def vs_plain_1t(self) -> float:
        return median_of_ratios(self.record_1t_s, self.evaluated_1t_s)

    @property
    def vs_native(self) -> float:
        return ratio(median(self.record_s), median(self.native_s))


@contextmanager
def one_intra_op_thread() -> Iterator[None]:
    """torch's intra-op threads on a busy 2-core machine: an op on 4x8 tensors waits for a second
    core (~400 us instead of ~5 us), which swamps what recording adds. One thread shows it."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def measure_record_cost(
    nodes: int, program: Program, repeats: int, budget_s: float
) -> tuple[RecordCost, Recording]:
    """``record`` vs the same calls run plainly, interleaved; stops repeating once ``budget_s`` is
    spent. Also returns the last recording made."""
    cost = RecordCost()
    native = plain_chain(chain_spec(nodes))
    started = time.perf_counter()
    made: list[Recording] = []
    for _ in range(repeats):
        made[:] = []
        cost.record_s.append(timed(lambda: made.append(record(program, limits=BIG_LIMITS))))
        cost.evaluated_s.append(timed(lambda: run_plainly(program)))
        cost.native_s.append(timed(native))
        with one_intra_op_thread():
            cost.record_1t_s.append(timed(lambda: record(program, limits=BIG_LIMITS)))
            cost.evaluated_1t_s.append(timed(lambda: run_plainly(program)))
        gc.collect()
        if time.perf_counter() - started > budget_s:
            break
    return cost, made[0]
