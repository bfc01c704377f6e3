"""The error step on the room's smallest screen: at 1280x720 and text 1.5 (and in presentation)
the code shows at least eight lines, and the error panel PyTorch's first sentence and the first
fix's button without scrolling; on a larger screen nothing is folded away."""

from __future__ import annotations

import io
import tokenize

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QWidget

from app.ui.style.breakable import unbroken
from app.ui.window.main_window import MainWindow
from tests.support.room_window import sized_window

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 60_000
LEAST_CODE_LINES = 8


@pytest.fixture
def window(qtbot, tmp_path):
    made_windows: list[MainWindow] = []

    def make(scale: float, program: str, size: tuple[int, int]) -> MainWindow:
        made = sized_window(qtbot, tmp_path, scale, program, size)
        made_windows.append(made)
        return made

    yield make
    for made in made_windows:
        made.session.worker.wait_idle()


def _inside(widget: QWidget, viewport: QWidget) -> bool:
    rect = QRect(widget.mapTo(viewport, QPoint(0, 0)), widget.size())
    return widget.isVisible() and viewport.rect().contains(rect)


def _code_lines(window: MainWindow) -> int:
    edit = window.editor.code_edit
    return edit.viewport().height() // edit.fontMetrics().lineSpacing()


def _words(text: str) -> list[str]:
    return unbroken(text).replace("\u2028", " ").split()


def _caption_whole(window: MainWindow) -> bool:
    """The step's caption, every word of it, in the caption's room without scrolling."""
    state, bar, room = window.session.state(), window.caption_bar, window.stage.caption_room
    assert state is not None
    height = bar.heightForWidth(room.viewport().width())
    fits = room.verticalScrollBar().maximum() == 0 and height <= room.viewport().height()
    return _words(bar.text()) == _words(state.step.caption) and fits


@pytest.mark.parametrize("program", ["gan-no-detach", "forgot-retain"])
@pytest.mark.parametrize("present", [False, True], ids=["window", "F5"])
def test_the_error_step_at_1280x720_and_text_1_5(qtbot, window, present, program):
    shown = window(1.5, program, (1280, 720))
    if present:
        shown.commands.presentation.trigger()
    session, panel = shown.session, shown.error_panel
    assert session.index == session.recording.failed.last_step  # it opens on the error step
    qtbot.waitUntil(lambda: bool(panel.fix_buttons) and panel.fix_buttons[0].isVisible(), timeout=TIMEOUT)
    qtbot.wait(300)
    assert _code_lines(shown) >= LEAST_CODE_LINES
    assert _caption_whole(shown), shown.caption_bar.text()
    viewport = panel._scroll.viewport()
    assert _inside(panel.message_start, viewport)  # PyTorch's first sentence
    assert panel.first_fix_visible()


def test_a_large_screen_folds_nothing_away(qtbot, window):
    shown = window(1.0, "gan-no-detach", (1920, 1080))
    # the editor is made in the turn after the first graph is painted
    qtbot.waitUntil(lambda: shown.editor is not None and shown.editor.heading.isVisible(), timeout=TIMEOUT)
    assert shown.code_column.summary_room.isVisible()
    assert "AddmmBackward0" in shown.error_panel.title.text()


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_gradients_tab_at_1280x720_shows_the_bars_and_each_calls_sum(qtbot, window, scale):
    shown = window(scale, "two-losses", (1280, 720))
    shown.docks.docks["gradients"].raise_()
    session = shown.session
    session.end()
    panel = shown.grad_panel
    qtbot.waitUntil(lambda: panel.isVisible() and "call 2" in panel.history_text("x"), timeout=TIMEOUT)
    qtbot.wait(200)
    scroll = panel.findChild(type(shown.legend_area))
    viewport = scroll.viewport()
    leaf = panel._leaves["x"]
    assert _inside(leaf.value, viewport) and _inside(leaf.history, viewport)  # x.grad and each call's sum
    bars = leaf.bars
    seen = QRect(bars.mapTo(viewport, QPoint(0, 0)), bars.size()).intersected(viewport.rect())
    assert bars.isVisible() and seen.height() >= 40  # the bars, not their top edge


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_memory_advice_shows_its_edit_with_one_scroll_at_most(qtbot, window, scale):
    shown = window(scale, "logged-loss", (1280, 720))
    session = shown.session
    session.end()
    advice = shown.memory_chart.advice
    qtbot.waitUntil(lambda: advice.isVisible() and bool(advice.fix_buttons), timeout=TIMEOUT)
    qtbot.waitUntil(advice.fix_buttons[0].isVisible, timeout=TIMEOUT)
    qtbot.wait(200)
    inner = advice._scroll
    assert inner.verticalScrollBar().maximum() == 0  # the advice itself never scrolls inside the dock
    assert _inside(advice.fix_buttons[0], inner.viewport())  # its edit, whole in the advice
    assert _inside(advice.fix_codes[0], inner.viewport())  # and the lines it changes


