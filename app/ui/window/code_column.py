"""The code dock's column: the program's summary over its code.

One code editor: until the editor is made (after the first graph is painted, NOTE [fast start]
in ``main_window.py``) the column holds the code panel alone; then the editor takes the code
panel in, which keeps marking the step that runs.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.ui.editor.code_panel import CodePanel
from app.ui.style.plain_text import plain
from app.ui.window.stage import CaptionRoom

__all__ = ["SUMMARY_LINES", "CodeColumn"]

SUMMARY_LINES = 3  # the program's summary over the editor, at most; it scrolls beyond


class CodeColumn(QWidget):
    """In its dock's scroll area (``docks.py``) a wrapped summary made the column as tall as its
    size hint for the width (608 px in a 392 px dock with Predict's question): the editor ran
    below the dock. It asks for its least height, as it did in a dock of its own: the dock
    scrolls only when it is shorter than that."""

    def __init__(self, code_panel: CodePanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.code_panel = code_panel
        self._editor: QWidget = code_panel  # until the editor adopts it
        self._compact = False
        self.summary = plain(QLabel(""))
        self.summary.setObjectName("programSummary")
        self.summary.setWordWrap(True)
        self.summary.setProperty("role", "hint")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self.summary_room = CaptionRoom(self.summary)  # at most SUMMARY_LINES, scrolling beyond
        self._layout.addWidget(self.summary_room)
        self._layout.addWidget(code_panel, 1)  # until the editor is made around it

    def heightForWidth(self, width: int) -> int:
        return self.minimumSizeHint().height()

    def put_editor(self, editor: QWidget) -> None:
        """Put ``editor`` (made around the code panel) where the code panel was."""
        at = self._layout.indexOf(self.code_panel)
        self._layout.removeWidget(self.code_panel)
        self._layout.insertWidget(at, editor, 1)
        self._editor = editor
        self.set_compact(self._compact)

    def put_under_editor(self, widget: QWidget) -> None:
        """Put ``widget`` right under the editor (the trusted-script offer under a refusal)."""
        self._layout.insertWidget(self._layout.indexOf(self._editor) + 1, widget)

    def set_compact(self, on: bool) -> None:
        """Folded on a small screen (``screen_fit.is_tight``): no summary over the code, the
        program's title only in the editor's tooltip; the code keeps the column."""
        self._compact = on
        self.summary_room.setVisible(not on)
        set_compact = getattr(self._editor, "set_compact", None)
        if set_compact is not None:
            set_compact(on)

    def show_summary(self, text: str) -> None:
        self.summary.setText(text)
        self.summary_room.forget()  # another program's summary: as tall as it needs, up to its limit

    def limit_summary(self) -> None:
        """The program's summary takes at most ``SUMMARY_LINES`` lines over the editor: whole, at text
        1.5 in a 360 px column, it took 6 lines and left the editor 2."""
        self.summary_room.set_limit(SUMMARY_LINES * self.summary.fontMetrics().lineSpacing() + 2)
        self.summary_room.forget()
