"""Layout fences (NOTE [layout fences] in app/ui/window/layout_fence.py): a panel's text changes stay
inside the fence unless the panel needs more room; the panel is always shown whole."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.ui.window.layout_fence import LayoutFence

STYLE = "QLabel { font-size: 14pt; padding: 0px; margin: 0px; }"


class _Requests(QObject):
    """Counts the layout requests a widget receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _window(qtbot, fenced: bool):
    """A window: a panel with a counter-like label on top (fenced or not), a stretch below."""
    top = QWidget()
    top.setStyleSheet(STYLE)
    panel = QWidget()
    label = QLabel("Step 1 / 100")
    QVBoxLayout(panel).addWidget(label)
    fence = LayoutFence(panel) if fenced else None
    layout = QVBoxLayout(top)
    layout.addWidget(fence or panel)
    layout.addWidget(QWidget(), 1)
    qtbot.addWidget(top)
    top.resize(400, 300)
    top.show()
    qtbot.waitExposed(top)
    qtbot.wait(20)
    return top, fence, label


def _show(qtbot, label: QLabel, text: str) -> None:
    label.setText(text)
    qtbot.wait(5)


def test_a_text_change_that_needs_no_more_room_never_reaches_the_window(qtbot):
    for fenced, expect_requests in ((False, True), (True, False)):
        top, fence, label = _window(qtbot, fenced)
        texts = [f"Step {step} / 100" for step in range(1, 30)]
        for text in texts:  # a first pass: the fence grows to the widest text it has shown
            _show(qtbot, label, text)
        requests = _Requests(top)
        for text in texts:
            _show(qtbot, label, text)
        assert (requests.count > 0) is expect_requests  # without a fence, Qt lays out the window each time
        assert label.width() >= label.sizeHint().width()  # shown whole either way
        if fence is not None:
            assert fence.height() >= fence.inner.sizeHint().height()


def test_a_fence_grows_for_a_longer_text_and_keeps_that_room(qtbot):
    _top, fence, label = _window(qtbot, fenced=True)
    assert fence is not None
    before, asked = fence.sizeHint(), fence.relayouts
    _show(qtbot, label, "Step 10 / 100 · iteration 3 of 5 · call 2 of 2 · FAILED")
    assert fence.relayouts > asked
    assert fence.sizeHint().width() > before.width()
    assert label.width() >= label.sizeHint().width()  # the longer text is shown whole
    grown, asked = fence.sizeHint(), fence.relayouts
    _show(qtbot, label, "Step 11 / 100")
    assert fence.sizeHint() == grown  # no shrinking back between steps
    assert fence.relayouts == asked
    fence.release()  # a new recording: measured afresh
    qtbot.wait(5)
    assert fence.sizeHint().width() < grown.width()
    assert fence.sizeHint().width() >= fence.inner.sizeHint().width()


def test_a_new_text_size_measures_the_fence_afresh(qtbot):
    top, fence, label = _window(qtbot, fenced=True)
    assert fence is not None
    small = fence.sizeHint()
    top.setStyleSheet("QLabel { font-size: 28pt; padding: 0px; margin: 0px; }")
    qtbot.wait(20)
    assert fence.sizeHint().height() > small.height()
    assert label.height() >= label.sizeHint().height()
    top.setStyleSheet(STYLE)
    qtbot.wait(20)
    assert fence.sizeHint() == small  # smaller again: not kept from the larger text


def test_a_fence_follows_its_panel_hidden_shown_and_deleted(qtbot):
    top, fence, _label = _window(qtbot, fenced=True)
    assert fence is not None and fence.inner is not None
    fence.inner.hide()
    assert fence.isHidden()
    fence.inner.show()
    assert not fence.isHidden()
    fence.inner.deleteLater()
    qtbot.waitUntil(lambda: fence.inner is None)
    top.resize(500, 320)  # a resize after its panel is gone: nothing to place, no crash
    qtbot.wait(20)
    assert fence.sizeHint() == fence.minimumSizeHint() == fence.sizeHint().__class__(0, 0)
