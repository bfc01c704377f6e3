"""A step lays out nothing outside the panels whose text it changes: the caption's room and the
step counter keep their size, so neither the stage (the central widget) nor the main window is
asked for a new layout, and the graph keeps its place in the window (stage.py's NOTE [the graph
keeps its size while stepping])."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtWidgets import QWidget

from tests.support.room_window import training_window

pytestmark = pytest.mark.usefixtures("no_modal_dialogs")

TIMEOUT = 30_000


class _Requests(QObject):
    """Counts the layout requests delivered to some widgets."""

    def __init__(self, widgets: list[QWidget]) -> None:
        super().__init__()
        self.count = 0
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


@pytest.fixture
def window(qtbot, tmp_path):
    made = training_window(qtbot, tmp_path)
    yield made
    made.session.worker.wait_idle()


def _view_at(window) -> QPoint:
    view = window.graph_view
    return view.mapTo(window, QPoint(0, 0))


def test_stepping_never_lays_out_the_window_and_the_graph_stays_put(qtbot, window):
    steps = list(range(1, min(len(window.session.recording.timeline), 41)))
    captions = {window.session.recording.timeline[i].caption for i in steps}
    assert len(captions) > 5  # the steps' captions differ (in words, and in length)
    for index in steps:  # a first pass: each panel has shown its widest text once
        window.session.go_to(index)
        qtbot.wait(1)
    qtbot.wait(50)
    requests = _Requests([window, window.centralWidget()])
    placed = _view_at(window)
    size = window.graph_view.size()
    shown = set()
    for index in steps[-20:]:
        window.session.go_to(index)
        qtbot.wait(1)
        shown.add(window.caption_bar.caption())
        assert (_view_at(window), window.graph_view.size()) == (placed, size)
    qtbot.wait(50)
    assert len(shown) > 3
    assert requests.count == 0
