"""Start the real window; print ``first-paint`` the moment it has painted a graph, and
``graph-ready`` once its graph view draws the recording's graph (then exit).

Used by ``bench.py`` for the start-up number: the parent times from spawning this process to
reading a line, next to spawning ``python -c "import torch"``. The window is started through
the command line's ``gui`` command (the same code path as ``autograd-lens``), with one
application-wide event filter that watches paints. The first picture is either the graph view's
(its viewport painted while its scene draws the whole graph) or a big ``.lens`` file's preview
(``app.ui.graph.graph_preview``, painted while the recording is read: nothing can be stepped until
``graph-ready``). For anything without a preview the two lines come together. Imports here stay
as light as the app's own start: no torch.

    python benchmarks/first_paint.py [PROGRAM]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":  # as `python -m app` does before it imports Qt: the child starts first
    from app.child.client import prestart_for

    prestart_for(sys.argv[1] if len(sys.argv) > 1 else None)

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

GIVE_UP_MS = 60_000
MARK = "first-paint"
READY = "graph-ready"


class FirstGraphPaint(QObject):
    """Prints :data:`MARK` once a graph (or a file's preview of it) is painted, and :data:`READY`
    once a graph view's viewport has painted the recording, then exits."""

    def __init__(self) -> None:
        super().__init__()
        self._pictured = False
        self._done = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self._done or event.type() != QEvent.Type.Paint:
            return False
        if not self._pictured and (_shows_graph(watched) or _shows_preview(watched)):
            self._pictured = True
            QTimer.singleShot(0, _print_mark)  # runs after this paint has completed
        if _shows_graph(watched):
            self._done = True
            QTimer.singleShot(0, _finish)
        return False


def _shows_preview(widget: QObject) -> bool:
    return type(widget).__name__ == "GraphPreview" and getattr(widget, "preview", None) is not None


def _print_mark() -> None:
    print(MARK, flush=True)


def _shows_graph(widget: QObject) -> bool:
    """Whether ``widget`` is a graph view's viewport whose scene, as painted now, draws the whole
    graph: a big graph's scene goes on screen empty and fills in (its overview first)."""
    view = widget.parent() if isinstance(widget, QWidget) else None
    return type(view).__name__ == "GraphView" and bool(getattr(view, "shows_graph", False))


def _finish() -> None:
    print(READY, flush=True)
    os._exit(0)  # skip teardown: the measured moment has passed


def _give_up() -> None:
    print("timeout", flush=True)
    os._exit(1)


def main() -> int:
    program = sys.argv[1] if len(sys.argv) > 1 else "two-losses"
    settings = Path(tempfile.mkdtemp(prefix="lens-bench-")) / "settings.ini"
    os.environ["AUTOGRAD_LENS_SETTINGS"] = str(settings)  # never the user's own settings
    app = QApplication(sys.argv[:1])
    watcher = FirstGraphPaint()
    app.installEventFilter(watcher)
    QTimer.singleShot(GIVE_UP_MS, _give_up)
    from app.cli import main as autograd_lens

    return autograd_lens(["gui", program])  # as the command does: a .lens file is checked, then shown


if __name__ == "__main__":
    raise SystemExit(main())
