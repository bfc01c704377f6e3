"""What the error panel and the advice panel share: a scrolling body of labels, then edits to offer.

Each edit (:class:`~app.core.lesson.fix.Fix`) is a button over the lines it
changes; a click records the edited program again (the session can undo it).
The edits and their changed lines are found on a pool thread (NOTE [the lesson
off the GUI thread] in ``app/ui/runtime/lesson_worker.py``) and shown when they arrive.
The panel is as tall as its whole text at its width, unless its host caps its
height: then it scrolls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.core.lesson.fix import Fix
from app.ui.panels.proof_marks import checking_label
from app.ui.runtime.lesson_worker import LESSON_DEADLINE_S, LessonWorker
from app.ui.runtime.session import Session

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["FixesPanel", "Lesson", "wrapped_label"]


@dataclass(frozen=True)
class Lesson:
    """What a panel offers for a recording: its edits, the lines each changes, and what else it says."""

    fixes: list[Fix]
    changed: list[str]  # per edit: its removed (-) and added (+) lines, as shown
    said: Any = None  # what the subclass shows besides (the advice's headline and evidence)


def wrapped_label(name: str = "", role: str | None = None) -> QLabel:
    """A selectable, word-wrapped plain-text label named ``name`` (the style sheet's handle)."""
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if role is not None:
        label.setProperty("role", role)
    return label


PROVE_TEXT = "Find fixes (records this program, edited, in the limited child)"
PROVE_TIP = (
    "This recording was read from a file, and reading runs nothing. Each fix is proven by recording "
    "the edited program in the child process, under its time and memory limits, before it is shown."
)


class FixesPanel(QFrame):
    """Labels over edit buttons; ``_on_recording_applied`` / ``_on_step_applied`` / ``find_lesson`` /
    ``_show_lesson`` are the subclass's.

    ``names``: the object names of the body, of the i-th button and of its changed lines
    (``"errorBody", "fix", "fixCode"``: ``fix1``, ``fixCode1``...).
    """

    lesson_shown = Signal()  # the edits found for the recording on screen are shown (maybe none)
    DEADLINE_S = LESSON_DEADLINE_S  # to find (and prove) the edits of one recording

    def __init__(
        self,
        session: Session,
        labels: list[QLabel],
        names: tuple[str, str, str],
        *,
        margins: tuple[int, int],
        vertical: QSizePolicy.Policy,
        spacing: int | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._grows = False  # as tall as its text, never scrolling inside (grow_with_text)
        self._session = session
        self._recording: Recording | None = None
        self._fixes: list[Fix] = []
        self._changed: list[str] = []
        self._names = names
        self._lesson = LessonWorker(type(self).find_lesson, self, type(self).DEADLINE_S)
        self._lesson.ready.connect(self._on_lesson_ready)
        self.fix_buttons: list[QPushButton] = []
        self.fix_codes: list[QLabel] = []  # per edit: the lines it removes (-) and adds (+)
        body = QWidget()
        body.setObjectName(names[0])
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(margins[0], margins[1], margins[0], margins[1])
        if spacing is not None:
            self._layout.setSpacing(spacing)
        for label in labels:
            self._layout.addWidget(label)
        self.checking = checking_label()  # while the edits are recorded: none is offered unproven
        self._layout.addWidget(self.checking)
        self.prove_button = QPushButton(PROVE_TEXT)  # NOTE [a .lens runs nothing]: proofs on request
        self.prove_button.setObjectName("proveFixes")
        self.prove_button.setToolTip(PROVE_TIP)
        self.prove_button.clicked.connect(self._on_prove_clicked)
        self.prove_button.hide()
        self._layout.addWidget(self.prove_button)
        self._scroll = QScrollArea()  # the host may cap the panel's height: it scrolls then
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self._scroll)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)
        self.hide()
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)
        session.cleared.connect(self.hide)  # no recording: no error, no advice

    def _on_recording_applied(self, recording: Recording) -> None:
        raise NotImplementedError

    def _on_step_applied(self, index: int) -> None:
        raise NotImplementedError

    @staticmethod
    def find_lesson(recording: Recording, deadline: float) -> Lesson | None:
        """The lesson of ``recording``, found by ``deadline`` (runs on a pool thread: no widgets)."""
        raise NotImplementedError

    def _show_lesson(self, lesson: Lesson) -> None:
        """Show what the lesson says besides its edits (its edits are shown already)."""

    # -- the lesson, found off the GUI thread ---------------------------------------------
    def _ask_lesson(self, recording: Recording) -> None:
        """Offer no edits until ``recording``'s are found (the last ones were another program's);
        a recording read from a ``.lens`` file's, only when the person asks (they are recorded)."""
        self._fixes, self._changed = [], []
        self._update_fixes()
        if self._session.read_from_file:
            self.checking.hide()
            self.prove_button.show()
            return
        self.prove_button.hide()
        self.checking.show()
        self._lesson.request(recording)

    def _on_prove_clicked(self) -> None:
        if self._recording is None:
            return
        self.prove_button.hide()
        self.checking.show()
        self._lesson.request(self._recording)

    def _on_lesson_ready(self, recording: Recording, lesson: Lesson | None) -> None:
        if recording is not self._recording:
            return
        self.checking.hide()
        if lesson is None:
            return
        self._fixes, self._changed = list(lesson.fixes), list(lesson.changed)
        self._update_fixes()
        self._show_lesson(lesson)
        self.updateGeometry()  # they came after the panel was laid out: its height is new
        self.lesson_shown.emit()

    def fix_layout(self) -> QVBoxLayout:
        """The layout the edits' widgets are in (a subclass adds its own under them)."""
        return self._layout

    def wait_idle(self, msecs: int = 30_000) -> bool:
        """Block until the lesson being found is found (for closing and tests)."""
        return self._lesson.wait_idle(msecs)

    def find_after(self, loading: Callable[[], bool]) -> None:
        """Start finding a lesson only once ``loading()`` is false: the window draws its graph first
        (NOTE [the lesson after the graph] in ``app/ui/runtime/lesson_worker.py``)."""
        self._lesson.wait = loading

    @property
    def lesson_waits(self) -> bool:
        """A lesson asked for waits for the graph to be drawn."""
        return self._lesson.waiting

    # -- its height: the whole text at its width, unless the host caps it (then it scrolls) ----
    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        body = self._scroll.widget()
        if body is None or self.width() <= 0 or body.heightForWidth(self.width()) < 0:
            return hint
        return QSize(hint.width(), body.heightForWidth(self.width()) + 2 * self.frameWidth())

    def grow_with_text(self) -> None:
        """Never scroll inside: as tall as the text at its width, in a host that scrolls itself
        (the memory dock: the advice's own scroll inside the dock's hid its edit two scrolls down)."""
        self._grows = True
        self._scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        if self._grows and not self.isHidden():
            return QSize(super().minimumSizeHint().width(), self.sizeHint().height())
        return super().minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the text wraps anew: another height

    # -- the edits -----------------------------------------------------------------------
    @property
    def fixes(self) -> list[Fix]:
        """The edits offered for the recording on screen."""
        return list(self._fixes)

    def apply_fix(self, index: int) -> None:
        """Replace the program with edit ``index``'s text and record it again (undoable)."""
        recording = self._recording
        if recording is None or not 0 <= index < len(self._fixes):
            return
        self._session.change_program(recording.program.with_code(self._fixes[index].code))

    def _new_fix_widgets(self, i: int) -> tuple[QPushButton, QLabel]:
        """The i-th edit's button and the label of its changed lines (a subclass may restyle them)."""
        button = QPushButton()
        button.setObjectName(f"{self._names[1]}{i + 1}")
        button.clicked.connect(lambda checked=False, i=i: self.apply_fix(i))
        return button, wrapped_label(f"{self._names[2]}{i + 1}", "hint")

    def _show_fix(self, i: int, fix: Fix, button: QPushButton) -> None:
        raise NotImplementedError

    def _update_fixes(self) -> None:
        """One button per edit (reused across recordings), each with the lines it changes below it."""
        while len(self.fix_buttons) < len(self._fixes):
            button, code = self._new_fix_widgets(len(self.fix_buttons))
            self._layout.addWidget(button)
            self._layout.addWidget(code)
            self.fix_buttons.append(button)
            self.fix_codes.append(code)
        for i, (button, code) in enumerate(zip(self.fix_buttons, self.fix_codes, strict=True)):
            fix = self._fixes[i] if i < len(self._fixes) else None
            button.setVisible(fix is not None)
            code.setVisible(fix is not None)
            if fix is not None:
                self._show_fix(i, fix, button)
                code.setText(self._changed[i])
