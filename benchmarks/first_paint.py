"""Start the real window and print ``first-paint`` the moment its graph view has painted a graph.

Used by ``bench.py`` for the start-up number: the parent times from spawning this process to
reading that line, next to spawning ``python -c "import torch"``. The window is started through
the command line's ``gui`` command (the same code path as ``autograd-lens``), with one
application-wide event filter that watches for the first paint of a ``GraphView`` viewport that
shows a recording. Imports here stay as light as the app's own start: no torch.

    python benchmarks/first_paint.py [SCENARIO]
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


class FirstGraphPaint(QObject):
    """Prints :data:`MARK` once a graph view's viewport has painted a recording, then exits."""

    def __init__(self) -> None:
        super().__init__()
        self._done = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not self._done and event.type() == QEvent.Type.Paint and _shows_graph(watched):
            self._done = True
            QTimer.singleShot(0, _finish)  # runs after this paint has completed
        return False


def _shows_graph(widget: QObject) -> bool:
    """Whether ``widget`` is a graph view's viewport whose scene, as painted now, draws the whole
    graph: a big graph's scene goes on screen empty and fills in (its overview first)."""
    view = widget.parent() if isinstance(widget, QWidget) else None
    if type(view).__name__ != "GraphView":
        return False
    scene = getattr(view, "graph_scene", None)
    return scene is not None and view.scene() is scene and scene.shows_graph


def _finish() -> None:
    print(MARK, flush=True)
    os._exit(0)  # skip teardown: the measured moment has passed


def _give_up() -> None:
    print("timeout", flush=True)
    os._exit(1)


def main() -> int:
    scenario = sys.argv[1] if len(sys.argv) > 1 else "two-losses"
    settings = Path(tempfile.mkdtemp(prefix="lens-bench-")) / "settings.ini"
    os.environ["AUTOGRAD_LENS_SETTINGS"] = str(settings)  # never the user's own settings
    app = QApplication(sys.argv[:1])
    watcher = FirstGraphPaint()
    app.installEventFilter(watcher)
    QTimer.singleShot(GIVE_UP_MS, _give_up)
    from app.cli import main as autograd_lens

    return autograd_lens(["gui", scenario])  # as the command does: a .lens file is checked, then shown


if __name__ == "__main__":
    raise SystemExit(main())
