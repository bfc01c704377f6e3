"""What a recording says about its failed call: the facts a fix is chosen from.

# NOTE [fixes from the recording]
Which fix applies is read from the recording, not guessed from the text:
the failing node and the call that freed its saved tensors
(``Recording.freed_by``), the loop iteration each node was created in
(``GraphNode.loops``), and the statement that changed a saved tensor in place
(the step whose ``version_changes`` name the slot). The text only says where
to make the edit (:mod:`app.core.lesson.edits`), and every edit is recorded
again before it is offered (:mod:`app.core.lesson.prove`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.core.lesson.edits import Source, call_node, loop_at, parsed
from app.core.model.graph import GraphNode
from app.core.model.program import Call, CallInfo
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey

__all__ = ["Failure", "failure_of", "site"]


@dataclass(frozen=True)
class Failure:
    """What the recording says about the failed call, with the parsed text to edit."""

    recording: Recording
    source: Source
    info: CallInfo
    node: GraphNode | None

    @property
    def code(self) -> str:
        return self.source.code

    def freeing_calls(self) -> list[CallInfo]:
        """The earlier calls that freed a saved tensor of the failing node."""
        if self.node is None:
            return []
        keys: list[SlotKey] = [(self.node.id, s.name) for s in self.node.tensor_slots]
        indices = sorted({self.recording.freed_by[k] for k in keys if k in self.recording.freed_by})
        return [self.recording.calls[i] for i in indices if i < self.info.index]

    def modifying_lines(self) -> list[int]:
        """Lines of the statements that changed a saved tensor of the failing node in place while
        the node still held it (the node's own line, which saved it, among them)."""
        if self.node is None:
            return []
        return self._writes({self.node.id}, freed=False)

    def written_lines(self) -> list[int]:
        """Lines of the statements that wrote in place, after a backward had freed them, the
        weights that the failing node or a node below it had saved (NOTE [freed leaves written] in
        the recorder): retaining the graph would not bring back their old values."""
        if self.node is None:
            return []
        return self._writes(set(self.recording.graph.reached_from([self.node.id])), freed=True)

    def _writes(self, nodes: set[str], *, freed: bool) -> list[int]:
        saved = {
            (n.id, s.name): s.saved_version
            for n in self.recording.graph.nodes
            if n.id in nodes
            for s in n.tensor_slots
        }
        states: dict[SlotKey, str] = {}
        lines: list[int] = []
        for step in self.recording.timeline.steps[: self.info.last_step]:
            for key, state in step.slot_changes.items():
                if key in saved:
                    states[key] = state
            for key, version in step.version_changes.items():
                if key not in saved or (states.get(key) == "freed") != freed:
                    continue
                if freed and version == saved[key]:
                    continue
                if step.line is not None and step.line not in lines:
                    lines.append(step.line)
        return lines

    def call_statement(self, info: CallInfo) -> ast.stmt:
        node = call_node(self.source, info.call)
        stmt = self.source.enclosing_statement(node)
        if stmt is None:
            raise ValueError(f"no statement holds the call on line {info.call.line}")
        return stmt

    def freeing_sites(self) -> dict[tuple[int, int], Call]:
        """Where the earlier calls that freed what the failing call needs are, but the failing one's."""
        failing_site = site(self.info.call)
        sites: dict[tuple[int, int], Call] = {}
        for info in self.freeing_calls():
            if site(info.call) != failing_site:  # the same line again: the real problem is elsewhere
                sites.setdefault(site(info.call), info.call)
        return sites

    def earlier_iteration_loop(self) -> ast.For | ast.While | None:
        """The loop whose earlier iteration made the failing node, while the call runs in a later one."""
        if self.node is None:
            return None
        made = {mark.line: mark.index for mark in self.node.loops}
        for mark in reversed(self.info.call.loops):
            if mark.line in made and made[mark.line] < mark.index:
                return loop_at(self.source, mark.line)
        return None


def site(call: Call) -> tuple[int, int]:
    """Where a call is in the text: its line and column (a loop runs one site many times)."""
    return call.line, call.col


def failure_of(recording: Recording) -> Failure | None:
    """The facts of ``recording``'s failed call, with its text parsed; None when no call failed or
    the text does not parse."""
    info = recording.failed
    if info is None:
        return None
    try:
        source = parsed(recording.program.code)
    except SyntaxError:
        return None
    failed = info.failed_node
    node = recording.graph.node(failed) if failed is not None and failed in recording.graph else None
    return Failure(recording, source, info, node)
