"""At the last step of a program that ran without an error but kept old graphs: advice.

Logging the loss tensor (``total_loss += loss``) fails nowhere; the memory
chart's alive-node line just rises. When the recording shows graphs of earlier
iterations kept for nothing (:func:`app.core.lesson.advice.advice_for`), this
panel says so with the numbers and offers the edits, each shown as the lines it
changes; a click records the edited program (the session can undo it), as the
error panel's fixes do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.core.lesson.advice import advice_for
from app.core.lesson.fixes import Fix, changed_lines
from app.ui.session import Session

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["AdvicePanel"]


def _label(name: str, role: str | None = None) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if role is not None:
        label.setProperty("role", role)
    return label


def _dedented(diff: list[str]) -> str:
    """The ``- ``/``+ `` lines without the indentation they share: a narrow dock keeps the code.

    >>> print(_dedented(["-     total += loss", "+     total += loss.item()"]))
    - total += loss
    + total += loss.item()
    """
    bodies = [line[2:] for line in diff]
    indent = min((len(b) - len(b.lstrip(" ")) for b in bodies if b.strip()), default=0)
    return "\n".join(f"{line[:2]}{body[indent:]}" for line, body in zip(diff, bodies, strict=True))


class AdvicePanel(QFrame):
    """Hidden except at the last step of a recording that has advice."""

    advice_shown = Signal()  # it has just come into view: a host may bring it to the front

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._recording: Recording | None = None
        self._fixes: list[Fix] = []
        self.title = _label("adviceTitle")
        self.evidence = _label("adviceEvidence", "hint")
        self.fix_buttons: list[QPushButton] = []
        self.fix_codes: list[QLabel] = []  # per edit: the lines it removes (-) and adds (+)
        body = QWidget()
        body.setObjectName("adviceBody")
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(8, 6, 8, 6)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.title)
        self._layout.addWidget(self.evidence)
        self._scroll = QScrollArea()  # a host may cap its height: it scrolls then
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self._scroll)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.hide()
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    # -- its height: the whole text at its width, unless the host caps it (then it scrolls) ----
    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        body = self._scroll.widget()
        if self.width() <= 0 or body.heightForWidth(self.width()) < 0:
            return hint
        return QSize(hint.width(), body.heightForWidth(self.width()) + 2 * self.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the text wraps anew: another height

    @property
    def fixes(self) -> list[Fix]:
        """The edits offered for the recording on screen (shown at its last step)."""
        return list(self._fixes)

    def apply_fix(self, index: int) -> None:
        """Replace the program with edit ``index``'s text and record it again (undoable)."""
        recording = self._recording
        if recording is None or not 0 <= index < len(self._fixes):
            return
        self._session.change_program(recording.program.with_code(self._fixes[index].code))

    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        advice = advice_for(recording)
        self._fixes = list(advice.fixes) if advice is not None else []
        if advice is not None:
            self.title.setText(f"⚠ {advice.headline}")
            self.evidence.setText(advice.evidence)
        self._update_fixes()
        self._on_step_applied(self._session.index)

    def _on_step_applied(self, index: int) -> None:
        recording = self._recording
        at_end = recording is not None and index == len(recording.timeline) - 1
        show = bool(self._fixes) and at_end
        appearing = show and self.isHidden()
        self.setVisible(show)
        if appearing:
            self.advice_shown.emit()

    def _update_fixes(self) -> None:
        """One button per edit (reused across recordings), each with the lines it changes below it."""
        while len(self.fix_buttons) < len(self._fixes):
            i = len(self.fix_buttons)
            button = QPushButton()
            button.setObjectName(f"advice{i + 1}")
            # its text may be wider than a narrow dock: the labels must still wrap at the dock's width
            button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            button.clicked.connect(lambda checked=False, i=i: self.apply_fix(i))
            code = _label(f"adviceCode{i + 1}", "hint")
            code.setProperty("code", True)  # monospace, as the program is shown
            self._layout.addWidget(button)
            self._layout.addWidget(code)
            self.fix_buttons.append(button)
            self.fix_codes.append(code)
        old = self._recording.program.code if self._recording else ""
        for i, (button, code) in enumerate(zip(self.fix_buttons, self.fix_codes, strict=True)):
            fix = self._fixes[i] if i < len(self._fixes) else None
            button.setVisible(fix is not None)
            code.setVisible(fix is not None)
            if fix is not None:
                short, _, why = fix.title.partition(": ")  # the button stays narrow in a side dock
                button.setText(f"Edit {i + 1}: {short}")
                button.setToolTip(f"{why.capitalize()}. {fix.explanation}" if why else fix.explanation)
                code.setText(_dedented(changed_lines(old, fix.code)))
