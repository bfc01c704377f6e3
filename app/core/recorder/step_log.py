"""The steps: the recording's timeline as it is taken, and when each node came and went.

What happened since the last step (nodes added or let go, text printed) waits here until the next
step is taken; the slot and gradient changes come from the ledger and the grad watch.

>>> log = StepLog()
>>> log.node_added("n0", line=2, loops=(), origin=(None, None))
>>> log.printed("hello")
>>> step = log.take("forward", None, None, line=2, loops=(), slots={}, versions={}, grads={},
...                 saved_bytes=0, device_bytes=None, alive_nodes=1)
>>> step.index, step.added_nodes, step.printed, log.node_fields()["n0"]["created_at_step"]
(0, ('n0',), ('hello',), 0)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from app.core.model.graph import LoopMark, SourceRef
from app.core.model.timeline import SlotKey, SlotState, Step, StepKind
from app.core.model.values import Values
from app.core.recorder.capture import frozen

__all__ = ["Origin", "StepLog"]

Origin = tuple[str | None, SourceRef | None]  # the module and the user's source line a node came from
_NOTHING: Mapping[Any, Any] = MappingProxyType({})  # shared by the many steps that change nothing


class StepLog:
    """The steps taken so far, and what the next one will say was added, let go and printed."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.pending_nodes: list[str] = []  # nodes captured since the last step
        self._pending_gone: list[str] = []
        self._pending_printed: list[str] = []
        self._node_line: dict[str, tuple[int | None, tuple[LoopMark, ...], int]] = {}
        self._node_origin: dict[str, Origin] = {}
        self._gone_at: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def nodes_seen(self) -> int:
        """How many nodes were ever captured (ids ``n0`` ... count up from 0)."""
        return len(self._node_line)

    @property
    def waiting(self) -> bool:
        """Whether nodes were added or let go, or text printed, since the last step."""
        return bool(self.pending_nodes or self._pending_gone or self._pending_printed)

    def node_added(
        self, node_id: str, *, line: int | None, loops: tuple[LoopMark, ...], origin: Origin
    ) -> None:
        self._node_line[node_id] = (line, loops, len(self.steps))
        if origin != (None, None):
            self._node_origin[node_id] = origin
        self.pending_nodes.append(node_id)

    def node_gone(self, node_id: str) -> None:
        self._gone_at[node_id] = len(self.steps)
        self._pending_gone.append(node_id)

    def printed(self, text: str) -> None:
        self._pending_printed.append(text)

    def take(
        self,
        kind: StepKind,
        call: int | None,
        node: str | None,
        *,
        line: int | None,
        loops: tuple[LoopMark, ...],
        slots: Mapping[SlotKey, SlotState],
        versions: Mapping[SlotKey, int],
        grads: Mapping[str, Values | None],
        saved_bytes: int,
        device_bytes: int | None,
        alive_nodes: int,
        error: str | None = None,
        contribution: Mapping[str, Values | None] | None = None,
        result: Mapping[str, Values] | None = None,
    ) -> Step:
        """Take the next step; the changes are handed over, not copied."""
        step = frozen(  # a step per node: Step's own __init__ took a tenth of recording a model
            Step,
            index=len(self.steps),
            kind=kind,
            call=call,
            node=node,
            slot_changes=MappingProxyType(slots) if slots else _NOTHING,
            grad_changes=MappingProxyType(grads) if grads else _NOTHING,
            saved_bytes=saved_bytes,
            device_bytes=device_bytes,
            added_nodes=tuple(self.pending_nodes),
            line=line,
            loops=loops,
            printed=tuple(self._pending_printed),
            alive_nodes=alive_nodes,
            gone_nodes=tuple(self._pending_gone),
            version_changes=MappingProxyType(versions) if versions else _NOTHING,
            error=error,
            caption="",
            contribution=contribution,
            result=result,
        )
        if self.pending_nodes:
            self.pending_nodes.clear()
        if self._pending_gone:
            self._pending_gone.clear()
        if self._pending_printed:
            self._pending_printed.clear()
        self.steps.append(step)
        return step

    def node_fields(self) -> dict[str, dict[str, Any]]:
        """Each node's line, loops, and the steps it came and went at (the graph's node fields)."""
        no_origin: Origin = (None, None)
        return {
            node_id: {
                "line": line,
                "loops": loops,
                "created_at_step": step,
                "gone_at_step": self._gone_at.get(node_id),
                "module": self._node_origin.get(node_id, no_origin)[0],
                "source": self._node_origin.get(node_id, no_origin)[1],
            }
            for node_id, (line, loops, step) in self._node_line.items()
        }
