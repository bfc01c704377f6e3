"""One plain sentence per step, written from what the recording observed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import torch

from .graph import Graph, GraphNode
from .timeline import SlotKey, Step

if TYPE_CHECKING:
    from .recorder import CallInfo

__all__ = ["format_bytes", "format_values", "node_title", "write_captions"]


def format_values(tensor: torch.Tensor | None, limit: int = 6) -> str:
    """``[2, 4]`` for a small tensor; ``None`` when there is none."""
    if tensor is None:
        return "None"
    flat = tensor.detach().reshape(-1).tolist()
    shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in flat[:limit])
    more = f", … ({len(flat)} values)" if len(flat) > limit else ""
    return f"[{shown}{more}]" if tensor.dim() > 0 else shown


def format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


def node_title(node: GraphNode) -> str:
    return f"{node.name} ({node.label})" if node.label else node.name


def _slot_list(names: Sequence[str]) -> str:
    return " and ".join(names)


def _later(needed: Sequence[int], call: int) -> list[int]:
    return [c for c in needed if c > call]


def _node_caption(step: Step, graph: Graph, needed_by: Mapping[str, tuple[int, ...]]) -> str:
    assert step.node is not None and step.call is not None
    node = graph.node(step.node)
    head = f"{node_title(node)} ran in call {step.call + 1}"
    if node.is_leaf:
        return f"{head} and added this call's gradient into {node.label}.grad."
    slots = [s.name for s in node.tensor_slots]
    if not slots:
        return f"{head}; it saved no tensors, so there is nothing to free."
    states = {key[1]: state for key, state in step.slot_changes.items() if key[0] == node.id}
    freed = [name for name in slots if states.get(name) == "freed"]
    later = _later(needed_by.get(node.id, ()), step.call)
    if freed:
        text = f"{head} and released its saved {_slot_list(freed)}"
        if later:
            text += f"; call {later[0] + 1} will need {'it' if len(freed) == 1 else 'them'}"
        return text + "."
    text = f"{head} and kept its saved {_slot_list(slots)} (retain_graph)"
    return text + (f"; call {later[0] + 1} can reuse them." if later else ".")


def _call_end_caption(step: Step, info: CallInfo, last_call: bool) -> str:
    call = info.call
    parts = [f"Call {info.index + 1} ({call.kind}) finished."]
    for name, share in (step.contribution or {}).items():
        parts.append(f"It added {format_values(share)} to {name}.grad.")
    for name, value in (step.result or {}).items():
        parts.append(f"It returned {name} = {format_values(value)}.")
    if call.effective_retain and last_call:
        parts.append("This was the last call: retaining its graph only keeps memory alive.")
    elif not call.effective_retain:
        parts.append("Without retain_graph it released the saved tensors it used.")
    return " ".join(parts)


def _error_caption(step: Step, graph: Graph, freed_by: Mapping[SlotKey, int]) -> str:
    assert step.call is not None
    head = f"Call {step.call + 1} failed"
    if step.node is None:
        return f"{head} before any node ran: PyTorch refused the call itself."
    node = graph.node(step.node)
    culprits = [
        (slot.name, freed_by[(node.id, slot.name)])
        for slot in node.tensor_slots
        if (node.id, slot.name) in freed_by
    ]
    if culprits:
        name, by = culprits[0]
        return (
            f"{head} at {node_title(node)}: its saved {name} was freed by call {by + 1}, "
            "which ran without retain_graph=True."
        )
    return f"{head} at {node_title(node)}."


def write_captions(
    steps: Sequence[Step],
    graph: Graph,
    calls: Sequence[CallInfo],
    freed_by: Mapping[SlotKey, int],
    needed_by: Mapping[str, tuple[int, ...]],
) -> list[Step]:
    infos = {info.index: info for info in calls}
    out = []
    for step in steps:
        if step.kind == "forward":
            tensors = sum(len(n.tensor_slots) for n in graph.nodes if n.added_at_call is None)
            text = (
                f"Forward pass recorded: {sum(1 for n in graph.nodes if n.added_at_call is None)} nodes; "
                f"{tensors} saved tensors ({format_bytes(step.saved_bytes)}) wait for backward."
            )
        elif step.kind == "node":
            text = _node_caption(step, graph, needed_by)
        elif step.kind == "call_end":
            assert step.call is not None
            text = _call_end_caption(step, infos[step.call], step.call == len(calls) - 1)
        else:
            text = _error_caption(step, graph, freed_by)
        out.append(replace(step, caption=text))
    return out
