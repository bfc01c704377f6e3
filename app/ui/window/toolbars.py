"""The window's two bars: the main toolbar (program, device, find, fit, theme, text size) and the
playback bar under everything (step controls, then the recording time and the device).

The theme and text-size controls show the window's :class:`~app.ui.style.appearance.Appearance`
and change it; the find field asks the graph's navigation. The status bar shows only while it
has a message: its row is height the graph can use.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QToolBar,
    QToolButton,
    QWidget,
)

from app.ui.graph.graph_navigation import GraphNavigation
from app.ui.runtime.settings import FONT_SCALE_RANGE, THEMES
from app.ui.style.appearance import FONT_STEP, Appearance
from app.ui.style.plain_text import plain
from app.ui.window.actions import WindowActions
from app.ui.window.busy_label import BusyLabel

__all__ = ["WindowBars"]


def _mark_overflow(toolbar: QToolBar) -> None:
    """Give a toolbar's overflow button a visible "»": the themes' button style leaves Qt's own
    arrow out, and on a 1024x768 projector it was an empty box hiding Theme and Text."""
    button = toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
    if button is not None:
        button.setText("»")
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setToolTip("More controls")


class WindowBars:
    """Builds the bars on ``window`` around the given widgets, and wires their controls."""

    def __init__(
        self,
        window: QMainWindow,
        commands: WindowActions,
        program_picker: QComboBox,
        device_selector: QWidget,
        timeline_bar: QWidget,
    ) -> None:
        self._commands = commands
        self.find_field = QLineEdit()
        self.find_field.setPlaceholderText("Find node…")
        self.find_field.setClearButtonEnabled(True)
        self.find_field.setMinimumWidth(self.find_field.fontMetrics().horizontalAdvance("Find node…") + 40)
        self.find_field.setMaximumWidth(220)
        self.find_field.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # arrows stay with stepping at start
        self.font_spin = QDoubleSpinBox()
        self.font_spin.setRange(*FONT_SCALE_RANGE)
        self.font_spin.setSingleStep(FONT_STEP)
        self.font_spin.setSuffix("×")
        self.font_spin.setToolTip("Text size (also Ctrl+wheel)")
        self.font_spin.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.theme_picker = QComboBox()
        self.theme_picker.addItems(list(THEMES))
        self.theme_picker.setToolTip("Colour theme: projector is high contrast for a beamer")
        self.theme_picker.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bar = self.toolbar = QToolBar("Main")
        window.addToolBar(bar)
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.addWidget(QLabel(" Program "))
        bar.addWidget(program_picker)
        bar.addAction(commands.open)
        bar.addSeparator()
        bar.addWidget(QLabel(" Device "))
        bar.addWidget(device_selector)
        bar.addSeparator()
        bar.addWidget(self.find_field)
        bar.addAction(commands.fit)
        bar.addAction(commands.presentation)
        bar.addAction(commands.full_screen)
        bar.addSeparator()  # last: on a narrow window these go behind the toolbar's » (View menu too)
        bar.addWidget(QLabel(" Theme "))
        bar.addWidget(self.theme_picker)
        bar.addWidget(QLabel(" Text "))
        bar.addWidget(self.font_spin)
        self.playback_bar = QToolBar("Playback")  # under everything: the buttons get the full width
        self.playback_bar.setObjectName("playbackToolbar")
        self.playback_bar.setMovable(False)
        self.playback_bar.addWidget(timeline_bar)
        window.addToolBar(Qt.ToolBarArea.BottomToolBarArea, self.playback_bar)
        self._build_status(window)
        for toolbar in (bar, self.playback_bar):
            _mark_overflow(toolbar)

    def _build_status(self, window: QMainWindow) -> None:
        """Recording time and device at the end of the playback bar."""
        self.device_label = plain(QLabel("Device: –"))
        self.busy_label = BusyLabel()
        corner = QWidget()  # in a widget of their own: a toolbar decides its widgets' visibility
        layout = QHBoxLayout(corner)
        layout.setContentsMargins(6, 0, 4, 0)
        layout.addWidget(self.device_label)  # the busy label floats over the graph (float_over)
        self.playback_bar.addWidget(corner)
        status = window.statusBar()
        status.hide()
        status.messageChanged.connect(lambda text: status.setVisible(bool(text)))

    def bind(self, appearance: Appearance, navigation: GraphNavigation) -> None:
        """The theme and text controls show ``appearance`` and change it; find asks ``navigation``."""
        themes = self._commands.themes
        self.theme_picker.activated.connect(lambda at: appearance.set_theme(self.theme_picker.itemText(at)))
        themes.triggered.connect(lambda action: appearance.set_theme(str(action.data())))
        self.font_spin.valueChanged.connect(appearance.set_font_scale)
        appearance.theme_changed.connect(self._show_theme)
        appearance.font_scale_changed.connect(self._show_font_scale)
        self.find_field.returnPressed.connect(lambda: navigation.find(self.find_field.text()))
        self._commands.find.triggered.connect(lambda checked=False: self._focus_find())

    def _show_theme(self, name: str) -> None:
        self.theme_picker.setCurrentText(name)
        action: QAction
        for action in self._commands.themes.actions():
            action.setChecked(action.data() == name)

    def _show_font_scale(self, scale: float) -> None:
        self.font_spin.blockSignals(True)
        self.font_spin.setValue(scale)
        self.font_spin.blockSignals(False)

    def _focus_find(self) -> None:
        self.find_field.setFocus()
        self.find_field.selectAll()
