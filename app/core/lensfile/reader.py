"""The checked reader: a ``.lens`` file's JSON to a :class:`Recording` (format's NOTE [untrusted
lens files]).

The file's shape and every field's type are checked by ``msgspec`` as it decodes, in C, against
:mod:`.schema` (:mod:`.refusal` words what it finds wrong). What types cannot say (every node id
against the graph, every step and call index against the counts, slot names against their node,
shapes against element counts) is checked here, in the pass that makes the model's objects.
Whatever is wrong is one :class:`LensError` naming the place, e.g. ``steps[3].node: 'n9' is not a
node of the graph``.

The recording's nodes and steps are decoded one at a time from their raw text, the rest of the
file in one call: no call holds the interpreter for long (the window reads a file on its worker
while the GUI thread runs), and each node's or step's decoded JSON is dropped as soon as its
object is made. Read ``lazy``, a step is decoded and checked when first asked for
(:mod:`.steps`, timeline's NOTE [steps on demand]).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from itertools import starmap
from types import MappingProxyType
from typing import Any, TypeVar, get_args

import msgspec
from msgspec import Raw, UnsetType

from app.core.gc_pause import collection_paused
from app.core.lensfile.container import GZIP_MAGIC, count_containers, inflate
from app.core.lensfile.format import FORMAT, VERSION, LensError, checked_top, code_refusal, damaged
from app.core.lensfile.refusal import DECODE_ERRORS, refusal
from app.core.lensfile.schema import (
    FILE,
    LOWEST,
    NODE,
    POINTERS,
    STEP,
    CallInfoEntry,
    FileEntry,
    ProgramEntry,
    SlotEntry,
    ValuesEntry,
)
from app.core.lensfile.steps import StepsOnDemand, step_heads
from app.core.model.graph import Edge, Graph, GraphNode, LoopMark, SavedSlot, SourceRef, StorageRef
from app.core.model.program import Call, CallInfo, Program
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, SlotState, Step, Timeline
from app.core.model.values import PACKED_SIZES, Number, PackedNumbers, Values

__all__ = ["program_from_record", "read"]

_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
T = TypeVar("T")


def read(data: bytes, *, lazy: bool = False) -> tuple[Recording, dict[str, Any] | None]:
    """The recording in a file's bytes with any header split off (``container.split``'s second
    part: gzip, or JSON text), and its stored layout (None when it has none).

    ``lazy``: its steps are made and checked as they are first asked for (a damaged one raises
    :class:`LensError` then); else all of them now."""
    # Decoding and checking a file makes millions of objects and no cycles; the full collections
    # that many allocations set off walked them all again (the 5,000-node chain's file read in
    # 2.4 s instead of 0.9 s in a process holding a recording already).
    with collection_paused():
        if data.startswith(GZIP_MAGIC):
            text = inflate(data)  # counted as it inflates
        else:
            count_containers(data)
            text = data
        try:
            top = FILE.decode(text)
        except DECODE_ERRORS as exc:
            raise refusal(exc, text, "", top=True) from None
        if top.format != FORMAT or top.version < 1 or top.version > VERSION:
            checked_top({"format": top.format, "version": top.version})
        recording = _Reader(top).recording(lazy=lazy)
        layout = _decoded(top.layout, "layout") if top.layout else None
        return recording, layout if isinstance(layout, dict) else None


def _decoded(raw: Raw, where: str) -> Any:
    try:
        return msgspec.json.decode(raw)
    except DECODE_ERRORS as exc:
        raise refusal(exc, bytes(raw), where) from None


class _Reader:
    """Makes the model's objects from the decoded file, checking what its types cannot say."""

    def __init__(self, top: FileEntry) -> None:
        self.top = top
        self.node_slots: dict[str, frozenset[str]] = {}
        self.files: dict[str, str] = {}  # each source file name once, however many nodes name it
        self.shared: dict[tuple[Any, ...], SavedSlot] = {}  # slots holding no tensor, alike by the thousand
        self.step_count, self.call_count = len(top.steps), len(top.calls)

    def recording(self, *, lazy: bool = False) -> Recording:
        top = self.top
        if not top.steps:
            raise damaged("steps: a recording has at least one step")
        nodes = tuple(self.node(raw, i) for i, raw in enumerate(top.graph.nodes))
        ns = self.node_slots
        if not all(a in ns and b in ns for a, b in top.graph.edges):
            for i, pair in enumerate(top.graph.edges):
                for end, node in enumerate(pair):
                    self.node_id(node, f"graph.edges[{i}][{end}]")
        edges = tuple(starmap(Edge, top.graph.edges))
        too_long = code_refusal(top.program.code)
        if too_long is not None:  # not damaged: more than the window shows
            raise LensError(f"this recording's program is too long to show: {too_long}")
        return Recording(
            program=_program(top.program),
            device=top.device,
            torch_version=top.torch_version,
            graph=Graph(nodes, edges),
            timeline=self.timeline(lazy=lazy),
            leaves={
                k: v if v == "" or v in ns else self.node_id(v, f"leaves.{k}") for k, v in top.leaves.items()
            },
            calls=tuple(self.call_info(c, i) for i, c in enumerate(top.calls)),
            freed_by=self.freed_by(),
            needed_by=self.needed_by(),
            error=top.error,
            error_line=top.error_line,
        )

    def timeline(self, *, lazy: bool) -> Timeline:
        raws = self.top.steps
        if not lazy:
            return Timeline(tuple(self.step(raw, i) for i, raw in enumerate(raws)))
        return Timeline(StepsOnDemand(raws, self.step), heads=step_heads(raws, self.call_count))

    # -- checks --

    def node_id(self, node: str, where: str) -> str:
        if node not in self.node_slots:
            raise damaged(f"{where}: {node[:40]!r} is not a node of the graph")
        return node

    @staticmethod
    def index(value: T, where: str, count: int) -> T:
        """``value`` when it is None or one of ``count`` places from 0."""
        if value is not None and not 0 <= value < count:  # type: ignore[operator]
            raise damaged(f"{where}: {value} is outside 0..{count - 1}")
        return value

    def by_slot(
        self, changes: dict[str, dict[str, T]], index: int, field: str, allowed: frozenset[T] | None = None
    ) -> Mapping[SlotKey, T]:
        """``{node: {slot: item}}`` by slot key, every node and slot checked, and every item
        against ``allowed`` (when given)."""
        if not changes:
            return _NO_CHANGES
        ns = self.node_slots
        out = {(node, slot): item for node, slots in changes.items() for slot, item in slots.items()}
        if all(slot in ns.get(node, ()) for node, slot in out) and (
            allowed is None or allowed.issuperset(out.values())
        ):
            return MappingProxyType(out)
        where = f"steps[{index}].{field}"
        for node, slots in changes.items():
            names = self.node_slots.get(node) or self.node_slots[self.node_id(node, where)]
            for slot, item in slots.items():
                if slot not in names:
                    raise damaged(f"{where}.{node}: {slot[:40]!r} is not a saved slot of that node")
                if allowed is not None and item not in allowed:
                    said = f"{str(item)[:40]!r} is not one of {', '.join(sorted(map(str, allowed)))}"
                    raise damaged(f"{where}.{node}.{slot}: {said}")
        raise AssertionError("unreachable: a check above failed")  # pragma: no cover

    # -- the parts --

    def node(self, raw: Raw, position: int) -> GraphNode:
        n = _element(NODE, raw, "graph.nodes", position)
        calls, steps = self.call_count, self.step_count
        if n.id in self.node_slots or not (
            (n.added_at_call is None or 0 <= n.added_at_call < calls)
            and (n.created_at_step is None or 0 <= n.created_at_step < steps)
            and (n.gone_at_step is None or 0 <= n.gone_at_step < steps)
        ):
            where = f"graph.nodes[{position}]"
            if n.id in self.node_slots:
                raise damaged(f"{where}.id: {n.id[:40]!r} appears twice")
            self.index(n.added_at_call, f"{where}.added_at_call", calls)
            self.index(n.created_at_step, f"{where}.created_at_step", steps)
            self.index(n.gone_at_step, f"{where}.gone_at_step", steps)
        saved = tuple(self.slot(s, position, i) for i, s in enumerate(n.saved))
        source = n.source
        if source is not None:
            source = SourceRef(self.files.setdefault(source[0], source[0]), source[1])
        node = GraphNode(
            id=n.id, name=n.name, label=n.label, saved=saved, added_at_call=n.added_at_call,
            is_leaf=n.is_leaf, line=n.line, loops=_loops(n.loops), created_at_step=n.created_at_step,
            gone_at_step=n.gone_at_step, module=n.module, source=source,
        )  # fmt: skip
        self.node_slots[n.id] = frozenset(s.name for s in saved)
        return node

    def slot(self, s: SlotEntry, node: int, position: int) -> SavedSlot:
        if not s.storages:
            key = (s.name, s.kind, s.shape, s.dtype, s.device, s.nbytes, s.value, s.saved_version)
            slot = self.shared.get(key)
            if slot is None:
                slot = self.shared[key] = _slot(s, ())
            return slot
        for i, (_, pointer, _) in enumerate(s.storages):
            if pointer >= POINTERS:
                where = f"graph.nodes[{node}].saved[{position}].storages[{i}][1]"
                raise damaged(f"{where}: {pointer} is outside {LOWEST}..{POINTERS - 1}")
        return _slot(s, tuple(StorageRef(*r) for r in s.storages))

    def step(self, raw: Raw, index: int) -> Step:
        s = _element(STEP, raw, "steps", index)
        ns = self.node_slots
        if not (
            (s.call is None or 0 <= s.call < self.call_count)
            and (s.node is None or s.node in ns)
            and all(n in ns for n in s.added_nodes)
            and all(n in ns for n in s.gone_nodes)
        ):
            where = f"steps[{index}]"
            self.index(s.call, f"{where}.call", self.call_count)
            if s.node is not None:
                self.node_id(s.node, f"{where}.node")
            for field in ("added_nodes", "gone_nodes"):
                for i, node in enumerate(getattr(s, field)):
                    self.node_id(node, f"{where}.{field}[{i}]")
        where = f"steps[{index}]" if s.grad_changes or s.contribution or s.result else ""
        share = None if s.contribution is None else _named_values(s.contribution, f"{where}.contribution")
        return Step(
            index=index, kind=s.kind, call=s.call, node=s.node,
            slot_changes=self.by_slot(s.slot_changes, index, "slot_changes", _SLOT_STATES),  # type: ignore[arg-type]
            grad_changes=_named_values(s.grad_changes, f"{where}.grad_changes"),
            saved_bytes=s.saved_bytes, device_bytes=s.device_bytes, error=s.error, caption=s.caption,
            contribution=share,
            result=None if s.result is None else _named_values(s.result, f"{where}.result"),  # type: ignore[arg-type]
            added_nodes=s.added_nodes, line=s.line, loops=_loops(s.loops), printed=s.printed,
            alive_nodes=s.alive_nodes, gone_nodes=s.gone_nodes,
            version_changes=self.by_slot(s.version_changes, index, "version_changes"),
        )  # fmt: skip

    def call_info(self, c: CallInfoEntry, position: int) -> CallInfo:
        where = f"calls[{position}]"
        index = self.index(c.index, f"{where}.index", self.call_count)
        if index != position:
            raise damaged(f"{where}.index: {index} is not its place in the list ({position})")
        first = self.index(c.first_step, f"{where}.first_step", self.step_count)
        last = self.index(c.last_step, f"{where}.last_step", self.step_count)
        if last < first:
            raise damaged(f"{where}: its last step ({last}) comes before its first ({first})")
        k = c.call
        call = Call(
            kind=k.kind, line=k.line, col=k.col, end_line=k.end_line, end_col=k.end_col, text=k.text,
            keywords=MappingProxyType(k.keywords), retain_graph=k.retain_graph,
            create_graph=k.create_graph, loops=_loops(k.loops),
        )  # fmt: skip
        failed = None if c.failed_node is None else self.node_id(c.failed_node, f"{where}.failed_node")
        return CallInfo(
            index=index, call=call, first_step=first, last_step=last, error=c.error, failed_node=failed
        )

    def needed_by(self) -> dict[str, tuple[int, ...]]:
        """``needed_by``, checked in one pass when it is sound; each entry, to name the first fault,
        only when it is not (a message made per entry was most of the 10 ms the chain's took)."""
        needed, ns, calls = self.top.needed_by, self.node_slots, self.call_count
        if all(node in ns for node in needed) and all(0 <= c < calls for cs in needed.values() for c in cs):
            return dict(needed)
        return {node: self.calls_of(node, calls) for node, calls in needed.items()}

    def calls_of(self, node: str, calls: tuple[int, ...]) -> tuple[int, ...]:
        where = f"needed_by.{node}"
        self.node_id(node, where)
        return tuple(self.index(c, f"{where}[{i}]", self.call_count) for i, c in enumerate(calls))

    def freed_by(self) -> Mapping[SlotKey, int]:
        ns, calls, entries = self.node_slots, self.call_count, self.top.freed_by
        if all(slot in ns.get(node, ()) and 0 <= call < calls for node, slot, call in entries):
            return {(node, slot): call for node, slot, call in entries}  # sound: no message made per entry
        out: dict[SlotKey, int] = {}
        for i, (node, slot, call) in enumerate(entries):
            where = f"freed_by[{i}]"
            if slot not in self.node_slots[self.node_id(node, where)]:
                raise damaged(f"{where}: {slot[:40]!r} is not a saved slot of {node[:40]!r}")
            out[(node, slot)] = self.index(call, where, self.call_count)
        return out


