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

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QWidget

from app.ui.panels.fixes_panel import FixesPanel, Lesson, wrapped_label
from app.ui.panels.proof_marks import PROOF_DEADLINE_S
from app.ui.runtime.session import Session
from app.ui.style.plain_text import plain_tip

if TYPE_CHECKING:
    from app.core.lesson.fix import Fix
    from app.core.model.recording import Recording

__all__ = ["AdvicePanel"]


def _dedented(diff: list[str]) -> str:
    """The ``- ``/``+ `` lines without the indentation they share: a narrow dock keeps the code.

    >>> print(_dedented(["-     total += loss", "+     total += loss.item()"]))
    - total += loss
    + total += loss.item()
    """
    bodies = [line[2:] for line in diff]
    indent = min((len(b) - len(b.lstrip(" ")) for b in bodies if b.strip()), default=0)
    return "\n".join(f"{line[:2]}{body[indent:]}" for line, body in zip(diff, bodies, strict=True))


class AdvicePanel(FixesPanel):
    """Hidden except at the last step of a recording that has advice."""

    advice_shown = Signal()  # it has just come into view: a host may bring it to the front

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        labels = [wrapped_label("adviceTitle"), wrapped_label("adviceEvidence", "hint")]
        super().__init__(
            session,
            labels,
            ("adviceBody", "advice", "adviceCode"),
            margins=(8, 6),
            vertical=QSizePolicy.Policy.Maximum,
            spacing=4,
            parent=parent,
        )
        self.title, self.evidence = labels
        self.grow_with_text()  # its host's dock scrolls: one scroll, never one inside another

    def _on_recording_applied(self, recording: Recording) -> None:
        self._recording = recording
        self._ask_lesson(recording)
        self._on_step_applied(self._session.index)

    DEADLINE_S = PROOF_DEADLINE_S

    @staticmethod
    def find_lesson(recording: Recording, deadline: float) -> Lesson:
        """The first advice whose edits hold when recorded, with them (none: no advice shown)."""
        from app.child.proofs import window_recorder
        from app.core.lesson.advised import advices_of
        from app.core.lesson.candidates import found_for
        from app.core.lesson.edits import changed_lines
        from app.core.lesson.prove import proven_fixes

        old = recording.program.code
        found = found_for(recording)  # NOTE [the lesson found in the child]
        for advice in advices_of(recording) if found is None else found.advices:
            proven = proven_fixes(
                recording, advice.fixes, record=window_recorder(recording), deadline=deadline
            )
            if not proven:
                continue
            fixes = [p.fix for p in proven]
            changed = [
                _dedented(changed_lines(old, p.fix.code, p.fix.moved)) + f"\n✓ {p.checked.mark()}"
                for p in proven
            ]
            return Lesson(fixes, changed, advice)
        return Lesson([], [])

    def _show_lesson(self, lesson: Lesson) -> None:
        from app.core.lesson.advice import Advice

        advice = lesson.said
        if isinstance(advice, Advice):
            self.title.setText(f"⚠ {advice.headline}")
            self.evidence.setText(advice.evidence)
        self._on_step_applied(self._session.index)

    def _on_step_applied(self, index: int) -> None:
        recording = self._recording
        at_end = recording is not None and index == len(recording.timeline) - 1
        show = bool(self._fixes) and at_end
        appearing = show and self.isHidden()
        self.setVisible(show)
        if appearing:
            self.advice_shown.emit()

    def _new_fix_widgets(self, i: int) -> tuple[QPushButton, QLabel]:
        button, code = super()._new_fix_widgets(i)
        # its text may be wider than a narrow dock: the labels must still wrap at the dock's width
        button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        code.setProperty("code", True)  # monospace, as the program is shown
        return button, code

    def _show_fix(self, i: int, fix: Fix, button: QPushButton) -> None:
        short, _, why = fix.title.partition(": ")  # the button stays narrow in a side dock
        button.setText(f"Edit {i + 1}: {short}")
        button.setToolTip(plain_tip(f"{why.capitalize()}. {fix.explanation}" if why else fix.explanation))
