"""The Autograd Lens window: every panel built on one :class:`Session`.

The window makes the views and wires them: the commands are in ``actions.py``,
the docks around the graph in ``docks.py`` (and F5's layout in
``presentation.py``), theme and text scale in ``appearance.py``, zoom and find
in ``graph_navigation.py``, pictures in ``slides.py``. It computes no autograd
fact: each view reads the session's recording.

# NOTE [fast start]
The GUI thread never imports torch: recordings are made in a child process,
which starts importing it before Qt is loaded (the window's process imports it
later, on a pool thread, for the editor's checks). The window paints at once;
its graph view and legend (their modules and widgets, ~60-90 ms) are made right
after the window's first frame, in the idle time while the child is still
starting, rather than in the turn the first recording arrives, where they stood
between it and its first paint. The editor is made after the first graph is
painted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QScreen, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QScrollArea,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.core.resources import resource_path, scenario_files
from app.ui.actions import WindowActions, build_menus
from app.ui.after_paint import after_first_paint
from app.ui.appearance import FONT_STEP, Appearance
from app.ui.busy_label import BusyLabel
from app.ui.call_toggles import CallToggles
from app.ui.caption_bar import CaptionBar
from app.ui.code_panel import CodePanel
from app.ui.device_selector import DeviceSelector
from app.ui.docks import DockLayout
from app.ui.error_panel import ErrorPanel
from app.ui.grad_panel import GradPanel
from app.ui.graph_navigation import GraphNavigation
from app.ui.layout_fence import LayoutFence
from app.ui.memory_chart import MemoryChart
from app.ui.node_details import NodeDetails
from app.ui.notice import NoticeBanner
from app.ui.plain_text import plain
from app.ui.predict import PredictPanel
from app.ui.presentation import Presentation
from app.ui.screen_fit import clamp_geometry, dock_plan, fills_screen, fresh_geometry
from app.ui.session import Session
from app.ui.settings import DEFAULT_SCENARIO, FONT_SCALE_RANGE, THEMES, AppSettings
from app.ui.slides import SlideExporter
from app.ui.stage import CaptionRoom, Stage
from app.ui.step_counter import StepCounter
from app.ui.timeline_bar import TimelineBar
from app.ui.torchviz_exporter import TorchvizExporter

if TYPE_CHECKING:  # imported for real later (see NOTE [fast start])
    from app.core.model.program import Program
    from app.core.model.recording import Recording
    from app.core.model.timeline import StepState
    from app.ui.editor import ProgramEditor
    from app.ui.file_actions import FileController
    from app.ui.graph_preview import GraphPreview
    from app.ui.graph_view import GraphView
    from app.ui.legend import Legend

__all__ = ["MainWindow"]


GRAPH_PAGE, MESSAGE_PAGE = 1, 0
SUMMARY_LINES = 3  # the program's summary over the editor, at most; it scrolls beyond


@functools.cache  # the shipped scenarios do not change while the window runs
def _builtin_names() -> list[str]:
    return [path.stem for path in scenario_files()]


def _mark_overflow(toolbar: QToolBar) -> None:
    """Give a toolbar's overflow button a visible "»": the themes' button style leaves Qt's own
    arrow out, and on a 1024x768 projector it was an empty box hiding Theme and Text."""
    from PySide6.QtWidgets import QToolButton

    button = toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
    if button is not None:
        button.setText("»")
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setToolTip("More controls")


def _step_node(state: StepState, *, running: bool) -> str | None:
    """The node a step is about, to show readable (NOTE [auto fit]): the node an error step failed
    at, and with ``running`` the node a backward step ran or the last node a line's forward step
    added; None for every other step and for an error that no node raised."""
    step = state.step
    if step.kind == "error" or (running and step.kind == "node"):
        return step.node
    if running and step.kind == "forward" and step.added_nodes:
        return step.added_nodes[-1]
    return None


class _CodeColumn(QWidget):
    """The code dock's column. In its dock's scroll area (``docks.py``) a wrapped summary made it
    as tall as its size hint for the width (608 px in a 392 px dock with Predict's question): the
    editor ran below the dock. It asks for its least height, as it did in a dock of its own: the
    dock scrolls only when it is shorter than that."""

    def heightForWidth(self, width: int) -> int:
        return self.minimumSizeHint().height()


class MainWindow(QMainWindow):
    """The whole program's window. Call :meth:`start` to record the first program."""

    slides_exported = Signal(object)  # list[Path], after "Export every step"
    notice_shown = Signal(str)

    def __init__(
        self,
        settings: AppSettings,
        scenario: str | Path | None = None,
        *,
        session: Session | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.session = session or Session(parent=self)
        self._first_scenario = str(scenario) if scenario else settings.last_scenario
        self._fresh_load = True
        self._shipped: dict[str, str] = {}  # each built-in's text as the window loaded it
        self._fresh_docks = False  # arranged by the plan, not restored: sized when first shown
        self._closed_panels: tuple[str, ...] = ()  # kept closed when the layout is arranged afresh
        self._editor_sync: Callable[[], None] | None = None  # the editor's copy, once the graph is built
        self.graph_view: GraphView | None = None  # made after the first frame (NOTE [fast start])
        self.legend: Legend | None = None
        self._fences_stale = False  # a new recording: measure the fences at its first step
        self.editor: ProgramEditor | None = None
        self._lens_path: Path | None = None  # the .lens file on screen, when one was opened
        self.files: FileController | None = None
        self.appearance = Appearance(settings, self)
        self.navigation = GraphNavigation(self)
        self.commands = WindowActions(self)
        self.exporter = SlideExporter(self, self.session, lambda: self.graph_view, lambda: self.theme)
        self.torchviz_exporter = TorchvizExporter(self)
        self._build_views()
        self._build_toolbar()
        self._build_status_bar()
        self._lay_out()
        self.recent_menu = QMenu("Open &Recent", self)
        panels_separator = QAction(self)
        panels_separator.setSeparator(True)
        panel_entries = [*self.docks.toggle_actions(), panels_separator, self.docks.reset_action]
        build_menus(self, self.commands, self.recent_menu, panel_entries)
        self.presentation = Presentation(
            self, self.docks, [self.menuBar(), self.toolbar, self.statusBar(), self.playback_bar]
        )
        self._connect()
        self._restore()

    # -- building ----------------------------------------------------------------
    def _build_views(self) -> None:
        session = self.session
        self.code_panel = CodePanel(session)
        self.call_toggles = CallToggles(session)
        self.node_details = NodeDetails(session)
        self.caption_bar = CaptionBar(session)
        self.error_panel = ErrorPanel(session)
        self.grad_panel = GradPanel(session)
        self.memory_chart = MemoryChart(session)
        self.step_counter = StepCounter(session)
        self.timeline_bar = TimelineBar(session)
        self.device_selector = DeviceSelector(session)
        self.notice = NoticeBanner()
        self._build_graph_area()
        self._build_code_column()
        self._build_controls()

    def _build_graph_area(self) -> None:
        self.graph_message = plain(QLabel("Recording the program…"))
        self.graph_message.setObjectName("graphMessage")
        self.graph_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.graph_message.setWordWrap(True)
        self.graph_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.graph_page = QWidget()
        # one cell: the graph view (made after the first frame) under the preview a big .lens
        # file opens with (lensfile.format's NOTE [picture first]), shown until the view draws the graph
        self.graph_page_layout = QGridLayout(self.graph_page)
        self.graph_page_layout.setContentsMargins(0, 0, 0, 0)
        self.graph_preview: GraphPreview | None = None  # made when a file with a preview is opened
        self._previewed: object | None = None  # the source whose preview is shown, until it is read
        self.graph_stack = QStackedWidget()
        self.graph_stack.addWidget(self.graph_message)
        self.graph_stack.addWidget(self.graph_page)

    def _build_code_column(self) -> None:
        """The program's summary over its code: one editor that also marks the step that runs."""
        self.summary = plain(QLabel(""))
        self.summary.setObjectName("scenarioSummary")
        self.summary.setWordWrap(True)
        self.summary.setProperty("role", "hint")
        self.code_column = _CodeColumn()
        layout = self.code_column_layout = QVBoxLayout(self.code_column)
        layout.setContentsMargins(4, 4, 4, 4)
        self.summary_room = CaptionRoom(self.summary)  # at most SUMMARY_LINES, scrolling beyond
        layout.addWidget(self.summary_room)
        layout.addWidget(self.code_panel, 1)  # until the editor is made around it (NOTE [fast start])
        self.predict_panel = PredictPanel(self.session)  # Predict first (P): hidden until asked for
        layout.addWidget(self.predict_panel, 1)  # shown, it shares the column's height with the code
        self.legend_area = QScrollArea()  # the legend's dock: it scrolls when the dock is small
        self.legend_area.setWidgetResizable(True)
        self.legend_area.setFrameShape(QFrame.Shape.NoFrame)

    def _build_controls(self) -> None:
        self.scenario_picker = QComboBox()
        self.scenario_picker.setToolTip("Built-in programs (File ▸ Open… for a .toml, .py or .lens file)")
        self.scenario_picker.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scenario_picker.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.scenario_picker.setMinimumContentsLength(14)  # long file names are cut, not the toolbar
        self.scenario_picker.addItems(_builtin_names())
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

    def _build_toolbar(self) -> None:
        bar = self.toolbar = QToolBar("Main")
        self.addToolBar(bar)
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.addWidget(QLabel(" Program "))
        bar.addWidget(self.scenario_picker)
        bar.addAction(self.commands.open)
        bar.addSeparator()
        bar.addWidget(QLabel(" Device "))
        bar.addWidget(self.device_selector)
        bar.addSeparator()
        bar.addWidget(self.find_field)
        bar.addAction(self.commands.fit)
        bar.addAction(self.commands.presentation)
        bar.addAction(self.commands.full_screen)
        bar.addSeparator()  # last: on a narrow window these go behind the toolbar's » (View menu too)
        bar.addWidget(QLabel(" Theme "))
        bar.addWidget(self.theme_picker)
        bar.addWidget(QLabel(" Text "))
        bar.addWidget(self.font_spin)
        self.playback_bar = QToolBar("Playback")  # under everything: the buttons get the full width
        self.playback_bar.setObjectName("playbackToolbar")
        self.playback_bar.setMovable(False)
        self.playback_bar.addWidget(self.timeline_bar)
        self.addToolBar(Qt.ToolBarArea.BottomToolBarArea, self.playback_bar)
        for toolbar in (bar, self.playback_bar):
            _mark_overflow(toolbar)

    def _build_status_bar(self) -> None:
        """Recording time and device at the end of the playback bar. The status bar shows only
        while it has a message: its row is height the graph can use."""
        self.device_label = plain(QLabel("Device: –"))
        self.busy_label = BusyLabel()
        corner = QWidget()  # in a widget of their own: a toolbar decides its widgets' visibility
        layout = QHBoxLayout(corner)
        layout.setContentsMargins(6, 0, 4, 0)
        layout.addWidget(self.busy_label)
        layout.addWidget(self.device_label)
        self.playback_bar.addWidget(corner)
        status = self.statusBar()
        status.hide()
        status.messageChanged.connect(lambda text: status.setVisible(bool(text)))

    def _lay_out(self) -> None:
        """The stage (caption, step counter, error, graph) in the centre; the panels in docks."""
        # NOTE [layout fences]: the two panels whose text changes at every step
        self.fences = [LayoutFence(self.step_counter), LayoutFence(self.node_details)]
        counter, details = self.fences
        stage = self.stage = Stage(self.notice, self.caption_bar, counter, self.error_panel, self.graph_stack)
        self.setCentralWidget(stage)
        panels: dict[str, QWidget] = {
            "code": self.code_column,
            "details": details,
            "calls": self.call_toggles,
            "gradients": self.grad_panel,
            "memory": self.memory_chart,
            "legend": self.legend_area,
        }
        self.docks = DockLayout(self, panels)

    def _connect(self) -> None:
        s, c, nav, look = self.session, self.commands, self.navigation, self.appearance
        handlers: list[tuple[QAction, Callable[[], object]]] = [
            (c.next_step, s.next_step),
            (c.prev_step, s.prev_step),
            (c.next_call, s.next_call),
            (c.prev_call, s.prev_call),
            (c.next_iteration, s.next_iteration),
            (c.previous_iteration, s.previous_iteration),
            (c.home, s.home),
            (c.end, s.end),
            (c.play, s.toggle_play),
            (c.full_screen, self._on_full_screen_toggled),
            (c.presentation, self.presentation.toggle),
            (c.zoom_in, nav.zoom_in),
            (c.zoom_out, nav.zoom_out),
            (c.fit, nav.fit),
            (c.larger_text, look.larger),
            (c.smaller_text, look.smaller),
            (c.normal_text, look.reset),
            (c.find, self._on_find_requested),
            (c.open, self._on_open_requested),
            (c.save, self._on_save_requested),
            (c.save_as, self._on_save_as_requested),
            (c.export_svg, lambda: self.exporter.ask_and_export_view("svg")),
            (c.export_png, lambda: self.exporter.ask_and_export_view("png")),
            (c.export_slides, self.exporter.ask_and_export_slides),
            (c.export_torchviz, self._on_export_torchviz_requested),
            (c.quit, self.close),
            (c.undo, self._on_undo_requested),
            (c.new, lambda: self.files.new_program() if self.files else None),
            (c.details, lambda: self.editor.edit_details() if self.editor else None),
        ]
        for action, handler in handlers:
            action.triggered.connect(lambda checked=False, run=handler: run())
        c.themes.triggered.connect(self._on_theme_action)
        c.predict.toggled.connect(self.predict_panel.set_active)
        c.follow.setChecked(self.settings.follow_nodes)
        c.follow.toggled.connect(self._on_follow_toggled)
        s.recording_applied.connect(self._on_recording_applied)
        s.step_applied.connect(self._on_step_applied)
        s.busy_changed.connect(self._on_busy_changed)
        s.failed.connect(self._on_failed)
        self.scenario_picker.activated.connect(self._on_scenario_chosen)
        self.recent_menu.aboutToShow.connect(self._update_recent_menu)
        self.theme_picker.activated.connect(self._on_theme_chosen)
        self.font_spin.valueChanged.connect(self.set_font_scale)
        self.find_field.returnPressed.connect(self._on_find_entered)
        look.theme_changed.connect(self._on_theme_changed)
        look.font_scale_changed.connect(self._on_font_scale_changed)
        look.watch_wheel(self)
        nav.not_found.connect(lambda text: self.statusBar().showMessage(f"No node matches “{text}”", 5000))
        nav.node_found.connect(self.node_details.show_node)
        self.exporter.busy_changed.connect(self._on_busy_changed)
        self.exporter.wrote.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.exporter.failed.connect(self.show_notice)
        self.exporter.slides_exported.connect(self.slides_exported)
        self.torchviz_exporter.busy_changed.connect(self._on_busy_changed)
        self.torchviz_exporter.wrote.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.torchviz_exporter.failed.connect(self.show_notice)
        self.presentation.toggled.connect(self._on_presentation_toggled)
        self.docks.reset_action.triggered.connect(self.reset_panels)
        self.notice.shown.connect(self.notice_shown)

    # -- where the window goes ------------------------------------------------------------
    def _restore(self) -> None:
        self.place_on(self.screen())
        self.font_spin.setValue(self.font_scale)
        self.set_theme(self.theme)  # applies the stylesheet at the remembered font scale
        QTimer.singleShot(0, self._limit_summary)  # once the summary has the theme's font

    def place_on(self, screen: QScreen) -> None:
        """The remembered geometry, made to fit ``screen``; else a fresh one that fits it."""
        available = screen.availableGeometry()
        remembered = self.settings.geometry
        if remembered is not None and self.restoreGeometry(remembered):
            self.setGeometry(clamp_geometry(self.geometry(), available))
        else:
            self.setGeometry(fresh_geometry(available))
            if fills_screen(available.size()):
                self.setWindowState(Qt.WindowState.WindowMaximized)
        state, saved_in = self.settings.dock_state, self.settings.dock_room
        if saved_in is not None and (
            saved_in.width() > available.width() or saved_in.height() > available.height()
        ):
            # saved in a larger window: its columns' widths left the graph ~530x240 px of a
            # 1280x720 screen. Arranged afresh for this one, with the same panels closed.
            state, self._closed_panels = None, tuple(self.settings.closed_panels)
        self._fresh_docks = not self.docks.restore(state)
        if self._fresh_docks:
            self.docks.arrange(dock_plan(self.width(), self.font_scale), self._closed_panels)

    def reset_panels(self) -> None:
        """View ▸ Panels ▸ Reset panels: every panel shown, docked and sized as on a fresh start."""
        self.presentation.leave()
        for dock in self.docks.docks.values():
            dock.setFloating(False)
        self.docks.arrange(dock_plan(self.width(), self.font_scale))
        self.docks.size_columns(dock_plan(self.width(), self.font_scale), self.height())
        self.navigation.fit_soon(100)

    def set_size(self, width: int, height: int) -> None:
        """Exactly this size (screenshots, tests), with the docks a fresh start would give it."""
        self.setWindowState(Qt.WindowState.WindowNoState)
        self.resize(width, height)
        if self._fresh_docks:
            self.docks.arrange(dock_plan(width, self.font_scale), self._closed_panels)
            if self.isVisible():
                QTimer.singleShot(0, self._size_docks)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._fresh_docks:  # the first time the real size is known
            QTimer.singleShot(0, self._size_docks)

    def _size_docks(self) -> None:
        self._fresh_docks = False
        self.docks.size_columns(dock_plan(self.width(), self.font_scale), self.height())

    # -- starting and loading ----------------------------------------------------------
    def start(self) -> None:
        """Record the first program (the command line's, else the last one, else the seed)."""
        self.load_program(self._first_scenario)
        after_first_paint(self, self._ensure_graph_view)  # NOTE [fast start]

    def load_program(self, source: Program | str | Path) -> None:
        """Record a program (or read a ``.lens`` recording) from scratch and show it from step 0."""
        from app.core.lensfile import is_lens

        self._fresh_load = True
        self._lens_path = Path(source) if is_lens(source) else None
        verb = "Reading" if self._lens_path else "Recording"
        self.graph_message.setText(f"{verb} {getattr(source, 'name', source)}…")
        self._previewed = None
        if self._lens_path is not None and self._show_preview(self._lens_path):
            # NOTE [picture first]: the picture is painted before the recording is read; read
            # at once, the worker's decoding would share the interpreter with that paint
            self._previewed = source
            assert self.graph_preview is not None
            after_first_paint(self.graph_preview, partial(self._load_previewed, source))
            return
        self.session.load(source)

    def _show_preview(self, path: Path) -> bool:
        """Paint the picture a big ``.lens`` file opens with, if it has one that checks out."""
        from app.core.lensfile import lens_preview
        from app.render.preview import preview_from_json

        preview = preview_from_json(lens_preview(path))
        if preview is None:
            return False
        if self.graph_preview is None:
            from app.ui.graph_preview import GraphPreview

            self.graph_preview = GraphPreview()
            self.graph_preview.set_palette(self.theme)
            self.graph_page_layout.addWidget(self.graph_preview, 0, 0)
        self.graph_preview.show_preview(preview, f"Reading {path.name}… the picture first, then the steps.")
        self.graph_preview.show()
        self.graph_preview.raise_()
        self.graph_stack.setCurrentIndex(GRAPH_PAGE)
        return True

    def _load_previewed(self, source: object) -> None:
        if self._previewed is source:  # not replaced by another load meanwhile
            self.session.load(source)  # type: ignore[arg-type]

    def _hide_preview(self) -> None:
        self._previewed = None
        if self.graph_preview is not None:
            self.graph_preview.hide()
            self.graph_preview.clear()

    def _on_scenario_chosen(self, position: int) -> None:
        builtin = position < len(_builtin_names())
        source = (
            self.scenario_picker.itemText(position) if builtin else self.scenario_picker.itemData(position)
        )
        if source is None:
            return  # the edited program already on screen
        if self.files is not None and not self.files.maybe_discard():
            self._select_picker(self.session.recording)
            return
        self.load_program(source)

    # -- recording and step updates -----------------------------------------------------
    def _on_recording_applied(self, recording: Recording) -> None:
        self.notice.hide()
        program = recording.program
        if not self._fresh_load:
            self._lens_path = None  # an edit of a read recording is recorded: no longer the file's
        title = f": {program.title}" if program.title else ""
        self.setWindowTitle(f"Autograd Lens — {program.name}{title}")
        if self._fresh_load and self._lens_path is None and self._from_builtin(program):
            self._shipped.setdefault(program.name, program.code)  # as loaded: the built-in's own text
        edited = self._is_edited_builtin(program)  # a fix applied: its summary tells the old story
        summary = program.summary
        if edited and summary:
            summary = f"Your edit of the built-in {program.name}, which began as: {summary}"
        self.summary.setText(summary)
        self.summary_room.forget()  # another program's summary: as tall as it needs, up to its limit
        self.device_label.setText(
            f"Device: {self._device_text(recording.device)} · PyTorch {recording.torch_version}"
        )
        self.commands.undo.setEnabled(self.session.can_undo)
        self._select_picker(recording)
        self._remember_program(program)
        self._fences_stale = True  # the panels still show the last recording's step
        self._ensure_late_widgets()
        self._editor_sync = partial(self._sync_editor, program, modified=not self._fresh_load)
        self._show_graph(recording)
        self._fresh_load = False
        # The editor's copy of the text comes later, in an event-loop turn of its own: for a big
        # scenario it is ~20 ms, and in the turn of the apply (or of a slice of the graph's
        # build, and the paint that follows) it stalled the GUI > 60 ms. So: once the graph is
        # built, on a 1 ms timer (not a posted call, so timers already due run first).
        view = self.graph_view
        if view is not None and view.building:
            view.model_ready.connect(self._sync_editor_soon, Qt.ConnectionType.SingleShotConnection)
        else:
            self._sync_editor_soon()

    def _sync_editor_soon(self) -> None:
        sync, self._editor_sync = self._editor_sync, None
        if sync is not None:
            QTimer.singleShot(1, sync)

    def _on_step_applied(self, index: int) -> None:
        if self._fences_stale:  # after the panels' own handlers: they show the new recording now
            self._fences_stale = False
            for fence in self.fences:
                fence.release()
        state = self.session.state()
        if (
            self.graph_view is not None
            and state is not None
            and self.graph_stack.currentIndex() == GRAPH_PAGE
        ):
            self.graph_view.show_state(state)
            node = self._step_node(state)
            if node is not None or not self.commands.follow.isChecked():
                self.navigation.follow(node)  # following, a step about no node keeps the view

    def _step_node(self, state: StepState) -> str | None:
        return _step_node(state, running=self.commands.follow.isChecked())

    def _on_follow_toggled(self, on: bool) -> None:
        self.settings.follow_nodes = on
        state = self.session.state()
        if state is not None and self.graph_view is not None:
            self.navigation.follow(self._step_node(state))

    def _show_graph(self, recording: Recording) -> None:
        layout, error = self.session.layout, self.session.layout_error
        if self.graph_view is None or layout is None:
            self._hide_preview()
            why = error or "the graph view is not available in this build"
            self.graph_message.setText(
                f"The graph cannot be drawn: {why}\n\nEvery other panel still works: step with ← →."
            )
            self.graph_stack.setCurrentIndex(MESSAGE_PAGE)
            return
        self.graph_view.set_model(recording, layout, shown=self.session.shown)
        self.graph_stack.setCurrentIndex(GRAPH_PAGE)
        previewing = self.graph_preview is not None and self.graph_preview.isVisible()
        if previewing and not self.graph_view.shows_graph:
            # the picture stays over the view until the view draws the graph: not a blank frame
            self.graph_view.graph_shown.connect(self._hide_preview, Qt.ConnectionType.SingleShotConnection)
        else:
            self._hide_preview()
        QTimer.singleShot(0, self._fit_graph)  # once the page has its final size

    def _fit_graph(self) -> None:
        recording = self.session.recording
        if self.graph_view is None or recording is None:
            return
        failed = recording.failed
        scene = self.graph_view.graph_scene
        if scene is not None and failed is not None and failed.failed_node is not None:
            scene.select(failed.failed_node)  # outlined as well as drawn as failed
        self.navigation.fit()
        state = self.session.state()
        if state is not None:
            # opened at the error step: its node readable; at any other, the whole graph first
            self.navigation.follow(_step_node(state, running=False))

    def _on_busy_changed(self, busy: bool) -> None:
        self.busy_label.set_busy(
            busy or self.session.busy or self.exporter.busy or self.torchviz_exporter.busy
        )

    def _on_failed(self, message: str) -> None:
        self._hide_preview()
        kept = self.session.recording is not None
        suffix = " The previous recording stays on screen." if kept else ""
        self.show_notice(f"{message}{suffix}")
        self.statusBar().showMessage(message, 10_000)
        if not kept:
            self.graph_message.setText(f"Nothing to show yet: {message}")
            self._fall_back_to_seed()
        self._show_error_in_editor()

    def _fall_back_to_seed(self) -> None:
        if self._first_scenario != DEFAULT_SCENARIO:
            self._first_scenario = DEFAULT_SCENARIO
            self.load_program(DEFAULT_SCENARIO)

    def _show_error_in_editor(self) -> None:
        error = self.session.last_error
        if self.editor is None or error is None:
            return
        from app.core.model.errors import ScenarioError

        if isinstance(error, ScenarioError):
            self.editor.show_error(error)

    def show_notice(self, text: str) -> None:
        """A banner above the panels (failed recordings, caught exceptions); click to dismiss."""
        self.notice.show_text(text)

    def _device_text(self, name: str) -> str:
        item = self.device_selector.item_for(name)
        return item.text() if item is not None and item.isEnabled() else name

    def _select_picker(self, recording: Recording | None) -> None:
        """Show the program on screen in the picker; a file gets one entry after the built-ins."""
        if recording is None:
            return
        program, builtins = recording.program, len(_builtin_names())
        if self._lens_path is None and self._is_builtin(program):
            self.scenario_picker.setCurrentIndex(self.scenario_picker.findText(program.name))
            return
        while self.scenario_picker.count() > builtins:
            self.scenario_picker.removeItem(builtins)
        path = self._lens_path or program.path
        label = f"{program.name} ({path.name})" if path else f"{program.name} (edited)"
        self.scenario_picker.addItem(label, str(path) if path else None)
        self.scenario_picker.setCurrentIndex(builtins)

    def _is_builtin(self, program: Program) -> bool:
        """The built-in program as shipped (not one with a fix or an edit applied)."""
        return self._from_builtin(program) and not self._is_edited_builtin(program)

    @staticmethod
    def _from_builtin(program: Program) -> bool:
        path = program.path
        in_resources = path is None or path.parent == resource_path("scenarios")
        return program.name in _builtin_names() and in_resources

    def _is_edited_builtin(self, program: Program) -> bool:
        """A built-in whose text differs from the one the window loaded (a fix, an edit). Compared
        with what was loaded, not read again: reading a scenario imports torch, which the window
        leaves for after its first paint (NOTE [fast start])."""
        shipped = self._shipped.get(program.name)
        return self._from_builtin(program) and shipped is not None and shipped != program.code

    def _remember_program(self, program: Program) -> None:
        if self._lens_path is not None:
            self.settings.last_scenario = str(self._lens_path)
        elif self._from_builtin(program):  # edited or not: the next start opens the built-in
            self.settings.last_scenario = program.name
        elif program.path is not None:
            self.settings.last_scenario = str(program.path)

    # -- widgets made late (NOTE [fast start]) --------------------------------------------
    def _ensure_late_widgets(self) -> None:
        self._ensure_graph_view()
        if self.editor is None:
            QTimer.singleShot(0, self._make_editor)  # after the first graph is painted

    def _ensure_graph_view(self) -> None:
        if self.graph_view is None:
            self._make_graph_view()

    def _make_graph_view(self) -> None:
        from app.ui.graph_view import GraphView
        from app.ui.legend import Legend

        self.graph_view = GraphView()
        self.legend = Legend()
        self.graph_page_layout.addWidget(self.graph_view, 0, 0)
        if self.graph_preview is not None:
            self.graph_preview.raise_()  # over the view while it waits for the recording
        self.legend_area.setWidget(self.legend)
        self.graph_view.node_clicked.connect(self._on_node_clicked)
        self.graph_view.layout_said.connect(lambda text: self.statusBar().showMessage(text, 15_000))
        self.graph_view.set_palette(self.theme)
        self.legend.set_palette(self.theme)
        self.graph_view.set_font_scale(self.font_scale)
        self.appearance.watch_wheel(self.graph_view)
        self.navigation.attach(self.graph_view)  # NOTE [auto fit]
        view_menu = self.menu_named("&View")
        if view_menu is not None:  # the graph's module commands, beside its right-click menu
            view_menu.addSeparator()
            view_menu.addActions([self.graph_view.collapse_all_action, self.graph_view.expand_all_action])

    def menu_named(self, title: str) -> QMenu | None:
        """The menu bar's menu with this title (``"&View"``), or None."""
        for action in self.menuBar().actions():
            if action.text() == title and action.menu() is not None:
                return action.menu()
        return None

    def _make_editor(self) -> None:
        from app.ui.editor import ProgramEditor
        from app.ui.file_actions import FileController

        if self.editor is not None:
            return
        # One code editor: the editor adopts the code panel, which keeps marking the steps.
        layout = self.code_column_layout
        at = layout.indexOf(self.code_panel)
        layout.removeWidget(self.code_panel)
        self.editor = ProgramEditor(code_edit=self.code_panel)
        layout.insertWidget(at, self.editor, 1)
        editor = self.editor
        self.code_panel.keeps_typing = lambda program: program == editor.last_program()
        self.editor.program_edited.connect(self._on_program_edited)
        self.files = FileController(self, self.editor, self.settings)
        self.files.program_opened.connect(self._on_program_opened)
        self.files.recording_opened.connect(self._on_program_opened)
        c = self.commands
        for action in (c.new, c.open, c.save, c.save_as, c.details):
            action.setEnabled(True)
        self.appearance.watch_wheel(self.editor)
        if self.session.recording is not None:
            self.editor.set_program(self.session.recording.program)

    def _sync_editor(self, program: Program, *, modified: bool) -> None:
        recording = self.session.recording
        if recording is None or recording.program is not program or self.session.program is not program:
            return  # a newer recording was applied or asked for (Ctrl+N, an edit) meanwhile
        if self.editor is None or program == self.editor.last_program():
            return  # the editor made this one (the learner may have typed on since)
        # a toggle, a fix or a file changed the program: the code panel shows its text already;
        # the editor takes its name, path and details, and a change counts as unsaved
        self.editor.set_program(program, modified=modified)

    def _on_program_edited(self, program: Program) -> None:
        self.session.rerecord(program)

    def _on_program_opened(self, source: Program | Path) -> None:
        self.load_program(source)

    def _on_undo_requested(self) -> None:
        self.session.undo()
        self.commands.undo.setEnabled(self.session.can_undo)

    def _on_node_clicked(self, node_id: str) -> None:
        self.node_details.show_node(node_id)

    # -- file actions (FileController) ------------------------------------------------------
    def _on_open_requested(self) -> None:
        if self.files is not None:
            self.files.open_dialog()

    def _on_save_requested(self) -> None:
        if self.files is not None:
            self.files.save()

    def _on_save_as_requested(self) -> None:
        if self.files is not None:
            self.files.save_as()

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = self.files.recent_files() if self.files is not None else []
        for path in paths:
            action = self.recent_menu.addAction(str(path))
            action.triggered.connect(lambda checked=False, p=path: self._on_recent_chosen(p))
        if not paths:
            self.recent_menu.addAction("(no recent files)").setEnabled(False)

    def _on_recent_chosen(self, path: Path) -> None:
        if self.files is not None:
            self.files.open_path(path)

    # -- classroom: theme, font scale, full screen, presentation, zoom and find -----------------
    @property
    def theme(self) -> str:
        return self.appearance.theme

    @property
    def font_scale(self) -> float:
        return self.appearance.font_scale

    def set_theme(self, name: str) -> None:
        self.appearance.set_theme(name)

    def set_font_scale(self, scale: float) -> None:
        self.appearance.set_font_scale(scale)

    def _on_theme_changed(self, name: str) -> None:
        self.theme_picker.setCurrentText(name)
        for action in self.commands.themes.actions():
            action.setChecked(action.data() == name)
        if self.graph_preview is not None:
            self.graph_preview.set_palette(name)
        if self.graph_view is not None:
            self.graph_view.set_palette(name)
        if self.legend is not None:
            self.legend.set_palette(name)

    def _on_font_scale_changed(self, scale: float) -> None:
        self.font_spin.blockSignals(True)
        self.font_spin.setValue(scale)
        self.font_spin.blockSignals(False)
        if self.graph_view is not None:
            self.graph_view.set_font_scale(scale)
        QTimer.singleShot(0, self._remeasure_panels)  # once the panels took the new text size

    def _remeasure_panels(self) -> None:
        """The heights kept so that stepping does not jump (NOTE [layout fences]) measured at the
        new text size: kept from a larger one, they held the window's minimum above the screen."""
        for fence in self.fences:
            fence.release()
        self.stage.remeasure()
        self._limit_summary()

    def _limit_summary(self) -> None:
        """The program's summary takes at most ``SUMMARY_LINES`` lines over the editor: whole, at text
        1.5 in a 360 px column, it took 6 lines and left the editor 2."""
        self.summary_room.set_limit(SUMMARY_LINES * self.summary.fontMetrics().lineSpacing() + 2)
        self.summary_room.forget()

    def _on_theme_chosen(self, position: int) -> None:
        self.set_theme(self.theme_picker.itemText(position))

    def _on_theme_action(self, action: QAction) -> None:
        self.set_theme(str(action.data()))

    def _on_full_screen_toggled(self) -> None:
        self.setWindowState(self.windowState() ^ Qt.WindowState.WindowFullScreen)  # keeps "maximized"
        self.commands.full_screen.setChecked(self.isFullScreen())
        self.navigation.fit_soon(100)  # the graph area changed size

    def _on_presentation_toggled(self, on: bool) -> None:
        self.commands.presentation.setChecked(on)
        self.navigation.fit_soon(100)

    def _on_find_requested(self) -> None:
        self.find_field.setFocus()
        self.find_field.selectAll()

    def _on_find_entered(self) -> None:
        self.navigation.find(self.find_field.text())

    # -- export ------------------------------------------------------------------------------
    def export_view(self, path: Path) -> None:
        """Write the graph as it is drawn now to ``path`` (.svg or .png)."""
        self.exporter.export_view(path)

    def export_slides(self, folder: Path, fmt: str = "png") -> None:
        """Draw every step to ``folder``; emits :attr:`slides_exported` with the files when done."""
        self.exporter.export_slides(folder, fmt)

    def _on_export_torchviz_requested(self) -> None:
        recording = self.session.recording
        self.torchviz_exporter.ask_and_export(
            None if recording is None else recording.program, self.session.device
        )

    # -- closing -----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.files is not None and not self.files.maybe_discard():
            event.ignore()
            return
        self.settings.geometry = self.saveGeometry()
        self.presentation.leave()  # the layout before it is the one to remember
        self.settings.dock_state = self.docks.save()
        self.settings.dock_room = self.size()
        self.settings.closed_panels = [key for key in self.docks.docks if key not in self.docks.shown()]
        self.settings.sync()
        self.session.pause()
        self.hide()  # a long recording may still be finishing: let it end out of sight
        self.session.worker.wait_idle()
        for panel in (self.error_panel, self.memory_chart.advice):
            panel.wait_idle()  # a lesson being found reads the recording: let it end first
        self.torchviz_exporter.wait_idle()
        event.accept()