def _slot(s: SlotEntry, storages: tuple[StorageRef, ...]) -> SavedSlot:
    return SavedSlot(
        name=s.name, kind=s.kind, shape=s.shape, dtype=s.dtype, device=s.device, nbytes=s.nbytes,
        storages=storages, value=s.value, saved_version=s.saved_version,
    )  # fmt: skip


def _program(p: ProgramEntry) -> Program:
    return Program(**msgspec.structs.asdict(p))


def program_from_record(record: Any) -> Program:
    """The :class:`Program` in ``writer.program_record``'s dict (a request to the recording child
    carries one), checked against the schema as a file's program is."""
    try:
        return _program(msgspec.convert(record, ProgramEntry))
    except msgspec.ValidationError as exc:
        raise damaged(f"program: {exc}") from None


def _loops(marks: tuple[tuple[int, int, int | None], ...]) -> tuple[LoopMark, ...]:
    return tuple(LoopMark(*m) for m in marks) if marks else ()


_SLOT_STATES = frozenset(get_args(SlotState))
_NO_CHANGES: Mapping[Any, Any] = MappingProxyType({})
_NO_VALUES: Mapping[str, Values | None] = MappingProxyType({})
_NESTED_LISTS = 2**20  # lists a shape with a zero in it may make when its values are read back