def _words(text: str) -> list[tuple[int, int]]:
    """Where each name, number and string of one line of code starts and ends (Python's own
    tokenizer; a line it cannot read alone has none)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    kinds = (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
    return [(t.start[1], t.end[1]) for t in tokens if t.type in kinds and t.start[0] == 1 == t.end[0]]


@pytest.mark.parametrize("program", ["gan-no-detach", "two-losses", "logged-loss"])
def test_code_shows_every_character_and_wraps_between_words(qtbot, window, program):
    """At 1280x720 and text 1.5 the code column holds ~16 characters: every character of the
    program is on screen without scrolling across (the seed's ``retain_graph=True`` too), and a
    line wraps between Python's tokens, never inside a name, number or string that fits a row."""
    shown = window(1.5, program, (1280, 720))
    edit = shown.editor.code_edit
    document = edit.document()
    qtbot.waitUntil(lambda: bool(edit.highlighted_lines()), timeout=TIMEOUT)
    qtbot.wait(200)
    assert edit.horizontalScrollBar().maximum() == 0
    room = edit.viewport().width()
    for number in range(document.blockCount()):
        block = document.findBlockByNumber(number)
        document.documentLayout().blockBoundingRect(block)  # laid out, as when scrolled to
        layout, text = block.layout(), block.text()
        starts = [layout.lineAt(i).textStart() for i in range(1, layout.lineCount())]
        for begin, end in _words(text):
            wide = edit.fontMetrics().horizontalAdvance(text[begin:end]) >= room / 2
            assert wide or not [b for b in starts if begin < b < end], (text, text[begin:end], starts)


@pytest.mark.parametrize("program", ["gan-no-detach", "two-losses", "logged-loss"])
def test_unwrapped_code_lines_keep_their_rows_and_the_marked_statement_is_in_view(qtbot, window, program):
    """With View ▸ Wrap code lines unchecked no line is wrapped into fragments, and the marked line
    is scrolled across to show its statement from its start."""
    shown = window(1.5, program, (1280, 720))
    shown.commands.wrap_code.setChecked(False)
    edit = shown.editor.code_edit
    document = edit.document()
    qtbot.waitUntil(lambda: bool(edit.highlighted_lines()), timeout=TIMEOUT)
    qtbot.wait(200)
    blocks = [document.findBlockByNumber(n) for n in range(document.blockCount())]
    for block in blocks:
        document.documentLayout().blockBoundingRect(block)  # laid out, as when scrolled to
    rows = [block.layout().lineCount() for block in blocks]
    assert set(rows) <= {1}, rows  # every laid-out line is one row
    line = edit.highlighted_lines()[0]
    block = document.findBlockByNumber(line)
    text = block.text()
    first = len(text) - len(text.lstrip())
    shown_part = min(len(text), first + 12)  # its statement's first dozen characters
    cursor = edit.textCursor()
    cursor.setPosition(block.position() + first)
    left = edit.cursorRect(cursor)
    cursor.setPosition(block.position() + shown_part)
    right = edit.cursorRect(cursor)
    room = edit.viewport().rect()
    assert room.contains(left.center()) and room.contains(right.center()), (text, left, right, room)


def _cell_rect(table, row: int, column: int, viewport: QWidget) -> QRect:
    """Where a table cell is drawn, in ``viewport``'s coordinates."""
    rect = table.visualItemRect(table.item(row, column))
    return QRect(table.viewport().mapTo(viewport, rect.topLeft()), rect.size())


@pytest.mark.parametrize(
    ("program", "step"), [("gan-no-detach", None), ("forgot-retain", None), ("two-losses", 8)]
)
def test_the_details_state_column_is_in_view_at_1280x720_and_text_1_5(qtbot, window, program, step):
    """At the error step (or a step that frees a saved tensor, come to from the first, which
    shows no node) the Details panel shows its first saved tensor's state, whole, without
    scrolling the dock or the table: the state PyTorch's recording gives it ("freed")."""
    shown = window(1.5, program, (1280, 720))
    if step is not None:
        shown.session.go_to(step)
    details = shown.node_details
    shown.docks.dock("details").raise_()
    qtbot.waitUntil(lambda: details.isVisible() and details.table.rowCount() > 0, timeout=TIMEOUT)
    qtbot.wait(200)
    state, table = shown.session.state(), details.table
    node = shown.session.recording.graph.node(details.node_id)
    first = next(slot for slot in node.saved if slot.kind == "tensor")
    column = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())].index("State")
    slots = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())].index("Slot")
    row = [table.item(r, slots).text() for r in range(table.rowCount())].index(first.name)
    assert table.item(row, column).text() == state.slots[(node.id, first.name)] == "freed"
    dock_view = shown.docks.dock("details").widget().viewport()
    for viewport in (table.viewport(), dock_view):
        cell = _cell_rect(table, row, column, viewport)
        assert viewport.rect().contains(cell), (viewport.objectName(), cell, viewport.rect())
