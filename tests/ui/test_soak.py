"""Soak: 5,000 steps and 100 re-recordings leave no tensors, hooks or heap behind.

The data flow is the window's: a :class:`Session` asks its worker thread for
each recording (a real PyTorch run and a real Graphviz layout), a
:class:`GraphView` rebuilds its items for each new recording, and every step
restyles the view from the recorded snapshot. Re-recordings alternate between
the seed and its failing variant (no ``retain_graph``), so PyTorch's error
path, with its exception and traceback, is soaked too.

# NOTE [soak bounds]
Measured after a warm-up, so caches (torch's dispatcher, Qt's fonts, the
recorder's namespaces) are already full:
- live ``torch.Tensor`` objects: at most ``TENSOR_SLACK`` more than after the
  warm-up. One recording of the seed holds about a dozen small tensors (grads,
  contributions), so keeping even one stale recording per re-record would add
  thousands.
- autograd hooks still registered: every handle the recorder made is tracked;
  at the end none may be left in a live hook table.
- Python heap (tracemalloc, started after the warm-up): at most
  ``HEAP_BOUND_BYTES`` still allocated at the end, and at most
  ``HALF_GROWTH_BOUND_BYTES`` added during the second half. Measured: about
  200-220 KB, flat from 50 to 400 re-recordings (the recording on screen, its
  view items, warm caches). One recording plus its layout and view model is
  about 30 KB of Python objects, so keeping one per re-record (3 MB) fails by
  far, and so does any leak above ~2 KB per re-record (over the second half's
  50 re-recordings).
"""

from __future__ import annotations

import gc
import sys
import threading
import tracemalloc
import weakref
from collections.abc import Callable
from typing import Any

import PySide6
import pytest
import torch
import torch.utils.hooks
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from app.core.loading import load_builtin
from app.core.model.program import Program
from app.ui.graph.graph_view import GraphView
from app.ui.runtime import worker as worker_module
from app.ui.runtime.session import Session

RERECORDS = 100
STEPS = 5_000
STEPS_PER_RECORDING = STEPS // RERECORDS
WARM_UP_RECORDINGS = 10
TENSOR_SLACK = 10
HEAP_BOUND_BYTES = 1_000_000
HALF_GROWTH_BOUND_BYTES = 100_000


def none_references_lost_per_qt_call() -> float:
    """How many references to ``None`` one void Qt call drops (0 with sound bindings).

    PySide6 6.12.0 on Python 3.11 drops one on every call of a method that
    returns nothing (``update()``, ``setText()``, every QPainter draw). None is
    immortal only from Python 3.12 on; before that its count reaches zero after
    some 50,000 such calls, a few minutes of stepping in the window, and Python
    aborts with "deallocating None".
    """
    probe = QObject()
    calls = 1000
    before = sys.getrefcount(None)
    for _ in range(calls):
        probe.setObjectName("probe")
    return (before - sys.getrefcount(None)) / calls


def _none_leak_message(lost: float) -> str:
    return (
        f"PySide6 {PySide6.__version__} on Python {sys.version.split()[0]} drops {lost:g} reference(s) "
        f"to None per void Qt call; with {sys.getrefcount(None):,} left, the window aborts after that "
        "many calls. Use PySide6 6.11.3 (checked: drops none) or Python 3.12+ (None is immortal, PEP 683)."
    )


def test_qt_calls_keep_their_references_to_none() -> None:
    lost = none_references_lost_per_qt_call()
    assert lost == 0, _none_leak_message(lost)


class HookLedger:
    """Counts autograd hook handles and keeps (weakly) those whose hook is still registered."""

    def __init__(self) -> None:
        self.made = 0
        self._open: list[tuple[Callable[[], Any], int]] = []
        self._lock = threading.Lock()

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = torch.utils.hooks.RemovableHandle.__init__
        ledger = self

        def init(handle: Any, *args: Any, **kwargs: Any) -> None:
            original(handle, *args, **kwargs)
            with ledger._lock:  # hooks are registered on the worker thread
                ledger.made += 1
                ledger._open.append((handle.hooks_dict_ref, handle.id))

        monkeypatch.setattr(torch.utils.hooks.RemovableHandle, "__init__", init)

    def still_registered(self) -> int:
        """Hooks whose table is alive and still holds them (never removed); forgets the rest."""
        with self._lock:
            self._open = [
                (ref, key) for ref, key in self._open if (table := ref()) is not None and key in table
            ]
            return len(self._open)


