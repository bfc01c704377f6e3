"""The one writer of a recording's fields: a ``.lens`` file (:func:`lens_bytes`), and the records
that ``trace --json`` lays out its own way (``app.core.trace_json``).

A field a node, slot, call or step gains is written here once: its ``*_record`` function gives
every field in the file's form, the file leaves out those at their default, and ``trace --json``
(:func:`view`) puts the ones it has always had in its own order, then any other.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from app.core.lensfile.container import gzip
from app.core.lensfile.format import FORMAT, VERSION
from app.core.lensfile.schema import ProgramEntry
from app.core.model.graph import GraphNode, LoopMark, SavedSlot
from app.core.model.program import CallInfo, Program
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, Step
from app.core.model.values import Number, PackedNumbers, Values

__all__ = [
    "STEP_DEFAULTS",
    "VALUE_FIELDS",
    "by_node",
    "call_record",
    "lens_bytes",
    "node_record",
    "program_record",
    "save_lens",
    "slot_record",
    "step_record",
    "view",
]

T = TypeVar("T")
VALUE_FIELDS = ("grad_changes", "contribution", "result")  # a step's fields that hold Values


def save_lens(
    recording: Recording,
    path: str | Path,
    *,
    layout: Mapping[str, Any] | None = None,
    preview: Mapping[str, Any] | None = None,
) -> None:
    """Write ``recording`` to ``path`` as a ``.lens`` file (with ``layout`` and ``preview``, see
    :func:`lens_bytes`).

    >>> import pathlib, tempfile
    >>> from app.core import load_builtin, record
    >>> from app.core.lensfile import read_lens
    >>> rec = record(load_builtin("two-losses"))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     save_lens(rec, pathlib.Path(folder, "two-losses.lens"))
    ...     read_lens(pathlib.Path(folder, "two-losses.lens")) == rec
    True
    """
    Path(path).write_bytes(lens_bytes(recording, layout=layout, preview=preview))


def lens_bytes(
    recording: Recording,
    *,
    compress: bool = True,
    layout: Mapping[str, Any] | None = None,
    preview: Mapping[str, Any] | None = None,
) -> bytes:
    """The ``.lens`` file of ``recording``: gzip-compressed JSON, the same bytes for the same recording.

    ``compress=False``: the JSON alone (a pipe to the next process gains nothing from gzip);
    ``recording_from_bytes`` reads both. ``layout``: where the window draws the graph, as
    ``app.render.layout_store`` writes it; kept as it is and handed back by ``open_lens``
    (the reader checks only that it is an object: the renderer checks the rest).
    ``preview``: the picture the window paints first (format's NOTE [picture first]), as
    ``app.render.preview`` writes it; a compressed file only, in a header member of its own.

    >>> from app.core import load_builtin, record
    >>> rec = record(load_builtin("two-losses"))
    >>> lens_bytes(rec)[:2], lens_bytes(rec, compress=False)[:30]  # gzip's magic; the JSON
    (b'\\x1f\\x8b', b'{"format":"autograd-lens","ver')
    """
    data = _recording_json(recording)
    if layout is not None:
        data["layout"] = dict(layout)
    text = _json_text(data)
    if not compress:
        return text.encode("utf-8")
    header = b""
    if preview is not None:
        header = gzip(_json_text({"format": FORMAT, "version": VERSION, "preview": dict(preview)}) + "\n")
    return header + gzip(text)


def _json_text(data: Mapping[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# --- every field of a recording's parts, in the file's form ---


def loops_record(loops: Sequence[LoopMark]) -> list[list[int | None]]:
    return [[m.line, m.index, m.count] for m in loops]


def program_record(p: Program) -> dict[str, Any]:
    """The fields of ``p`` that travel (all but its path on this machine), as the schema's
    :class:`ProgramEntry` lists them: a ``.lens`` file's program, and the program a request to the
    recording child carries (``app.child``), read back by ``reader.program_from_record``."""
    return {name: getattr(p, name) for name in ProgramEntry.__struct_fields__}


def slot_record(s: SavedSlot) -> dict[str, Any]:
    return {
        "name": s.name,
        "kind": s.kind,
        "shape": None if s.shape is None else list(s.shape),
        "dtype": s.dtype,
        "device": s.device,
        "nbytes": s.nbytes,
        "storages": [[r.device, r.pointer, r.nbytes] for r in s.storages],
        "value": s.value,
        "saved_version": s.saved_version,
    }


def node_record(n: GraphNode) -> dict[str, Any]:
    """Every field of ``n``; ``saved`` holds the slots themselves (each form writes its own)."""
    return {
        "id": n.id,
        "name": n.name,
        "label": n.label,
        "saved": n.saved,
        "added_at_call": n.added_at_call,
        "is_leaf": n.is_leaf,
        "line": n.line,
        "loops": loops_record(n.loops),
        "created_at_step": n.created_at_step,
        "gone_at_step": n.gone_at_step,
        "module": n.module,
        "source": None if n.source is None else [n.source.file, n.source.line],
    }


def call_record(info: CallInfo) -> dict[str, Any]:
    c = info.call
    return {
        "index": info.index,
        "first_step": info.first_step,
        "last_step": info.last_step,
        "error": info.error,
        "failed_node": info.failed_node,
        "call": {
            "kind": c.kind,
            "line": c.line,
            "col": c.col,
            "end_line": c.end_line,
            "end_col": c.end_col,
            "text": c.text,
            "keywords": dict(c.keywords),
            "retain_graph": c.retain_graph,
            "create_graph": c.create_graph,
            "loops": loops_record(c.loops),
        },
    }


def by_node(changes: Mapping[SlotKey, T]) -> dict[str, dict[str, T]]:
    out: dict[str, dict[str, T]] = {}
    for (node, slot), value in changes.items():
        out.setdefault(node, {})[slot] = value
    return out


def step_record(s: Step) -> dict[str, Any]:
    """Every field of ``s`` but its index (its place); :data:`VALUE_FIELDS` hold the Values
    themselves (each form writes its own)."""
    return {
        "kind": s.kind,
        "call": s.call,
        "node": s.node,
        "slot_changes": by_node(s.slot_changes),
        "grad_changes": s.grad_changes,
        "saved_bytes": s.saved_bytes,
        "device_bytes": s.device_bytes,
        "error": s.error,
        "caption": s.caption,
        "contribution": s.contribution,
        "result": s.result,
        "added_nodes": list(s.added_nodes),
        "line": s.line,
        "loops": loops_record(s.loops),
        "printed": list(s.printed),
        "alive_nodes": s.alive_nodes,
        "gone_nodes": list(s.gone_nodes),
        "version_changes": by_node(s.version_changes),
    }


def view(
    record: Mapping[str, Any],
    order: Iterable[str],
    *,
    leave_out: Iterable[str] = (),
    sparse: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``record``'s fields in ``order``, then the others it holds, less ``leave_out``; a field
    named in ``sparse`` is left out at the value given there.

    >>> view({"a": 1, "b": [], "c": 3, "d": 4}, ("c", "b", "a"), leave_out=("d",), sparse={"b": []})
    {'c': 3, 'a': 1}
    """
    order = tuple(order)
    skipped = {*order, *leave_out}
    keys = [*order, *(k for k in record if k not in skipped)]
    sparse = sparse or {}
    return {k: record[k] for k in keys if k not in sparse or record[k] != sparse[k]}


# --- the file's form ---


def _recording_json(rec: Recording) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "program": program_record(rec.program),
        "device": rec.device,
        "torch_version": rec.torch_version,
        "error": rec.error,
        "error_line": rec.error_line,
        "graph": {
            "nodes": [_node_json(n) for n in rec.graph.nodes],
            "edges": [[e.src, e.dst] for e in rec.graph.edges],
        },
        "leaves": dict(rec.leaves),
        "calls": [call_record(c) for c in rec.calls],
        "freed_by": [[node, slot, call] for (node, slot), call in rec.freed_by.items()],
        "needed_by": {node: list(calls) for node, calls in rec.needed_by.items()},
        "steps": [_step_json(s) for s in rec.timeline.steps],
    }


