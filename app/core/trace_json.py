"""A recording as the JSON of ``trace --json`` and ``run --json``: written in pieces, bounded.

Steps are written as their changes, as a ``.lens`` file stores them: a step names the slots whose
state changed (``slot_changes``), the leaves whose ``.grad`` changed (``grad_changes``, ``null`` for
a ``.grad`` reset to None) and the slots whose version changed (``version_changes``); the state at
step ``i`` is the changes of steps ``0..i`` applied in order. Repeating every leaf's whole ``.grad``
on every step made a 4-line program (a leaf of 10 million elements, then a loop of ``print``) print
450 MB of JSON for 9 steps and grow without bound with the loop.

The text is made a piece at a time (a gradient in blocks of :data:`BLOCK` numbers) and
:func:`json_pieces` stops at a byte limit, so a recording is never turned into one Python object
tree of its numbers, nor into text past the limit. The JSON is strict: NaN and the infinities are
the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (Python's ``float()`` reads them back).

>>> from app.core.model.graph import Graph
>>> from app.core.model.program import Program
>>> from app.core.model.timeline import Step, Timeline
>>> grad = {"x": Values((2,), (2.0, float("inf")))}
>>> steps = Timeline((Step(0, "forward", None, None, {}, {}, 0), Step(1, "forward", None, None, {}, grad, 0)))
>>> rec = Recording(Program("x = 1\\n"), "cpu", "2.13.0", Graph((), ()), steps, {"x": ""}, ())
>>> [step["grad_changes"] for step in to_json(rec)["steps"]]
[{}, {'x': [2.0, 'Infinity']}]
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from app.core.lensfile import writer
from app.core.lensfile.writer import STEP_DEFAULTS, VALUE_FIELDS, view
from app.core.model.errors import UserError
from app.core.model.graph import GraphNode, SavedSlot
from app.core.model.program import CallInfo
from app.core.model.recording import Recording
from app.core.model.timeline import Step
from app.core.model.values import Number, Values

__all__ = ["BLOCK", "MAX_JSON_MB", "JsonTooLarge", "json_pieces", "to_json", "values_text"]

# What --json prints at most by default. Whoever reads the object reads it whole: 100 MB of
# number text is 5-25 million numbers (4-20 characters each), up to ~1 GB once a JSON reader has
# made them objects. A recording past it is better kept as a .lens file (4 bytes a number).
MAX_JSON_MB = 100
BLOCK = 1 << 16  # numbers formatted at once: ~1 MB of text, so a limit is overshot by that at most
_COMPACT = (",", ":")
_NON_FINITE = re.compile(r"-?Infinity|NaN")  # as json.dumps writes them bare


class JsonTooLarge(UserError):
    """The JSON would pass ``limit`` bytes; ``step`` is the step being written when it did."""

    def __init__(self, limit: int, step: int, steps: int) -> None:
        super().__init__(f"the JSON passed {limit:,} bytes at step {step} of {steps}")
        self.limit, self.step, self.steps = limit, step, steps


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=_COMPACT, allow_nan=False)


def _numbers_text(numbers: Sequence[Number]) -> list[str]:
    """Each number as strict JSON text."""
    text = json.dumps(list(numbers), separators=_COMPACT)[1:-1]
    if "N" in text or "I" in text:  # digits, signs, '.', 'e', true and false hold neither
        text = _NON_FINITE.sub(r'"\g<0>"', text)
    return text.split(",")


def values_text(v: Values, block: int = BLOCK) -> Iterator[str]:
    """``v.tolist()`` as strict JSON text, in pieces of ``block`` numbers.

    >>> "".join(values_text(Values((2, 1, 2), (1.0, float("nan"), 3.0, 4.0)), block=3))
    '[[[1.0,"NaN"]],[[3.0,4.0]]]'
    """
    count, dims = v.numel(), len(v.shape)
    if dims == 0:
        yield _numbers_text(v.flat)[0]
        return
    if count == 0:  # no numbers, at most as many empty lists as a .lens file allows
        yield _dumps(v.tolist())
        return
    # Between element k-1 and k, as many lists close and open as trailing dimensions k starts:
    # a multiple of the product of the last m sizes starts m of them.
    starts, size = [], 1
    for m in range(1, dims):
        size *= v.shape[-m]
        starts.append((size, "]" * m + "," + "[" * m))
    for a in range(0, count, block):
        numbers = _numbers_text(v.flat[a : a + block])
        seps = [","] * len(numbers)
        for period, sep in starts:
            first = -a % period
            seps[first::period] = [sep] * len(range(first, len(numbers), period))
        if a == 0:
            seps[0] = "[" * dims
        yield "".join(map(operator.add, seps, numbers))
    yield "]" * dims


# Each part is the writer's record (``app.core.lensfile.writer``: every field, written once), in
# the order ``--json`` has always had, then any field added since; the file's own fields (where
# a tensor lives, the graph's leaves, a call's columns) are not part of it.
_SLOT_ORDER = ("name", "kind", "shape", "dtype", "nbytes")
_SLOT_FILE_ONLY = ("device", "storages", "value", "saved_version")
_NODE_ORDER = (
    "id", "name", "label", "added_at_call", "saved", "line", "loops", "created_at_step", "gone_at_step",
    "module", "source",
)  # fmt: skip
_CALL_ORDER = ("index", "line", "kind", "keywords", "text", "error", "failed_node", "first_step", "last_step")
_CALL_FILE_ONLY = ("col", "end_line", "end_col", "retain_graph", "create_graph", "loops")
_STEP_ORDER = (
    "index", "kind", "call", "node", "slot_changes", "version_changes", "saved_bytes", "error", "caption",
    "line", "loops", "alive_nodes", "printed", "device_bytes",
)  # fmt: skip
_STEP_SPARSE = {key: STEP_DEFAULTS[key] for key in ("printed", "device_bytes")}


def _loops_json(loops: list[list[int | None]]) -> list[dict[str, int | None]]:
    return [{"line": line, "index": index, "count": count} for line, index, count in loops]


def _slot_json(s: SavedSlot) -> dict[str, Any]:
    record = writer.slot_record(s)
    entry = view(record, _SLOT_ORDER, leave_out=_SLOT_FILE_ONLY)
    if s.kind == "value":
        entry["value"] = record["value"]
    if s.kind == "tensor":
        entry["saved_version"] = record["saved_version"]
    return entry


def _node_json(n: GraphNode) -> dict[str, Any]:
    record = writer.node_record(n)
    record["saved"] = [_slot_json(s) for s in n.saved]
    record["loops"] = _loops_json(record["loops"])
    if n.source is not None:
        record["source"] = {"file": n.source.file, "line": n.source.line}
    return view(record, _NODE_ORDER, leave_out=("is_leaf",))


def _call_json(info: CallInfo) -> dict[str, Any]:
    record = writer.call_record(info)
    return view(record | record.pop("call"), _CALL_ORDER, leave_out=_CALL_FILE_ONLY)


def _step_fields(step: Step) -> dict[str, Any]:
    """A step's fields that hold no values (those follow, written in pieces)."""
    record = {"index": step.index} | writer.step_record(step)
    record["loops"] = _loops_json(record["loops"])
    leave_out = ("added_nodes", "gone_nodes", *VALUE_FIELDS)
    return view(record, _STEP_ORDER, leave_out=leave_out, sparse=_STEP_SPARSE)


