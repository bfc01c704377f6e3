"""Playing a recording: a timer that steps the :class:`~app.ui.runtime.session.Session` forward."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, QTimer

if TYPE_CHECKING:
    from app.ui.runtime.session import Session

__all__ = ["Player"]


class Player(QObject):
    """Steps its session forward at ``speed`` steps per second until the last step; the session
    announces the change with its ``playing_changed`` signal."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)  # its Qt parent, not a Python reference: no cycle to collect
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_tick)
        self._speed = 2.0
        self.set_speed(self._speed)

    @property
    def _session(self) -> Session:
        return cast("Session", self.parent())

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    @property
    def speed(self) -> float:
        return self._speed

    def set_speed(self, steps_per_second: float) -> None:
        self._speed = max(0.1, float(steps_per_second))
        self._timer.setInterval(round(1000 / self._speed))

    def play(self) -> None:
        session = self._session
        if session.recording is None or self.playing:
            return
        if session.index >= session.last_index:
            session.go_to(0)
        self._timer.start()
        session.playing_changed.emit(True)

    def pause(self) -> None:
        if self.playing:
            self._timer.stop()
            self._session.playing_changed.emit(False)

    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def _on_tick(self) -> None:
        session = self._session
        if session.index >= session.last_index:
            self.pause()
            return
        session.next_step()
        if session.index >= session.last_index:
            self.pause()
