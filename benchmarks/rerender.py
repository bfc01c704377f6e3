"""The alternative to stepping: torchviz + Graphviz + SVG re-rendered for every step."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QApplication, QGraphicsScene, QGraphicsView

from benchmarks.common import median

# -- 1b. the alternative: torchviz + Graphviz + SVG per step -------------------------------------------


class SvgViewer:
    """A QGraphicsView showing one SVG, as a user would load torchviz's output."""

    def __init__(self) -> None:
        from PySide6.QtSvg import QSvgRenderer

        self._renderer_type = QSvgRenderer
        self.scene = QGraphicsScene()
        self.view = QGraphicsView(self.scene)
        self.view.resize(1200, 800)
        self.view.show()
        self.renderer: Any = None

    def show(self, svg: bytes) -> None:
        from PySide6.QtSvgWidgets import QGraphicsSvgItem

        self.scene.clear()
        self.renderer = self._renderer_type(QByteArray(svg))
        item = QGraphicsSvgItem()
        item.setSharedRenderer(self.renderer)
        self.scene.addItem(item)
        self.view.fitInView(item, Qt.AspectRatioMode.KeepAspectRatio)
        QApplication.processEvents()
        self.view.viewport().repaint()

    def close(self) -> None:
        self.view.close()
        self.view.deleteLater()


@dataclass
class Rerender:
    times_ms: list[float] = field(default_factory=list)
    timed_out: bool = False  # a dot run hit the cap: the median is a lower bound

    @property
    def median_ms(self) -> float:
        return median(self.times_ms)


def rerender_once(losses: tuple[torch.Tensor, ...], viewer: SvgViewer, timeout_s: float) -> float | None:
    """make_dot(show_saved=True) + ``dot -Tsvg`` + load into the SVG view, in ms; None past the cap."""
    from torchviz import make_dot

    start = time.perf_counter()
    source = make_dot(losses, show_saved=True).source
    try:
        done = subprocess.run(
            ["dot", "-Tsvg"], input=source.encode(), capture_output=True, timeout=timeout_s, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    viewer.show(done.stdout)
    return (time.perf_counter() - start) * 1000


def rerender_samples(count: int, steps: int) -> list[int]:
    """Which steps to re-render: all of them, or ``count`` spread evenly."""
    if steps <= count:
        return list(range(steps))
    return [round(i * (steps - 1) / (count - 1)) for i in range(count)]
