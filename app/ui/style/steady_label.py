"""A label whose size, while it shows one recording, only grows, and whose text changes lay nothing out.

# NOTE [steady heights]
Panels that follow the step rewrite their text at every step. A wrapped line
one row shorter than the step before shrinks its label, the layout moves what
is below it, and Qt repaints the whole panel (and, through the window's
layout, more): in a training loop that was most steps (the gradients
panel's leaf views were resized 218 times in 100 steps, and hiding that panel
alone took the window's step p95 from 25-34 ms to 14-16 ms). A steady label
keeps the tallest height it needed since ``release``, its text at the top, so
later steps change only the pixels of the text. At another width (a dragged
splitter, a resized window) the text wraps anew and the label is fitted afresh.

Even a text of the same size costs a layout: ``QLabel.setText`` calls ``updateGeometry``, which
invalidates the layout holding the label, and a turn later that layout is worked out again (each
wrapped label measured anew) and so is every layout above it, up to the dock's scroll area: the
gradients panel asked for 1.1 layouts a step in a training loop, the node details 0.8, the step
counter 1.0. So the text is shown by a :class:`QLabel` of fixed size (Qt skips ``updateGeometry``
for a widget whose minimum and maximum sizes are equal) inside a holder that has no layout: the
holder takes the layout's place in the panel, gives the label its own size, and asks the panel for
a new layout only when the new text needs more room than the holder has.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

__all__ = ["SteadyLabel"]

_REMEASURE = (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.PolishRequest)


class SteadyLabel(QWidget):
    """A plain-text label (word-wrapped unless ``wrap`` is false) that never shrinks until
    :meth:`release`, and whose text changes re-lay out the panel only when they need more room.

    ``label`` is the :class:`QLabel` that shows the text (named ``name``: stylesheets and tests
    find it as a ``QLabel``).
    """

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        *,
        name: str = "",
        wrap: bool = True,
        align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
    ) -> None:
        super().__init__(parent)
        label = self.label = QLabel(text, self)
        label.setObjectName(name)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(wrap)
        label.setAlignment(align)
        label.installEventFilter(self)  # its font and style: measured afresh
        twin = self._measure = QLabel(text)  # no parent, never shown: Qt lays nothing out for it
        twin.setTextFormat(Qt.TextFormat.PlainText)
        twin.setWordWrap(wrap)
        twin.ensurePolished()  # the stylesheet's font first, then the shown label's (_twin)
        self.destroyed.connect(twin.deleteLater)  # a window of its own: deleted with the holder
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(wrap)
        self.setSizePolicy(policy)
        self._floor_width = -1  # the width the kept height was measured at
        self._hint_width = 0  # the widest text's width since release: the hint only grows

    # -- what the panel's layout asks: measured on a twin that no layout holds ------------------------
    def _twin(self) -> QLabel:
        """A hidden label of the same font and text: the shown one, of fixed size, measures every
        text at its own width (Qt widens a label's width to its minimum when measuring)."""
        twin, label = self._measure, self.label
        if twin.font() != label.font():
            twin.setFont(label.font())
        if twin.text() != label.text():
            twin.setText(label.text())
        return twin

    def sizeHint(self) -> QSize:
        hint = self._twin().sizeHint()
        self._hint_width = max(self._hint_width, hint.width())
        return QSize(self._hint_width, hint.height())

    def minimumSizeHint(self) -> QSize:
        return self._twin().minimumSizeHint()

    def hasHeightForWidth(self) -> bool:
        return self.label.wordWrap()

    def heightForWidth(self, width: int) -> int:
        return self._twin().heightForWidth(width)

    # -- the text ----------------------------------------------------------------------------------
    def text(self) -> str:
        return self.label.text()

    def show_text(self, text: str) -> None:
        """Show ``text`` (the label grows to fit it, and stays that tall: NOTE [steady heights])."""
        if text == self.label.text():
            return
        self.label.setText(text)  # of fixed size: Qt lays nothing out for it
        if self._needs_room():
            self.updateGeometry()

    def _needs_room(self) -> bool:
        """Whether the text shown now needs more than the holder has, or a wider hint than it gave."""
        twin, width = self._twin(), self.width()
        if twin.sizeHint().width() > self._hint_width or twin.minimumSizeHint().width() > width:
            return True
        need = twin.heightForWidth(width) if self.label.wordWrap() else twin.sizeHint().height()
        return need > self.height()

    def release(self) -> None:
        """Fit the text again from now on (a new recording: other text, other lengths)."""
        self._hint_width = 0
        if self.minimumHeight():
            self.setMinimumHeight(0)
        self.updateGeometry()

    # -- Qt's events --------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        # The layout gave the holder the height its text needs at this width; keep at least that
        # while the width stays (measured here, from Qt's own layout, rather than by laying the
        # text out once more). At another width the text wraps anew: it is fitted afresh.
        super().resizeEvent(event)
        self.label.setFixedSize(event.size())
        width, height = event.size().width(), event.size().height()
        if width != self._floor_width:
            self._floor_width = width
            if self.minimumHeight():
                self.setMinimumHeight(0)
        elif height > self.minimumHeight():
            self.setMinimumHeight(height)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            return True  # the label's own size changed (set by resizeEvent): nothing to lay out
        return super().event(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.label and event.type() in _REMEASURE:
            self.release()  # another font: other sizes
        return super().eventFilter(watched, event)
