"""The keyword menu of a call's line: ``retain_graph`` and ``create_graph`` on each autograd call.

A right click on such a line in the code panel offers them; a choice edits the program text and
records it again at once (Ctrl+Z undoes, as for the call list).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup

from app.ui.panels.call_toggles import CallSite, call_sites, edit_call

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.ui.runtime.session import Session

__all__ = ["call_sites_at", "keyword_actions"]


def call_sites_at(recording: Recording, line: int) -> list[CallSite]:
    """The places on ``line`` (or whose call spans it) that make autograd calls."""
    return [site for site in call_sites(recording) if site.call.line <= line <= site.call.end_line]


def keyword_actions(session: Session, sites: list[CallSite], owner: QObject) -> list[QAction]:
    """One group of actions per call site: retain_graph True / False / unset, create_graph."""
    actions: list[QAction] = []
    for site in sites:
        call = site.call
        where = f" ({call.text})" if len(sites) > 1 else ""
        group = QActionGroup(owner)
        for value, text in ((True, "retain_graph=True"), (False, "retain_graph=False"), (None, "")):
            label = text or f"retain_graph unset (follows create_graph: {call.create_graph})"
            action = QAction(f"{label} on this call{where}", owner, checkable=True)
            action.setChecked(call.retain_graph is value)
            keyword_value = None if value is None else str(value)
            action.triggered.connect(
                lambda checked=False, c=call, v=keyword_value: edit_call(session, c, "retain_graph", v)
            )
            group.addAction(action)
            actions.append(action)
        create = QAction(f"create_graph=True on this call{where}", owner, checkable=True)
        create.setChecked(call.create_graph)
        create.triggered.connect(
            lambda checked, c=call: edit_call(session, c, "create_graph", "True" if checked else None)
        )
        actions.append(create)
    return actions
