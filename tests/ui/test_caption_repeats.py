"""NOTE [a loop's captions measured once] in caption_bar.py: a caption shown again, in the same
font at the same width, shows the lines it showed, and one in another font or at another width
is broken and measured afresh."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from app.ui.panels.caption_bar import CAPTION_LINES, LINE_BREAK, SLACK_PX, CaptionBar, fixed_lines
from app.ui.style.breakable import breakable
from tests.support.holder import shown_in_holder

CAPTIONS = [
    "TBackward0 ran; it saved no tensors, so there was nothing to free.",
    "MseLossBackward0 (loss = loss_fn(model(x), y)) ran and released its saved self and target.",
    "x.grad is now [2, 4].",
    " ".join(["PowBackward0 ran and released its saved self;"] * 6),  # cut: its tooltip holds it
]


def _expected(caption: CaptionBar, text: str) -> tuple[str, int, int]:
    """What the bar should show for ``text`` (broken into lines anew, in its font at its width),
    and that text's least width and height as a fresh label of the bar's kind measures them."""
    width = max(1, caption.contentsRect().width() - 2 * caption.margin() - SLACK_PX)
    shown = LINE_BREAK.join(fixed_lines(breakable(text), caption.font(), width, CAPTION_LINES)[0])
    fresh = QLabel()
    fresh.setWordWrap(True)
    fresh.setTextFormat(Qt.TextFormat.PlainText)
    fresh.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    fresh.setFont(caption.font())
    fresh.setText(shown)
    return shown, fresh.minimumSizeHint().width(), fresh.heightForWidth(caption.width())


def test_a_caption_shown_again_shows_and_measures_as_a_fresh_one(qtbot, session):
    caption = CaptionBar(session)
    holder = shown_in_holder(qtbot, caption, 520, 200)
    seen: set[tuple[str, int]] = set()
    for round_ in range(3):
        if round_ == 1:  # another font: other lines, other sizes
            font = caption.font()
            font.setPointSizeF(font.pointSizeF() * 1.4)
            caption.setFont(font)
        if round_ == 2:  # another width
            holder.resize(380, 200)
            qtbot.wait(20)
        for text in CAPTIONS * 2:
            caption.show_caption(text)
            shown, least, height = _expected(caption, text)
            assert caption.text() == shown, (round_, text)
            assert caption._measure(shown) == (least, height), (round_, text)
            seen.add((shown, caption.font().pointSize()))
    assert len(seen) >= 2 * len(CAPTIONS)  # the font's lines differ from the first ones
