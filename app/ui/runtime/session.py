"""The window's view model: the current recording and the step shown.

Views read from a :class:`Session` and call its methods; they never touch
torch. Stepping back replays ``timeline.state(i)`` (a recorded snapshot); a
change to the program or the device asks the worker for a new recording, and
the previous one stays on screen until the new one arrives, or for good when
the new one fails.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QObject, Signal

from app.core.model.errors import UserError
from app.ui.runtime.collector import GuiCollector
from app.ui.runtime.player import Player
from app.ui.runtime.worker import RecordingFailure, RecordingResult, RecordingWorker

if TYPE_CHECKING:
    from app.core.model.program import Program
    from app.core.model.recording import Recording
    from app.core.model.timeline import StepState

__all__ = ["SPEEDS", "Session", "call_starts", "iteration_starts"]

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0)  # steps per second
Mode = Literal["start", "keep"]


def call_starts(recording: Recording) -> list[int]:
    """The step where each call begins: its ``call`` differs from the step before's."""
    return list(recording.timeline.call_starts())


def iteration_starts(recording: Recording) -> list[int]:
    """The first step of each loop iteration: inside a loop, with loop counters that are not those of
    the step before or of a loop around it (leaving an inner loop goes on the same outer iteration).

    >>> from app.core import load_builtin, record
    >>> iteration_starts(record(load_builtin("logged-loss")))
    [0, 8, 17]
    """
    return list(recording.timeline.iteration_starts())


