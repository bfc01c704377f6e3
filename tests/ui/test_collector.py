"""Garbage is collected on the GUI thread, between events: never on a pool thread, never inside a
Qt call that walks a snapshot of widgets (NOTE [collect on the GUI thread])."""

import gc
import subprocess
import sys
import textwrap
import threading

import pytest
from PySide6.QtCore import QObject, QRunnable, QThreadPool

from app.core.gc_pause import collection_paused
from app.ui.runtime.collector import CHECK_MS, PAUSED_CHECK_MS, YOUNG_WHILE_PAUSED, GuiCollector
from app.ui.runtime.session import Session
from app.ui.runtime.worker import GcPause, import_checks

TIMEOUT = 10_000


@pytest.fixture
def collector(qapp):
    # An earlier test's window may still import the checks on its daemon thread (its start waits
    # for that window's graph); these tests force collections on every allocation, which is no
    # test of that import: the checks are imported here first, so that thread finds them loaded.
    import_checks()
    for thread in threading.enumerate():
        if thread.name == "import-checks":
            thread.join(timeout=60)
    made = Session()  # a window's session takes over collection
    installed = GuiCollector.installed()
    assert installed is not None
    yield installed
    made.deleteLater()


def test_a_session_turns_automatic_collection_off(collector):
    assert not gc.isenabled()
    assert GuiCollector.install() is collector  # once per process


def test_collection_paused_restores_what_was_there():
    was = gc.isenabled()
    gc.enable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def _cycle_holding_a_qobject(deaths: list[int]) -> None:
    holder = QObject()
    holder.destroyed.connect(lambda *_: deaths.append(threading.get_ident()))
    holder.itself = holder  # only a collection frees it


def test_a_pool_thread_allocating_never_collects_the_windows_garbage(qtbot, collector):
    deaths: list[int] = []
    saved = gc.get_threshold()
    for _ in range(200):  # Qt objects of the GUI thread, left in cycles (a closed window's timer)
        _cycle_holding_a_qobject(deaths)
    gc.set_threshold(1, 1, 1)  # a collection would be due on every allocation

    class Churn(QRunnable):
        def run(self) -> None:
            for _ in range(200):
                [[object()] for _ in range(20)]

    try:
        QThreadPool.globalInstance().start(Churn())
        QThreadPool.globalInstance().waitForDone()
        assert deaths == []  # the pool thread allocated plenty and collected nothing
        qtbot.waitUntil(lambda: len(deaths) == 200, timeout=TIMEOUT)  # the event loop's timer did
    finally:
        gc.set_threshold(*saved)
    assert set(deaths) == {threading.get_ident()}
    assert threading.current_thread() is threading.main_thread()


def test_while_a_pause_is_held_only_batches_of_young_objects_are_collected(qtbot, collector):
    deaths: list[int] = []
    saved = gc.get_threshold()
    GcPause.hold("test")
    try:
        gc.collect(1)
        gc.set_threshold(1, 1, 1)  # every generation would be due, the oldest too
        for _ in range(50):
            _cycle_holding_a_qobject(deaths)
        qtbot.wait(3 * CHECK_MS)
        assert collector.due() is None and deaths == []  # too few to be worth a pass yet
        assert collector._timer.interval() == PAUSED_CHECK_MS  # NOTE [young objects of a load]
        full_passes = collector.collections[2]
        kept = [[] for _ in range(2 * YOUNG_WHILE_PAUSED)]  # a load's objects, alive
        assert collector.due() == 1  # never 2 while paused
        qtbot.waitUntil(lambda: len(deaths) == 50, timeout=TIMEOUT)
        assert collector.collections[2] == full_passes and len(kept) == 2 * YOUNG_WHILE_PAUSED
        assert gc.get_count()[0] < YOUNG_WHILE_PAUSED
    finally:
        GcPause.release("test")
        gc.set_threshold(*saved)
    qtbot.waitUntil(lambda: collector._timer.interval() == CHECK_MS, timeout=TIMEOUT)


def _frozen_garbage() -> int:
    """Objects in the permanent generation that are unreachable cycles (found, then frozen again)."""
    gc.collect()
    gc.unfreeze()
    try:
        return gc.collect()
    finally:
        gc.freeze()


