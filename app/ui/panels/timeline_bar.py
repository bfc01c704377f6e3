"""Step controls: back/forward by node and by call, Home/End, play/pause with a speed, a slider.

Under the slider, marks show where each call and loop iteration begins (a
click jumps there; see ``timeline_marks``). The buttons name their keys in
their tooltips; the keys themselves are window actions (see ``actions``), so
they work wherever the focus is.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QPushButton,
    QSlider,
    QStyle,
    QStyleOptionButton,
    QStyleOptionSlider,
    QVBoxLayout,
    QWidget,
)

from app.ui.panels.timeline_marks import TimelineMarks
from app.ui.runtime.session import SPEEDS, Session

__all__ = ["MIN_TRACK_PX", "TimelineBar"]

MIN_TRACK_PX = 160  # narrower than this, the track moves to a row of its own above the buttons


PLAY_FACES = ("▶ Play", "❚❚ Pause")


class FacedButton(QPushButton):
    """A button whose text switches between ``faces`` and whose size fits the widest of them,
    so "▶ Play" turning into "❚❚ Pause" moves nothing beside it (measured as QPushButton
    measures its own text, through the style)."""

    def __init__(self, faces: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(faces[0], parent)
        self._faces = faces

    def _hint_for(self, text: str) -> QSize:
        option = QStyleOptionButton()
        self.initStyleOption(option)
        option.text = text
        size = self.fontMetrics().size(Qt.TextFlag.TextShowMnemonic, text)
        option.rect.setSize(size)
        return self.style().sizeFromContents(QStyle.ContentsType.CT_PushButton, option, size, self)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        for face in self._faces:
            hint = hint.expandedTo(self._hint_for(face))
        return hint

    def minimumSizeHint(self) -> QSize:
        return self._hint_for(self.text())  # squeezed (a small screen), it may change with its face


class TimelineBar(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.home_button = self._button("|◀ Start", "Jump to the first step (Home)", session.home)
        self.prev_call_button = self._button("◀◀ Call", "Back one call (Shift+Left)", session.prev_call)
        self.prev_button = self._button("◀ Step", "Back one node (Left)", session.prev_step)
        self.play_button = self._button(PLAY_FACES, "Play / pause (Space)", session.toggle_play)
        self.next_button = self._button("Step ▶", "Forward one node (Right)", session.next_step)
        self.next_call_button = self._button("Call ▶▶", "Forward one call (Shift+Right)", session.next_call)
        self.end_button = self._button("End ▶|", "Jump to the last step (End)", session.end)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip(
            "Every recorded step; drag to scrub. Marks below: calls (Shift+Left/Right) "
            "and loop iterations (Ctrl+Left/Right)"
        )
        self.slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.slider.setPageStep(1)
        self.slider.valueChanged.connect(self._on_slider_moved)
        self._track: tuple[float, int, int, int, bool] | None = None  # see _slider_track
        self._track_key: tuple[object, ...] | None = None
        self.marks = TimelineMarks(session)
        self.marks.set_placement(self._slider_x)
        self.speed = QComboBox()
        self.speed.setToolTip("Play speed, steps per second")
        self.speed.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for value in SPEEDS:
            self.speed.addItem(f"{value:g} steps/s", value)
        self.speed.setCurrentIndex(SPEEDS.index(session.speed) if session.speed in SPEEDS else 0)
        self.speed.currentIndexChanged.connect(self._on_speed_chosen)
        self._lay_out()
        self.setEnabled(False)
        session.recording_applied.connect(self._on_recording_applied)
        session.step_applied.connect(self._on_step_applied)
        session.playing_changed.connect(self._on_playing_changed)

    def _button(self, text: str | tuple[str, ...], tip: str, slot: object) -> QPushButton:
        button = FacedButton(text) if isinstance(text, tuple) else QPushButton(text)
        button.setToolTip(tip)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keep arrow keys for the window's actions
        button.clicked.connect(slot)
        return button

    def _lay_out(self) -> None:
        """Buttons, the track (slider over its marks) and the speed in one row; the track gets a row
        of its own above the buttons when the bar is too narrow for it (large text, a small screen)."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 4, 6, 4)
        outer.setSpacing(2)
        self._track_row = QHBoxLayout()
        self._buttons_row = QHBoxLayout()
        outer.addLayout(self._track_row)
        outer.addLayout(self._buttons_row)
        self.track = QWidget()
        track = QVBoxLayout(self.track)  # the marks sit right under the slider, step for step
        track.setContentsMargins(0, 0, 0, 0)
        track.setSpacing(0)
        track.addWidget(self.slider)
        track.addWidget(self.marks)
        self._fixed: list[QWidget] = [
            self.home_button,
            self.prev_call_button,
            self.prev_button,
            self.play_button,
        ]
        for widget in self._fixed:
            self._buttons_row.addWidget(widget)
        self._buttons_row.addWidget(self.track, 1)
        right: list[QWidget] = [
            self.next_button,
            self.next_call_button,
            self.end_button,
            self.speed,
        ]
        for widget in right:
            self._buttons_row.addWidget(widget)
        self._fixed += right
        self._narrow = False

    @property
    def track_on_own_row(self) -> bool:
        return self._narrow

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_track(event.size().width())

    def _fit_track(self, width: int) -> None:
        spacing = max(self._buttons_row.spacing(), 0)
        fixed = sum(w.sizeHint().width() + spacing for w in self._fixed) + 12
        narrow = width - fixed < MIN_TRACK_PX
        if narrow == self._narrow:
            return
        self._narrow = narrow
        track_at = 4  # after the four buttons on the left
        if narrow:
            self._buttons_row.removeWidget(self.track)
            self._buttons_row.insertStretch(track_at, 1)
            self._track_row.addWidget(self.track)
        else:
            self._track_row.removeWidget(self.track)
            self._buttons_row.takeAt(track_at)  # the stretch that held the track's place
            self._buttons_row.insertWidget(track_at, self.track, 1)

    def _slider_x(self, value: int) -> float:
        """The x of the slider's handle centre at ``value`` (the marks share the slider's left edge)."""
        left, span, low, high, upside_down = self._slider_track()
        return left + QStyle.sliderPositionFromValue(low, high, value, span, upside_down)

    def _slider_track(self) -> tuple[float, int, int, int, bool]:
        """Where the handle's centre can go: its leftmost x, the span, the range, the direction.
        Asked of the style once per size, range and look (a loop's marks ask it hundreds of times)."""
        slider = self.slider
        key = (
            slider.size(),
            slider.minimum(),
            slider.maximum(),
            slider.invertedAppearance(),
            slider.isRightToLeft(),
        )
        if self._track_key != key or self._track is None:
            option = QStyleOptionSlider()
            slider.initStyleOption(option)
            style, control = slider.style(), QStyle.ComplexControl.CC_Slider
            groove = style.subControlRect(control, option, QStyle.SubControl.SC_SliderGroove, slider)
            handle = style.subControlRect(control, option, QStyle.SubControl.SC_SliderHandle, slider)
            span = max(groove.width() - handle.width(), 1)
            self._track = (
                groove.x() + handle.width() / 2,
                span,
                option.minimum,
                option.maximum,
                option.upsideDown,
            )
            self._track_key = key
        return self._track

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (
            QEvent.Type.StyleChange,
            QEvent.Type.FontChange,
            QEvent.Type.LayoutDirectionChange,
        ):
            self._track = None  # another handle size: asked of the style again

    def _on_recording_applied(self, recording: object) -> None:
        self.setEnabled(True)
        self.slider.blockSignals(True)
        self.slider.setRange(0, self._session.last_index)
        self.slider.blockSignals(False)

    def _on_step_applied(self, index: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(index)
        self.slider.blockSignals(False)
        at_end, at_start = index >= self._session.last_index, index <= 0
        for button in (self.prev_button, self.prev_call_button, self.home_button):
            button.setEnabled(not at_start)
        for button in (self.next_button, self.next_call_button, self.end_button):
            button.setEnabled(not at_end)
        self.play_button.setEnabled(self._session.last_index > 0)  # one step: nothing to play

    def _on_slider_moved(self, value: int) -> None:
        self._session.go_to(value)

    def _on_speed_chosen(self, position: int) -> None:
        self._session.set_speed(float(self.speed.itemData(position)))

    def _on_playing_changed(self, playing: bool) -> None:
        self.play_button.setText(PLAY_FACES[1] if playing else PLAY_FACES[0])
