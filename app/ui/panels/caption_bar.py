"""The current step's caption, in large type: the sentence a teacher reads out.

# NOTE [caption of fixed lines]
The caption always takes :data:`CAPTION_LINES` lines: a shorter caption leaves the rest blank, a
longer one is cut at the end of the last line with "…" and shown whole in its tooltip (and read
whole through :meth:`CaptionBar.caption`). Laid out as it came, a caption of one to fourteen
lines moved the graph below it down the first time a longer one came (the stage's room only
grows: stage.py's NOTE [the graph keeps its size while stepping]), and the view following the
run drew its node elsewhere on screen for a reason that had nothing to do with the graph. Two
lines hold the seed's captions whole in a 1280x720 window (66 px at text scale 1, what the
label's own wrapping took for them); a third left the graph less than half the window in the
projector theme, and a height set by a recording's longest captions changed with the caption's
width, which the step counter beside it changes.

# NOTE [a caption that fits asks for no layout]
``QLabel.setText`` posts a layout request to the label's parent at every step (the caption's
room, stage.py's ``CaptionRoom``), which measures the caption again and has the scroll area lay
out its viewport: one layout a step, for a caption that by the note above takes the same lines
at every step. So when the new caption needs no more room than the bar has (its height at its
width, its narrowest width no wider than any it asked for since the room last measured it), the
request it just posted is taken back. Only its own: while another one may be waiting (its width
or font changed, or a caption that needed more room asked) none is taken back until the parent
has had it.

# NOTE [a whole caption on a small screen]
On a small screen for the text size (``screen_fit.is_tight``) the two lines cut most captions: at
1280x720 and text 1.5 the error step's caption (why the call failed: the sentence to read out)
ended "at PowBackward0 (y = x.sq…". There the caption is set a size smaller (``tight`` in the
stylesheet) and takes as many lines as the recording's longest caption needs, at most
:data:`TIGHT_CAPTION_LINES`: still one height for the whole recording, so the graph stays put.

# NOTE [a loop's captions measured once]
A training loop shows the same captions again and again (a 200-iteration loop: 1,604 captions in
2,799 steps, "TBackward0 ran; ..." 400 times), and each one was broken into its lines (a text
layout) and measured by the label (its least width, its height: more layouts) at every step.
Both are kept per caption while the font, the width and the line count stay, the measures per
shown text while the margins stay too: what a layout of the same text in the same font at the
same width gives again.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QResizeEvent, QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.ui.runtime.session import Session
from app.ui.style.breakable import breakable, unbroken

__all__ = ["CAPTION_LINES", "TIGHT_CAPTION_LINES", "CaptionBar", "fixed_lines", "lines_needed"]

CAPTION_LINES = 2
TIGHT_CAPTION_LINES = 4  # the most on a small screen (NOTE [a whole caption on a small screen])
ELLIPSIS = "…"
# between its lines: a line separator, so the label's text stays one paragraph, as when it wrapped
LINE_BREAK = "\u2028"
# lines are broken this much narrower than the label's contents: a selectable label lays its text
# out in a document with a margin of its own, and a line a few pixels too wide wrapped again
SLACK_PX = 12
KEPT = 4096  # captions (and their measures) kept: a long loop's, each a line or two of text


class CaptionBar(QLabel):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._caption = ""  # the whole caption, as the recording words it
        self._most = CAPTION_LINES  # the lines a recording's captions may take (set_tight)
        self._lines = CAPTION_LINES  # the lines this recording's captions take at this width
        self._measured: tuple[object, ...] = ()  # what _lines was measured for
        # NOTE [a caption that fits asks for no layout]: the narrowest width asked for since the
        # parent last laid it out, and whether a layout request may be waiting at the parent
        self._least = -1
        self._asked = True
        self._watched: QWidget | None = None  # the parent whose layout requests it watches
        # NOTE [a loop's captions measured once]: (caption, font, width, lines) -> (text, tip), and
        # (text, width) -> (least width, height at that width), for the font and margins of _sized_for
        self._filled: dict[tuple[str, str, float, int], tuple[str, str]] = {}
        self._sized: dict[tuple[str, int], tuple[int, int]] = {}
        self._sized_for: tuple[object, ...] = ()
        self.setWordWrap(True)  # its lines fit (fixed_lines): it wraps none, and measures them right
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Height for width, never the hint: with a Minimum vertical policy (or without word wrap's
        # height-for-width flag) the caption's scrolling room sized it by its size hint, a wrap at
        # a guessed width, and a three-line caption sat cut off in a two-line room.
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.show_caption("Loading…")  # a program recorded or a .lens file read: the first step replaces it
        session.step_applied.connect(self._on_step_applied)
        session.cleared.connect(lambda: self.show_caption(""))
        session.recording_applied.connect(lambda recording: self._fill())

    def set_tight(self, on: bool) -> None:
        """On a small screen: a size smaller, as many lines as the longest caption needs (NOTE [a
        whole caption on a small screen])."""
        self._most = TIGHT_CAPTION_LINES if on else CAPTION_LINES
        self.setProperty("tight", on)
        self.style().unpolish(self)
        self.style().polish(self)  # the stylesheet's tight font
        self._fill()

    def _on_step_applied(self, index: int) -> None:
        state = self._session.state()
        self.show_caption(state.step.caption if state else "")

    def show_caption(self, caption: str) -> None:
        """Show ``caption`` in :data:`CAPTION_LINES` lines (NOTE [caption of fixed lines])."""
        self._caption = caption
        self._fill()

    def caption(self) -> str:
        """The caption shown, as the recording words it (whole, where the lines cut it)."""
        return self._caption

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._asked, self._least = True, -1  # measured anew at this width
            self._fill()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._asked, self._least = True, -1
            self._sized_for = ()  # another style: other margins, measured afresh
            self._fill()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ParentChange:
            if self._watched is not None:
                self._watched.removeEventFilter(self)
            self._watched = self.parentWidget()
            if self._watched is not None:
                self._watched.installEventFilter(self)
            self._asked = True
        return super().event(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._watched and event.type() == QEvent.Type.LayoutRequest:
            self._asked = False  # the parent has had every request so far
        return super().eventFilter(watched, event)

    def _fill(self) -> None:
        width = max(1, self.contentsRect().width() - 2 * self.margin() - SLACK_PX)
        font, count = self.font(), self._line_count(width)
        key = (self._caption, font.key(), width, count)
        filled = self._filled.get(key)
        if filled is None:
            lines, cut = fixed_lines(breakable(self._caption), font, width, count)
            filled = (LINE_BREAK.join(lines), unbroken(self._caption) if cut else "")
            if len(self._filled) >= KEPT:
                self._filled.clear()
            self._filled[key] = filled
        text, tip = filled
        if text != self.text():
            self._show_text(text)
        if tip != self.toolTip():
            self.setToolTip(tip)

    def _show_text(self, text: str) -> None:
        """Set ``text``, and take back the layout request it posted when it fits (NOTE [a caption
        that fits asks for no layout])."""
        self.setText(text)
        parent = self.parentWidget()
        if parent is None or not self.isVisible():
            return
        least, height = self._measure(text)
        if self._asked or least > self._least or height > self.height():
            self._asked, self._least = True, max(self._least, least)
        else:
            QCoreApplication.removePostedEvents(parent, QEvent.Type.LayoutRequest)

    def _measure(self, text: str) -> tuple[int, int]:
        """The shown ``text``'s least width and its height at the label's width: Qt's, kept per
        text while the font, margins and width stay (NOTE [a loop's captions measured once])."""
        margins, font = self.contentsMargins(), self.font().key()
        config = (font, self.margin(), self.indent(), self.frameWidth(), margins, self.minimumSize())
        if config != self._sized_for:
            self._sized_for, self._sized = config, {}
        key = (text, self.width())
        sized = self._sized.get(key)
        if sized is None:
            if len(self._sized) >= KEPT:
                self._sized.clear()
            sized = self._sized[key] = (self.minimumSizeHint().width(), self.heightForWidth(self.width()))
        return sized

    def _line_count(self, width: int) -> int:
        if self._most <= CAPTION_LINES:
            return CAPTION_LINES
        recording = self._session.recording
        key = (id(recording), width, self.font().key(), self._most)
        if key != self._measured:
            self._measured = key
            timeline = () if recording is None else recording.timeline
            captions = (timeline[index].caption for index in range(len(timeline)))
            self._lines = lines_needed(captions, self.font(), width, CAPTION_LINES, self._most)
        return self._lines


def lines_needed(captions: Iterable[str], font: QFont, width: float, least: int, most: int) -> int:
    """The lines the longest of ``captions`` takes at ``width`` pixels in ``font``, between
    ``least`` and ``most`` (it stops measuring at ``most``)."""
    need = least
    for caption in dict.fromkeys(captions):  # a loop repeats its captions
        while need < most and fixed_lines(breakable(caption), font, width, need)[1]:
            need += 1
        if need >= most:
            break
    return need


def fixed_lines(text: str, font: QFont, width: float, count: int) -> tuple[list[str], bool]:
    """``text`` wrapped at ``width`` pixels in ``font`` into exactly ``count`` lines (blank ones
    after it when short), and whether it was cut: the last line then ends in "…"."""
    layout = QTextLayout(text.replace("\n", LINE_BREAK), font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(option)
    starts: list[int] = []
    layout.beginLayout()
    while (line := layout.createLine()).isValid():
        line.setLineWidth(width)
        starts.append(line.textStart())
    layout.endLayout()
    ends = [*starts[1:], len(text)]
    pieces = [text[a:b].rstrip(" \n" + LINE_BREAK) for a, b in zip(starts, ends, strict=True)]
    if len(pieces) <= count:
        return pieces + [""] * (count - len(pieces)), False
    rest = " ".join(text[starts[count - 1] :].split())
    last = QFontMetricsF(font).elidedText(rest + ELLIPSIS, Qt.TextElideMode.ElideRight, width)
    return [*pieces[: count - 1], last if last.endswith(ELLIPSIS) else last + ELLIPSIS], True