class Session(QObject):
    """Current recording + current step index, and the logic to move between steps."""

    step_applied = Signal(int)  # the step now shown (after recording_applied too)
    recording_applied = Signal(object)  # a new Recording is on screen
    busy_changed = Signal(bool)  # a recording is being made
    failed = Signal(str)  # a recording could not be made; the previous one stays
    cleared = Signal()  # no recording on screen any more (a refused file's text is in the editor)
    playing_changed = Signal(bool)

    def __init__(self, worker: RecordingWorker | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        GuiCollector.install()  # NOTE [collect on the GUI thread]
        self.worker = worker or RecordingWorker(self)
        self._recording: Recording | None = None
        self._index = 0
        self._state: StepState | None = None
        self._requested: Program | None = None
        self._undo: list[Program] = []  # programs before each change_program, newest last
        self.last_change: tuple[str, str] | None = None  # the last change_program's text: before, after
        self._default_device = "cpu"
        self._modes: dict[int, Mode] = {}
        self.layout: Any | None = None
        self.layout_error: str | None = None
        self.shown: Any | None = None  # app.render.states.ShownStates of the recording, when prepared
        self.last_error: BaseException | None = None
        self.opened = False  # the recording on screen was opened afresh, not a change of the last
        self.read_from_file = False  # the recording on screen was read from a .lens file, not recorded
        self._reads: dict[int, bool] = {}
        self.player = Player(self)
        # playing is the player's; the session keeps its controls for the views that call them
        self.set_speed: Callable[[float], None] = self.player.set_speed
        self.play: Callable[[], None] = self.player.play
        self.pause: Callable[[], None] = self.player.pause
        self.toggle_play: Callable[[], None] = self.player.toggle
        self.worker.finished.connect(self._on_result)
        self.worker.failed.connect(self._on_failure)
        self.worker.busy_changed.connect(self.busy_changed)

    # -- what is shown -----------------------------------------------------------
    @property
    def recording(self) -> Recording | None:
        return self._recording

    @property
    def index(self) -> int:
        return self._index

    @property
    def last_index(self) -> int:
        return len(self._recording.timeline) - 1 if self._recording else 0

    @property
    def device(self) -> str:
        return self._recording.device if self._recording else self._default_device

    @property
    def program(self) -> Program | None:
        """The newest program asked for (pending or recorded): what the next change builds on."""
        if self._requested is not None:
            return self._requested
        return self._recording.program if self._recording else None

    @property
    def busy(self) -> bool:
        return self.worker.busy

    def state(self) -> StepState | None:
        """The full recorded state of the current step (replayed once per step)."""
        if self._recording is None:
            return None
        if self._state is None or self._state.step.index != self._index:
            self._state = self._recording.timeline.state(self._index)
        return self._state

    # -- asking for recordings --------------------------------------------------
    def load(self, source: Program | str | Path, device: str | None = None) -> int:
        """Record a program (object, built-in name, .toml or .py path), or read a ``.lens`` file;
        show it from step 0."""
        self._undo.clear()
        self.last_change = None
        return self._request(source, device or self.device, "start")

    def change_program(self, program: Program) -> int:
        """Record an edit the window made (a keyword toggled, a fix); :meth:`undo` takes it back."""
        current = self.program
        if current is not None:
            self._undo.append(current)
            self.last_change = (current.code, program.code)
        return self.rerecord(program)

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    def undo(self) -> int | None:
        """Record the program as it was before the last :meth:`change_program`."""
        if not self._undo:
            return None
        return self.rerecord(self._undo.pop())

    def rerecord(self, program: Program) -> int:
        """Record a changed program on the current device, staying near the current step."""
        return self._request(program, self.device, "keep")

    def set_device(self, name: str) -> int | None:
        """Record the current program again on ``name``."""
        if self._recording is None:
            self._default_device = name
            return None
        return self._request(self.program or self._recording.program, name, "keep")

    def _request(self, source: Program | str | Path, device: str, mode: Mode) -> int:
        self._requested = None if isinstance(source, (str, Path)) else source
        number = self.worker.request(source, device)
        self._modes = {number: mode}  # older requests are dropped by the worker
        self._reads = {number: _is_lens(source)}
        return number

    def _on_result(self, result: RecordingResult) -> None:
        mode = self._modes.pop(result.request, "keep")
        read = self._reads.pop(result.request, False)
        self._requested = None
        self.apply(
            result.recording, result.layout, result.layout_error, mode=mode, shown=result.shown, read=read
        )

    def _on_failure(self, failure: RecordingFailure) -> None:
        self._modes.pop(failure.request, None)
        self._reads.pop(failure.request, None)
        self._requested = None
        self.last_error = failure.error
        self.failed.emit(failure.message)

    def apply(
        self,
        recording: Recording,
        layout: Any | None = None,
        layout_error: str | None = None,
        *,
        mode: Mode = "start",
        shown: Any | None = None,
        read: bool = False,
    ) -> None:
        """Put ``recording`` on screen (also the seam tests use to skip the worker).

        ``shown``: its ``ShownStates``, prepared off the GUI thread (the graph view builds one if None).
        ``read``: it was read from a ``.lens`` file (NOTE [a .lens runs nothing]).
        """
        self.pause()
        self._index = self._start_index(recording, mode)  # from the recording shown until now
        self._recording = recording
        self._state = None
        self.opened = mode == "start"
        self.read_from_file = read
        self.layout, self.layout_error, self.shown = layout, layout_error, shown
        self.last_error = None
        self.recording_applied.emit(recording)
        self.step_applied.emit(self._index)

    def _start_index(self, recording: Recording, mode: Mode) -> int:
        if mode == "start" or recording.failed is not None or recording.error is not None:
            return recording.opening_step  # a failure, or the program's own error, where it happened
        return min(self._kept_index(recording), len(recording.timeline) - 1)

    def _kept_index(self, recording: Recording) -> int:
        """Where a changed program opens: the step shown, unless that was a failed call's end.

        Then the same call of the new recording, at its end: where the error used to be (a fix or a
        toggle adds or moves lines, so the old step number is another step now). A fix may join the
        calls ("add the losses, one backward"): the last call there is, then.
        """
        old = self._recording
        failed = None if old is None else old.failed
        if failed is None or self._index != failed.last_step or not recording.calls:
            return self._index
        return recording.calls[min(failed.index, len(recording.calls) - 1)].last_step

    def clear(self) -> None:
        """Show no recording: the program in the editor is not the one recorded, and cannot be."""
        self.pause()
        self._recording, self._state, self._index, self._requested = None, None, 0, None
        self.cleared.emit()

    # -- stepping -------------------------------------------------------------------
    def go_to(self, index: int) -> None:
        if self._recording is None:
            return
        index = min(max(index, 0), self.last_index)
        if index != self._index:
            try:  # a .lens file's steps are checked as they are first shown (NOTE [steps on demand])
                state = self._recording.timeline.state(index)
            except UserError as exc:  # a damaged step: said, and the step shown stays
                self.pause()
                self.last_error = exc
                self.failed.emit(str(exc))
                return
            self._index, self._state = index, state
            self.step_applied.emit(index)

    def next_step(self) -> None:
        self.go_to(self._index + 1)

    def prev_step(self) -> None:
        self.go_to(self._index - 1)

    def home(self) -> None:
        self.go_to(0)

    def end(self) -> None:
        self.go_to(self.last_index)

    def call_stops(self) -> list[int]:
        """Where a call step lands: the first step, then the last step of every call."""
        if self._recording is None:
            return []
        return sorted({0, *(info.last_step for info in self._recording.calls)})

    def iteration_stops(self) -> list[int]:
        """Where an iteration step lands: the first step of every loop iteration."""
        return [] if self._recording is None else iteration_starts(self._recording)

    def next_iteration(self) -> None:
        """The first step of the next loop iteration (Ctrl+Right); the last step after the last one."""
        later = [i for i in self.iteration_stops() if i > self._index]
        self.go_to(later[0] if later else self.last_index)

    def previous_iteration(self) -> None:
        """The first step of this iteration, or of the one before when already there (Ctrl+Left)."""
        earlier = [i for i in self.iteration_stops() if i < self._index]
        self.go_to(earlier[-1] if earlier else 0)

    def next_call(self) -> None:
        later = [i for i in self.call_stops() if i > self._index]
        self.go_to(later[0] if later else self.last_index)

    def prev_call(self) -> None:
        earlier = [i for i in self.call_stops() if i < self._index]
        self.go_to(earlier[-1] if earlier else 0)

    # -- playing ----------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self.player.playing

    @property
    def speed(self) -> float:
        return self.player.speed


def _is_lens(source: Program | str | Path) -> bool:
    """A ``.lens`` file read as data: any but the recording of the user's own script that ``run``
    or the trusted-script button made for this window (NOTE [a .lens runs nothing])."""
    from app.child.own_recording import is_own_recording  # not proofs: no lesson modules yet
    from app.core.lensfile import is_lens

    return isinstance(source, (str, Path)) and is_lens(source) and not is_own_recording(Path(source))
