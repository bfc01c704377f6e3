"""The stage: the graph keeps its size while captions of any length come and go
(NOTE [the graph keeps its size while stepping] in app/ui/window/stage.py)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QWidget

from app.ui.style.breakable import unbroken
from app.ui.window.stage import CAPTION_SHARE, ERROR_MAX_SHARE, ERROR_SHARE, GRAPH_SHARE, Stage

SHORT = "x.grad is now [2, 4]."
LONG = " ".join(["PowBackward0 ran and released its saved self;"] * 12)
# The stage's own text size: the application's style sheet is whatever an earlier test's window
# left (a theme, a text scale), and a widget's own sheet wins over it.
FIXED_FONT = "QLabel { font-size: 14pt; font-weight: normal; padding: 0px; margin: 0px; }"


def _stage(qtbot, caption: QLabel | None = None, width: int = 800):
    """A stage of plain widgets around ``caption`` (a word-wrapped label when not given)."""
    if caption is None:
        caption = QLabel(SHORT)
        caption.setWordWrap(True)
    counter, graph = QLabel("Step 1 / 9"), QWidget()
    notice, error = QWidget(), QWidget()
    notice.hide()
    error.hide()
    stage = Stage(notice, caption, counter, error, graph)
    stage.setStyleSheet(FIXED_FONT)
    qtbot.addWidget(stage)
    stage.resize(width, 600)
    stage.show()
    qtbot.waitExposed(stage)
    _settle(qtbot)  # the polish of its own style sheet done before the test's first caption
    return stage, caption, counter, graph


def _settle(qtbot):
    """Every posted layout request handled, and the ones they post in turn (a bare wait of 30 ms
    may end before a loaded machine gets to the second round)."""
    for _ in range(4):
        QApplication.sendPostedEvents()
        QApplication.processEvents()
    qtbot.wait(30)


def test_a_shorter_caption_leaves_the_graph_where_it_was(qtbot):
    _stage_widget, caption, _, graph = _stage(qtbot)
    caption.setText(LONG)
    _settle(qtbot)
    after_long = graph.height()
    caption.setText(SHORT)
    _settle(qtbot)
    assert graph.height() == after_long
    assert caption.text() == SHORT


def test_a_long_caption_takes_at_most_its_share_and_scrolls(qtbot):
    stage, caption, _, graph = _stage(qtbot)
    caption.setText(LONG * 4)
    _settle(qtbot)
    room = stage.caption_room
    assert room.height() <= round(stage.height() * CAPTION_SHARE)
    assert room.verticalScrollBar().maximum() > 0  # the rest of the caption is one scroll away
    assert graph.height() > stage.height() / 2


def test_a_wider_stage_measures_the_caption_afresh(qtbot):
    stage, caption, _, _graph = _stage(qtbot)
    caption.setText(LONG)
    _settle(qtbot)
    narrow = stage.caption_room.height()
    stage.resize(1600, 600)
    _settle(qtbot)
    assert stage.caption_room.height() < narrow  # wrapped into fewer lines, and the room shrank


def test_the_caption_bar_is_never_cut_off_below_its_share(qtbot, session):
    """The window's own caption (word-wrapped, height for width): every caption that fits the
    room's share is shown whole, none hidden below a scroll bar."""
    from app.ui.panels.caption_bar import CaptionBar

    caption = CaptionBar(session)
    stage, *_ = _stage(qtbot, caption, width=1000)
    room = stage.caption_room
    for words in (4, 12, 30, 50, 8, 70):
        caption.setText(" ".join(["released"] * words))
        _settle(qtbot)
        need = caption.heightForWidth(room.viewport().width())
        assert need <= round(stage.height() * CAPTION_SHARE)  # each one fits its share
        assert caption.height() <= room.viewport().height(), words  # so nothing is cut off
        assert room.verticalScrollBar().maximum() == 0


def test_the_scroll_bar_stays_while_captions_alternate(qtbot):
    """A caption that scrolls, then short ones: the bar keeps its place until the stage changes
    width, so the caption is not wrapped anew at another width every other step."""
    stage, caption, _, graph = _stage(qtbot)
    room = stage.caption_room
    caption.setText(LONG * 4)
    _settle(qtbot)
    assert room.verticalScrollBar().isVisible()
    width, graph_height = room.viewport().width(), graph.height()
    resizes: list[int] = []
    caption.resizeEvent = lambda event: resizes.append(event.size().width())  # type: ignore[method-assign]
    for text in (SHORT, LONG * 4, SHORT, LONG * 3):
        caption.setText(text)
        _settle(qtbot)
        assert room.verticalScrollBar().isVisible(), text
        assert room.viewport().width() == width
        assert graph.height() == graph_height
    assert set(resizes) <= {width}  # grown or shrunk in height only, never wrapped at another width
    caption.setText(SHORT)
    stage.resize(1600, 600)  # another width: measured afresh, and this caption fits
    _settle(qtbot)
    assert not room.verticalScrollBar().isVisible()
    assert room.verticalScrollBar().maximum() == 0


