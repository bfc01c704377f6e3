"""The schema of a ``.lens`` file's JSON, as ``msgspec`` checks it while it decodes (in C): every
object's fields, their types and their ranges. What a type cannot say (ids, indexes and counts
that must agree) is the reader's to check.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from app.core.lensfile.format import MAX_DIMS
from app.core.model.graph import SlotKind
from app.core.model.program import CallKind
from app.core.model.timeline import StepKind

__all__ = [
    "FILE",
    "HEADS",
    "HIGHEST",
    "LOWEST",
    "NODE",
    "POINTERS",
    "STEP",
    "FileEntry",
    "NodeEntry",
    "StepEntry",
    "StepHeadEntry",
]

LOWEST, HIGHEST = -(2**63), 2**63 - 1
# Whole numbers are 64-bit (a larger one would overflow a float, and Qt, where it is shown); data
# pointers are unsigned, checked up to 2**64 here.
Whole = Annotated[int, Meta(ge=LOWEST, le=HIGHEST)]
Count = Annotated[int, Meta(ge=0, le=HIGHEST)]
Pointer = Annotated[int, Meta(ge=LOWEST)]
Shape = Annotated[tuple[Count, ...], Meta(max_length=MAX_DIMS)]
Loop = tuple[Whole, Whole, Whole | None]
POINTERS = 2**64


class ValuesEntry(Struct, kw_only=True, gc=False):
    shape: Shape
    # UNSET: left out (a null is refused as not what the field holds)
    flat: list[int | float | bool | Literal["nan", "inf", "-inf"]] | UnsetType = UNSET
    packed: Literal["f", "d"] | UnsetType = UNSET  # NOTE [packed values in files]
    data: str | UnsetType = UNSET
    dtype: str = "float32"


class SlotEntry(Struct, kw_only=True, gc=False):
    name: str
    kind: SlotKind
    shape: Shape | None = None
    dtype: str | None = None
    device: str | None = None
    nbytes: Whole | None = None
    storages: tuple[tuple[str, Pointer, Whole], ...] = ()
    value: str | None = None
    saved_version: Whole | None = None


class NodeEntry(Struct, kw_only=True, gc=False):
    id: str
    name: str
    label: str | None
    saved: tuple[SlotEntry, ...] = ()
    added_at_call: Whole | None = None
    is_leaf: bool = False
    line: Whole | None = None
    loops: tuple[Loop, ...] = ()
    created_at_step: Whole | None = None
    gone_at_step: Whole | None = None
    module: str | None = None
    source: tuple[str, Annotated[int, Meta(ge=1, le=HIGHEST)]] | None = None


class StepEntry(Struct, kw_only=True, gc=False):
    kind: StepKind
    saved_bytes: Whole
    call: Whole | None = None
    node: str | None = None
    slot_changes: dict[str, dict[str, str]] = {}  # SlotState, checked with its place
    grad_changes: dict[str, ValuesEntry | None] = {}
    device_bytes: Whole | None = None
    error: str | None = None
    caption: str = ""
    contribution: dict[str, ValuesEntry | None] | None = None
    result: dict[str, ValuesEntry] | None = None
    added_nodes: tuple[str, ...] = ()
    line: Whole | None = None
    loops: tuple[Loop, ...] = ()
    printed: tuple[str, ...] = ()
    alive_nodes: Count = 0
    gone_nodes: tuple[str, ...] = ()
    version_changes: dict[str, dict[str, Whole]] = {}


class StepHeadEntry(Struct, kw_only=True, gc=False):
    """The fields of a :class:`StepEntry` the series over every step read (timeline's NOTE
    [steps on demand]): decoded for every step when a file is opened, the rest skipped in C."""

    saved_bytes: Whole
    call: Whole | None = None
    device_bytes: Whole | None = None
    loops: tuple[Loop, ...] = ()
    alive_nodes: Count = 0


class CallEntry(Struct, kw_only=True, gc=False):
    kind: CallKind
    line: Whole
    col: Whole
    end_line: Whole
    end_col: Whole
    text: str
    keywords: dict[str, str] = {}
    retain_graph: bool | None = None
    create_graph: bool = False
    loops: tuple[Loop, ...] = ()


class CallInfoEntry(Struct, kw_only=True, gc=False):
    index: Whole
    call: CallEntry
    first_step: Whole
    last_step: Whole
    error: str | None = None
    failed_node: str | None = None


class ProgramEntry(Struct, kw_only=True, gc=False):
    code: str
    name: str = "program"
    title: str = ""
    summary: str = ""
    notes: str = ""
    twin: str = ""


class GraphEntry(Struct, kw_only=True, gc=False):
    nodes: list[Raw]  # each decoded as a NodeEntry in turn
    edges: tuple[tuple[str, str], ...]


class FileEntry(Struct, kw_only=True, gc=False):
    format: str
    version: Whole
    program: ProgramEntry
    device: str
    torch_version: str
    graph: GraphEntry
    steps: list[Raw]  # each decoded as a StepEntry in turn
    calls: tuple[CallInfoEntry, ...]
    leaves: dict[str, str]
    freed_by: tuple[tuple[str, str, Whole], ...] = ()
    needed_by: dict[str, tuple[Whole, ...]] = {}
    error: str | None = None
    error_line: Whole | None = None
    layout: Raw = Raw()  # the renderer checks it


FILE = msgspec.json.Decoder(FileEntry)
NODE = msgspec.json.Decoder(NodeEntry)
STEP = msgspec.json.Decoder(StepEntry)
HEADS = msgspec.json.Decoder(list[StepHeadEntry])
