"""Headless export: every step of a program's recording drawn to one file (slides).

An export is bounded before it writes anything (``app.render.export_budget``).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as out:
...     [p.name for p in export_steps("forgot-retain", out)][:2]
['step-000.svg', 'step-001.svg']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Literal

from PySide6.QtWidgets import QApplication

from app.core.loading import load_program
from app.core.model.program import Program
from app.core.model.recording import Recording
from app.core.recorder.recorder import record
from app.render.export_budget import MAX_EXPORT_MB, MAX_EXPORT_STEPS, ExportTooLarge, check_room
from app.render.layout import layout_graph
from app.render.qt.picture import svg_bytes
from app.render.qt.scene import GraphScene
from app.render.style import DEFAULT_PALETTE

__all__ = [
    "ensure_app",
    "export_recording",
    "export_steps",
    "step_file_name",
    "step_title",
    "write_steps",
]

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

    Raises ``ProgramError`` for a bad program and ``LayoutError`` when Graphviz fails.
    """
    loaded = program if isinstance(program, Program) else load_program(program)
    return export_recording(record(loaded, device=device), out, fmt=fmt, palette=palette)


def export_recording(
    recording: Recording,
    out: str | Path,
    *,
    fmt: Format = "svg",
    palette: str = DEFAULT_PALETTE,
    max_steps: int = MAX_EXPORT_STEPS,
    max_bytes: int = MAX_EXPORT_MB * 1_000_000,
) -> list[Path]:
    """Lay ``recording`` out once and draw each step to ``out/step-NNN.<fmt>`` (a read ``.lens`` too).

    Raises :class:`ExportTooLarge`, before writing anything, past ``max_steps`` files or an
    estimate past ``max_bytes`` or the disk's free space; ``LayoutError`` when Graphviz fails;
    ``OSError`` (saying why) when a file cannot be written.
    """
    if fmt not in ("svg", "png"):
        raise ValueError(f"format must be 'svg' or 'png', not {fmt!r}")
    if len(recording.timeline) > max_steps:  # before Graphviz runs
        raise ExportTooLarge("steps", len(recording.timeline), max_steps, Path(out))
    layout = layout_graph(recording.graph)
    ensure_app()
    scene = GraphScene(recording, layout, palette=palette)
    return list(write_steps(recording, scene, Path(out), fmt, max_steps=max_steps, max_bytes=max_bytes))


def write_steps(
    recording: Recording,
    scene: GraphScene,
    folder: Path,
    fmt: Format,
    *,
    max_steps: int = MAX_EXPORT_STEPS,
    max_bytes: int = MAX_EXPORT_MB * 1_000_000,
    slide: Callable[[int], bytes] | None = None,
) -> Iterator[Path]:
    """Draw each step of ``recording`` on ``scene`` and write it to ``folder/step-NNN.<fmt>``, a file
    per ``next()``: the command line's export and the window's slides, one budget for both.
    ``slide``: how a step is drawn instead of the graph alone; a PNG is a slide
    (``app.render.qt.slide``) unless said otherwise, an SVG the graph with its caption.

    The first ``next()`` raises :class:`ExportTooLarge` before anything is written, past
    ``max_steps`` files or an estimate past ``max_bytes`` or the disk's free space; a later one,
    when the drawings outgrow the estimate.
    """
    steps = len(recording.timeline)
    if steps > max_steps:
        raise ExportTooLarge("steps", steps, max_steps, folder)
    draw: Callable[..., bytes] = svg_bytes
    if fmt == "png" and slide is None:  # a 16:9 slide, as the window's: caption, code and graph
        from app.render.qt.slide import slide_png

        slide = partial(slide_png, recording, scene)

    def drawn(index: int) -> bytes:
        if slide is not None:
            return slide(index)
        scene.show_state(recording.timeline.state(index))
        return draw(scene, title=step_title(recording, index))

    estimate = steps * max(len(drawn(i)) for i in {0, steps // 2, steps - 1})
    check_room(folder, estimate, max_bytes)
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for index in range(steps):
        data = drawn(index)
        total += len(data)
        if total > max_bytes:  # steps drawn larger than the ones the estimate drew
            raise ExportTooLarge("bytes", total * steps // (index + 1), max_bytes, folder, index)
        path = folder / step_file_name(index, fmt)
        path.write_bytes(data)
        yield path