def test_a_caption_is_measured_again_when_the_counter_beside_it_widens(qtbot):
    """The step counter shares the caption's row: when its text grows (a failed call's
    "… · FAILED"), the caption wraps into more lines and the room grows to show it whole."""
    stage, caption, counter, _ = _stage(qtbot, width=800)
    room = stage.caption_room
    caption.setText(" ".join(["released"] * 14))
    _settle(qtbot)
    wide, lines_before = room.viewport().width(), caption.heightForWidth(room.viewport().width())
    counter.setText("Step 28 / 28 · iteration 2 of 3 · call 2 of 2 · FAILED")
    _settle(qtbot)
    narrow = room.viewport().width()
    assert narrow < wide
    need = caption.heightForWidth(narrow)
    assert need > lines_before  # the same caption, more lines
    assert need <= round(stage.height() * CAPTION_SHARE)  # and it still fits its share
    assert room.viewport().height() >= need  # so it is shown whole
    assert room.verticalScrollBar().maximum() == 0


@pytest.mark.parametrize("words", [8, 20, 33, 47, 60])
def test_a_new_width_measures_the_caption_without_the_old_scroll_bar(qtbot, words):
    """The bar was on (an earlier caption scrolled); at a new width the room fits the caption
    shown now, measured at the width it is shown at, with no blank line left over."""
    stage, caption, _, _ = _stage(qtbot)
    room = stage.caption_room
    caption.setText(LONG * 4)
    _settle(qtbot)
    assert room.verticalScrollBar().isVisible()
    caption.setText(" ".join(["released"] * words))
    _settle(qtbot)
    stage.resize(801, 600)
    qtbot.wait(60)
    need = caption.heightForWidth(room.viewport().width())
    assert room.height() == min(need, round(stage.height() * CAPTION_SHARE))


def _error_panel(lines: int) -> QScrollArea:
    """An error panel as tall as ``lines`` lines of text, scrolling inside, as the window's does."""
    panel = QScrollArea()
    panel.setWidgetResizable(True)
    panel.setWidget(QLabel("\n".join(f"PyTorch says, line {i}" for i in range(lines))))
    return panel


@pytest.mark.parametrize("caption_text", [SHORT, LONG * 4])
def test_the_caption_and_the_error_panel_together_leave_the_graph_half(qtbot, caption_text):
    """NOTE [the graph keeps the stage]: at the projector's text size on 1280x720 the caption took
    0.3 and the error panel 0.4 of the stage, and the graph was left 0.3."""
    caption = QLabel(caption_text)
    caption.setWordWrap(True)
    counter, graph, notice, error = QLabel("Step 8 / 8"), QWidget(), QWidget(), _error_panel(80)
    notice.hide()
    stage = Stage(notice, caption, counter, error, graph)
    stage.setStyleSheet(FIXED_FONT)
    qtbot.addWidget(stage)
    stage.resize(800, 600)
    stage.show()
    qtbot.waitExposed(stage)
    _settle(qtbot)
    height = stage.height()
    assert error.height() >= round(height * ERROR_SHARE)  # its heading and some of the message
    assert error.height() <= round(height * ERROR_MAX_SHARE)
    if stage.header.height() + round(height * ERROR_SHARE) <= height * GRAPH_SHARE:
        assert stage.header.height() + error.height() <= round(height * GRAPH_SHARE)
        assert graph.height() >= height * GRAPH_SHARE - 4 * 4  # the layout's margins and spacing
    else:  # a header past its share: the panel keeps its least, the graph the rest
        assert error.height() == round(height * ERROR_SHARE)
    assert error.verticalScrollBar().maximum() > 0  # the rest of the message is one scroll away


def test_the_graph_stays_put_while_captions_of_any_length_come(qtbot, session):
    """NOTE [caption of fixed lines] in caption_bar.py: from the first step on, captions of one to
    several lines leave the graph where it is; a caption longer than the room is cut with "…" and
    shown whole in its tooltip."""
    from app.core import load_builtin, record
    from app.ui.panels.caption_bar import CaptionBar

    recording = record(load_builtin("rnn-no-detach"))
    caption = CaptionBar(session)
    _stage_widget, _, _, graph = _stage(qtbot, caption, width=500)
    session.apply(recording)
    _settle(qtbot)
    places, wraps, cut = set(), set(), 0
    for index, step in enumerate(recording.timeline.steps):
        session.go_to(index)
        _settle(qtbot)
        places.add(graph.geometry().getRect())
        room = QRect(0, 0, caption.contentsRect().width(), 1 << 20)
        wraps.add(
            QFontMetrics(caption.font()).boundingRect(room, Qt.TextFlag.TextWordWrap, step.caption).height()
        )
        assert caption.caption() == step.caption
        shown, whole = " ".join(unbroken(caption.text()).split()), " ".join(step.caption.split())
        if caption.toolTip():
            cut += 1
            assert caption.toolTip() == step.caption and shown.endswith("…")
            assert whole.startswith(shown[:-1].rstrip()) and len(shown) < len(whole)
        else:
            assert shown == whole
    assert len(wraps) >= 3  # captions of several heights
    assert len(places) == 1
    assert cut > 0  # the longest cut
