"""The side panels as docks around the graph: shown, hidden, arranged and remembered.

Each panel (code, calls, node details, gradients, memory, legend) sits in a
:class:`QDockWidget` that the learner can close, float or move; the View menu's
Panels entries bring one back. A fresh window arranges them by
:func:`app.ui.window.screen_fit.dock_plan` (one shared column on a small screen, two
on a wide one); after that the window's own saved state is used, unless it was
saved in a larger window than the screen: then the panels are arranged afresh. A closed floating panel,
reopened from the View menu, comes back docked where it was docked.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea, QTabBar, QWidget

from app.ui.window.screen_fit import DockPlan

__all__ = ["DOCK_STATE_VERSION", "PANELS", "DockLayout", "Panel"]

DOCK_STATE_VERSION = 1  # bump when the set of docks changes: an older saved state is then ignored
LEFT, RIGHT = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea


class Panel(NamedTuple):
    key: str
    title: str
    scrolls: bool  # wrapped in a scroll area: a narrow or short dock scrolls instead of cutting off
    keys: str | None = None


PANELS = (
    # Every panel scrolls when its dock is shorter than it: a panel's minimum height (a wrapped
    # summary over the editor, Predict's question, the memory advice) is otherwise the dock's, and
    # at text 1.5 the code and memory docks alone held the window's minimum at 744-822 px, past a
    # 720 px screen. A taller dock gives the panel all its height (the editor scrolls itself then).
    Panel("code", "Code", scrolls=True),
    Panel("details", "Details", scrolls=True),  # a short dock scrolls; a tall one gives its table the rest
    Panel("calls", "Calls", scrolls=True),
    Panel("gradients", "Gradients", scrolls=True),
    Panel("memory", "Memory", scrolls=True),  # a chart: it draws to whatever size it gets
    Panel("legend", "Legend", scrolls=True, keys="Ctrl+L"),
)
TOP_LEFT, BELOW_LEFT = "code", ("details", "calls")  # where each panel goes in a fresh layout
TOP_RIGHT, BELOW_RIGHT = "gradients", ("memory", "legend")
CHARTS = ("gradients", "memory")  # beside the code on a small screen (DockPlan.charts_on_top)


def _scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    return area


class DockLayout:
    """The docks of ``window`` holding ``widgets`` (one per :data:`PANELS` key)."""

    def __init__(self, window: QMainWindow, widgets: dict[str, QWidget]) -> None:
        self._window = window
        self.docks: dict[str, QDockWidget] = {}
        self.reset_action = QAction("&Reset panels", window)
        self.reset_action.setToolTip("Every panel back in its place, sized for this window")
        window.setDockNestingEnabled(True)
        window.setCorner(Qt.Corner.BottomLeftCorner, LEFT)
        window.setCorner(Qt.Corner.BottomRightCorner, RIGHT)
        for panel in PANELS:
            self.docks[panel.key] = self._dock(panel, widgets[panel.key])

    def _dock(self, panel: Panel, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(panel.title, self._window)
        dock.setObjectName(f"{panel.key}Dock")  # saveState() finds docks by name
        dock.setWidget(_scrolling(widget) if panel.scrolls else widget)
        toggle = dock.toggleViewAction()
        toggle.setText(panel.title)
        toggle.triggered.connect(lambda shown, it=dock: self._reopen_docked(it, shown))
        if panel.keys is not None:
            toggle.setShortcut(QKeySequence(panel.keys))
            self._window.addAction(toggle)  # works with the menus hidden
        self._window.addDockWidget(LEFT, dock)
        return dock

    @staticmethod
    def _reopen_docked(dock: QDockWidget, shown: bool) -> None:
        """A panel closed while floating comes back docked: a floating one reopened over the graph
        (or on another screen) was easily lost. Qt keeps its docked place while it floats."""
        if shown and dock.isFloating():
            dock.setFloating(False)

    def dock(self, key: str) -> QDockWidget:
        return self.docks[key]

    def toggle_actions(self) -> list[QAction]:
        """Show / hide each panel (the View menu's Panels entries)."""
        return [dock.toggleViewAction() for dock in self.docks.values()]

    def shown(self) -> list[str]:
        """The panels not closed (a panel behind another's tab counts as shown)."""
        return [key for key, dock in self.docks.items() if not dock.isHidden()]

    # -- arranging -------------------------------------------------------------------
    def arrange(self, plan: DockPlan, closed: tuple[str, ...] = ()) -> None:
        """A fresh layout: code on top of the left column, the others as tabs below it; with a
        right column, gradients on top of it and memory and legend as tabs below; ``closed`` stay
        closed."""
        window, d = self._window, self.docks
        for dock in d.values():
            window.removeDockWidget(dock)
        right = plan.two_columns
        below_left: tuple[str, ...] = BELOW_LEFT if right else (*BELOW_LEFT, TOP_RIGHT, *BELOW_RIGHT)
        beside_top: tuple[str, ...] = ()
        if plan.charts_on_top and not right:  # the charts need the height the code has
            beside_top = CHARTS
            below_left = tuple(key for key in below_left if key not in CHARTS)
        self._column(LEFT, TOP_LEFT, below_left, beside_top)
        if right:
            self._column(RIGHT, TOP_RIGHT, BELOW_RIGHT)
        for key, dock in d.items():
            dock.setVisible(key not in closed)

    def _column(
        self, area: Qt.DockWidgetArea, top: str, below: tuple[str, ...], beside_top: tuple[str, ...] = ()
    ) -> None:
        window, d = self._window, self.docks
        window.addDockWidget(area, d[top])
        window.splitDockWidget(d[top], d[below[0]], Qt.Orientation.Vertical)
        for key in below[1:]:
            window.tabifyDockWidget(d[below[0]], d[key])
        for key in beside_top:
            window.tabifyDockWidget(d[top], d[key])
        d[below[0]].raise_()
        d[top].raise_()

    def size_columns(self, plan: DockPlan, window_height: int) -> None:
        """Give the columns the plan's widths and the code dock ~60 % of its column's height."""
        window, d = self._window, self.docks
        columns = [d[TOP_LEFT], *([d[TOP_RIGHT]] if plan.two_columns else [])]
        widths = [plan.left, *([plan.right] if plan.two_columns else [])]
        window.resizeDocks(columns, widths, Qt.Orientation.Horizontal)
        code_height = round(window_height * 0.55)
        window.resizeDocks(
            [d[TOP_LEFT], d[BELOW_LEFT[0]]], [code_height, code_height // 2], Qt.Orientation.Vertical
        )
        self.name_tabs_in_full()

    def name_tabs_in_full(self) -> None:
        """Docks sharing a place show every title whole ("Gradients", not "Gra…"): the tab bar
        scrolls instead. Qt makes those tab bars when it lays the docks out."""
        for bar in self._window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)

    # -- remembering ------------------------------------------------------------------
    def save(self) -> QByteArray:
        return self._window.saveState(DOCK_STATE_VERSION)

    def restore(self, state: QByteArray | None) -> bool:
        """Bring back a saved arrangement; False when there is none (or it is of another version)."""
        restored = state is not None and self._window.restoreState(state, DOCK_STATE_VERSION)
        self.name_tabs_in_full()
        return restored
