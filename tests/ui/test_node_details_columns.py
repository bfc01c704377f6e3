"""The node details' columns fit their texts at every step, though a node whose cells read as the
node's before it (the next iteration's) leaves them as they are."""

from __future__ import annotations

from app.core import record
from app.ui.panels.node_details import NodeDetails
from benchmarks.programs import training_program
from tests.support.holder import shown_in_holder


def _widths(details: NodeDetails) -> list[int]:
    return [details.table.columnWidth(column) for column in range(details.table.columnCount())]


def test_the_columns_fit_their_texts_at_every_step_of_a_loop(qtbot, session):
    recording = record(training_program(4))
    details = NodeDetails(session)
    _holder = shown_in_holder(qtbot, details, 420, 500)  # the panel lives as long as its holder
    session.apply(recording)
    nodes, widths = set(), set()
    for index in [*range(len(recording.timeline)), 5, 0]:
        session.go_to(index)
        if not details.table.rowCount():
            continue  # no node yet: the columns as they were (no texts to fit)
        shown = _widths(details)
        details.table.resizeColumnsToContents()  # what fitting the texts now gives
        assert shown == _widths(details), index
        nodes.add(details.node_id)
        widths.add(tuple(shown))
    assert len(nodes) > 8 and len(widths) > 2  # many nodes, of columns of several widths
