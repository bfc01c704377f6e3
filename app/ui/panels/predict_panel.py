"""Predict first: before each autograd call, the room guesses; stepping through the call reveals.

The questions and their answers come from the recording
(:func:`app.core.lesson.predict.questions`); this panel only shows them. It
asks about the call the current step leads into and keeps the room's picks
while the call runs; the answers show once the call's last step is on screen
(its ``call_end``, or the ``error`` that stopped it), never before. Until then
``outcome_hidden`` tells the window to show no hint of how the call ends (the
timeline's ✖), and turning it on at an error step goes back to the call's start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.lesson.predict import Question, questions
from app.ui.runtime.session import Session
from app.ui.style.breakable import breakable_code
from app.ui.style.plain_text import plain

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["ChoiceRow", "PredictPanel", "call_in_focus", "verdict", "why_of"]

BUTTONS_UP_TO = 5  # more choices than this are a drop-down list (a call can reach many nodes)
NO_GUESS = "— pick one —"
PANEL_MIN_LINES = 8  # the questions' least height, in lines of text: a question and its choices


def call_in_focus(recording: Recording, index: int) -> tuple[int, bool] | None:
    """The call step ``index`` leads into (or is inside), and whether its outcome is on screen.

    After the last call, the last call (revealed); None for a program without calls.
    """
    for info in recording.calls:
        if index <= info.last_step:
            return info.index, index == info.last_step
    return (len(recording.calls) - 1, True) if recording.calls else None


def verdict(question: Question, guess: str | None, why: str) -> str:
    """The reveal in plain words: right or wrong, the answer, and why.

    >>> q = Question("Does this call succeed?", ("succeeds", "fails"), "succeeds")
    >>> verdict(q, "fails", "it ran to its end.")
    '✗ Wrong. You said “fails”; the answer is “succeeds”: it ran to its end.'
    >>> verdict(q, "succeeds", "it ran to its end.")
    '✓ Right: “succeeds”: it ran to its end.'
    """
    answer = f"“{question.answer}”"
    because = f": {why}" if why else "."
    if guess is None:
        return f"The answer is {answer}{because}"
    if guess == question.answer:
        return f"✓ Right: {answer}{because}"
    return f"✗ Wrong. You said “{guess}”; the answer is {answer}{because}"


def why_of(recording: Recording, call: int) -> str:
    """What the recording says happened in call ``call``: PyTorch's error's first line, or that it
    ran to its end."""
    info = recording.calls[call]
    if info.error is None:
        return "the call ran to its end without an error."
    first = info.error.strip().splitlines()[0] if info.error.strip() else "an error"
    return f"PyTorch stopped it with “{first}”"


class ChoiceRow(QWidget):
    """One question: its text, the choices (buttons, or a list when long), and the verdict line."""

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        self.text = narrow(plain(QLabel(question.text)))
        self.text.setWordWrap(True)
        self.text.setProperty("role", "title")
        self.verdict = plain(QLabel())
        self.verdict.setWordWrap(True)
        self.verdict.setObjectName("predictVerdict")
        self.verdict.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.addWidget(self.text)
        self.buttons: list[QRadioButton] = []
        self._choices: dict[QRadioButton, str] = {}
        self.labels: list[QLabel] = []  # each button's text, wrapping
        self.combo: QComboBox | None = None
        if len(question.choices) <= BUTTONS_UP_TO:
            self._group = QButtonGroup(self)
            # one choice a line: the questions stand in a column beside the graph, where two
            # choices side by side at text scale 1.5 were wider than the column
            for choice in question.choices:
                button = QRadioButton()
                button.setAccessibleName(choice)
                self._group.addButton(button)
                self.buttons.append(button)
                self._choices[button] = choice
                label = _ChoiceText(choice, button)
                self.labels.append(label)
                layout.addLayout(_choice_line(button, label))
        else:
            self.combo = QComboBox()
            self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            self.combo.setMinimumContentsLength(12)  # long node names are cut in the box, not the column
            self.combo.addItems([NO_GUESS, *question.choices])
            layout.addWidget(self.combo)
        layout.addWidget(self.verdict)

    def choose(self, choice: str) -> None:
        """Pick ``choice`` as the room's guess (what a click does)."""
        if self.combo is not None:
            self.combo.setCurrentText(choice)
            return
        for button in self.buttons:
            if self._choices[button] == choice:
                button.setChecked(True)

    def chosen(self) -> str | None:
        if self.combo is not None:
            text = self.combo.currentText()
            return None if text == NO_GUESS else text
        return next((self._choices[b] for b in self.buttons if b.isChecked()), None)

    def reveal(self, shown: bool, why: str = "") -> None:
        """Show the answer, whether the guess was right and ``why`` (what the recording says),
        or hide it again when stepping back."""
        for widget in (*self.buttons, *self.labels, *([self.combo] if self.combo else [])):
            widget.setEnabled(not shown)
        self.verdict.setVisible(shown)  # empty, it left a line's gap under the choices
        if not shown:
            self.verdict.clear()
            return
        self.verdict.setText(verdict(self.question, self.chosen(), why))


