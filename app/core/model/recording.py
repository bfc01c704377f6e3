"""A finished recording: pure data, holding no graph objects or live tensors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from app.core.model.graph import Graph
from app.core.model.program import CallInfo, Program
from app.core.model.timeline import SlotKey, Timeline
from app.core.model.values import Values

__all__ = ["Recording"]


@dataclass(frozen=True)
class Recording:
    """What one run of a program did, step by step (see ``app.core.recorder.record``).

    >>> from app.core import load_builtin, record
    >>> rec = record(load_builtin("two-losses"))
    >>> [c.call.text for c in rec.calls]
    ['y.sum().backward(retain_graph=True)', '(y * 3).sum().backward()']
    >>> rec.grads_at_end(0)["x"].tolist(), rec.grads_at_end(1)["x"].tolist()
    ([2.0, 4.0], [8.0, 16.0])
    """

    program: Program
    device: str
    torch_version: str
    graph: Graph
    timeline: Timeline
    leaves: Mapping[str, str]  # leaf name -> its (latest) AccumulateGrad node id
    calls: tuple[CallInfo, ...]
    freed_by: Mapping[SlotKey, int] = field(default_factory=dict)  # slot -> call that freed it
    needed_by: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # node -> calls reaching it
    error: str | None = None  # the exception that ended the program, when it was not an autograd call's
    error_line: int | None = None

    def grads_at_end(self, call: int) -> Mapping[str, Values | None]:
        return self.timeline.state(self.calls[call].last_step).grads

    @cached_property
    def failed(self) -> CallInfo | None:
        """The call that failed (a recording is never changed: looked for once, not at every step)."""
        return next((c for c in self.calls if c.error is not None), None)

    @property
    def opening_step(self) -> int:
        """The step shown first: where a call failed, else the program's own error (its last
        step), else the first."""
        failed = self.failed
        if failed is not None:
            return failed.last_step
        if self.error is not None and len(self.timeline):
            return len(self.timeline) - 1
        return 0
