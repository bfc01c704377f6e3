"""Step latency: the real window and graph view stepping through a recording."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QEventLoop, QObject
from PySide6.QtWidgets import QApplication, QWidget

from app.core import Recording
from benchmarks.common import LAYOUT_TIMEOUT_S, keep_none_alive, timed

# -- 1. step latency -------------------------------------------------------------------------------


def application() -> QApplication:
    keep_none_alive()
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    return QApplication([sys.argv[0]])


def layout_of(recording: Recording) -> Any:
    from app.render.layout import layout_graph

    return layout_graph(recording.graph, timeout_s=LAYOUT_TIMEOUT_S)


def make_graph_view(recording: Recording, layout: Any) -> Any:
    from app.ui.graph.graph_view import GraphView

    keep_none_alive()
    view = GraphView()
    view.resize(1200, 800)
    view.show()
    view.set_model(recording, layout)
    wait_built(view)
    return view


def wait_built(view: Any, timeout_s: float = 3600.0) -> None:
    """Run the event loop until the view has built every item (it builds in slices, off a timer)."""
    deadline = time.perf_counter() + timeout_s
    QApplication.processEvents()
    while getattr(view, "building", False) and time.perf_counter() < deadline:
        QApplication.processEvents()


def backward_steps(recording: Recording) -> list[int]:
    """Every step of the backward calls (everything after the forward step)."""
    return [s.index for s in recording.timeline.steps if s.call is not None]


class PaintCounter(QObject):
    """Counts paint events a widget (the graph view's viewport) receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


@dataclass
class StepTimes:
    """One pass of steps: per-step ms, how many steps painted the graph, and full repaints."""

    ms: list[float] = field(default_factory=list)
    painted: int = 0
    full_frame_ms: list[float] = field(default_factory=list)

    def extend(self, other: StepTimes) -> None:
        self.ms += other.ms
        self.painted += other.painted
        self.full_frame_ms += other.full_frame_ms


def flush_events() -> None:
    """Deliver what a step posted: the scene's change signal, then the viewport's paint of the
    dirty region (two passes: the first posts the update request the second paints)."""
    QApplication.processEvents()
    QApplication.processEvents()


def timed_steps(
    view: Any,
    steps: Iterable[int],
    go: Callable[[int], None],
    full_every: int,
    mark: Callable[[str], None] | None = None,
) -> StepTimes:
    """``go(i)`` then the events it posted, until the graph view has painted, in ms per step. Every
    ``full_every`` steps, also the time of a full repaint of the view (what a pan or zoom costs).
    ``mark``: told ``"full frame"`` before each of those repaints (a heartbeat's phase)."""
    out = StepTimes()
    counter = PaintCounter(view.viewport())
    for n, index in enumerate(steps):
        keep_none_alive()
        before = counter.count
        start = time.perf_counter()
        go(index)
        flush_events()
        out.ms.append((time.perf_counter() - start) * 1000)
        out.painted += counter.count > before
        if n % full_every == 0:
            if mark is not None:
                mark("full frame")
            out.full_frame_ms.append(timed(view.viewport().repaint) * 1000)
    view.viewport().removeEventFilter(counter)
    return out


def step_through_view(view: Any, recording: Recording, steps: Sequence[int]) -> StepTimes:
    """GraphView alone: ``timeline.state(i)`` + ``show_state`` + the paint it causes."""
    timeline = recording.timeline
    return timed_steps(view, steps, lambda i: view.show_state(timeline.state(i)), _full_every(steps))


def _full_every(steps: Sequence[int]) -> int:
    return max(1, len(steps) // 20)  # about 20 full repaints per pass


@dataclass
class Window:
    """The real main window, offscreen, holding one recording (through its Session)."""

    window: Any

    @classmethod
    def open(cls, recording: Recording, layout: Any) -> Window:
        from app.ui.runtime.settings import AppSettings
        from app.ui.window.main_window import MainWindow

        keep_none_alive()
        settings = AppSettings(str(Path(tempfile.mkdtemp(prefix="lens-bench-")) / "settings.ini"))
        window = MainWindow(settings)
        window.resize(1600, 1000)
        window.show()
        QApplication.processEvents()
        window.session.apply(recording, layout)
        wait_built(window.graph_view)
        settle(for_s=0.2)  # the editor's copy of the text comes on a timer once the graph is built
        return cls(window)

    def step_through(self, steps: Sequence[int]) -> StepTimes:
        """``session.go_to(i)`` (what a key press calls) until the graph view has painted."""
        return timed_steps(self.window.graph_view, steps, self.window.session.go_to, _full_every(steps))

    def close(self) -> None:
        self.window.session.worker.wait_idle()
        self.window.hide()  # close() may ask about unsaved edits (a modal dialog)
        self.window.deleteLater()
        settle()


def settle(for_s: float = 0.0) -> None:
    """Deliver what is pending (and, for ``for_s`` seconds, what timers bring)."""
    deadline = time.perf_counter() + for_s
    for _ in range(3):
        QApplication.processEvents()
    while time.perf_counter() < deadline:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)