def _named_values(named: dict[str, ValuesEntry | None], where: str) -> Mapping[str, Values | None]:
    if not named:
        return _NO_VALUES
    return MappingProxyType({k: None if v is None else _values(v, f"{where}.{k}") for k, v in named.items()})


def _holds(shape: tuple[int, ...], count: int) -> bool:
    """Whether ``shape`` holds exactly ``count`` values, with no more nested lists than values (or
    than :data:`_NESTED_LISTS`): ``[2**40, 0]`` holds none, yet its ``tolist()`` is 2**40 lists."""
    bound = max(count, _NESTED_LISTS)
    total = 1
    for size in shape:
        total *= size
        if total > bound:
            return False
    return total == count


def _values(v: ValuesEntry, where: str) -> Values:
    shape = v.shape
    numbers: tuple[Number, ...] | PackedNumbers
    if not isinstance(v.packed, UnsetType):  # NOTE [packed values in files]
        if isinstance(v.data, UnsetType):
            raise damaged(f"{where}: the key 'data' is missing")
        try:
            raw = base64.b64decode(v.data, validate=True)
        except ValueError:  # binascii.Error, or a character that is not ASCII
            raise damaged(f"{where}.data: it is not base64") from None
        size = PACKED_SIZES[v.packed]
        if len(raw) % size or not _holds(shape, len(raw) // size):
            raise damaged(f"{where}: shape {list(shape)} does not hold {len(raw) // size} values")
        numbers = PackedNumbers.from_little_endian(raw, v.packed)
    else:
        if isinstance(v.flat, UnsetType):
            raise damaged(f"{where}: the key 'flat' is missing")
        if not _holds(shape, len(v.flat)):
            raise damaged(f"{where}: shape {list(shape)} does not hold {len(v.flat)} values")
        kinds = set(map(type, v.flat))
        numbers = tuple(v.flat)  # type: ignore[arg-type]
        if str in kinds:  # "nan", "inf", "-inf"
            numbers = tuple(_NON_FINITE[x] if type(x) is str else x for x in v.flat)  # type: ignore[misc]
        if int in kinds:
            for i, x in enumerate(numbers):
                if type(x) is int and not LOWEST <= x < POINTERS:
                    raise damaged(f"{where}.flat[{i}]: a whole number out of the 64-bit range")
    return Values(shape, numbers, v.dtype)


def _element(decoder: msgspec.json.Decoder[T], raw: Raw, where: str, index: int) -> T:
    try:
        return decoder.decode(raw)
    except DECODE_ERRORS as exc:
        raise refusal(exc, bytes(raw), f"{where}[{index}]") from None
