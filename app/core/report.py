"""A recording as JSON (for tools and tests) or as a readable table (for people)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from app.core.lesson.captions import format_bytes, format_values
from app.core.model.timeline import SlotKey, Step
from app.core.recording.recorder import Recording

__all__ = ["to_json", "to_table"]


def _listed(tensor: torch.Tensor | None) -> Any:
    return None if tensor is None else tensor.tolist()


def _node_json(rec: Recording) -> list[dict[str, Any]]:
    return [
        {
            "id": n.id,
            "name": n.name,
            "label": n.label,
            "added_at_call": n.added_at_call,
            "saved": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "shape": None if s.shape is None else list(s.shape),
                    "dtype": s.dtype,
                    "nbytes": s.nbytes,
                    **({"value": s.value} if s.kind == "value" else {}),
                }
                for s in n.saved
            ],
        }
        for n in rec.graph.nodes
    ]


def _steps_json(rec: Recording) -> list[dict[str, Any]]:
    out = []
    for i in range(len(rec.timeline)):
        state = rec.timeline.state(i)
        step = state.step
        saved: dict[str, dict[str, str]] = {}
        for (node_id, slot), value in state.slots.items():
            saved.setdefault(node_id, {})[slot] = value
        entry: dict[str, Any] = {
            "index": step.index,
            "kind": step.kind,
            "call": step.call,
            "node": step.node,
            "saved_state": saved,
            "grads": {name: _listed(state.grads.get(name)) for name in rec.leaves},
            "saved_bytes": step.saved_bytes,
            "error": step.error,
            "caption": step.caption,
        }
        if step.device_bytes is not None:
            entry["device_bytes"] = step.device_bytes
        if step.contribution is not None:
            entry["contribution"] = {k: _listed(v) for k, v in step.contribution.items()}
        if step.result is not None:
            entry["result"] = {k: _listed(v) for k, v in step.result.items()}
        out.append(entry)
    return out


def to_json(rec: Recording) -> dict[str, Any]:
    """The ``trace --json`` object (see README)."""
    return {
        "scenario": rec.scenario.name,
        "device": rec.device,
        "torch_version": rec.torch_version,
        "nodes": _node_json(rec),
        "edges": [{"from": e.src, "to": e.dst} for e in rec.graph.edges],
        "steps": _steps_json(rec),
    }


def _slot_changes(rec: Recording, before: Mapping[SlotKey, str], step: Step) -> list[str]:
    out = []
    for (node_id, slot), state in step.slot_changes.items():
        old = before.get((node_id, slot))
        change = state if old is None else f"{old} -> {state}"
        out.append(f"{node_id} {rec.graph.node(node_id).name}.{slot}: {change}")
    return out


def _wrapped(prefix: str, items: list[str], width: int = 100) -> list[str]:
    """``prefix`` then ``items`` joined by ``; ``, wrapped under the prefix."""
    lines, line = [], prefix
    for item in items:
        if line != prefix and len(line) + len(item) + 2 > width:
            lines.append(line.rstrip())
            line = " " * len(prefix)
        line += item + ("; " if item is not items[-1] else "")
    return [*lines, line]


_INDENT = " " * 12


def to_table(rec: Recording) -> str:
    """One line per step (step, call, kind, node, saved bytes, grads), then what changed and why.

    Slot lines list only the slots whose state changed at that step, as
    ``n1 PowBackward0.self: alive -> retained``; node ids tell apart nodes of the same name.
    """
    lines = [f"{rec.scenario.name} on {rec.device} (torch {rec.torch_version})", ""]
    header = f"{'step':>4}  {'call':>4}  {'kind':<8}  {'node':<30}  {'saved bytes':>11}  grads"
    lines += [header, "-" * len(header)]
    before: Mapping[SlotKey, str] = {}
    for i in range(len(rec.timeline)):
        state = rec.timeline.state(i)
        step = state.step
        node = f"{step.node} {rec.graph.node(step.node).name}" if step.node else ""
        grads = "  ".join(f"{k}.grad={format_values(state.grads.get(k))}" for k in rec.leaves)
        call = "" if step.call is None else str(step.call + 1)
        lines.append(
            f"{i:>4}  {call:>4}  {step.kind:<8}  {node:<30}  {format_bytes(step.saved_bytes):>11}  {grads}"
        )
        changes = _slot_changes(rec, before, step)
        if changes:
            lines += _wrapped(f"{_INDENT}saved: ", changes)
        lines.append(f"{_INDENT}{step.caption}")
        if step.error:
            lines.append(f"{_INDENT}PyTorch: {step.error.splitlines()[0]}")
        before = state.slots
    return "\n".join(lines)