def _sparse(entry: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``entry`` without the fields that hold their default (empty lists, None, 0...)."""
    return {k: v for k, v in entry.items() if k not in defaults or v != defaults[k]}


SLOT_DEFAULTS: dict[str, Any] = {
    "shape": None, "dtype": None, "device": None, "nbytes": None, "storages": [], "value": None,
    "saved_version": None,
}  # fmt: skip
NODE_DEFAULTS: dict[str, Any] = {
    "saved": [], "added_at_call": None, "is_leaf": False, "line": None, "loops": [],
    "created_at_step": None, "gone_at_step": None, "module": None, "source": None,
}  # fmt: skip
STEP_DEFAULTS: dict[str, Any] = {
    "call": None, "node": None, "slot_changes": {}, "grad_changes": {}, "device_bytes": None,
    "error": None, "caption": "", "contribution": None, "result": None, "added_nodes": [],
    "line": None, "loops": [], "printed": [], "alive_nodes": 0, "gone_nodes": [], "version_changes": {},
}  # fmt: skip


def _node_json(n: GraphNode) -> dict[str, Any]:
    entry = node_record(n)
    entry["saved"] = [_sparse(slot_record(s), SLOT_DEFAULTS) for s in n.saved]
    return _sparse(entry, NODE_DEFAULTS)


def _step_json(s: Step) -> dict[str, Any]:
    entry = step_record(s)
    for key in VALUE_FIELDS:
        named = entry[key]
        entry[key] = None if named is None else {k: _values_json(v) for k, v in named.items()}
    return _sparse(entry, STEP_DEFAULTS)


def _values_json(v: Values | None) -> dict[str, Any] | None:
    if v is None:
        return None
    if isinstance(v.flat, PackedNumbers):  # NOTE [packed values in files]
        data = base64.b64encode(v.flat.little_endian()).decode("ascii")
        return {"shape": list(v.shape), "packed": v.flat.code, "data": data, "dtype": v.dtype}
    return {"shape": list(v.shape), "flat": numbers_json(v.flat), "dtype": v.dtype}


def numbers_json(flat: Sequence[Number]) -> list[Number | str]:
    """Numbers as JSON holds them; one pass in C when all are finite (a model's grads)."""
    try:
        if all(map(math.isfinite, flat)):
            return list(flat)
    except OverflowError:  # an int too large for a float: finite, and said number by number
        pass
    return [_number_json(x) for x in flat]


def _number_json(x: Number) -> Number | str:
    """A number as JSON holds it: NaN and infinities as strings, so the file stays standard JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x
