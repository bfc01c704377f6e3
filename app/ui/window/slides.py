"""Pictures of the graph: the view as drawn now (SVG, PNG), or every step as slides.

A PNG slide is 16:9 with the caption, the code (its line marked) and the graph
(``app/render/qt/slide.py``, as the command line's PNG export); an SVG slide is the graph with
its caption, as the command line's export.
``progress`` says how many are written, for the status bar's bar; the last line says where.

Slides are drawn a step per event-loop turn, so the window keeps painting and
answering while a long recording is exported. The two dialog functions are the
seam tests replace (looked up at call time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QProgressBar, QStatusBar, QWidget

from app.ui.runtime.session import Session

if TYPE_CHECKING:
    from app.core.model.recording import Recording
    from app.render.export_budget import ExportTooLarge
    from app.ui.graph.graph_view import GraphView

__all__ = ["SlideExporter", "ask_export_file", "ask_export_folder", "progress_bar"]

NOTHING_YET = "There is no graph to export yet."


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


def _too_large(exc: ExportTooLarge) -> str:
    """The notice for slides past the export budget: what it would take, and the way around it."""
    done = f"after {exc.written:,} slides" if exc.written else "nothing was written"
    if exc.what == "steps":
        size = f"{exc.needed:,} steps, one slide each; slides stop at {exc.limit:,}"
    elif exc.what == "disk":
        size = f"about {exc.needed / 1e6:,.0f} MB of slides, and the disk has {exc.limit / 1e6:,.0f} MB free"
    else:
        size = f"about {exc.needed / 1e6:,.0f} MB of slides, more than {exc.limit / 1e6:,.0f} MB"
    return (
        f"Export stopped ({done}): this recording needs {size}. Export the view at the steps you "
        "want, or run: python -m app export FILE --max-steps N --max-mb M"
    )


class SlideExporter(QObject):
    """Exports for ``parent``'s graph view (``view()`` is None until the first graph)."""

    busy_changed = Signal(bool)
    wrote = Signal(str)  # a status line: "Wrote …"
    failed = Signal(str)  # a notice for the learner
    slides_exported = Signal(object)  # list[Path], when every step is written
    progress = Signal(int, int)  # slides written, slides in all

    def __init__(
        self,
        parent: QWidget,
        session: Session,
        view: Callable[[], GraphView | None],
        theme: Callable[[], str],
    ) -> None:
        super().__init__(parent)
        self._parent, self._session, self._view, self._theme = parent, session, view, theme
        self._slides: Iterator[Path] | None = None
        self._folder, self._count = Path(), 0

    @property
    def busy(self) -> bool:
        """Whether slides are being written."""
        return self._slides is not None

    # -- the view as drawn now --------------------------------------------------------
    def ask_and_export_view(self, fmt: str) -> None:
        recording = self._session.recording
        if self._view() is None or recording is None or self._session.layout is None:
            self.failed.emit(NOTHING_YET)
            return
        suggested = f"{recording.program.name}-step-{self._session.index:03d}.{fmt}"
        path = ask_export_file(self._parent, fmt, suggested)
        if path is not None:
            self.export_view(path)

    def export_view(self, path: Path) -> None:
        """Write the graph as it is drawn now to ``path`` (.svg or .png)."""
        view = self._view()
        assert view is not None
        if path.suffix.lower() == ".svg":
            view.export_svg(path)
        else:
            view.export_png(path)
        self.wrote.emit(f"Wrote {path}")

    # -- every step ------------------------------------------------------------------
    def ask_and_export_slides(self) -> None:
        if self._session.recording is None or self._session.layout is None:
            self.failed.emit(NOTHING_YET)
            return
        folder = ask_export_folder(self._parent)
        if folder is not None:
            self.export_slides(folder, "png")

    def export_slides(self, folder: Path, fmt: str = "png") -> None:
        """Draw every step to ``folder`` (one file per step); emits :attr:`slides_exported`."""
        recording, layout = self._session.recording, self._session.layout
        if recording is None or layout is None:
            return
        self._slides = self._slide_files(recording, layout, Path(folder), fmt)
        self._folder, self._count = Path(folder), len(recording.timeline)
        self.busy_changed.emit(True)
        self.progress.emit(0, self._count)
        self._tick([])

    def _slide_files(self, recording: Recording, layout: Any, folder: Path, fmt: str) -> Iterator[Path]:
        from app.render.qt.export import write_steps
        from app.render.qt.scene import GraphScene

        scene = GraphScene(recording, layout, palette=self._theme())
        yield from write_steps(recording, scene, folder, "png" if fmt == "png" else "svg")

    def _tick(self, done: list[Path]) -> None:
        from app.core.model.errors import UserError
        from app.render.export_budget import ExportTooLarge  # loaded with the drawing, not at start

        assert self._slides is not None
        try:
            done.append(next(self._slides))
        except StopIteration:
            self._finish()
            self.wrote.emit(f"Done: {len(done)} slides written to {self._folder}")
            self.slides_exported.emit(done)
            return
        except OSError as exc:
            self._finish()
            self.failed.emit(f"Export stopped: {exc.strerror or exc}: {exc.filename or ''}")
            return
        except ExportTooLarge as exc:  # the command line's budget (app.render.export_budget)
            self._finish()
            self.failed.emit(_too_large(exc))
            return
        except UserError as exc:  # a .lens file's damaged step, made as it is reached
            self._finish()
            self.failed.emit(f"Export stopped: {exc}")
            return
        self.progress.emit(len(done), self._count)
        QTimer.singleShot(0, lambda: self._tick(done))

    def _finish(self) -> None:
        self._slides = None
        self.busy_changed.emit(False)


def progress_bar(exporter: SlideExporter, status: QStatusBar) -> QProgressBar:
    """A bar in ``status`` that counts the slides written while an export runs (a 60-step
    recording took ~12 s with nothing moving), hidden otherwise."""
    bar = QProgressBar()
    bar.setObjectName("slidesProgress")
    bar.setFormat("slide %v of %m")
    bar.setMaximumWidth(260)
    bar.hide()
    status.addPermanentWidget(bar)

    def show(written: int, count: int) -> None:
        bar.setRange(0, count)
        bar.setValue(written)
        bar.show()

    exporter.progress.connect(show)
    exporter.busy_changed.connect(lambda busy: None if busy else bar.hide())
    return bar
