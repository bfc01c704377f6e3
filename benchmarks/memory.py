"""Memory: bytes stored per step, the Python heap a recording keeps, and peak RSS of a child process."""

from __future__ import annotations

import gc
import json
import resource
import statistics
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.core import Program, Recording, record
from benchmarks.common import BIG_LIMITS, child_json, keep_none_alive
from benchmarks.programs import (
    chain_program,
)
from benchmarks.steps import application, layout_of, make_graph_view

# -- 5. memory -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepBytes:
    mean: float  # bytes kept per step, averaged over every step
    max: int
    changes_mean: float  # slot + grad entries changed per step
    bytes_per_change: float


def bytes_per_step(recording: Recording) -> StepBytes:
    """Size of what each step stores: its slot_changes entries (dict + key tuples) and the bytes of
    the gradient tensors it keeps (grad_changes, contribution, result)."""
    sizes, changes = [], []
    for step in recording.timeline.steps:
        slot_bytes = sys.getsizeof(dict(step.slot_changes)) + sum(sys.getsizeof(k) for k in step.slot_changes)
        tensors = [*step.grad_changes.values(), *(step.contribution or {}).values()]
        tensors += list((step.result or {}).values())
        grad_bytes = sum(
            sys.getsizeof(t) + sys.getsizeof(t.flat) + 8 * t.numel() for t in tensors if t is not None
        )
        sizes.append(slot_bytes + grad_bytes)
        changes.append(len(step.slot_changes) + len(step.grad_changes))
    total_changes = max(sum(changes), 1)
    return StepBytes(
        mean=statistics.fmean(sizes),
        max=max(sizes),
        changes_mean=statistics.fmean(changes),
        bytes_per_change=sum(sizes) / total_changes,
    )


@dataclass(frozen=True)
class HeapDelta:
    recording: int  # bytes the Recording keeps, right after record()
    after_replay: int  # the same after replaying every step (timeline checkpoints built)


def heap_delta(program: Program) -> HeapDelta:
    """tracemalloc: Python heap kept by one Recording (record's temporaries collected)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        recording = record(program, limits=BIG_LIMITS)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        for index in range(len(recording.timeline)):
            recording.timeline.state(index)
        gc.collect()
        replayed = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del recording
    return HeapDelta(kept, replayed)


def peak_rss_child(nodes: int) -> dict[str, float]:
    """Peak RSS of a fresh process that records, lays out, draws and steps the ``nodes`` program."""
    result: dict[str, float] = child_json("--child-rss", nodes)
    return result


def rss_mb() -> float:
    """Peak resident memory of this process so far, in MB.

    VmHWM from /proc (Linux), which starts afresh at exec; ``ru_maxrss`` does not: a child inherits
    its parent's peak, so a child spawned from a big benchmark process would report the parent's.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child_rss(nodes: int) -> None:
    """(child process) Record, lay out, build the view, visit every step; print peak RSS in MB."""
    application()
    record(chain_program(10))  # torch's lazily imported meta kernels count as start-up, not as the graph
    baseline = rss_mb()
    recording = record(chain_program(nodes), limits=BIG_LIMITS)
    after_record = rss_mb()
    layout = layout_of(recording)
    view = make_graph_view(recording, layout)
    for index in range(len(recording.timeline)):
        keep_none_alive()
        view.show_state(recording.timeline.state(index))
    QApplication.processEvents()
    view.viewport().repaint()
    print(json.dumps({"baseline_mb": baseline, "after_record_mb": after_record, "peak_mb": rss_mb()}))
