"""After a fix, the lines it wrote are tinted in the editor for a moment: the room sees what
changed. Measured on the window's pixels, against a line diff of the two programs."""

from __future__ import annotations

import difflib

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QTextCursor

from app.ui.editor.code_panel import CHANGED_HUE
from app.ui.runtime.settings import AppSettings
from app.ui.style.theme import tint_colour
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000


def _written(old: str, new: str) -> list[int]:
    """1-based lines of ``new`` that ``old`` did not have."""
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    return [
        line + 1
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag in ("insert", "replace")
        for line in range(start, end)
    ]


def _line_colour(panel, line: int) -> QColor:
    """The colour at the right end of 1-based ``line`` in the code panel, as painted (scrolled
    into view first)."""
    block = panel.document().findBlockByNumber(line - 1)
    rect = panel.cursorRect(QTextCursor(block))
    if not panel.viewport().rect().contains(rect):
        panel.setTextCursor(QTextCursor(block))
        panel.centerCursor()
        rect = panel.cursorRect(QTextCursor(block))
    assert panel.viewport().rect().contains(rect.center())
    image = panel.viewport().grab().toImage()
    y = rect.center().y() * image.height() // panel.viewport().height()  # device pixels
    row = [image.pixel(QPoint(x, y)) for x in range(image.width())]
    return QColor(max(set(row), key=row.count))  # the line's background, not its letters


def test_a_fix_tints_the_lines_it_wrote(qtbot, tmp_path):
    window = MainWindow(AppSettings(tmp_path / "settings.ini"), "rnn-no-detach")
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=TIMEOUT):
        window.start()
    qtbot.waitUntil(lambda: window.editor is not None and window.graph_view is not None, timeout=TIMEOUT)
    session = window.session
    before = session.recording.program.code
    session.end()
    qtbot.waitUntil(lambda: bool(window.error_panel.fix_buttons), timeout=TIMEOUT)
    with qtbot.waitSignal(session.recording_applied, timeout=TIMEOUT):
        window.error_panel.fix_buttons[0].click()
    after = session.recording.program.code
    written = _written(before, after)
    assert written and "detach" in after.splitlines()[written[0] - 1]
    panel = window.code_panel
    qtbot.waitUntil(lambda: panel.flashed_lines() == written, timeout=TIMEOUT)
    tint = tint_colour(panel.palette(), CHANGED_HUE).name()
    step_line = session.state().step.line
    shown = [line for line in written if line != step_line]  # the step's own mark paints over it
    assert shown
    qtbot.waitUntil(lambda: _line_colour(panel, shown[0]).name() == tint, timeout=TIMEOUT)
    untouched = next(n for n in range(1, len(after.splitlines()) + 1) if n not in written and n != step_line)
    assert _line_colour(panel, untouched).name() != tint
    qtbot.waitUntil(lambda: panel.flashed_lines() == [], timeout=TIMEOUT)  # a moment, then gone
    assert _line_colour(panel, shown[0]).name() != tint
    window.close()
