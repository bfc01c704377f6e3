"""A step that moves the code's marks repaints the rows whose marks changed, not the whole editor
and its line numbers, and what is on screen after it is what a full repaint draws."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QImage, QRegion
from PySide6.QtWidgets import QApplication, QWidget

from tests.support.room_window import training_window

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")


class _Painted(QObject):
    """The region the paints of a widget covered."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.region = QRegion()
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.region += event.region()
        return False


def _on_screen(widget: QWidget) -> QImage:
    """The widget's pixels as the window flushed them (``grab`` would paint it all again)."""
    at = widget.mapTo(widget.window(), QPoint(0, 0))
    grabbed = widget.screen().grabWindow(
        widget.window().winId(), at.x(), at.y(), widget.width(), widget.height()
    )
    return grabbed.toImage()


def test_a_step_repaints_the_rows_whose_marks_moved(qtbot, tmp_path):
    window = training_window(qtbot, tmp_path)
    session, code = window.session, window.code_panel
    viewport, gutter = code.viewport(), code.line_numbers()
    qtbot.waitUntil(lambda: code.filled, timeout=30_000)
    painted = _Painted(viewport)
    partial = 0
    for index in [*range(1, min(session.last_index, 120)), *range(118, 60, -1)]:
        marks = (code.highlighted_lines(), code.previous_line_numbers())
        scroll = code.verticalScrollBar().value()
        painted.region = QRegion()
        session.go_to(index)
        for _ in range(3):
            QApplication.processEvents()
        if (code.highlighted_lines(), code.previous_line_numbers()) == marks:
            continue
        area = sum(r.width() * r.height() for r in painted.region)  # the step's, before the check's
        shown = (_on_screen(viewport), _on_screen(gutter))
        viewport.repaint()
        gutter.repaint()
        assert (_on_screen(viewport), _on_screen(gutter)) == shown, f"step {index}: stale pixels"
        whole = viewport.width() * viewport.height()
        if code.verticalScrollBar().value() == scroll:
            partial += area < whole / 2
    window.session.worker.wait_idle()
    assert partial >= 5  # the marks moved on screen without the whole editor repainted