class _ChoiceText(QLabel):
    """A choice's text beside its radio button: it wraps (a gradient's values, a call's long text,
    where a radio button's own text would widen the column), and a click on it picks the choice."""

    def __init__(self, text: str, button: QRadioButton) -> None:
        super().__init__(breakable_code(text))
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        narrow(self)
        self._button = button

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._button.isEnabled() and event.button() == Qt.MouseButton.LeftButton:
            self._button.setChecked(True)
        super().mouseReleaseEvent(event)


def narrow(label: QLabel) -> QLabel:
    """``label`` as narrow as the column beside the graph: a wrapping label's own least width is
    Qt's guess at a pleasant shape (292 px for "AccumulateGrad (made by line 4)" at text 1.5),
    which widened the questions past the column and cut them at its right edge."""
    label.setMinimumWidth(1)
    return label


def _choice_line(button: QRadioButton, label: QLabel) -> QHBoxLayout:
    line = QHBoxLayout()
    line.setContentsMargins(0, 0, 0, 0)
    line.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
    line.addWidget(label, 1)
    return line


class PredictPanel(QFrame):
    """The questions for the call ahead; hidden and idle until :meth:`set_active` turns it on."""

    active_changed = Signal(bool)
    outcome_hidden = Signal(bool)  # the call ahead's outcome is asked, not yet answered: no hints

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("predictPanel")
        self._session = session
        self._active = False
        self._focus: tuple[int, bool] | None = None
        self.rows: list[ChoiceRow] = []
        self.heading = narrow(QLabel())
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setObjectName("predictHeading")
        self.hint = QLabel("Step through the call to see what PyTorch does.")
        self.hint.setProperty("role", "hint")
        self.hint.setWordWrap(True)
        narrow(self.hint)
        # The questions scroll: a call's choices (a model's nodes, gradients) may be taller or wider
        # than the code column of a 1280x720 window, and the window may not grow past the screen.
        content = QWidget()
        content.setObjectName("predictContent")
        self._layout = QVBoxLayout(content)
        self._layout.addWidget(self.heading)
        self._layout.addWidget(self.hint)
        self._layout.addStretch(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # it wraps
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidget(content)
        self.scroll_area.setMinimumHeight(PANEL_MIN_LINES * self.fontMetrics().lineSpacing())
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll_area)
        self.hide()
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)

    @property
    def active(self) -> bool:
        return self._active

    def set_active(self, on: bool) -> None:
        """Predict first on or off (the window's P)."""
        if on == self._active:
            return
        self._active = on
        self.setVisible(on)
        if on:
            self._focus = None
            self._back_from_error()
            self._update()
        else:
            self.outcome_hidden.emit(False)
        self.active_changed.emit(on)

    def _back_from_error(self) -> None:
        """At a failed call's error step, the question would be answered before it is asked: back to
        the call's first step, where nothing on screen says how it ends."""
        recording = self._session.recording
        focus = None if recording is None else call_in_focus(recording, self._session.index)
        if recording is None or focus is None or not focus[1]:
            return
        info = recording.calls[focus[0]]
        if info.error is not None and info.first_step < info.last_step:
            self._session.go_to(info.first_step)

    def toggle(self) -> None:
        self.set_active(not self._active)

    def call_index(self) -> int | None:
        """The call the questions are about, or None."""
        return None if self._focus is None else self._focus[0]

    def revealed(self) -> bool:
        return self._focus is not None and self._focus[1]

    def _on_recording_applied(self, recording: Recording) -> None:
        self._focus = None  # a new recording: new questions, even for the same call number

    def _on_step_applied(self, index: int) -> None:
        if self._active:
            self._update()

    def _update(self) -> None:
        recording = self._session.recording
        focus = None if recording is None else call_in_focus(recording, self._session.index)
        if recording is None or focus is None:
            self._focus = None
            self._set_rows([])
            self.heading.setText("This program makes no backward or autograd.grad call.")
            self.outcome_hidden.emit(False)
            return
        if self._focus is None or focus[0] != self._focus[0]:
            info = recording.calls[focus[0]]
            call = breakable_code(info.call.text)  # a long call wraps at its dots, not off the column
            self.heading.setText(f"Predict call {info.index + 1} (line {info.call.line}): {call}")
            self._set_rows(questions(recording, focus[0]))
        self._focus = focus
        why = why_of(recording, focus[0]) if focus[1] else ""
        for row in self.rows:
            row.reveal(focus[1], why)
        self.outcome_hidden.emit(not focus[1])

    def _set_rows(self, asked: list[Question]) -> None:
        for row in self.rows:
            self._layout.removeWidget(row)
            row.deleteLater()
        self.rows = [ChoiceRow(question) for question in asked]
        for position, row in enumerate(self.rows, start=2):  # after the heading and the hint
            self._layout.insertWidget(position, row)
