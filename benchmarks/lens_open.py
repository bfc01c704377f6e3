"""Shared recordings: a saved ``.lens`` file opened in a fresh window, against ``import torch``."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core import record
from benchmarks.common import BIG_LIMITS
from benchmarks.programs import (
    chain_program,
)
from benchmarks.startup import startup_marks, torch_import_once

LENS_OPEN_NODES = 5_000


@dataclass
class LensOpen:
    """Seconds to a ``.lens`` file's first painted graph (its preview: lensfile.format's NOTE [picture
    first]), to its graph view drawing the recording (steps can be taken), and ``import torch``
    timed between them."""

    first_s: list[float] = field(default_factory=list)
    ready_s: list[float] = field(default_factory=list)
    torch_import_s: list[float] = field(default_factory=list)
    nodes: int = LENS_OPEN_NODES  # the size of the chain the file holds


def measure_lens_open(
    runs: int, log: Callable[[str], None], nodes: int = LENS_OPEN_NODES, *, time_torch: bool = True
) -> LensOpen:
    """The window spawned on a saved ``.lens`` of the ``nodes``-node chain (nothing recorded, torch
    never imported), alternating with ``python -c "import torch"`` (not with ``time_torch`` False, a
    smoke run's: the report then sets the start-up's imports beside it). The file is written as
    ``trace --save`` writes it, with its layout (layout_store's NOTE [stored layouts]) and its preview."""
    from app.render.layout_store import save_with_layout

    recording = record(chain_program(nodes), limits=BIG_LIMITS)
    path = Path(tempfile.mkdtemp(prefix="lens-bench-")) / f"chain-{nodes}.lens"
    save_with_layout(recording, path)
    log(f"lens open: {len(recording.graph)} nodes, {path.stat().st_size / 1e6:.1f} MB on disk")
    result = LensOpen(nodes=nodes)
    for _ in range(runs):
        if time_torch:
            result.torch_import_s.append(torch_import_once())
        first, ready = startup_marks(str(path))
        result.first_s.append(first)
        result.ready_s.append(ready)
    return result
