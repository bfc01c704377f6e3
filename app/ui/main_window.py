"""The Autograd Lens window: every panel built on one :class:`Session`.

The window arranges the views, owns the actions (keys work wherever the focus
is, except inside text editors, which keep their own arrows and space) and the
classroom settings (theme, font scale, full screen). It computes no autograd
fact: each view reads the session's recording.

# NOTE [fast start]
``app.core`` and ``app.render`` import torch. The window imports neither at
start: it paints at once, the worker imports torch while recording, and the
widgets that need those modules (the graph view, the editor) are made when
the first recording arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence, QShowEvent, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.resources import resource_path, scenario_files
from app.ui.call_toggles import CallToggles
from app.ui.caption_bar import CaptionBar
from app.ui.code_panel import CodePanel
from app.ui.device_selector import DeviceSelector
from app.ui.error_panel import ErrorPanel
from app.ui.grad_panel import GradPanel
from app.ui.memory_chart import MemoryChart
from app.ui.node_details import NodeDetails
from app.ui.session import Session
from app.ui.settings import DEFAULT_SCENARIO, FONT_SCALE_RANGE, THEMES, AppSettings, clamp_font_scale
from app.ui.step_counter import StepCounter
from app.ui.theme import apply_theme
from app.ui.timeline_bar import TimelineBar

if TYPE_CHECKING:  # imported for real only once torch is loaded (see NOTE [fast start])
    from app.core.model.program import Program
    from app.core.model.recording import Recording
    from app.ui.editor import ProgramEditor
    from app.ui.file_actions import FileController
    from app.ui.graph_view import GraphView
    from app.ui.legend import Legend

__all__ = ["MainWindow", "ask_export_file", "ask_export_folder"]


FONT_STEP = 0.1
LEGEND_COLUMNS = 3
COLUMN_SHARES = (0.28, 0.52, 0.20)
BUSY_TICK_MS = 200  # how often the status bar's "Recording… 2.4 s" counts on
GRAPH_PAGE, MESSAGE_PAGE = 1, 0
Keys = QKeySequence | QKeySequence.StandardKey | str | list[QKeySequence] | None


# -- dialog seam: tests replace these (looked up at call time) ------------------------
def ask_export_file(parent: QWidget, fmt: str, suggested: str) -> Path | None:
    """Where to export the current view (``fmt`` is ``svg`` or ``png``)."""
    filters = {"svg": "SVG drawing (*.svg)", "png": "PNG image (*.png)"}
    path, _ = QFileDialog.getSaveFileName(parent, f"Export view as {fmt.upper()}", suggested, filters[fmt])
    if not path:
        return None
    chosen = Path(path)
    return chosen if chosen.suffix else chosen.with_suffix(f".{fmt}")


def ask_export_folder(parent: QWidget) -> Path | None:
    """A folder for one picture per step (slides)."""
    path = QFileDialog.getExistingDirectory(parent, "Export every step to a folder")
    return Path(path) if path else None


def _builtin_names() -> list[str]:
    return [path.stem for path in scenario_files()]


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
        self._theme = settings.theme
        self._font_scale = settings.font_scale
        self._fresh_load = True
        self._auto_fit = True
        self._editor_sync: Callable[[], None] | None = None  # the editor's copy, once the graph is built
        self.graph_view: GraphView | None = None  # these four are made with the first recording
        self.legend: Legend | None = None
        self.editor: ProgramEditor | None = None
        self._lens_path: Path | None = None  # the .lens file on screen, when one was opened
        self.files: FileController | None = None
        self._slides: Iterator[Path] | None = None
        self._build_views()
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_status_bar()
        self._lay_out()
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
        self._build_graph_area()
        self._build_controls()

    def _build_graph_area(self) -> None:
        self.summary = QLabel("")
        self.summary.setObjectName("scenarioSummary")
        self.summary.setWordWrap(True)
        self.summary.setProperty("role", "hint")
        self.graph_message = QLabel("Recording the program…")
        self.graph_message.setObjectName("graphMessage")
        self.graph_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.graph_message.setWordWrap(True)
        self.graph_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.graph_page = QWidget()
        self.graph_page_layout = QVBoxLayout(self.graph_page)
        self.graph_page_layout.setContentsMargins(0, 0, 0, 0)
        self.graph_stack = QStackedWidget()
        self.graph_stack.addWidget(self.graph_message)
        self.graph_stack.addWidget(self.graph_page)
        self.notice = QLabel("")
        self.notice.setObjectName("notice")
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.setToolTip("Click to dismiss")
        self.notice.hide()

    def _build_controls(self) -> None:
        self.scenario_picker = QComboBox()
        self.scenario_picker.setToolTip("Built-in programs (File ▸ Open… for a .toml, .py or .lens file)")
        self.scenario_picker.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scenario_picker.addItems(_builtin_names())
        self.left_tabs = QTabWidget()
        self.left_tabs.addTab(self.code_panel, "Code")
        self.legend_area = QScrollArea()  # the legend strip: scrolls sideways on a narrow screen
        self.legend_area.setWidgetResizable(True)
        self.legend_area.setFrameShape(QFrame.Shape.NoFrame)
        self.legend_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.legend_area.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.legend_area.hide()
        self.find_field = QLineEdit()
        self.find_field.setPlaceholderText("Find node…")
        self.find_field.setClearButtonEnabled(True)
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

    def _action(self, text: str, keys: Keys, slot: Any) -> QAction:
        action = QAction(text, self)
        if isinstance(keys, list):
            action.setShortcuts(keys)
        elif keys is not None:
            action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        self.addAction(action)  # active even when the menus are hidden (full screen)
        return action

    def _build_actions(self) -> None:
        s = self.session
        self.action_next_step = self._action("Next node", "Right", s.next_step)
        self.action_prev_step = self._action("Previous node", "Left", s.prev_step)
        self.action_next_call = self._action("Next call", "Shift+Right", s.next_call)
        self.action_prev_call = self._action("Previous call", "Shift+Left", s.prev_call)
        self.action_home = self._action("First step", "Home", s.home)
        self.action_end = self._action("Last step", "End", s.end)
        self.action_play = self._action("Play / pause", "Space", s.toggle_play)
        self.action_full_screen = self._action("Full screen", "F11", self._on_full_screen_toggled)
        self.action_full_screen.setCheckable(True)
        self.action_zoom_in = self._action(
            "Zoom in", [QKeySequence("Ctrl+="), QKeySequence("Ctrl++")], self._on_zoom_in
        )
        self.action_zoom_out = self._action("Zoom out", "Ctrl+-", self._on_zoom_out)
        self.action_fit = self._action("Fit graph", "Ctrl+0", self._on_fit)
        self.action_larger = self._action("Larger text", "Ctrl+Alt+=", self._on_larger_text)
        self.action_smaller = self._action("Smaller text", "Ctrl+Alt+-", self._on_smaller_text)
        self.action_text_reset = self._action("Normal text size", "Ctrl+Alt+0", self._on_text_reset)
        self.action_legend = self._action("Legend", "Ctrl+L", self._on_legend_toggled)
        self.action_legend.setCheckable(True)
        self.action_legend.setChecked(True)
        self.action_find = self._action("Find node…", QKeySequence.StandardKey.Find, self._on_find_requested)
        self.action_open = self._action("Open…", QKeySequence.StandardKey.Open, self._on_open_requested)
        self.action_save = self._action("Save", QKeySequence.StandardKey.Save, self._on_save_requested)
        self.action_save_as = self._action("Save As…", "Ctrl+Shift+S", self._on_save_as_requested)
        self.action_export_svg = self._action("Export view as SVG…", None, self._on_export_svg)
        self.action_export_png = self._action("Export view as PNG…", None, self._on_export_png)
        self.action_export_slides = self._action("Export every step (slides)…", None, self._on_export_slides)
        self.action_quit = self._action("Quit", QKeySequence.StandardKey.Quit, self.close)
        self.action_undo = self._action(
            "Undo the last fix or toggle", QKeySequence.StandardKey.Undo, self._on_undo_requested
        )
        self.action_undo.setEnabled(False)
        self.theme_actions = QActionGroup(self)
        for name in THEMES:
            action = QAction(name.capitalize(), self, checkable=True)
            action.setData(name)
            self.theme_actions.addAction(action)
        self.theme_actions.triggered.connect(self._on_theme_action)
        for action in (self.action_open, self.action_save, self.action_save_as):
            action.setEnabled(False)  # until the editor exists (first recording)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.action_open)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.aboutToShow.connect(self._update_recent_menu)
        file_menu.addMenu(self.recent_menu)
        file_menu.addActions([self.action_save, self.action_save_as])
        file_menu.addSeparator()
        file_menu.addActions([self.action_export_svg, self.action_export_png, self.action_export_slides])
        file_menu.addSeparator()
        file_menu.addAction(self.action_quit)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.action_undo)
        step_menu = bar.addMenu("&Step")
        step_menu.addActions(
            [
                self.action_prev_step,
                self.action_next_step,
                self.action_prev_call,
                self.action_next_call,
                self.action_home,
                self.action_end,
                self.action_play,
            ]
        )
        view_menu = bar.addMenu("&View")
        view_menu.addActions([self.action_zoom_in, self.action_zoom_out, self.action_fit, self.action_find])
        view_menu.addSeparator()
        view_menu.addActions([self.action_larger, self.action_smaller, self.action_text_reset])
        theme_menu = view_menu.addMenu("&Theme")
        theme_menu.addActions(self.theme_actions.actions())
        view_menu.addSeparator()
        view_menu.addActions([self.action_legend, self.action_full_screen])

    def _build_toolbar(self) -> None:
        bar = self.addToolBar("Main")
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.addWidget(QLabel(" Program "))
        bar.addWidget(self.scenario_picker)
        bar.addAction(self.action_open)
        bar.addSeparator()
        bar.addWidget(QLabel(" Device "))
        bar.addWidget(self.device_selector)
        bar.addSeparator()
        bar.addWidget(QLabel(" Theme "))
        bar.addWidget(self.theme_picker)
        bar.addWidget(QLabel(" Text "))
        bar.addWidget(self.font_spin)
        bar.addSeparator()
        bar.addWidget(self.find_field)
        bar.addAction(self.action_fit)
        bar.addAction(self.action_full_screen)

    def _build_status_bar(self) -> None:
        self.device_label = QLabel("Device: –")
        # A label that counts the seconds, not an indeterminate QProgressBar: the style animates
        # that at 60 frames a second, and on a big load its painting took a third of the GUI
        # thread's time (py-spy), time the graph view needed.
        self.busy_label = QLabel("Recording…")
        self.busy_label.hide()
        self._fix_busy_label_size()
        self._busy_since = QElapsedTimer()
        self._busy_tick = QTimer(self)
        self._busy_tick.setInterval(BUSY_TICK_MS)
        self._busy_tick.timeout.connect(self._update_busy_label)
        status = self.statusBar()
        status.addPermanentWidget(self.busy_label)
        status.addPermanentWidget(self.device_label)

    def _lay_out(self) -> None:
        header = QHBoxLayout()  # the sentence to read out, and where we are: across the top
        header.addWidget(self.caption_bar, 1)
        header.addWidget(self.step_counter)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(4, 4, 4, 4)
        left_layout.addWidget(self.summary)
        left_layout.addWidget(self.left_tabs, 1)
        left_layout.addWidget(self.call_toggles)
        left_layout.addWidget(self.node_details, 1)
        center = QWidget()
        center_layout = QVBoxLayout(center)
        center_layout.setContentsMargins(4, 4, 4, 4)
        center_layout.addWidget(self.error_panel)
        center_layout.addWidget(self.graph_stack, 1)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.grad_panel)
        right.addWidget(self.memory_chart)
        right.setSizes([440, 240])
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        for widget in (left, center, right):
            self.splitter.addWidget(widget)
        self.splitter.setStretchFactor(1, 1)
        self._columns_sized = False
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.notice)
        layout.addLayout(header)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.legend_area)
        layout.addWidget(self.timeline_bar)
        self.setCentralWidget(body)
        self.resize(1600, 1000)

    def _connect(self) -> None:
        s = self.session
        s.recording_applied.connect(self._on_recording_applied)
        s.step_applied.connect(self._on_step_applied)
        s.busy_changed.connect(self._on_busy_changed)
        s.failed.connect(self._on_failed)
        self.scenario_picker.activated.connect(self._on_scenario_chosen)
        self.theme_picker.activated.connect(self._on_theme_chosen)
        self.font_spin.valueChanged.connect(self.set_font_scale)
        self.find_field.returnPressed.connect(self._on_find_entered)
        self._watch_wheel(self)
        self.notice.installEventFilter(self)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._columns_sized:  # the first time the real width is known
            self._columns_sized = True
            QTimer.singleShot(0, self._size_columns)

    def _size_columns(self) -> None:
        """Code/calls/details, graph, gradients/memory: the graph gets half the width."""
        width = self.splitter.width()
        self.splitter.setSizes([round(width * share) for share in COLUMN_SHARES])

    def _restore(self) -> None:
        geometry = self.settings.geometry
        if geometry is not None:
            self.restoreGeometry(geometry)
        self.font_spin.setValue(self._font_scale)
        self.set_theme(self._theme)  # applies the stylesheet at the remembered font scale

    # -- starting and loading ----------------------------------------------------------
    def start(self) -> None:
        """Record the first program (the command line's, else the last one, else the seed)."""
        self.load_program(self._first_scenario)

    def load_program(self, source: Program | str | Path) -> None:
        """Record a program (or read a ``.lens`` recording) from scratch and show it from step 0."""
        from app.ui.worker import is_lens

        self._fresh_load = True
        self._lens_path = Path(source) if is_lens(source) else None
        verb = "Reading" if self._lens_path else "Recording"
        self.graph_message.setText(f"{verb} {getattr(source, 'name', source)}…")
        self.session.load(source)

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
        self.summary.setText(program.summary)
        self.device_label.setText(
            f"Device: {self._device_text(recording.device)} · PyTorch {recording.torch_version}"
        )
        self.action_undo.setEnabled(self.session.can_undo)
        self._select_picker(recording)
        self._remember_program(program)
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
        state = self.session.state()
        if (
            self.graph_view is not None
            and state is not None
            and self.graph_stack.currentIndex() == GRAPH_PAGE
        ):
            self.graph_view.show_state(state)

    def _show_graph(self, recording: Recording) -> None:
        layout, error = self.session.layout, self.session.layout_error
        if self.graph_view is None or layout is None:
            why = error or "the graph view is not available in this build"
            self.graph_message.setText(
                f"The graph cannot be drawn: {why}\n\nEvery other panel still works: step with ← →."
            )
            self.graph_stack.setCurrentIndex(MESSAGE_PAGE)
            return
        self.graph_view.set_model(recording, layout, shown=self.session.shown)
        self.graph_stack.setCurrentIndex(GRAPH_PAGE)
        QTimer.singleShot(0, self._fit_graph)  # once the page has its final size

    def _fit_graph(self) -> None:
        recording = self.session.recording
        if self.graph_view is None or recording is None:
            return
        failed = recording.failed
        scene = self.graph_view.graph_scene
        if scene is not None and failed is not None and failed.failed_node is not None:
            scene.select(failed.failed_node)  # outlined as well as drawn as failed; no zoom
        self._on_fit()

    def _on_busy_changed(self, busy: bool) -> None:
        if busy:
            self._fix_busy_label_size()  # the font may have been scaled since
            self._busy_since.start()
            self._busy_tick.start()
        else:
            self._busy_tick.stop()
        self._update_busy_label()
        self.busy_label.setVisible(busy)

    def _fix_busy_label_size(self) -> None:
        """Its text changes while a recording runs; a fixed size spares the window a relayout
        each time (QLayout::activate was a tenth of the GUI thread during a big load)."""
        widest = self.busy_label.fontMetrics().horizontalAdvance("Recording… 000.0 s ")
        self.busy_label.setFixedSize(widest, self.busy_label.sizeHint().height())

    def _update_busy_label(self) -> None:
        seconds = self._busy_since.elapsed() / 1000 if self._busy_since.isValid() else 0.0
        self.busy_label.setText(f"Recording… {seconds:.1f} s" if seconds >= 1 else "Recording…")

    def _on_failed(self, message: str) -> None:
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
        self.notice.setText(text)
        self.notice.show()
        self.notice_shown.emit(text)

    def _device_text(self, name: str) -> str:
        item = self.device_selector.item_for(name)
        return item.text() if item is not None else name

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

    @staticmethod
    def _is_builtin(program: Program) -> bool:
        path = program.path
        in_resources = path is None or path.parent == resource_path("scenarios")
        return program.name in _builtin_names() and in_resources

    def _remember_program(self, program: Program) -> None:
        if self._lens_path is not None:
            self.settings.last_scenario = str(self._lens_path)
        elif self._is_builtin(program):
            self.settings.last_scenario = program.name
        elif program.path is not None:
            self.settings.last_scenario = str(program.path)

    # -- widgets that need torch: made with the first recording ---------------------------
    def _ensure_late_widgets(self) -> None:
        if self.graph_view is None:
            self._make_graph_view()
        if self.editor is None:
            QTimer.singleShot(0, self._make_editor)  # after the first graph is painted

    def _make_graph_view(self) -> None:
        from app.ui.graph_view import GraphView
        from app.ui.legend import Legend

        self.graph_view = GraphView()
        self.legend = Legend(columns=LEGEND_COLUMNS)
        self.graph_page_layout.addWidget(self.graph_view, 1)
        self.legend_area.setWidget(self.legend)
        self.legend_area.setVisible(self.action_legend.isChecked())
        QTimer.singleShot(0, self._update_legend_height)
        self.graph_view.node_clicked.connect(self._on_node_clicked)
        self.graph_view.set_palette(self._theme)
        self.legend.set_palette(self._theme)
        self.graph_view.set_font_scale(self._font_scale)
        self._watch_wheel(self.graph_view)
        self.graph_view.installEventFilter(self)  # resizes: keep the graph fitted until the user zooms

    def _make_editor(self) -> None:
        from app.ui.editor import ProgramEditor
        from app.ui.file_actions import FileController

        if self.editor is not None:
            return
        self.editor = ProgramEditor()
        scroll = QScrollArea()  # the editor is tall; the code/calls/details column must still fit
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.editor)
        self.left_tabs.addTab(scroll, "Edit")
        self.editor.program_edited.connect(self._on_program_edited)
        self.files = FileController(self, self.editor, self.settings)
        self.files.program_opened.connect(self._on_program_opened)
        self.files.recording_opened.connect(self._on_program_opened)
        for action in (self.action_open, self.action_save, self.action_save_as):
            action.setEnabled(True)
        self._watch_wheel(self.editor)
        if self.session.recording is not None:
            self.editor.set_program(self.session.recording.program)

    def _sync_editor(self, program: Program, *, modified: bool) -> None:
        recording = self.session.recording
        if recording is None or recording.program is not program:
            return  # a newer recording was applied meanwhile: it syncs the editor itself
        if self.editor is None or program in (self.editor.last_program(), self.editor.current_program()):
            return  # the editor made this one (the learner may have typed on since), or shows it already
        # a toggle or a fix changed the program: the editor shows it, as an unsaved change
        self.editor.set_program(program, modified=modified)

    def _on_program_edited(self, program: Program) -> None:
        self.session.rerecord(program)

    def _on_program_opened(self, source: Program | Path) -> None:
        self.load_program(source)

    def _on_undo_requested(self) -> None:
        self.session.undo()
        self.action_undo.setEnabled(self.session.can_undo)

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

    # -- classroom: theme, font scale, full screen, zoom --------------------------------------
    @property
    def theme(self) -> str:
        return self._theme

    @property
    def font_scale(self) -> float:
        return self._font_scale

    def set_theme(self, name: str) -> None:
        self._theme = name if name in THEMES else "light"
        self.settings.theme = self._theme
        self._apply_style()
        self.theme_picker.setCurrentText(self._theme)
        for action in self.theme_actions.actions():
            action.setChecked(action.data() == self._theme)
        if self.graph_view is not None:
            self.graph_view.set_palette(self._theme)
        if self.legend is not None:
            self.legend.set_palette(self._theme)

    def set_font_scale(self, scale: float) -> None:
        scale = clamp_font_scale(scale)
        changed = scale != self._font_scale
        self._font_scale = scale
        self.settings.font_scale = scale
        self.font_spin.blockSignals(True)
        self.font_spin.setValue(scale)
        self.font_spin.blockSignals(False)
        if changed:
            self._apply_style()
        if self.graph_view is not None:
            self.graph_view.set_font_scale(scale)

    def _apply_style(self) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, self._theme, self._font_scale)
        QTimer.singleShot(0, self._update_legend_height)

    def _update_legend_height(self) -> None:
        if self.legend is not None:
            bar = self.legend_area.horizontalScrollBar().sizeHint().height()
            self.legend_area.setFixedHeight(self.legend.sizeHint().height() + bar)

    def _on_theme_chosen(self, position: int) -> None:
        self.set_theme(self.theme_picker.itemText(position))

    def _on_theme_action(self, action: QAction) -> None:
        self.set_theme(str(action.data()))

    def _on_larger_text(self) -> None:
        self.set_font_scale(self._font_scale + FONT_STEP)

    def _on_smaller_text(self) -> None:
        self.set_font_scale(self._font_scale - FONT_STEP)

    def _on_text_reset(self) -> None:
        self.set_font_scale(1.0)

    def _on_full_screen_toggled(self) -> None:
        if self.isFullScreen():
            self.showNormal()
        else:
            self.showFullScreen()
        self.action_full_screen.setChecked(self.isFullScreen())
        QTimer.singleShot(100, self._on_fit)  # the graph area changed size

    def _on_legend_toggled(self) -> None:
        self.legend_area.setVisible(self.legend is not None and self.action_legend.isChecked())

    def _on_zoom_in(self) -> None:
        if self.graph_view is not None:
            self._auto_fit = False
            self.graph_view.zoom_in()

    def _on_zoom_out(self) -> None:
        if self.graph_view is not None:
            self._auto_fit = False
            self.graph_view.zoom_out()

    def _on_fit(self) -> None:
        if self.graph_view is not None:
            self._auto_fit = True  # and keep it fitted as the window changes size
            self.graph_view.fit()

    def _on_find_requested(self) -> None:
        self.find_field.setFocus()
        self.find_field.selectAll()

    def _on_find_entered(self) -> None:
        text = self.find_field.text().strip()
        if not text or self.graph_view is None:
            return
        self._auto_fit = False  # finding zooms in on the node
        node_id = self.graph_view.find_node(text)
        if node_id is None:
            self.statusBar().showMessage(f"No node matches “{text}”", 5000)
        else:
            self.node_details.show_node(node_id)

    # Ctrl+wheel anywhere in the window scales the text (scroll views would zoom themselves)
    def _watch_wheel(self, root: QWidget) -> None:
        for area in [root, *root.findChildren(QAbstractScrollArea)]:
            if isinstance(area, QAbstractScrollArea):
                area.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.graph_view is not None and watched is self.graph_view and event.type() == QEvent.Type.Resize:
            if self._auto_fit:
                QTimer.singleShot(0, self._on_fit)
            return False
        if isinstance(event, QWheelEvent) and not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._auto_fit = False  # the graph view zooms on a plain wheel
        if event.type() == QEvent.Type.MouseButtonRelease and watched == self.notice:
            self.notice.hide()  # click to dismiss
            return False
        if isinstance(event, QWheelEvent) and self._wheel_scales_text(event):
            return True
        return super().eventFilter(watched, event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not self._wheel_scales_text(event):
            super().wheelEvent(event)

    def _wheel_scales_text(self, event: QWheelEvent) -> bool:
        if not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        delta = event.angleDelta().y()
        if delta:
            self.set_font_scale(self._font_scale + (FONT_STEP if delta > 0 else -FONT_STEP))
        event.accept()
        return True

    # -- export ------------------------------------------------------------------------------
    def _on_export_svg(self) -> None:
        self._export_view("svg")

    def _on_export_png(self) -> None:
        self._export_view("png")

    def _export_view(self, fmt: str) -> None:
        recording = self.session.recording
        if self.graph_view is None or recording is None or self.session.layout is None:
            self.show_notice("There is no graph to export yet.")
            return
        path = ask_export_file(self, fmt, f"{recording.program.name}-step-{self.session.index:03d}.{fmt}")
        if path is not None:
            self.export_view(path)

    def export_view(self, path: Path) -> None:
        """Write the graph as it is drawn now to ``path`` (.svg or .png)."""
        assert self.graph_view is not None
        if path.suffix.lower() == ".svg":
            self.graph_view.export_svg(path)
        else:
            self.graph_view.export_png(path)
        self.statusBar().showMessage(f"Wrote {path}", 5000)

    def _on_export_slides(self) -> None:
        if self.session.recording is None or self.session.layout is None:
            self.show_notice("There is no graph to export yet.")
            return
        folder = ask_export_folder(self)
        if folder is not None:
            self.export_slides(folder, "png")

    def export_slides(self, folder: Path, fmt: str = "png") -> None:
        """Draw every step to ``folder`` (one file per step), a step per event-loop turn.

        Emits :attr:`slides_exported` with the files when done.
        """
        recording, layout = self.session.recording, self.session.layout
        if recording is None or layout is None:
            return
        self._slides = self._slide_files(recording, layout, Path(folder), fmt)
        self._on_busy_changed(True)
        self._slide_tick([])

    def _slide_files(self, recording: Recording, layout: Any, folder: Path, fmt: str) -> Iterator[Path]:
        from app.render.export import step_file_name, step_title
        from app.render.picture import write_png, write_svg
        from app.render.scene import GraphScene

        folder.mkdir(parents=True, exist_ok=True)
        scene = GraphScene(recording, layout, palette=self._theme)
        write = write_svg if fmt == "svg" else write_png
        for index in range(len(recording.timeline)):
            scene.show_state(recording.timeline.state(index))
            yield write(scene, folder / step_file_name(index, fmt), title=step_title(recording, index))

    def _slide_tick(self, done: list[Path]) -> None:
        assert self._slides is not None
        try:
            done.append(next(self._slides))
        except StopIteration:
            self._slides = None
            self._on_busy_changed(self.session.busy)
            self.statusBar().showMessage(f"Wrote {len(done)} slides", 5000)
            self.slides_exported.emit(done)
            return
        except OSError as exc:
            self._slides = None
            self._on_busy_changed(self.session.busy)
            self.show_notice(f"Export stopped: {exc.strerror or exc}: {exc.filename or ''}")
            return
        QTimer.singleShot(0, lambda: self._slide_tick(done))

    # -- closing -----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.files is not None and not self.files.maybe_discard():
            event.ignore()
            return
        self.settings.geometry = self.saveGeometry()
        self.settings.sync()
        self.session.pause()
        self.hide()  # a long recording may still be finishing: let it end out of sight
        self.session.worker.wait_idle()
        event.accept()
