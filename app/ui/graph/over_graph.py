"""A column beside the graph: Predict first's question, in the room's sight, never over a node.

In the code column the question sat in a ~100 px scroll box at 1280x720, its choices below the
fold; laid over the top of the graph it covered most of it, the saved tensor the question is about
included, while the call stepped. Now the card stands at the graph page's right edge, as tall as
its text needs (scrolling beyond the page's height), and the graph view gives up that width: the
page's layout keeps the card's column free, so the view shrinks and re-fits (NOTE [auto fit]) in
what is left. The card is in no layout itself, so its text never makes the window ask for more
height than the screen has.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

__all__ = ["MARGIN", "SHARE", "OverGraph"]

SHARE = 0.4  # of the graph page's width at most: the graph keeps the rest
LEAST_PX = 260  # a narrower card wraps a question's words one to a line
MARGIN = 8  # pixels between the card and the page's edges


class OverGraph(QObject):
    """Keeps ``card`` (a frame holding a scroll area) at the right of ``page``, sized to its text,
    and the page's layout clear of it while it is shown."""

    def __init__(self, page: QWidget, card: QFrame, scroll: QScrollArea) -> None:
        super().__init__(page)
        self._page, self._card, self._scroll = page, card, scroll
        card.setParent(page)
        card.setMinimumSize(0, 0)
        scroll.setMinimumHeight(0)
        page.installEventFilter(self)
        card.installEventFilter(self)
        content = scroll.widget()
        if content is not None:
            content.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.LayoutRequest, QEvent.Type.Show, QEvent.Type.Hide) or (
            kind == QEvent.Type.Resize and watched is self._page
        ):
            self.place()
        return False

    def width_for(self, page_width: int) -> int:
        """The card's width in a page ``page_width`` wide."""
        return max(0, min(max(LEAST_PX, int(page_width * SHARE)), page_width // 2) - MARGIN)

    def place(self) -> None:
        """At the right of the page, the height its text needs; the graph keeps the width left."""
        page, card = self._page, self._card
        shown = not card.isHidden()
        width = self.width_for(page.width())
        layout = page.layout()
        if layout is not None:
            right = width + 2 * MARGIN if shown else 0
            if layout.contentsMargins().right() != right:
                layout.setContentsMargins(0, 0, right, 0)
        if not shown:
            return
        margins = card.contentsMargins()
        inner = width - margins.left() - margins.right()
        needed = 0
        content = self._scroll.widget()
        if content is not None:
            content_layout = content.layout()
            needed = (
                content_layout.totalHeightForWidth(inner)
                if content_layout is not None and content_layout.hasHeightForWidth()
                else content.sizeHint().height()
            )
        height = min(needed + margins.top() + margins.bottom() + 4, page.height() - 2 * MARGIN)
        rect = (page.width() - width - MARGIN, MARGIN, width, max(0, height))
        if card.geometry().getRect() != rect:
            card.setGeometry(*rect)
        card.raise_()