def _named_values(key: str, named: Mapping[str, Values | None]) -> Iterator[str]:
    yield f',"{key}":{{'
    for i, (name, v) in enumerate(named.items()):
        yield f"{',' if i else ''}{_dumps(name)}:"
        yield from ("null",) if v is None else values_text(v)
    yield "}"


def _step_pieces(step: Step) -> Iterator[str]:
    yield _dumps(_step_fields(step))[:-1]
    yield from _named_values("grad_changes", step.grad_changes)
    if step.contribution is not None:
        yield from _named_values("contribution", step.contribution)
    if step.result is not None:
        yield from _named_values("result", step.result)
    yield "}"


def _pieces(rec: Recording) -> Iterator[tuple[int, str]]:
    """The JSON text in pieces, each with the step it belongs to (0 before the steps)."""
    head = {
        "scenario": rec.program.name,  # the program's name, kept under its old key for files already shared
        "title": rec.program.title,
        "device": rec.device,
        "torch_version": rec.torch_version,
        "program": rec.program.code,
        "leaves": list(rec.leaves),
        "calls": [_call_json(c) for c in rec.calls],
        "edges": [{"from": e.src, "to": e.dst} for e in rec.graph.edges],
    }
    yield 0, _dumps(head)[:-1] + ',"nodes":['
    for i, node in enumerate(rec.graph.nodes):
        yield 0, ("," if i else "") + _dumps(_node_json(node))
    yield 0, '],"steps":['
    for step in rec.timeline.steps:
        if step.index:
            yield step.index, ","
        for piece in _step_pieces(step):
            yield step.index, piece
    yield len(rec.timeline) - 1, "]}"


def json_pieces(rec: Recording, max_bytes: int | None = None) -> list[str]:
    """The JSON text of ``rec`` in pieces (ASCII, so a character is a byte); raises
    :class:`JsonTooLarge` once they pass ``max_bytes``, having made at most one block more."""
    out, size = [], 0
    for step, piece in _pieces(rec):
        size += len(piece)
        if max_bytes is not None and size > max_bytes:
            raise JsonTooLarge(max_bytes, step, len(rec.timeline))
        out.append(piece)
    return out


def to_json(rec: Recording) -> dict[str, Any]:
    """The ``trace --json`` object (see README), read back from the text it prints."""
    result: dict[str, Any] = json.loads("".join(json_pieces(rec)))
    return result
