"""The engine observer: the order autograd runs the captured nodes in, and which one failed.

For each autograd call a pre-hook and a post-hook go on every captured node and are removed in a
``finally``. The engine frees a node's buffers right after the node runs (after its post-hooks),
so the state a node *left behind* is visible at the next node's pre-hook: that is where the node
before is reported done (``node_done``), and at the end of the call for the last one. When a call
raises, the failing node is the one whose pre-hook fired and whose post-hook did not.

>>> import torch
>>> from app.core.recorder.capture import GraphCapture
>>> x = torch.ones(2, requires_grad=True)
>>> y = x.exp().sum()
>>> capture = GraphCapture()
>>> _ = capture.add_roots([y.grad_fn])
>>> done = []
>>> observer = EngineObserver(capture, node_done=lambda n, call: done.append(n))
>>> with observer.watching(0):
...     y.backward()
>>> observer.finish()
>>> done, observer.needed_by()["n1"]
(['n0', 'n1', 'n2'], (0,))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from types import MappingProxyType
from typing import Any

from app.core.recorder.capture import GraphCapture

__all__ = ["EngineObserver"]


class EngineObserver:
    """The hooks of the recording's autograd calls, one call at a time.

    ``node_done(node_id, call)`` is told when a node has run and released its buffers;
    ``check`` runs at every node (the time limit); ``ran`` is told when a node's post-hook fires.
    """

    def __init__(
        self,
        capture: GraphCapture,
        *,
        node_done: Callable[[str, int], None],
        ran: Callable[[str], None] | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        self.capture = capture
        self._node_done = node_done
        self._ran = ran
        self._check = check
        self._reached: dict[str, set[int]] = {}  # node -> the calls whose engine ran it
        self._call = -1
        self._started: list[str] = []
        self._finished: set[str] = set()
        self._handles: list[Any] = []

    @contextmanager
    def watching(self, call: int) -> Iterator[None]:
        """Hooks on every captured node while the call runs, removed even when it raises."""
        self._call, self._started, self._finished = call, [], set()
        self._handles = []
        try:
            self.watch_more(list(self.capture.fns))
            yield
        finally:
            for handle in self._handles:
                handle.remove()
            self._handles = []

    def watch_more(self, node_ids: list[str]) -> None:
        """Hook nodes captured while the call runs (a checkpoint's recompute, which a reentrant
        checkpoint's own backward runs inside this call)."""
        pre, post, fns = self._on_pre, self._on_post, self.capture.fns
        for node_id in node_ids:
            fn = fns[node_id]
            self._handles.append(fn.register_prehook(partial(pre, node_id)))
            self._handles.append(fn.register_hook(partial(post, node_id)))

    def finish(self) -> None:
        """The call ended: the node that ran last is done too."""
        self._close_previous()

    def failed_node(self) -> str | None:
        running = [n for n in self._started if n not in self._finished]
        return running[-1] if running else None

    def needed_by(self) -> Mapping[str, tuple[int, ...]]:
        """Each node reached by some call, with the calls that reached it."""
        return MappingProxyType({k: tuple(sorted(v)) for k, v in self._reached.items()})

    def _on_pre(self, node_id: str, grad_outputs: Any) -> None:
        if self._check is not None:
            self._check()
        self._close_previous()
        self._started.append(node_id)
        calls = self._reached.get(node_id)
        if calls is None:
            self._reached[node_id] = {self._call}
        else:
            calls.add(self._call)

    def _on_post(self, node_id: str, grad_inputs: Any, grad_outputs: Any) -> None:
        self._finished.add(node_id)
        if self._ran is not None:
            self._ran(node_id)

    def _close_previous(self) -> None:
        """Report the node that ran last, now that it released its buffers."""
        if self._started and self._started[-1] in self._finished:
            self._node_done(self._started[-1], self._call)