@pytest.mark.slow
def test_loads_in_the_window_leave_no_cycle_uncollected(qtbot, tmp_path, monkeypatch):
    """The whole window loads recordings and steps through them, each load frozen once it is in
    (NOTE [no full GC while loading]): Qt objects left in cycles before a load and while it loads
    are collected by the next full pass, and nothing frozen is a garbage cycle."""
    from app.ui.runtime import worker as worker_module
    from app.ui.runtime.settings import AppSettings
    from app.ui.window import dialogs
    from app.ui.window.main_window import MainWindow
    from tests.support.programs import tanh_chain_program

    monkeypatch.setattr(worker_module, "FREEZE_NODES", 1)  # every load is frozen once it is in
    monkeypatch.setattr(dialogs, "ask", lambda parent, title, text, choices, default: "Discard")
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")))
    qtbot.addWidget(window)
    window.show()
    session = window.session
    installed = GuiCollector.installed()
    assert installed is not None
    _frozen_garbage()  # what earlier tests left frozen is not counted below
    deaths: list[int] = []
    young = installed.collections[1]
    for length in (300, 400, 300):
        _cycle_holding_a_qobject(deaths)  # garbage before the load (a closed dialog)
        with qtbot.waitSignal(session.recording_applied, timeout=60_000):
            session.load(tanh_chain_program(length))
            _cycle_holding_a_qobject(deaths)  # ... and while it loads
        qtbot.waitUntil(lambda: not GcPause.held(), timeout=60_000)
        for _ in range(5):
            session.next_step()
            qtbot.wait(1)
    assert installed.collections[1] > young  # young passes ran while the loads held their pauses
    assert _frozen_garbage() == 0
    gc.collect()
    assert len(deaths) == 6  # every cycle was collected, none frozen
    session.pause()
    session.worker.wait_idle()


def test_the_last_release_collects_the_rest(qtbot, collector):
    deaths: list[int] = []
    GcPause.hold("test")
    try:
        for _ in range(50):
            _cycle_holding_a_qobject(deaths)
        assert deaths == []
    finally:
        GcPause.release("test")  # on this thread: the GUI thread
    assert len(deaths) == 50


def test_a_due_generation_is_collected_as_cpython_would(collector):
    saved = gc.get_threshold()
    try:
        gc.collect()
        gc.set_threshold(10_000, 10, 10)
        assert collector.due() is None
        for _ in range(30):
            _cycle_holding_a_qobject([])
        gc.set_threshold(5, 10, 10)
        assert collector.check() == 0
        assert gc.get_count()[0] < 5
    finally:
        gc.set_threshold(*saved)


# A theme change repolishes every widget; the views' colour setters are Python, and Python
# allocating there once let a collection delete widgets Qt was still walking.
THEME_CHANGE = textwrap.dedent(
    """
    import gc, sys
    from PySide6.QtWidgets import QApplication, QLabel, QWidget
    from app.ui.panels.grad_panel import GradBars
    from app.ui.runtime.session import Session
    from app.ui.style.theme import apply_theme

    app = QApplication(sys.argv[:1])
    session = Session() if "--session" in sys.argv else None
    views = [GradBars() for _ in range(30)]
    for view in views:
        view.show()
    inside = [False]
    deleted_inside = [0]

    def died(*_):
        deleted_inside[0] += inside[0]

    def garbage():
        for _ in range(200):
            window = QWidget()
            window.destroyed.connect(died)
            labels = [QLabel("x", window) for _ in range(3)]
            window.itself = window
            window.show()

    gc.set_threshold(1, 1, 1)
    for theme in ["dark", "light"] * 5:
        if session is not None:
            gc.collect()  # the last round's garbage, as the session's collector would between events
        garbage()
        inside[0] = True
        apply_theme(app, theme)
        inside[0] = False
    first = views[0].property("firstColor").name()
    print(deleted_inside[0], first, gc.isenabled())
    """
)


@pytest.mark.parametrize("session", [False, True], ids=["theme alone", "with a session"])
def test_no_widget_is_deleted_while_a_theme_change_walks_them(session):
    args = [sys.executable, "-c", THEME_CHANGE] + (["--session"] if session else [])
    done = subprocess.run(args, check=False, capture_output=True, text=True, timeout=120, env=_offscreen())
    assert done.returncode == 0, done.stderr
    deleted, first, enabled = done.stdout.split()
    assert deleted == "0"
    assert first != "#000000"  # the stylesheet did reach the views' colour setters
    assert enabled == str(not session)


def _offscreen() -> dict[str, str]:
    import os

    return {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def test_a_lesson_waited_for_at_closing_holds_no_pause_after_it(qapp, two_losses):
    from app.ui.runtime.lesson_worker import LessonWorker

    assert not GcPause.held()
    worker = LessonWorker(lambda recording, deadline: len(recording.timeline))
    worker.request(two_losses)
    assert GcPause.held()  # no full collection while the lesson is found on a pool thread
    assert worker.wait_idle()  # as a closing window does, its answer queued and never handed over
    assert not GcPause.held()
    worker.deleteLater()