def live_tensors() -> int:
    gc.collect()
    # type() rather than isinstance(): some module proxies warn when asked for __class__
    return sum(1 for obj in gc.get_objects() if issubclass(type(obj), torch.Tensor))


class Rig:
    """A session driving a graph view, as the window wires them."""

    def __init__(self, qtbot: QtBot) -> None:
        self.qtbot = qtbot
        self.session = Session()
        self.view = GraphView()
        qtbot.addWidget(self.view)
        self.session.recording_applied.connect(self._on_recording)
        self.session.step_applied.connect(self._on_step)
        self.shown = 0
        seed = load_builtin("two-losses")
        forgot = seed.with_code(seed.code.replace("backward(retain_graph=True)", "backward()"))
        self.variants: tuple[Program, ...] = (seed, forgot)
        self.recordings = 0

    def _on_recording(self, recording: Any) -> None:
        assert self.session.layout is not None, self.session.layout_error
        self.view.set_model(recording, self.session.layout)

    def _on_step(self, index: int) -> None:
        state = self.session.state()
        assert state is not None and state.step.index == index
        self.view.show_state(state)
        self.shown += 1

    def rerecord(self, ledger: HookLedger) -> None:
        program = self.variants[self.recordings % 2]
        with self.qtbot.waitSignal(self.session.recording_applied, timeout=30_000) as blocker:
            if self.session.recording is None:
                self.session.load(program)
            else:
                self.session.rerecord(program)
        assert blocker.args[0].program == program
        assert (blocker.args[0].failed is None) == (program is self.variants[0])
        assert ledger.still_registered() == 0  # the recorder removed every hook it added
        self.recordings += 1

    def walk(self, steps: int) -> None:
        """Step forward to the end and back to the start, ``steps`` moves in all."""
        forward = True
        for _ in range(steps):
            if forward and self.session.index >= self.session.last_index:
                forward = False
            elif not forward and self.session.index == 0:
                forward = True
            before = self.session.index
            (self.session.next_step if forward else self.session.prev_step)()
            assert self.session.index == before + (1 if forward else -1)


@pytest.mark.slow
def test_soak_steps_and_rerecords_leave_nothing_behind(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    lost = none_references_lost_per_qt_call()
    if lost:  # the soak would abort the whole test run (see the test above)
        pytest.fail(_none_leak_message(lost))
    ledger = HookLedger()
    ledger.install(monkeypatch)
    # The recorder runs here, not in the window's child (tests/child/test_child.py soaks the child): this
    # soak watches the recorder's own hooks, tensors and heap in this process.
    monkeypatch.setattr(worker_module, "record_program", _record_here)
    rig = Rig(qtbot)
    for _ in range(WARM_UP_RECORDINGS):
        rig.rerecord(ledger)
        rig.walk(STEPS_PER_RECORDING)
    first_recording = weakref.ref(rig.session.recording)  # type: ignore[arg-type]
    tensors_before = live_tensors()
    tracemalloc.start()
    try:
        heap_before = tracemalloc.get_traced_memory()[0]
        heap_half = 0
        for index in range(RERECORDS):
            rig.rerecord(ledger)
            rig.walk(STEPS_PER_RECORDING)
            if index == RERECORDS // 2 - 1:
                gc.collect()
                heap_half = tracemalloc.get_traced_memory()[0] - heap_before
        gc.collect()
        heap_growth = tracemalloc.get_traced_memory()[0] - heap_before
    finally:
        tracemalloc.stop()
    tensors_after = live_tensors()

    assert rig.recordings == WARM_UP_RECORDINGS + RERECORDS
    assert rig.shown >= STEPS + RERECORDS  # every step (and every new recording) was drawn
    assert (
        rig.session.recording is not None and rig.session.recording.failed is not None
    )  # the failing variant
    assert first_recording() is None  # replaced recordings are freed
    assert ledger.made >= 2 * RERECORDS  # the recorder really hooked every recording (and removed them all)
    assert tensors_after - tensors_before <= TENSOR_SLACK, (tensors_before, tensors_after)
    assert heap_growth <= HEAP_BOUND_BYTES, f"the heap grew by {heap_growth:,} bytes"
    second_half = heap_growth - heap_half
    assert second_half <= HALF_GROWTH_BOUND_BYTES, f"the heap still grew by {second_half:,} bytes"


def _record_here(source: Any, device: str) -> Any:
    from app.core.loading import load_program
    from app.core.recorder.recorder import record

    return record(load_program(source) if isinstance(source, str) else source, device=device)
