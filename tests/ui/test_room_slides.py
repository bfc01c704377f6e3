"""Slides for the room: each step a 16:9 picture with the caption, the code with the step's line
marked and the graph; a progress count while they are written and a last line saying where."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage

from app.render.qt.slide import CODE_SHARE, MARK
from app.ui.runtime.settings import AppSettings
from app.ui.window import slides as slides_module
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000


def _colour_share(image: QImage, area: QRect, colour: str) -> float:
    wanted, hits, seen = QColor(colour).rgb(), 0, 0
    for y in range(area.top(), area.bottom(), 3):
        for x in range(area.left(), area.right(), 3):
            seen += 1
            hits += image.pixel(x, y) == wanted
    return hits / max(seen, 1)


def _ink(image: QImage, area: QRect) -> int:
    """Pixels in ``area`` darker than the light theme's page: text drawn there."""
    return sum(
        QColor(image.pixel(x, y)).lightness() < 128
        for y in range(area.top(), area.bottom(), 2)
        for x in range(area.left(), area.right(), 2)
    )


def test_slides_are_16_9_with_caption_code_and_graph_and_say_when_done(qtbot, tmp_path, monkeypatch):
    window = MainWindow(AppSettings(tmp_path / "settings.ini"), "forgot-retain")
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.graph_view is not None, timeout=TIMEOUT)
    recording = window.session.recording
    steps = recording.timeline.steps
    folder = tmp_path / "slides"
    monkeypatch.setattr(slides_module, "ask_export_folder", lambda parent: folder)
    counted: list[tuple[int, int]] = []
    said: list[str] = []
    window.exporter.progress.connect(lambda done, count: counted.append((done, count)))
    window.exporter.wrote.connect(said.append)
    with qtbot.waitSignal(window.slides_exported, timeout=TIMEOUT) as blocker:
        window.commands.export_slides.trigger()
    files = blocker.args[0]
    assert len(files) == len(steps)
    assert counted == [(done, len(steps)) for done in range(len(steps) + 1)]  # 0 before the first
    assert said[-1] == f"Done: {len(steps)} slides written to {folder}"
    assert window.slides_progress.isHidden()
    for path, step in zip(files, steps, strict=True):
        image = QImage(str(path))
        assert image.width() * 9 == image.height() * 16, (path.name, image.size())
        code = QRect(0, 0, int(image.width() * CODE_SHARE), image.height())
        caption = QRect(0, 0, image.width() * 3 // 4, image.height() // 10)
        assert _ink(image, caption) > 100, path.name  # the caption's text
        if step.line is not None and step.kind != "error":
            assert _colour_share(image, code, MARK) > 0.005, path.name  # the step's line marked
        graph = QRect(code.right(), caption.bottom(), image.width() - code.right(), image.height() // 2)
        assert _ink(image, graph) > 0, path.name  # the graph's text and lines
    first, other = QImage(str(files[0])), QImage(str(files[-1]))
    top = QRect(0, 0, first.width() * 3 // 4, first.height() // 10)
    assert first.copy(top) != other.copy(top)  # each its own caption
