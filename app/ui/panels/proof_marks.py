"""The quiet marks of proven fixes: "checking..." while the edits are recorded, and under each
offered fix what its recording showed ("recorded: no error; ...").

A fix is offered only once its edited program has been recorded and checked
(:mod:`app.core.lesson.prove`), on a pool thread (NOTE [the lesson off the GUI
thread]); until then the panel says it is checking, and a fix that fails its
check never appears.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

if TYPE_CHECKING:  # the lesson's modules are imported with its first lesson, not at start-up
    from app.core.lesson.fix import Fix
    from app.core.lesson.prove import ProvenFix, ScriptSource
    from app.ui.panels.fixes_panel import FixesPanel
    from app.ui.panels.script_fixes import ScriptFixBar
    from app.ui.runtime.session import Session

__all__ = ["CHECKING", "PROOF_DEADLINE_S", "checking_label", "show_script_bars", "shown_change"]

CHECKING = "checking the fixes: each is recorded before it is offered…"


def checking_label() -> QLabel:
    label = QLabel(CHECKING)
    label.setObjectName("fixChecking")
    label.setProperty("role", "hint")
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.hide()
    return label


def shown_change(old: str, proven: ProvenFix) -> str:
    """What a fix's button shows under it: the lines it changes, then the mark of its check."""
    from app.core.lesson.edits import changed_lines

    fix = proven.fix
    lines = changed_lines(old, fix.code, fix.moved)
    return "\n".join([*lines, f"✓ {proven.checked.mark()}"])


# A checked program's proof is one recording in the warm child (~0.1-1 s); a script's a fresh
# process importing torch (~2-10 s, a few at once): past this no proof starts.
PROOF_DEADLINE_S = 60.0


def show_script_bars(
    panel: FixesPanel, script: ScriptSource | None, fixes: list[Fix], session: Session
) -> list[ScriptFixBar]:
    """Under each fix of a script, its "Copy patch" / "Apply to file" bar (made once, reused); the
    fix's own button is off for a script (a click would re-record it as a checked program)."""
    from app.ui.panels.script_fixes import ScriptFixBar

    bars: list[ScriptFixBar] = panel.findChildren(ScriptFixBar)
    layout = panel.fix_layout()
    old = session.recording.program.code if session.recording is not None else ""
    for i, (button, code) in enumerate(zip(panel.fix_buttons, panel.fix_codes, strict=True)):
        shown = script is not None and i < len(fixes)
        button.setEnabled(script is None)
        if i >= len(bars) and shown:
            bar = ScriptFixBar()
            bar.recorded.connect(session.load)
            bar.failed.connect(session.failed)  # the window's notice, as a failed recording
            layout.insertWidget(layout.indexOf(code) + 1, bar)
            bars.append(bar)
        if i < len(bars):
            bars[i].setVisible(shown)
            if shown and script is not None:
                bars[i].set_fix(script, old, fixes[i].code)
    return bars
