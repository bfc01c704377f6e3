"""A card over the top of the graph: Predict first's question, in the room's sight.

In the code column the question sat in a ~100 px scroll box at 1280x720, its choices below the
fold; over the graph it is as wide as the graph and up to :data:`SHARE` of its height, in
caption-size type (``00-base.qss``), scrolling beyond. It is no part of the page's layout, so
its text never makes the window ask for more height than the screen has.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

__all__ = ["SHARE", "OverGraph"]

SHARE = 0.7  # of the graph's height at most: the node it asks about stays in sight below
MARGIN = 8  # pixels between the card and the graph's edges


class OverGraph(QObject):
    """Keeps ``card`` (a frame holding a scroll area) at the top of ``page``, sized to its text."""

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
        if kind in (QEvent.Type.LayoutRequest, QEvent.Type.Show) or (
            kind == QEvent.Type.Resize and watched is self._page
        ):
            self.place()
        return False

    def place(self) -> None:
        """Over the top of the page: its width, and the height its text needs up to :data:`SHARE`."""
        page, card = self._page, self._card
        width = max(0, page.width() - 2 * MARGIN)
        content = self._scroll.widget()
        inner = width - card.contentsMargins().left() - card.contentsMargins().right()
        needed = 0
        if content is not None:
            layout = content.layout()
            needed = (
                layout.totalHeightForWidth(inner)
                if layout is not None and layout.hasHeightForWidth()
                else content.sizeHint().height()
            )
        margins = card.contentsMargins()
        height = min(needed + margins.top() + margins.bottom() + 4, int(page.height() * SHARE))
        if card.geometry().getRect() != (MARGIN, MARGIN, width, height):
            card.setGeometry(MARGIN, MARGIN, width, height)
        card.raise_()
