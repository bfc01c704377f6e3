"""Record autograd in your own code, for scripts and notebooks.

>>> import torch
>>> from app import lens
>>> x = torch.ones(2, requires_grad=True)
>>> with lens.record() as rec:
...     (x * 3).sum().backward()
>>> [c.call.kind for c in rec.recording.calls], rec.recording.grads_at_end(0)["x"].tolist()
(['backward'], [3.0, 3.0])

Inside the block every ``backward``, ``torch.autograd.backward`` and
``torch.autograd.grad`` call is recorded node by node, with a step after each
line of the caller's file (NOTE [trusted scripts] in
``app/core/recorder/script_recorder.py``). The hooks, patches and trace function are
removed when the block ends, also when it raises. An autograd error ends the
recording at its ``error`` step and is raised again as PyTorch raised it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

    from app.core.model.recording import Recording
    from app.core.recorder.script import BlockRecorder

__all__ = ["LensRecorder", "record"]


class LensRecorder:
    """What ``with lens.record() as rec:`` gives: the recording once the block ended.

    >>> import torch
    >>> from app import lens
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with lens.record() as rec:
    ...     x.square().sum().backward()
    >>> rec.recording.grads_at_end(0)["x"].tolist()
    [2.0, 4.0]
    """

    def __init__(self, model: torch.nn.Module | None = None, device: str = "cpu") -> None:
        self._model = model
        self._device = device
        self._block: BlockRecorder | None = None
        self._recording: Recording | None = None
        self._lines: tuple[int, int] | None = None  # the block's lines of its file, when found

    def __enter__(self) -> LensRecorder:
        from app.core.recorder.script import BlockRecorder

        self._block = BlockRecorder(sys._getframe(1), model=self._model, device=self._device)
        self._block.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]:
        assert self._block is not None, "__exit__ without __enter__"
        instead = self._block.stop(exc)
        self._recording = self._block.recording
        self._lines = self._block.lines
        self._block = None
        if instead is not None:
            raise instead.with_traceback(instead.__traceback__) from None
        return False

    @property
    def recording(self) -> Recording:
        """The :class:`~app.core.model.recording.Recording` of the block; asked for inside the block,
        a ``RuntimeError`` says it is not ready yet.

        >>> import torch
        >>> from app import lens
        >>> x = torch.ones(2, requires_grad=True)
        >>> with lens.record() as rec:
        ...     (x * 2).sum().backward()
        >>> [step.kind for step in rec.recording.timeline.steps]
        ['node', 'node', 'node', 'call_end', 'forward']
        """
        if self._recording is None:
            raise RuntimeError("the recording is ready once the `with lens.record()` block has ended")
        return self._recording

    def save(self, path: str | Path) -> None:
        """Write the recording to a ``.lens`` file (``python -m app gui FILE.lens`` opens it), or to
        a path ending in ``.html``, the one-file page that steps through it in any browser.

        >>> import pathlib, tempfile, torch
        >>> from app import lens
        >>> from app.core.lensfile import read_lens
        >>> x = torch.ones(2, requires_grad=True)
        >>> with lens.record() as rec:
        ...     (x * 2).sum().backward()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     rec.save(pathlib.Path(folder, "run.lens"))
        ...     read_lens(pathlib.Path(folder, "run.lens")) == rec.recording
        True
        """
        if str(path).lower().endswith(".html"):
            from app.render.web import write_player

            write_player(self.recording, path, lines=self._lines)
            return
        from app.render.layout_store import save_with_layout

        save_with_layout(self.recording, path)

    def _repr_html_(self) -> str:
        """The player inline, when ``rec`` is a notebook cell's value (no Qt, no display): the
        block's own lines of the file, numbered as there."""
        if self._recording is None:
            return "<p>the recording shows once the <code>with lens.record()</code> block has ended</p>"
        from app.render.web.notebook import inline_player

        return inline_player(self._recording, lines=self._lines)

    def to_json(self) -> dict[str, Any]:
        """The recording as the JSON object ``python -m app trace --json`` prints (a dict).

        >>> import torch
        >>> from app import lens
        >>> x = torch.ones(2, requires_grad=True)
        >>> with lens.record() as rec:
        ...     (x * 2).sum().backward()
        >>> [(c["kind"], c["text"]) for c in rec.to_json()["calls"]]
        [('backward', '(x * 2).sum().backward()')]
        """
        from app.core.report import to_json

        return to_json(self.recording)

    def show(self) -> int:
        """Open the window on the recording; returns when the window is closed.

        >>> with lens.record() as rec:  # doctest: +SKIP
        ...     loss.backward()
        >>> rec.show()  # doctest: +SKIP
        """
        import tempfile

        from app.ui.main import run_gui

        folder = Path(tempfile.gettempdir()) / "autograd-lens"
        folder.mkdir(exist_ok=True)
        path = folder / f"{self.recording.program.name}.lens"
        self.save(path)
        return run_gui(str(path))


def record(model: torch.nn.Module | None = None, *, device: str = "cpu") -> LensRecorder:
    """Record the autograd calls made inside a ``with`` block; ``model``'s parameters are
    named by the variable that holds it (``model.fc1.weight``).

    >>> import torch
    >>> from app import lens
    >>> model = torch.nn.Linear(2, 1)
    >>> with lens.record(model) as rec:
    ...     model(torch.ones(1, 2)).sum().backward()
    >>> sorted(rec.recording.leaves)
    ['model.bias', 'model.weight']
    """
    return LensRecorder(model, device)
