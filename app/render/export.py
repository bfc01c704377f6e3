"""Headless export: every step of a program's recording drawn to one file (slides).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as out:
...     [p.name for p in export_steps("forgot-retain", out)][:2]
['step-000.svg', 'step-001.svg']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from PySide6.QtWidgets import QApplication

from app.core.loading import load_program
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.recording.recorder import record
from app.render.layout import layout_graph
from app.render.picture import write_png, write_svg
from app.render.scene import GraphScene
from app.render.style import DEFAULT_PALETTE

__all__ = ["ensure_app", "export_recording", "export_steps", "step_file_name", "step_title"]

Format = Literal["svg", "png"]
_made: list[QApplication] = []  # the QApplication we made, kept alive for the process


def ensure_app() -> QApplication:
    """The running QApplication, or a new one (offscreen when there is no display)."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    if existing is not None:
        raise RuntimeError("a QCoreApplication without widgets is running; cannot draw the graph")
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _made.append(QApplication(["autograd-lens"]))
    return _made[-1]


def step_file_name(index: int, fmt: str) -> str:
    return f"step-{index:03d}.{fmt}"


def step_title(recording: Recording, index: int) -> str:
    step = recording.timeline[index]
    title = f"{recording.program.name} · step {index} of {len(recording.timeline) - 1} · {step.caption}"
    return f"{title}\nPyTorch: {step.error}" if step.error else title


def export_steps(
    program: str | Path | Program,
    out: str | Path,
    *,
    fmt: Format = "svg",
    device: str = "cpu",
    palette: str = DEFAULT_PALETTE,
) -> list[Path]:
    """Record ``program`` (a built-in name, a path or a Program), lay it out once, and draw each
    step to ``out/step-NNN.<fmt>``.

    Raises ``ScenarioError`` for a bad program and ``LayoutError`` when Graphviz fails.
    """
    loaded = program if isinstance(program, Program) else load_program(program)
    return export_recording(record(loaded, device=device), out, fmt=fmt, palette=palette)


def export_recording(
    recording: Recording, out: str | Path, *, fmt: Format = "svg", palette: str = DEFAULT_PALETTE
) -> list[Path]:
    """Lay ``recording`` out once and draw each step to ``out/step-NNN.<fmt>`` (a read ``.lens`` too).

    Raises ``LayoutError`` when Graphviz fails.
    """
    if fmt not in ("svg", "png"):
        raise ValueError(f"format must be 'svg' or 'png', not {fmt!r}")
    layout = layout_graph(recording.graph)
    ensure_app()
    scene = GraphScene(recording, layout, palette=palette)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    write = write_svg if fmt == "svg" else write_png
    files = []
    for index in range(len(recording.timeline)):
        scene.show_state(recording.timeline.state(index))
        files.append(write(scene, folder / step_file_name(index, fmt), title=step_title(recording, index)))
    return files
