"""The Autograd Lens window: every panel built on one :class:`Session`.

The window makes the views and wires them to the session; its parts are named
collaborators: the commands (``actions.py``) and the bars that hold them
(``toolbars.py``), the program picker (``program_picker.py``), the File menu
(``file_actions.py``), the code column (``code_column.py``), the graph's page
(``graph/graph_area.py``), the docks around it (``docks.py``, and F5's layout in
``presentation.py``), theme and text scale (``look/appearance.py``), zoom and
find (``graph/graph_navigation.py``), pictures (``slides.py``). It computes no
autograd fact: each view reads the session's recording. The program's text is
the session's: the editor sends it edits and follows its recordings.

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

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QResizeEvent, QScreen, QShowEvent
from PySide6.QtWidgets import QFrame, QMainWindow, QMenu, QScrollArea, QWidget

from app.core.model.errors import ProgramError
from app.ui.editor.code_panel import CodePanel
from app.ui.graph.graph_area import GraphArea
from app.ui.graph.graph_navigation import GraphNavigation
from app.ui.graph.over_graph import OverGraph
from app.ui.panels.call_toggles import CallToggles
from app.ui.panels.caption_bar import CaptionBar
from app.ui.panels.device_selector import DeviceSelector
from app.ui.panels.error_panel import ErrorPanel
from app.ui.panels.grad_panel import GradPanel
from app.ui.panels.memory_chart import MemoryChart
from app.ui.panels.node_details import NodeDetails
from app.ui.panels.predict_panel import PredictPanel
from app.ui.panels.step_counter import StepCounter
from app.ui.panels.timeline_bar import TimelineBar
from app.ui.runtime.after_paint import after_first_paint
from app.ui.runtime.session import Session
from app.ui.runtime.settings import DEFAULT_PROGRAM, AppSettings
from app.ui.style.appearance import Appearance
from app.ui.window.actions import WindowActions, build_menus
from app.ui.window.code_column import SUMMARY_LINES, CodeColumn
from app.ui.window.docks import DockLayout
from app.ui.window.file_actions import FileMenu
from app.ui.window.layout_fence import LayoutFence
from app.ui.window.notice import NoticeBanner
from app.ui.window.presentation import Presentation
from app.ui.window.program_picker import ProgramPicker
from app.ui.window.screen_fit import (
    TIGHT_ERROR_SHARE,
    clamp_geometry,
    dock_plan,
    fills_screen,
    fresh_geometry,
    is_tight,
)
from app.ui.window.slides import SlideExporter, progress_bar
from app.ui.window.stage import ERROR_SHARE, Stage
from app.ui.window.toolbars import WindowBars
from app.ui.window.torchviz_exporter import TorchvizExporter

if TYPE_CHECKING:  # imported for real later (see NOTE [fast start])
    from app.core.model.program import Program
    from app.core.model.recording import Recording
    from app.ui.editor.editor import ProgramEditor
    from app.ui.editor.trusted_script import TrustedScriptOffer
    from app.ui.graph.graph_preview import GraphPreview
    from app.ui.graph.graph_view import GraphView
    from app.ui.window.file_actions import FileController

__all__ = ["SUMMARY_LINES", "MainWindow"]

EDITOR_AT_LATEST_MS = 3000  # the editor is made by then even if the first graph was never painted


class MainWindow(QMainWindow):
    """The whole program's window. Call :meth:`start` to record the first program."""

    slides_exported = Signal(object)  # list[Path], after "Export every step"
    notice_shown = Signal(str)

    def __init__(
        self,
        settings: AppSettings,
        program: str | Path | None = None,
        *,
        session: Session | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.session = session or Session(parent=self)
        self._first_program = str(program) if program else settings.last_program
        self._fresh_docks = False  # arranged by the plan, not restored: sized when first shown
        self._closed_panels: tuple[str, ...] = ()  # kept closed when the layout is arranged afresh
        self._fences_stale = False  # a new recording: measure the fences at its first step
        self._tight = False  # folded for a small screen (_fold_if_tight)
        self.editor: ProgramEditor | None = None  # made after the first graph (NOTE [fast start])
        self.files: FileController | None = None
        self.trusted_offer: TrustedScriptOffer | None = None
        self.appearance = Appearance(settings, self)
        self.navigation = GraphNavigation(self)
        self.commands = WindowActions(self)
        self.exporter = SlideExporter(self, self.session, lambda: self.graph_view, lambda: self.theme)
        self.torchviz_exporter = TorchvizExporter(self)
        self.file_menu = FileMenu(self, self.commands, settings)
        self._build_views()
        self.bars = WindowBars(
            self, self.commands, self.picker.combo, self.device_selector, self.timeline_bar
        )
        self.bars.busy_label.float_over(self.graph_area)  # in no layout: a recording moves nothing
        self._lay_out()
        panels_separator = QAction(self)
        panels_separator.setSeparator(True)
        panel_entries = [*self.docks.toggle_actions(), panels_separator, self.docks.reset_action]
        build_menus(self, self.commands, self.file_menu.recent_menu, panel_entries)
        self.presentation = Presentation(
            self, self.docks, [self.menuBar(), self.bars.toolbar, self.statusBar(), self.bars.playback_bar]
        )
        self._connect()
        self.place_on(self.screen())
        self.bars.font_spin.setValue(self.font_scale)
        self.graph_area.set_font_scale(self.font_scale)
        self.set_theme(self.theme)  # applies the stylesheet at the remembered font scale
        QTimer.singleShot(0, self.code_column.limit_summary)  # once the summary has the theme's font

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
        self.picker = ProgramPicker(session, self.settings, self)
        self.predict_panel = PredictPanel(session)  # Predict first (P): hidden until asked for
        self.code_column = CodeColumn(self.code_panel)
        self.legend_area = QScrollArea()  # the legend's dock: it scrolls when the dock is small
        self.legend_area.setWidgetResizable(True)
        self.legend_area.setFrameShape(QFrame.Shape.NoFrame)
        self.graph_area = GraphArea(session, self.navigation, self.legend_area)
        self.session.worker.checks_wait = self.graph_area.drawing_graph  # torch waits for the first graph
        self.code_panel.fill_wait = self.graph_area.drawing_graph  # a long text too (code_panel.py)
        for fixes in (self.error_panel, self.memory_chart.advice):
            fixes.find_after(self.graph_area.loading_graph)  # the lesson waits for the graph, too
        # Predict's question beside the graph, in the room's sight (over_graph.py)
        self.predict_card = OverGraph(
            self.graph_area.page, self.predict_panel, self.predict_panel.scroll_area
        )

    def _lay_out(self) -> None:
        """The stage (caption, step counter, error, graph) in the centre; the panels in docks."""
        # NOTE [layout fences]: the two panels whose text changes at every step
        self.fences = [LayoutFence(self.step_counter), LayoutFence(self.node_details)]
        counter, details = self.fences
        stage = self.stage = Stage(self.notice, self.caption_bar, counter, self.error_panel, self.graph_area)
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
        status = self.statusBar()
        for action, handler in (
            (c.next_step, s.next_step),
            (c.prev_step, s.prev_step),
            (c.next_call, s.next_call),
            (c.prev_call, s.prev_call),
            (c.next_iteration, s.next_iteration),
            (c.previous_iteration, s.previous_iteration),
            (c.home, s.home),
            (c.end, s.end),
            (c.play, s.toggle_play),
            (c.full_screen, self.presentation.toggle_full_screen),
            (c.presentation, self.presentation.toggle),
            (c.zoom_in, nav.zoom_in),
            (c.zoom_out, nav.zoom_out),
            (c.fit, nav.fit),
            (c.larger_text, look.larger),
            (c.smaller_text, look.smaller),
            (c.normal_text, look.reset),
            (c.export_svg, lambda: self.exporter.ask_and_export_view("svg")),
            (c.export_png, lambda: self.exporter.ask_and_export_view("png")),
            (c.export_slides, self.exporter.ask_and_export_slides),
            (c.export_torchviz, self._on_export_torchviz_requested),
            (c.quit, self.close),
            (c.undo, self._on_undo_requested),
            (c.details, lambda: self.editor.edit_details() if self.editor else None),
        ):
            action.triggered.connect(lambda checked=False, run=handler: run())
        c.predict.toggled.connect(self.predict_panel.set_active)
        self.predict_panel.outcome_hidden.connect(self.timeline_bar.marks.hide_outcome)
        self.predict_panel.active_changed.connect(self._on_predict_toggled)
        c.follow.setChecked(self.settings.follow_nodes)
        c.follow.toggled.connect(self._on_follow_toggled)
        c.wrap_code.toggled.connect(self.code_panel.set_wrapped)
        s.recording_applied.connect(self._on_recording_applied)
        s.step_applied.connect(self._on_step_applied)
        s.busy_changed.connect(self._on_busy_changed)
        s.failed.connect(self._on_failed)
        self.picker.may_replace = self.file_menu.maybe_discard
        self.picker.chosen.connect(self.load_program)
        self.file_menu.opened.connect(self.load_program)
        self.file_menu.refused.connect(self._on_refused_opened)
        self.bars.bind(look, nav)
        look.theme_changed.connect(self.graph_area.set_palette)
        look.font_scale_changed.connect(self._on_font_scale_changed)
        look.watch_wheel(self)
        self.graph_area.view_made.connect(self._on_graph_view_made)
        self.graph_area.said.connect(lambda text: status.showMessage(text, 15_000))
        nav.not_found.connect(lambda text: status.showMessage(f"No node matches “{text}”", 5000))
        nav.node_found.connect(self.node_details.show_node)
        for exporter in (self.exporter, self.torchviz_exporter):
            exporter.busy_changed.connect(self._on_busy_changed)
            exporter.wrote.connect(lambda text: status.showMessage(text, 5000))
            exporter.failed.connect(self.show_notice)
        self.exporter.slides_exported.connect(self.slides_exported)
        self.slides_progress = progress_bar(self.exporter, status)
        for toggled, action in (
            (self.presentation.toggled, c.presentation),
            (self.presentation.full_screen_toggled, c.full_screen),
        ):
            toggled.connect(action.setChecked)
            toggled.connect(lambda on: nav.fit_soon(100))  # the graph area changed size
        self.docks.reset_action.triggered.connect(self.reset_panels)
        self.notice.shown.connect(self.notice_shown)

    # -- where the window goes ------------------------------------------------------------
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
            self.docks.arrange(dock_plan(self.width(), self.font_scale, self.height()), self._closed_panels)

    def reset_panels(self) -> None:
        """View ▸ Panels ▸ Reset panels: every panel shown, docked and sized as on a fresh start."""
        self.presentation.leave()
        for dock in self.docks.docks.values():
            dock.setFloating(False)
        self.docks.arrange(dock_plan(self.width(), self.font_scale, self.height()))
        self.docks.size_columns(dock_plan(self.width(), self.font_scale, self.height()), self.height())
        self.navigation.fit_soon(100)

    def set_size(self, width: int, height: int) -> None:
        """Exactly this size (screenshots, tests), with the docks a fresh start would give it."""
        self.setWindowState(Qt.WindowState.WindowNoState)
        self.resize(width, height)
        if self._fresh_docks:
            self.docks.arrange(dock_plan(width, self.font_scale, height), self._closed_panels)
            if self.isVisible():
                QTimer.singleShot(0, self._size_docks)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._fresh_docks:  # the first time the real size is known
            QTimer.singleShot(0, self._size_docks)

    def _size_docks(self) -> None:
        self._fresh_docks = False
        self.docks.size_columns(dock_plan(self.width(), self.font_scale, self.height()), self.height())

    # -- starting and loading ----------------------------------------------------------
    def start(self) -> None:
        """Record the first program (the command line's, else the last one, else the seed)."""
        self.load_program(self._first_program)
        after_first_paint(self, self.graph_area.make_view)  # NOTE [fast start]

    def load_program(self, source: Program | str | Path) -> None:
        """Record a program (or read a ``.lens`` recording) from scratch and show it from step 0."""
        from app.core.lensfile import is_lens

        lens_path = Path(source) if is_lens(source) else None
        self.picker.opening(lens_path)
        verb = "Reading" if lens_path else "Recording"
        text = f"{verb} {getattr(source, 'name', source)}…"
        self.graph_area.open(text, lens_path, lambda: self.session.load(source))

    # -- recording and step updates -----------------------------------------------------
    def _on_recording_applied(self, recording: Recording) -> None:
        self.notice.hide()
        program = recording.program
        title = f": {program.title}" if program.title else ""
        # Qt adds " — Autograd Lens" (the application's display name) after a window's title itself
        self.setWindowTitle(f"{program.name}{title}")
        self.code_column.show_summary(self.picker.summary(program))
        item = self.device_selector.item_for(recording.device)
        device = item.text() if item is not None and item.isEnabled() else recording.device
        self.bars.device_label.setText(f"Device: {device} · PyTorch {recording.torch_version}")
        self.commands.undo.setEnabled(self.session.can_undo)
        self._fences_stale = True  # the panels still show the last recording's step
        self.graph_area.make_view()
        self.graph_area.show_recording(recording)
        if self.editor is None:
            self._make_editor_after_graph()

    def _on_step_applied(self, index: int) -> None:
        if self._fences_stale:  # after the panels' own handlers: they show the new recording now
            self._fences_stale = False
            for fence in self.fences:
                fence.release()
        self.graph_area.show_step(following=self.commands.follow.isChecked())

    def _on_predict_toggled(self, on: bool) -> None:
        """The question's column took (or gave back) the graph's width: fit the graph to what is
        left; asking, no node outlined as the failing one (the opening error step selects it)."""
        scene = None if self.graph_view is None else self.graph_view.graph_scene
        if on and scene is not None:
            scene.select(None)
        self.navigation.fit_soon(0)

    def _on_undo_requested(self) -> None:
        self.session.undo()
        self.commands.undo.setEnabled(self.session.can_undo)

    def _on_follow_toggled(self, on: bool) -> None:
        self.settings.follow_nodes = on
        self.graph_area.follow(on)

    def _on_busy_changed(self, busy: bool) -> None:
        self.bars.busy_label.set_busy(
            busy or self.session.busy or self.exporter.busy or self.torchviz_exporter.busy
        )

    def _on_failed(self, message: str) -> None:
        self.graph_area.hide_preview()
        kept = self.session.recording is not None
        suffix = " The previous recording stays on screen." if kept else ""
        self.show_notice(f"{message}{suffix}")
        self.statusBar().showMessage(message, 10_000)
        if not kept:
            self.graph_area.message.setText(f"Nothing to show yet: {message}")
            if self._refused_script_shown():
                return  # the script stays, with its refusal and the trusted-script button
            if self._first_program != DEFAULT_PROGRAM:  # fall back to the seed program
                self._first_program = DEFAULT_PROGRAM
                self.load_program(DEFAULT_PROGRAM)

    def _on_refused_opened(self, error: ProgramError) -> None:
        """File ▸ Open of a file the language refuses: its text is in the editor, so the last
        recording's graph and caption, beside it, would be another program's."""
        self.session.clear()
        self._first_program = DEFAULT_PROGRAM  # a failure now is this text's: never the seed instead
        self.graph_area.show_message(f"Nothing to show yet: this program is refused.\n\n{error.message}")

    def _refused_script_shown(self) -> bool:
        """``python -m app gui SCRIPT.py`` for a script the language refuses: the script in the
        editor with its refusal at its line and the trusted-script button, never the seed."""
        from app.ui.editor.trusted_script import show_refused_file

        path = Path(self._first_program) if self._first_program else None
        if path is None or path.suffix.lower() != ".py" or not path.is_file():
            return False
        from app.core.loading import load_file  # the language's checks import torch: not at start

        try:
            load_file(path)
        except ProgramError as err:
            self._make_editor()
            return self.editor is not None and show_refused_file(self.editor, path, err)
        return False

    def show_notice(self, text: str) -> None:
        """A banner above the panels (failed recordings, caught exceptions); click to dismiss."""
        self.notice.show_text(text)

    # -- widgets made late (NOTE [fast start]) --------------------------------------------
    @property
    def graph_view(self) -> GraphView | None:
        return self.graph_area.view

    @property
    def graph_preview(self) -> GraphPreview | None:
        return self.graph_area.preview

    def _on_graph_view_made(self, view: GraphView) -> None:
        view.node_clicked.connect(self.node_details.show_node)
        self.appearance.watch_wheel(view)
        view_menu = self.menu_named("&View")
        if view_menu is not None:  # the graph's module commands, beside its right-click menu
            view_menu.addSeparator()
            view_menu.addActions([view.modules.collapse_all_action, view.modules.expand_all_action])

    def menu_named(self, title: str) -> QMenu | None:
        """The menu bar's menu with this title (``"&View"``), or None."""
        for action in self.menuBar().actions():
            menu = action.menu()
            if action.text() == title and isinstance(menu, QMenu):
                return menu
        return None

    def _make_editor_after_graph(self) -> None:
        """The editor (its text set and highlighted: 0.2 s for a 3,000-line program) once the first
        graph is painted; a big graph goes on screen a few turns after it arrives (graph_view's
        NOTE [swap in a turn of its own]), and the learner can step from then on."""
        view = self.graph_view
        if view is None or not self.graph_area.loading_graph():
            QTimer.singleShot(0, self._make_editor)
            return
        after = partial(after_first_paint, view.viewport(), self._make_editor)
        view.graph_shown.connect(after, Qt.ConnectionType.SingleShotConnection)
        QTimer.singleShot(EDITOR_AT_LATEST_MS, self, self._make_editor)  # made once, whichever is first

    def _make_editor(self) -> None:
        """One code editor: the editor adopts the code panel, which keeps marking the steps."""
        from app.ui.editor.editor import ProgramEditor
        from app.ui.editor.trusted_script import TrustedScriptOffer

        if self.editor is not None:
            return
        editor = self.editor = ProgramEditor(code_edit=self.code_panel)
        self.code_column.put_editor(editor)
        self.trusted_offer = TrustedScriptOffer(editor)  # NOTE [trusted script offer]
        self.code_column.put_under_editor(self.trusted_offer)
        self.trusted_offer.recorded.connect(self.load_program)
        self.trusted_offer.failed.connect(self.show_notice)
        self.code_panel.keeps_typing = lambda program: program == editor.last_program()
        editor.follow(self.session)
        self.files = self.file_menu.attach(editor)
        self.appearance.watch_wheel(editor)

    # -- classroom: theme and text size -------------------------------------------------------
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

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fold_if_tight()

    def _fold_if_tight(self) -> None:
        """On a small screen for the text size (``is_tight``) the code column and the error
        heading leave out what the caption or the window's title say already."""
        tight = is_tight(self.height(), self.font_scale)
        if tight != self._tight:
            self._tight = tight
            self.code_column.set_compact(tight)
            self.error_panel.set_compact(tight)
            self.caption_bar.set_tight(tight)
            self.step_counter.set_tight(tight)
            self.node_details.set_compact(tight)
            self.stage.set_error_share(TIGHT_ERROR_SHARE if tight else ERROR_SHARE)

    def _on_font_scale_changed(self, scale: float) -> None:
        self.graph_area.set_font_scale(scale)
        self._fold_if_tight()
        QTimer.singleShot(0, self._remeasure_panels)  # once the panels took the new text size

    def _remeasure_panels(self) -> None:
        """The heights kept so that stepping does not jump (NOTE [layout fences]) measured at the
        new text size: kept from a larger one, they held the window's minimum above the screen."""
        for fence in self.fences:
            fence.release()
        self.stage.remeasure()
        self.code_column.limit_summary()

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
