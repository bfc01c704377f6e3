"""File > Export torchviz's drawing: ``make_dot``'s own DOT and SVG of the graph before the first backward.

``make_dot`` needs live tensors, which a recording does not keep: the program runs again in
the recording child up to its first autograd call (``app.child.client.torchviz_in_child``),
on a pool thread, so the window keeps answering. A script recorded with ``run`` is plain
Python the limited child does not run: the notice says so. :func:`ask_torchviz_folder` is
the seam tests replace (looked up at call time).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from app.ui.runtime.worker import GcPause

if TYPE_CHECKING:
    from app.core.model.program import Program

__all__ = ["TorchvizExporter", "ask_torchviz_folder"]

log = logging.getLogger(__name__)


def ask_torchviz_folder(parent: QWidget) -> Path | None:
    """A folder for ``torchviz.dot`` and ``torchviz.svg``."""
    path = QFileDialog.getExistingDirectory(parent, "Export torchviz's drawing (make_dot) to a folder")
    return Path(path) if path else None


class TorchvizExporter(QObject):
    """Writes ``make_dot``'s drawing of a program's graph before its first backward to a folder."""

    busy_changed = Signal(bool)
    wrote = Signal(str)  # a status line
    failed = Signal(str)  # a notice for the learner
    _done = Signal(object, object)  # (files or None, message), from a pool thread; queued to this one

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._busy = False
        self._pauses: set[Hashable] = set()  # the GcPause of a run not yet handed over
        self._done.connect(self._on_done)
        self.destroyed.connect(partial(GcPause.release_all, self._pauses))

    @property
    def busy(self) -> bool:
        return self._busy

    def ask_and_export(self, program: Program | None, device: str = "cpu") -> None:
        if program is None:
            self.failed.emit("There is no program to draw yet.")
            return
        folder = ask_torchviz_folder(self._parent)
        if folder is not None:
            self.export(program, folder, device)

    def export(self, program: Program, folder: Path, device: str = "cpu") -> None:
        """Run ``program`` in the child up to its first autograd call; make_dot's files go to ``folder``."""
        if self._busy:
            return
        self._set_busy(True)
        key = ("torchviz", id(self))
        self._pauses.add(key)
        GcPause.hold(key)  # NOTE [no full GC while loading] in app/ui/runtime/worker.py
        self._pool.start(lambda: self._run(program, folder, device))

    def wait_idle(self, msecs: int = 30_000) -> bool:
        return bool(self._pool.waitForDone(msecs))

    def _run(self, program: Program, folder: Path, device: str) -> None:
        # Runs on a pool thread: must never raise, and touches no widget.
        files: list[Path] | None = None
        try:
            from app.child.client import torchviz_in_child
            from app.render.torchviz_export import write_torchviz

            drawn = torchviz_in_child(program, device)
            files = write_torchviz(drawn.source, folder)
            message = f"Wrote {files[-1]}: make_dot's graph before the first backward" + (
                f" ({drawn.note})" if drawn.note else ""
            )
        except Exception as exc:  # a ProgramError, the child failing, Graphviz, the disk
            message = f"torchviz's drawing was not written: {exc}"
        try:
            self._done.emit(files, message)
        except RuntimeError:  # the exporter was deleted meanwhile (window closed)
            log.debug("dropped a torchviz export: its exporter is gone")

    def _on_done(self, files: list[Path] | None, message: str) -> None:
        key = ("torchviz", id(self))
        self._pauses.discard(key)
        GcPause.release(key)
        self._set_busy(False)
        if files is None:
            self.failed.emit(message)
        else:
            self.wrote.emit(message)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
