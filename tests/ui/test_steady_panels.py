"""NOTE [steady heights]: panels that follow the step show each step's text without laying
themselves out again, once they have grown to the texts they show; what they show is the step's."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QSplitter, QWidget

from app.core import load_builtin, record
from app.core.lesson.captions import format_values
from app.ui.panels.grad_panel import GradPanel
from app.ui.panels.node_details import NodeDetails
from app.ui.panels.step_counter import StepCounter


class _LayoutRequests(QObject):
    """Counts the layout requests each panel (or a widget inside it) receives."""

    def __init__(self, panels: list[QWidget]) -> None:
        super().__init__()
        self.panels = panels
        self.counts = {type(panel).__name__: 0 for panel in panels}
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest and isinstance(watched, QWidget):
            for panel in self.panels:
                if watched is panel or panel.isAncestorOf(watched):
                    self.counts[type(panel).__name__] += 1
        return False

    def stop(self) -> None:
        QApplication.instance().removeEventFilter(self)


def _step_all(qtbot, session, count: int) -> None:
    for index in range(count):
        session.go_to(index)
        qtbot.wait(1)  # the layout settles as the event loop would


def test_a_second_pass_over_the_steps_lays_no_panel_out_and_shows_each_steps_text(qtbot, session):
    recording = record(load_builtin("accumulate-no-zero"))
    grads, details, counter = GradPanel(session), NodeDetails(session), StepCounter(session)
    both = QSplitter(Qt.Orientation.Vertical)
    for panel in (counter, grads, details):
        both.addWidget(panel)
    both.resize(700, 900)
    qtbot.addWidget(both)
    both.show()
    session.apply(recording)
    steps = len(recording.timeline)
    _step_all(qtbot, session, steps)  # the first pass: each label grows to its tallest text
    requests = _LayoutRequests([grads, details, counter])
    try:
        for index in range(steps):
            session.go_to(index)
            qtbot.wait(1)
            state = recording.timeline.state(index)
            assert counter.number.text() == f"Step {index} / {steps - 1}"
            for leaf in grads.leaf_names():
                assert grads.grad_text(leaf) == f"{leaf}.grad = {format_values(state.grads.get(leaf))}"
    finally:
        requests.stop()
    assert requests.counts == {"GradPanel": 0, "NodeDetails": 0, "StepCounter": 0}


def test_the_node_tables_columns_fit_their_cells_at_every_step(qtbot, session):
    """The header no longer sizes its columns at each cell's change: the panel sizes them when a new
    node's rows come and when a state changed, and each column still holds its widest cell."""
    recording = record(load_builtin("accumulate-no-zero"))
    details = NodeDetails(session)
    qtbot.addWidget(details)
    details.resize(900, 400)
    details.show()
    session.apply(recording)
    table, header = details.table, details.table.horizontalHeader()
    rows_seen = 0
    for index in range(len(recording.timeline)):
        session.go_to(index)
        qtbot.wait(1)
        rows_seen += table.rowCount()
        for column in range(table.columnCount() - 1):  # the last column stretches
            cells = [table.item(row, column) for row in range(table.rowCount())]
            widest = max((table.fontMetrics().horizontalAdvance(c.text()) for c in cells if c), default=0)
            assert header.sectionSize(column) >= widest, (index, column)
            assert header.sectionSize(column) >= header.sectionSizeHint(column), (index, column)
    assert rows_seen > 0


def test_a_second_pass_lays_out_neither_the_caption_nor_its_room_and_shows_each_caption(qtbot, session):
    """The caption bar (caption_bar.py's NOTE [caption of fixed lines]) takes the same lines at
    every step: a new caption that fits them asks its room (stage.py's CaptionRoom) for no layout."""
    from app.ui.panels.caption_bar import CaptionBar
    from app.ui.window.stage import Stage

    recording = record(load_builtin("rnn-no-detach"))
    caption, counter, notice, error = CaptionBar(session), StepCounter(session), QWidget(), QWidget()
    notice.hide()
    error.hide()
    stage = Stage(notice, caption, counter, error, QWidget())
    qtbot.addWidget(stage)
    stage.resize(700, 600)
    stage.show()
    session.apply(recording)
    steps = len(recording.timeline)
    _step_all(qtbot, session, steps)
    requests = _LayoutRequests([stage.caption_room, stage])
    try:
        shown = set()
        for index in range(steps):
            session.go_to(index)
            qtbot.wait(1)
            assert caption.caption() == recording.timeline[index].caption
            shown.add(caption.text())
    finally:
        requests.stop()
    assert len(shown) > 3  # the steps' captions differ
    assert requests.counts == {"CaptionRoom": 0, "Stage": 0}
