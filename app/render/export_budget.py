"""How much an export of every step may write (Qt-free, so the command line reads it cheaply).

An export is bounded before it writes anything: at most :data:`MAX_EXPORT_STEPS` files (one per
step), and at most :data:`MAX_EXPORT_MB` in all, estimated from the first, a middle and the last
step drawn in memory (the graph grows with the steps), and no more than the folder's disk has
free. A program of seven lines makes 150,200 steps of a ~1.6 MB drawing each: unbounded, its
export wrote 1.3 GB in its first minute.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

from app.core.model.errors import UserError

__all__ = ["MAX_EXPORT_MB", "MAX_EXPORT_STEPS", "ExportTooLarge", "check_room"]

MAX_EXPORT_STEPS = 200  # slides: a lesson's deck, not a film of a training run
MAX_EXPORT_MB = 500  # 200 steps of a ~2 MB drawing (a graph of thousands of nodes) fit


class ExportTooLarge(UserError):
    """An export past its budget: ``what`` is ``"steps"``, ``"bytes"`` or ``"disk"``; ``needed``
    and ``limit`` are in files (steps) or bytes (the others). ``written``: the files written before
    it stopped (0 unless the drawings outgrew their estimate)."""

    def __init__(
        self, what: Literal["steps", "bytes", "disk"], needed: int, limit: int, folder: Path, written: int = 0
    ) -> None:
        unit = "files" if what == "steps" else "bytes"
        super().__init__(f"the export needs {needed:,} {unit}; its limit is {limit:,} ({what})")
        self.what, self.needed, self.limit, self.folder, self.written = what, needed, limit, folder, written


def check_room(folder: Path, estimate: int, max_bytes: int) -> None:
    """Raise :class:`ExportTooLarge` when ``estimate`` bytes pass ``max_bytes`` or the free space
    of the disk that holds ``folder`` (or would hold it, once made)."""
    if estimate > max_bytes:
        raise ExportTooLarge("bytes", estimate, max_bytes, folder)
    absolute = folder.absolute()
    existing = next(p for p in (absolute, *absolute.parents) if p.exists())
    free = shutil.disk_usage(existing).free
    if estimate > free:
        raise ExportTooLarge("disk", estimate, free, folder)
