"""``.lens`` files: a finished recording, saved and read back without running anything.

A ``.lens`` file is gzip-compressed JSON (plain JSON is read too)::

    {"format": "autograd-lens", "version": 3, "program": {...}, "device": ..., "graph": {...},
     "steps": [...], "calls": [...], "leaves": {...}, "freed_by": [...], "needed_by": {...},
     "layout": {...}}

``layout`` (optional) is where the window draws the graph, so a shared file opens without
Graphviz (``app.render.layout_store``'s NOTE [stored layouts]).

# NOTE [picture first]
A file may begin with a small gzip member of its own, a header, before the
one that holds the recording (``zcat`` shows two lines of JSON)::

    {"format": "autograd-lens", "version": 3, "preview": {...}}

``preview`` is the graph as the window first draws it, fitted: every node's
dot and colour at the step it opens on, every edge's line
(``app.render.preview``). The window reads the header, checks that the
recording's compressed bytes are whole (zlib's CRC), paints the picture, and
only then decodes and checks the recording itself, a few hundred
milliseconds more for a big one; until it arrives, the picture is all there
is (no stepping). Like a stored layout, a preview is a cache: one that does
not check out is dropped, and a file without one opens as ever.

Steps are stored as their changes, as the :class:`~app.core.model.timeline.Timeline`
holds them; fields at their default value are left out.

# NOTE [packed values in files]
A gradient the recorder packed (``app.core.model.values``' NOTE [packed
values]) is written as ``{"shape": [...], "packed": "f", "data": BASE64,
"dtype": ...}``: its float32 (``"f"``) or float64 (``"d"``) numbers'
little-endian bytes in base64, exactly what was recorded, NaN and infinities
included. A model's recording was mostly gradient text (20 characters a
number, and a float object each when read); packed, it is 5.3 characters a
number, and it is read back packed. Other values (ints, bools, a version 1
file's) are a ``"flat"`` list of numbers, ``"nan"``, ``"inf"`` and ``"-inf"``.
Version 2 files may hold packed values; version 1 files are read as before.

# NOTE [untrusted lens files]
A ``.lens`` file may come from anyone, so reading one imports no torch and
runs no code, and everything in it is checked before a :class:`Recording` is
built: types, every node id against the graph, every step and call index
against the counts, shapes against element counts. Decompression stops at
:data:`MAX_JSON_BYTES`, and at :data:`MAX_CONTAINERS` arrays and objects, so a
small file that inflates without end, or into millions of tiny containers, is
refused before it fills memory. Whatever is wrong, the reader raises one
:class:`LensError` saying what and where. A recording has at least one step (the
recorder always takes one).

>>> from app.core.model.graph import Graph
>>> from app.core.model.program import Program
>>> from app.core.model.timeline import Step, Timeline
>>> first = Step(0, "forward", None, None, {}, {}, 0)
>>> rec = Recording(Program("x = 1\\n"), "cpu", "2.13.0", Graph((), ()), Timeline((first,)), {}, ())
>>> recording_from_bytes(lens_bytes(rec)) == rec
True
"""

from __future__ import annotations

import base64
import json
import math
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple, TypeGuard, TypeVar, cast, get_args

from app.core.collection import collection_paused
from app.core.json_pieces import free_in_pieces, loads_in_pieces
from app.core.model.errors import ScenarioError
from app.core.model.graph import (
    Edge,
    Graph,
    GraphNode,
    LoopMark,
    SavedSlot,
    SlotKind,
    SourceRef,
    StorageRef,
)
from app.core.model.program import Call, CallInfo, CallKind, Program
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey, SlotState, Step, StepKind, Timeline
from app.core.model.values import PACKED_SIZES, Number, PackedNumbers, Values
from app.core.sizing.limits import MAX_SOURCE_CHARS

__all__ = [
    "FORMAT",
    "MAX_CODE_CHARS",
    "MAX_CODE_LINE",
    "MAX_CONTAINERS",
    "MAX_HEADER_BYTES",
    "MAX_JSON_BYTES",
    "SUFFIX",
    "VERSION",
    "LensError",
    "code_refusal",
    "is_lens",
    "lens_bytes",
    "lens_preview",
    "open_lens",
    "preread_lens",
    "read_lens",
    "recording_from_bytes",
    "save_lens",
]

FORMAT = "autograd-lens"
SUFFIX = ".lens"
# 2: values may be packed (NOTE [packed values in files]); 3: a header may come first (NOTE
# [picture first]); 1 is read as ever
VERSION = 3
# A header's JSON (a preview of 100,000 nodes is ~5 MB of it); a first member larger than this is
# not a header, and the file is read as one member.
MAX_HEADER_BYTES = 16 * 1024 * 1024
MAX_JSON_BYTES = 200 * 1024 * 1024  # uncompressed; a file that inflates past this is refused
# Arrays and objects in one file: each is ~60-100 bytes of memory once decoded, whatever its few
# bytes of text. A recording has one per 30-55 bytes of JSON (the 5,000-node chain: 178,224 in 9.8
# MB; a script in five nested loops, with a loop mark on every step: one per 29 bytes), so a file
# at MAX_JSON_BYTES holds up to about 7 million; text of nothing but "[]," has one per 3 bytes, and
# a 190 KB file inflating to 200 MB of it took 5 GB to decode. Past this count (about 1 GB decoded)
# a file is refused as too large, as it is past MAX_JSON_BYTES.
MAX_CONTAINERS = 10_000_000
# A program's text, and one line of it: the editor lays a long line out slowly (one of 100,000
# characters opened in 4.6 s, one of 200,000 froze it for 23 s). A scenario's program is at most
# MAX_SOURCE_CHARS, so every program the checked language takes fits.
MAX_CODE_CHARS = 1_000_000
MAX_CODE_LINE = MAX_SOURCE_CHARS
MAX_DIMS = 64
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_PLAIN_NUMBERS = frozenset({int, float, bool})  # as json gives them: no subclass passes by
DECODE_IN_PIECES_FROM = 256 * 1024  # bytes of JSON from which a recording is decoded in pieces
_INT_RANGE = (-(2**63), 2**64)  # data pointers are unsigned 64-bit
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

T = TypeVar("T")
Reader = Callable[[Any, str], Any]  # reads one field's JSON value, checked; the str names its place


# Fields of steps, nodes and slots whose value is any text, or any whole number in _INT_RANGE
# (None too, where their reader allows it): a value of that type is taken without its reader.
_TEXT_FIELDS = frozenset({"name", "dtype", "device", "value", "id", "label", "module", "caption", "error"})
_NUMBER_FIELDS = frozenset({"nbytes", "saved_version", "line", "saved_bytes", "device_bytes"})


def _plain(key: str, value: Any) -> bool:
    """Whether ``value`` is what field ``key`` holds, needing no reader (the reader's fast path)."""
    if type(value) is str:
        return key in _TEXT_FIELDS
    return key in _NUMBER_FIELDS and _is_whole(value)


_STEP_READ_DEFAULTS: dict[str, Any] = {  # the fields of a Step that have no default of their own
    "call": None,
    "node": None,
    "slot_changes": MappingProxyType({}),
    "grad_changes": MappingProxyType({}),
}


# The fields of a step that usual_step reads; a step with any other is read field by field.
_USUAL_STEP_KEYS = frozenset({
    "kind", "call", "node", "slot_changes", "saved_bytes", "caption", "added_nodes", "line", "loops",
    "alive_nodes", "gone_nodes", "version_changes",
})  # fmt: skip
_NO_CHANGES: Mapping[Any, Any] = MappingProxyType({})
_NO_VALUES: Mapping[str, Values | None] = MappingProxyType({})


def _is_slot_state(value: Any) -> bool:
    return type(value) is str and value in _SLOT_STATES


_NESTED_LISTS = 2**20  # lists a shape with a zero in it may make when its values are read back


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


def _is_whole(value: Any) -> bool:
    return type(value) is int and _INT_RANGE[0] <= value < _INT_RANGE[1]


def _is_count(value: Any) -> bool:
    """A whole number from 0, as the writer stores a version or a size (the reader's fast path;
    anything else is read in full)."""
    return type(value) is int and 0 <= value < _INT_RANGE[1]


class LensError(ScenarioError):
    """A ``.lens`` file that cannot be read: damaged, not a recording, or from a newer version."""


# --- writing -----------------------------------------------------------------------------------


def save_lens(
    recording: Recording,
    path: str | Path,
    *,
    layout: Mapping[str, Any] | None = None,
    preview: Mapping[str, Any] | None = None,
) -> None:
    """Write ``recording`` to ``path`` as a ``.lens`` file (with ``layout`` and ``preview``, see
    :func:`lens_bytes`)."""
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
    :func:`recording_from_bytes` reads both. ``layout``: where the window draws the graph, as
    ``app.render.layout_store`` writes it; kept as it is and handed back by :func:`open_lens`
    (this module checks only that it is an object: the renderer checks the rest).
    ``preview``: the picture the window paints first (NOTE [picture first]), as
    ``app.render.preview`` writes it; a compressed file only, in a header member of its own.
    """
    data = _recording_json(recording)
    if layout is not None:
        data["layout"] = dict(layout)
    text = _json_text(data)
    if not compress:
        return text.encode("utf-8")
    header = b""
    if preview is not None:
        header = _gzip(_json_text({"format": FORMAT, "version": VERSION, "preview": dict(preview)}) + "\n")
    return header + _gzip(text)


def _json_text(data: Mapping[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _gzip(text: str) -> bytes:
    # 31: a gzip header, mtime 0. Level 1: a model's recording (7 MB of JSON, mostly gradients)
    # compresses in 0.06 s to 3.1 MB, where level 6 took 0.33 s for 2.9 MB.
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    return compressor.compress(text.encode("utf-8")) + compressor.flush()


def _recording_json(rec: Recording) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "program": _program_json(rec.program),
        "device": rec.device,
        "torch_version": rec.torch_version,
        "error": rec.error,
        "error_line": rec.error_line,
        "graph": {
            "nodes": [_node_json(n) for n in rec.graph.nodes],
            "edges": [[e.src, e.dst] for e in rec.graph.edges],
        },
        "leaves": dict(rec.leaves),
        "calls": [_call_info_json(c) for c in rec.calls],
        "freed_by": [[node, slot, call] for (node, slot), call in rec.freed_by.items()],
        "needed_by": {node: list(calls) for node, calls in rec.needed_by.items()},
        "steps": [_step_json(s) for s in rec.timeline.steps],
    }


def _program_json(p: Program) -> dict[str, Any]:
    return {
        "code": p.code,
        "name": p.name,
        "title": p.title,
        "summary": p.summary,
        "notes": p.notes,
        "twin": p.twin,
    }


def _loops_json(loops: Sequence[LoopMark]) -> list[list[int | None]]:
    return [[m.line, m.index, m.count] for m in loops]


def _sparse(entry: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``entry`` without the fields that hold their default (empty lists, None, 0...)."""
    return {k: v for k, v in entry.items() if k not in defaults or v != defaults[k]}


_SLOT_DEFAULTS: dict[str, Any] = {
    "shape": None, "dtype": None, "device": None, "nbytes": None, "storages": [], "value": None,
    "saved_version": None,
}  # fmt: skip


def _slot_json(s: SavedSlot) -> dict[str, Any]:
    entry = {
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
    return _sparse(entry, _SLOT_DEFAULTS)


_NODE_DEFAULTS: dict[str, Any] = {
    "saved": [], "added_at_call": None, "is_leaf": False, "line": None, "loops": [],
    "created_at_step": None, "gone_at_step": None, "module": None, "source": None,
}  # fmt: skip


def _node_json(n: GraphNode) -> dict[str, Any]:
    entry = {
        "id": n.id,
        "name": n.name,
        "label": n.label,
        "saved": [_slot_json(s) for s in n.saved],
        "added_at_call": n.added_at_call,
        "is_leaf": n.is_leaf,
        "line": n.line,
        "loops": _loops_json(n.loops),
        "created_at_step": n.created_at_step,
        "gone_at_step": n.gone_at_step,
        "module": n.module,
        "source": None if n.source is None else [n.source.file, n.source.line],
    }
    return _sparse(entry, _NODE_DEFAULTS)


def _call_info_json(info: CallInfo) -> dict[str, Any]:
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
            "loops": _loops_json(c.loops),
        },
    }


def _values_json(v: Values | None) -> dict[str, Any] | None:
    if v is None:
        return None
    if isinstance(v.flat, PackedNumbers):  # NOTE [packed values in files]
        data = base64.b64encode(v.flat.little_endian()).decode("ascii")
        return {"shape": list(v.shape), "packed": v.flat.code, "data": data, "dtype": v.dtype}
    return {"shape": list(v.shape), "flat": _numbers_json(v.flat), "dtype": v.dtype}


def _numbers_json(flat: Sequence[Number]) -> list[Number | str]:
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


def _by_node(changes: Mapping[SlotKey, T]) -> dict[str, dict[str, T]]:
    out: dict[str, dict[str, T]] = {}
    for (node, slot), value in changes.items():
        out.setdefault(node, {})[slot] = value
    return out


def _named_values(m: Mapping[str, Values | None] | None) -> dict[str, Any] | None:
    return None if m is None else {k: _values_json(v) for k, v in m.items()}


_STEP_DEFAULTS: dict[str, Any] = {
    "call": None, "node": None, "slot_changes": {}, "grad_changes": {}, "device_bytes": None,
    "error": None, "caption": "", "contribution": None, "result": None, "added_nodes": [],
    "line": None, "loops": [], "printed": [], "alive_nodes": 0, "gone_nodes": [], "version_changes": {},
}  # fmt: skip


def _step_json(s: Step) -> dict[str, Any]:
    entry = {
        "kind": s.kind,
        "call": s.call,
        "node": s.node,
        "slot_changes": _by_node(s.slot_changes),
        "grad_changes": _named_values(s.grad_changes),
        "saved_bytes": s.saved_bytes,
        "device_bytes": s.device_bytes,
        "error": s.error,
        "caption": s.caption,
        "contribution": _named_values(s.contribution),
        "result": _named_values(s.result),
        "added_nodes": list(s.added_nodes),
        "line": s.line,
        "loops": _loops_json(s.loops),
        "printed": list(s.printed),
        "alive_nodes": s.alive_nodes,
        "gone_nodes": list(s.gone_nodes),
        "version_changes": _by_node(s.version_changes),
    }
    return _sparse(entry, _STEP_DEFAULTS)


# --- reading -----------------------------------------------------------------------------------


def is_lens(source: object) -> TypeGuard[str | Path]:
    """Whether ``source`` (a path, or its text) names a saved recording: read, never run.

    >>> is_lens("runs/Step.LENS"), is_lens(Path("a.toml")), is_lens(None)
    (True, False, False)
    """
    return isinstance(source, (str, Path)) and Path(source).suffix.lower() == SUFFIX


def read_lens(path: str | Path) -> Recording:
    """Read a ``.lens`` file; raises :class:`LensError` for a damaged or newer file."""
    return open_lens(path)[0]


class _Checked(NamedTuple):
    """A file whose header and whole compressed bytes were checked, its recording not yet read
    (NOTE [picture first])."""

    header: dict[str, Any]
    text: bytes  # the recording's JSON, inflated


_Opened = tuple[Recording, dict[str, Any] | None]
_PREREAD: dict[tuple[str, int, int] | None, _Opened | _Checked] = {}
_PREREAD_LOCK = threading.Lock()
HEAD_BYTES = 4 * 1024 * 1024  # how much of a file lens_preview reads to find its header


def preread_lens(path: str | Path) -> None:
    """Check a ``.lens`` file now (raising :class:`LensError` as :func:`open_lens` does), and hand
    what was read to the next :func:`open_lens` of the same unchanged file: the command line tells
    a damaged file before the window opens, and the window does not read a big file twice.

    A file with a preview (NOTE [picture first]) is checked as far as its header and its
    compressed bytes go, and its recording is read by :func:`open_lens`, once the window shows
    the picture; any other file is read whole here.
    """
    key = _file_key(path)  # before reading: a file rewritten meanwhile is not handed over as new
    data = _file_bytes(path)
    header, body = _split(data)
    opened: _Opened | _Checked
    if header is not None and header.get("preview") is not None:
        opened = _Checked(header, _inflate(body))
    else:
        opened = _recording_and_layout(body, split=False)  # split once: a big file inflated once
    with _PREREAD_LOCK:
        _PREREAD.clear()
        if key is not None and key == _file_key(path):
            _PREREAD[key] = opened


def lens_preview(path: str | Path) -> Any | None:
    """The preview in a ``.lens`` file's header, as JSON (``app.render.preview`` checks it), or
    None: the file has none, or :func:`preread_lens` read it whole already. Reads at most
    :data:`HEAD_BYTES` of a file not pre-read; raises no :class:`LensError` (the read does)."""
    with _PREREAD_LOCK:
        opened = _PREREAD.get(_file_key(path))
    if opened is not None:
        return opened.header.get("preview") if isinstance(opened, _Checked) else None
    try:
        with open(path, "rb") as file:
            head = file.read(HEAD_BYTES)
        header, _ = _split(head, whole=False)
    except (OSError, LensError):
        return None
    return None if header is None else header.get("preview")


def _file_key(path: str | Path) -> tuple[str, int, int] | None:
    try:
        info = Path(path).stat()
        return (str(Path(path).resolve()), info.st_mtime_ns, info.st_size)
    except OSError:  # gone: open() says so
        return None


def _file_bytes(path: str | Path) -> bytes:
    with open(path, "rb") as file:
        data = file.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise LensError(f"this file is larger than {MAX_JSON_BYTES // 2**20} MB, too large for a recording")
    return data


def open_lens(path: str | Path) -> tuple[Recording, dict[str, Any] | None]:
    """A ``.lens`` file's recording and its stored layout (None when it has none), unchecked
    beyond being a JSON object: ``app.render.layout_store`` checks it against the graph."""
    if _PREREAD:
        with _PREREAD_LOCK:
            opened = _PREREAD.pop(_file_key(path), None)
        if isinstance(opened, _Checked):
            return _recording_and_layout(opened.text, split=False)
        if opened is not None:
            return opened
    return _recording_and_layout(_file_bytes(path))


def code_refusal(code: str) -> str | None:
    """Why a program's text is too long for a recording (None when it is not): the window's
    editor would freeze laying it out."""
    if len(code) > MAX_CODE_CHARS:
        return f"more than {MAX_CODE_CHARS:,} characters"
    longest = max(map(len, code.splitlines()), default=0)
    if longest > MAX_CODE_LINE:
        return f"a line of {longest:,} characters, longer than {MAX_CODE_LINE:,}"
    return None


def recording_from_bytes(data: bytes) -> Recording:
    """The recording in a ``.lens`` file's bytes; raises :class:`LensError` for anything else."""
    return _recording_and_layout(data)[0]


def _recording_and_layout(data: bytes, *, split: bool = True) -> tuple[Recording, dict[str, Any] | None]:
    """``data``: a file's bytes, or (``split=False``) what :func:`_split` left of them."""
    # Decoding and checking a file makes millions of objects and no cycles; the full collections
    # that many allocations set off walked them all again (the 5,000-node chain's file read in
    # 2.4 s instead of 0.9 s in a process holding a recording already).
    with collection_paused():
        return _read(_split(data)[1] if split else data)


def _split(data: bytes, *, whole: bool = True) -> tuple[dict[str, Any] | None, bytes]:
    """A file's header (NOTE [picture first]; None when it has none) and the bytes of its
    recording: gzip, or JSON text when the file was one gzip member small enough to inflate here.
    ``whole=False``: ``data`` is the file's start only (the recording's bytes are then partial)."""
    if not data.startswith(_GZIP_MAGIC):
        return None, data
    inflater = zlib.decompressobj(31)
    try:
        first = inflater.decompress(data, MAX_HEADER_BYTES + 1)
    except zlib.error:
        return None, data  # reading it whole says what is wrong
    if not inflater.eof:
        return None, data  # a member too large for a header, or one cut short: read as one
    rest = inflater.unused_data
    if not rest:
        return None, (first if whole else data)
    if not rest.startswith(_GZIP_MAGIC):
        return None, data  # "bytes after its compressed data", as reading it whole says
    return _header(first), rest


def _header(text: bytes) -> dict[str, Any]:
    """A header member's JSON, checked as far as this module goes: format and version."""
    try:
        top = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _damaged("its header is not JSON") from None
    return _checked_top(top)


def _read(data: bytes) -> tuple[Recording, dict[str, Any] | None]:
    """The recording in a file's bytes with any header split off (:func:`_split`'s second part)."""
    if not data.startswith(_GZIP_MAGIC):
        _count_containers(data)  # inflated text is counted as it inflates
    raw = _decoded_in_pieces(data)
    if raw is None:
        text = _inflate(data) if data.startswith(_GZIP_MAGIC) else data
        try:
            raw = json.loads(text.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise _damaged(f"its text is not UTF-8 ({exc.reason})") from None
        except RecursionError:
            raise _damaged("its JSON is nested too deeply") from None
        except ValueError as exc:  # json.JSONDecodeError, or an integer with too many digits
            raise _damaged(f"it is not JSON ({exc})") from None
    reader = _Reader(raw)
    try:
        recording = reader.recording()
    except RecursionError:  # pragma: no cover - the reader does not recurse into the data
        raise _damaged("it is nested too deeply") from None
    finally:
        reader.forget()
    layout = raw.pop("layout", None)
    free_in_pieces(raw)  # nothing of it is kept: the recording holds its own tuples and dicts
    return recording, layout if isinstance(layout, dict) else None


def _decoded_in_pieces(data: bytes) -> Any | None:
    """The JSON value of a big recording's bytes (gzip or not), read on a thread other than the
    main one (the window's worker) from 1 MB pieces of its bytes as they are inflated.

    Decoding a 10 MB text to one ``str`` (32 ms), or joining the inflated or piped pieces to one
    ``bytes`` (14 ms), is a single C call that holds the GIL while the GUI thread waits: the
    largest of its heartbeat's gaps while the 5,000-node chain was read back. ``None`` when the
    bytes are small, on the main thread, or not what piecewise reading expects (the whole decode,
    ``json.loads``, then gives the same value or the same error).
    """
    gz = data.startswith(_GZIP_MAGIC)
    size = int.from_bytes(data[-4:], "little") if gz and len(data) >= 4 else len(data)
    if size < DECODE_IN_PIECES_FROM or threading.current_thread() is threading.main_thread():
        return None
    view = memoryview(data)
    pieces = _inflated(data) if gz else (bytes(view[i : i + _CHUNK]) for i in range(0, len(data), _CHUNK))
    try:
        return loads_in_pieces(pieces, depth=2, errors="strict")
    except (ValueError, RecursionError, LensError):
        return None


def _inflate(data: bytes) -> bytes:
    """Gunzip ``data``, stopping at :data:`MAX_JSON_BYTES` so a zip bomb cannot fill memory."""
    return b"".join(_inflated(data))


def _inflated(data: bytes) -> Iterator[bytes]:
    """:func:`_inflate`'s output, a piece of at most :data:`_CHUNK` bytes at a time."""
    inflater = zlib.decompressobj(31)
    size = containers = 0
    pending = data
    try:
        while not inflater.eof:
            part = inflater.decompress(pending, _CHUNK)
            pending = inflater.unconsumed_tail
            if not part and not pending:  # all input read, nothing more came out: it stops short
                break
            size += len(part)
            if size > MAX_JSON_BYTES:
                raise LensError(
                    f"this recording inflates to more than {MAX_JSON_BYTES // 2**20} MB, too large to read"
                )
            containers = _count_containers(part, containers)
            yield part
    except zlib.error as exc:
        raise _damaged(f"its compressed data is broken ({exc})") from None
    if not inflater.eof:
        raise _damaged("it ends before its compressed data does (truncated?)")
    if inflater.unused_data:
        raise _damaged("it has bytes after its compressed data")


def _count_containers(text: bytes, before: int = 0) -> int:
    """``before`` plus the arrays and objects ``text`` opens (a bracket inside a string counts too:
    a bound, not a parse); :class:`LensError` past :data:`MAX_CONTAINERS`."""
    count = before + text.count(b"[") + text.count(b"{")
    if count > MAX_CONTAINERS:
        raise LensError(
            f"this recording holds more than {MAX_CONTAINERS:,} arrays and objects, too large to read"
        )
    return count


def _checked_top(top: Any) -> dict[str, Any]:
    """A header's or a recording's JSON object, when it names this format at a version read here."""
    if not isinstance(top, dict) or top.get("format") != FORMAT:
        raise LensError(
            "this file is not an Autograd Lens recording (it does not say format 'autograd-lens')"
        )
    version = top.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _damaged("its format version is not a whole number from 1 up")
    if version > VERSION:
        raise LensError(
            f"this recording was made by a newer Autograd Lens (format version {version}); "
            f"this version reads versions up to {VERSION}"
        )
    return top


def _damaged(what: str) -> LensError:
    return LensError(f"this .lens file is damaged or not a recording: {what}")


def _kinds(literal: Any) -> frozenset[str]:
    return frozenset(get_args(literal))


_STEP_KINDS = _kinds(StepKind)
_PACKED_CODES = frozenset(PACKED_SIZES)
_SLOT_STATES = _kinds(SlotState)
_SLOT_KINDS = _kinds(SlotKind)
_CALL_KINDS = _kinds(CallKind)


# NOTE [usual entries]
# A big recording is thousands of slots, nodes and steps of a few shapes,
# each written by this module's own writer. ``_usual_slot``, ``usual_node``
# and ``usual_step`` take such an entry in one pass of type checks and make
# its object straight away; anything else they leave (None) to the
# field-by-field reader, which says what is wrong and where. So they accept
# only what that reader accepts and make what it makes: tests/test_lens.py
# reads recordings, and each place of a file set to awkward values, both
# ways. The 5,000-node chain's nodes read in 67 ms instead of 122, its steps
# in 83 instead of 125.
# Slots without a tensor (``none``, ``value``) are immutable and alike by the
# thousand (``normalized_shape=(8,)``): one object each, as the recorder
# shares them.

_TENSOR_SLOT_KEYS = frozenset(
    {"name", "kind", "shape", "dtype", "device", "nbytes", "storages", "saved_version"}
)


def _is_text_or_none(value: Any) -> bool:
    return value is None or type(value) is str


def _usual_slot(value: Any, shared: dict[tuple[str, str, str | None], SavedSlot]) -> SavedSlot | None:
    """``value`` as a slot when it is what the writer writes (NOTE [usual entries]), else None."""
    if type(value) is not dict:
        return None
    name, kind = value.get("name"), value.get("kind")
    if type(name) is not str:
        return None
    if kind == "tensor":
        if not value.keys() <= _TENSOR_SLOT_KEYS:
            return None
        shape, nbytes, version = value.get("shape"), value.get("nbytes"), value.get("saved_version")
        dtype, device, storages = value.get("dtype"), value.get("device"), value.get("storages", ())
        if not (
            (shape is None or (type(shape) is list and len(shape) <= MAX_DIMS and all(map(_is_count, shape))))
            and _is_text_or_none(dtype)
            and _is_text_or_none(device)
            and (nbytes is None or _is_whole(nbytes))
            and (version is None or _is_whole(version))
            and (storages == () or (type(storages) is list and all(map(_is_usual_storage, storages))))
        ):
            return None
        return SavedSlot(
            name,
            "tensor",
            None if shape is None else tuple(shape),
            dtype,
            device,
            nbytes,
            tuple(StorageRef(*r) for r in storages),
            None,
            version,
        )
    if kind in ("none", "value") and len(value) == (2 if kind == "none" else 3):
        text = value.get("value")
        if kind == "value" and type(text) is not str:
            return None
        key = (name, kind, text)
        slot = shared.get(key)
        if slot is None:
            slot = shared[key] = SavedSlot(name, kind, value=text)
        return slot
    return None


def _is_usual_storage(value: Any) -> bool:
    return (
        type(value) is list
        and len(value) == 3
        and type(value[0]) is str
        and _is_whole(value[1])
        and _is_whole(value[2])
    )


def _is_usual_loop(value: Any) -> bool:
    return (
        type(value) is list
        and len(value) == 3
        and _is_whole(value[0])
        and _is_whole(value[1])
        and (value[2] is None or _is_whole(value[2]))
    )


def _is_usual_source(value: Any) -> bool:
    return (
        type(value) is list
        and len(value) == 2
        and type(value[0]) is str
        and _is_whole(value[1])
        and value[1] >= 1
    )


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")


class _Reader:
    """Turns the parsed JSON of a ``.lens`` file into a :class:`Recording`, checking as it goes.

    Every check failure is a :class:`LensError` naming the place, e.g.
    ``steps[3].node: 'n9' is not a node of the graph``.
    """

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.node_slots: dict[str, frozenset[str]] = {}
        self.files: dict[str, str] = {}  # each source file name once, however many nodes name it
        self.value_slots: dict[tuple[str, str, str | None], SavedSlot] = {}  # NOTE [usual entries]
        self.step_count = 0
        self.call_count = 0
        # NOTE: a reader per field, run only for the fields an object has (the writer leaves
        # defaults out), so a 13,000-step file costs what its content costs, not its schema.
        opt = self.optional_of
        self.slot_fields: dict[str, Reader] = {
            "name": self.str_,
            "kind": lambda v, w: self.choice(v, w, _SLOT_KINDS),
            "shape": opt(self.shape),
            "dtype": opt(self.str_),
            "device": opt(self.str_),
            "nbytes": opt(self.int_),
            "storages": lambda v, w: tuple(
                self.storage(r, f"{w}[{i}]") for i, r in enumerate(self.seq(v, w))
            ),
            "value": opt(self.str_),
            "saved_version": opt(self.int_),
        }
        self.node_fields: dict[str, Reader] = {
            "id": self.str_,
            "name": self.str_,
            "label": opt(self.str_),
            "saved": lambda v, w: tuple(self.slot(x, f"{w}[{i}]") for i, x in enumerate(self.seq(v, w))),
            "added_at_call": opt(self.call_index),
            "is_leaf": self.bool_,
            "line": opt(self.int_),
            "loops": self.loops,
            "created_at_step": opt(self.step_index),
            "gone_at_step": opt(self.step_index),
            "module": opt(self.str_),
            "source": opt(self.source),
        }
        self.step_fields: dict[str, Reader] = {
            "kind": lambda v, w: self.choice(v, w, _STEP_KINDS),
            "call": opt(self.call_index),
            "node": opt(self.node_id),
            "slot_changes": lambda v, w: self.by_slot(v, w, self.slot_state, _is_slot_state),
            "grad_changes": self.named_values,
            "saved_bytes": self.int_,
            "device_bytes": opt(self.int_),
            "error": opt(self.str_),
            "caption": self.str_,
            "contribution": opt(self.named_values),
            "result": opt(self.named_present_values),
            "added_nodes": self.node_ids,
            "line": opt(self.int_),
            "loops": self.loops,
            "printed": self.strings,
            "alive_nodes": lambda v, w: self.int_(v, w, 0),
            "gone_nodes": self.node_ids,
            "version_changes": lambda v, w: self.by_slot(v, w, self.int_, _is_count),
        }

    def forget(self) -> None:
        """Let go of the file and the field tables: their readers refer back to this reader, a
        cycle that would keep the whole decoded file alive until a full collection."""
        self.raw = None
        self.slot_fields, self.node_fields, self.step_fields = {}, {}, {}

    # -- checked access --

    def fail(self, where: str, what: str) -> LensError:
        return _damaged(f"{where}: {what}")

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {_type_name(value)}")
        return value

    def seq(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, found {_type_name(value)}")
        return value

    def get(self, table: dict[str, Any], key: str, where: str, default: Any = ...) -> Any:
        if key in table:
            return table[key]
        if default is ...:
            raise self.fail(where, f"the key {key!r} is missing")
        return default

    def int_(self, value: Any, where: str, lo: int = _INT_RANGE[0], hi: int = _INT_RANGE[1]) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(where, f"expected a whole number, found {_type_name(value)}")
        if not lo <= value < hi:
            raise self.fail(where, f"{value} is outside {lo}..{hi - 1}")
        return value

    def str_(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, found {_type_name(value)}")
        return value

    def bool_(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, found {_type_name(value)}")
        return value

    def optional(self, value: Any, where: str, read: Callable[[Any, str], T]) -> T | None:
        return None if value is None else read(value, where)

    def optional_of(self, read: Callable[[Any, str], T]) -> Callable[[Any, str], T | None]:
        return lambda value, where: None if value is None else read(value, where)

    def fields(
        self, table: dict[str, Any], where: str, readers: dict[str, Reader], required: Sequence[str]
    ) -> dict[str, Any]:
        """The fields of ``table`` that ``readers`` know, each read and checked (others are ignored).
        A text or number field holding what it should is taken as it is (``_plain``): most fields
        of a big file are."""
        for key in required:
            if key not in table:
                raise self.fail(where, f"the key {key!r} is missing")
        return {
            key: item if _plain(key, item) else readers[key](item, f"{where}.{key}")
            for key, item in table.items()
            if key in readers
        }

    def choice(self, value: Any, where: str, allowed: frozenset[str]) -> str:
        text = self.str_(value, where)
        if text not in allowed:
            raise self.fail(where, f"{text[:40]!r} is not one of {', '.join(sorted(allowed))}")
        return text

    def node_id(self, value: Any, where: str) -> str:
        node = self.str_(value, where)
        if node not in self.node_slots:
            raise self.fail(where, f"{node[:40]!r} is not a node of the graph")
        return node

    def step_index(self, value: Any, where: str) -> int:
        return self.int_(value, where, 0, self.step_count)

    def call_index(self, value: Any, where: str) -> int:
        return self.int_(value, where, 0, self.call_count)

    def strings(self, value: Any, where: str) -> tuple[str, ...]:
        return tuple(self.str_(v, f"{where}[{i}]") for i, v in enumerate(self.seq(value, where)))

    def node_ids(self, value: Any, where: str) -> tuple[str, ...]:
        ids = self.seq(value, where)
        if all(type(v) is str and v in self.node_slots for v in ids):  # the usual case, in one pass
            return tuple(ids)
        return tuple(self.node_id(v, f"{where}[{i}]") for i, v in enumerate(ids))

    # -- the recording --

    def recording(self) -> Recording:
        top = _checked_top(self.raw)
        steps_raw = self.seq(self.get(top, "steps", "the file"), "steps")
        if not steps_raw:
            raise self.fail("steps", "a recording has at least one step")
        calls_raw = self.seq(self.get(top, "calls", "the file"), "calls")
        self.step_count, self.call_count = len(steps_raw), len(calls_raw)
        graph = self.graph(self.obj(self.get(top, "graph", "the file"), "graph"))
        return Recording(
            program=self.program(self.obj(self.get(top, "program", "the file"), "program")),
            device=self.str_(self.get(top, "device", "the file"), "device"),
            torch_version=self.str_(self.get(top, "torch_version", "the file"), "torch_version"),
            graph=graph,
            timeline=Timeline(tuple(self.step(s, i) for i, s in enumerate(steps_raw))),
            leaves=self.leaves(self.get(top, "leaves", "the file")),
            calls=tuple(self.call_info(c, i) for i, c in enumerate(calls_raw)),
            freed_by=self.freed_by(self.get(top, "freed_by", "the file", [])),
            needed_by=self.needed_by(self.get(top, "needed_by", "the file", {})),
            error=self.optional(top.get("error"), "error", self.str_),
            error_line=self.optional(top.get("error_line"), "error_line", self.int_),
        )

    def program(self, p: dict[str, Any]) -> Program:
        def text(key: str, default: str | None = "") -> str:
            return self.str_(self.get(p, key, "program", default), f"program.{key}")

        code = text("code", None)
        refusal = code_refusal(code)
        if refusal is not None:  # not damaged: more than the window shows
            raise LensError(f"this recording's program is too long to show: {refusal}")

        return Program(
            code,
            text("name", "program"),
            text("title"),
            text("summary"),
            text("notes"),
            text("twin"),
        )

    def graph(self, g: dict[str, Any]) -> Graph:
        nodes = tuple(
            self.node(n, f"graph.nodes[{i}]")
            for i, n in enumerate(self.seq(self.get(g, "nodes", "graph"), "graph.nodes"))
        )
        edges = []
        for i, item in enumerate(self.seq(self.get(g, "edges", "graph"), "graph.edges")):
            pair = self.seq(item, f"graph.edges[{i}]")
            if len(pair) != 2:
                raise self.fail(f"graph.edges[{i}]", "expected [from, to]")
            edges.append(
                Edge(
                    self.node_id(pair[0], f"graph.edges[{i}][0]"),
                    self.node_id(pair[1], f"graph.edges[{i}][1]"),
                )
            )
        return Graph(nodes, tuple(edges))

    def node(self, value: Any, where: str) -> GraphNode:
        node = self.usual_node(value)
        if node is None:
            node = GraphNode(
                **self.fields(self.obj(value, where), where, self.node_fields, ("id", "name", "label"))
            )
        if node.id in self.node_slots:
            raise self.fail(f"{where}.id", f"{node.id[:40]!r} appears twice")
        self.node_slots[node.id] = frozenset(s.name for s in node.saved)
        return node

    def usual_node(self, value: Any) -> GraphNode | None:
        """``value`` as a node when it is what the writer writes (NOTE [usual entries]), else None."""
        if type(value) is not dict or not value.keys() <= self.node_fields.keys():
            return None
        node_id, name, label = value.get("id"), value.get("name"), value.get("label", ...)
        if type(node_id) is not str or type(name) is not str or not _is_text_or_none(label):
            return None
        slots = value.get("saved", [])
        if type(slots) is not list:
            return None
        saved: list[SavedSlot] = []
        for item in slots:
            slot = _usual_slot(item, self.value_slots)
            if slot is None:
                return None
            saved.append(slot)
        call, leaf, line = value.get("added_at_call"), value.get("is_leaf", False), value.get("line")
        created, gone, module = value.get("created_at_step"), value.get("gone_at_step"), value.get("module")
        loops = self.usual_loops(value.get("loops", ()))
        source = value.get("source")
        if not (
            (call is None or (type(call) is int and 0 <= call < self.call_count))
            and type(leaf) is bool
            and (line is None or _is_whole(line))
            and loops is not None
            and (created is None or (type(created) is int and 0 <= created < self.step_count))
            and (gone is None or (type(gone) is int and 0 <= gone < self.step_count))
            and _is_text_or_none(module)
            and (source is None or _is_usual_source(source))
        ):
            return None
        if source is not None:
            source = SourceRef(self.files.setdefault(source[0], source[0]), source[1])
        return GraphNode(
            node_id, name, label, tuple(saved), call, leaf, line, loops, created, gone, module, source
        )

    def usual_loops(self, value: Any) -> tuple[LoopMark, ...] | None:
        """Loop marks as the writer writes them (``[line, index, count]``), else None."""
        if value == ():
            return ()
        if type(value) is not list or not all(map(_is_usual_loop, value)):
            return None
        return tuple(LoopMark(*mark) for mark in value)

    def source(self, value: Any, where: str) -> SourceRef:
        item = self.seq(value, where)
        if len(item) != 2:
            raise self.fail(where, "expected [file, line]")
        name = self.str_(item[0], where)
        file = self.files.setdefault(name, name)
        return SourceRef(file, self.int_(item[1], where, 1))

    def slot(self, value: Any, where: str) -> SavedSlot:
        usual = _usual_slot(value, self.value_slots)
        if usual is not None:
            return usual
        return SavedSlot(**self.fields(self.obj(value, where), where, self.slot_fields, ("name", "kind")))

    def storage(self, value: Any, where: str) -> StorageRef:
        if _is_usual_storage(value):  # the usual case, checked in one pass
            return StorageRef(*value)
        item = self.seq(value, where)
        if len(item) != 3:
            raise self.fail(where, "expected [device, pointer, nbytes]")
        return StorageRef(self.str_(item[0], where), self.int_(item[1], where), self.int_(item[2], where))

    def shape(self, value: Any, where: str) -> tuple[int, ...]:
        dims = self.seq(value, where)
        if len(dims) > MAX_DIMS:
            raise self.fail(where, f"{len(dims)} dimensions, more than {MAX_DIMS}")
        if all(map(_is_count, dims)):  # the usual case, in one pass
            return tuple(dims)
        return tuple(self.int_(d, f"{where}[{i}]", 0) for i, d in enumerate(dims))

    def loops(self, value: Any, where: str) -> tuple[LoopMark, ...]:
        marks = []
        for i, item in enumerate(self.seq(value, where)):
            mark = self.seq(item, f"{where}[{i}]")
            if len(mark) != 3:
                raise self.fail(f"{where}[{i}]", "expected [line, index, count]")
            line, index = self.int_(mark[0], f"{where}[{i}]"), self.int_(mark[1], f"{where}[{i}]")
            marks.append(LoopMark(line, index, self.optional(mark[2], f"{where}[{i}]", self.int_)))
        return tuple(marks)

    def values(self, value: Any, where: str) -> Values:
        v = self.obj(value, where)
        shape = self.shape(self.get(v, "shape", where), f"{where}.shape")
        if "packed" in v:
            return self.packed_values(v, shape, where)
        flat = self.seq(self.get(v, "flat", where), f"{where}.flat")
        if not _holds(shape, len(flat)):
            raise self.fail(where, f"shape {list(shape)} does not hold {len(flat)} values")
        if all(type(x) in _PLAIN_NUMBERS for x in flat):  # the usual case, checked in one pass
            numbers = tuple(flat)
            if any(type(x) is int for x in numbers):
                whole = [x for x in numbers if type(x) is int]
                if min(whole) < _INT_RANGE[0] or max(whole) >= _INT_RANGE[1]:
                    raise self.fail(f"{where}.flat", "a whole number out of the 64-bit range")
        else:
            numbers = tuple(self.number(x, f"{where}.flat[{i}]") for i, x in enumerate(flat))
        return Values(shape, numbers, self.str_(v.get("dtype", "float32"), f"{where}.dtype"))

    def packed_values(self, v: dict[str, Any], shape: tuple[int, ...], where: str) -> Values:
        """Values stored as base64 of their little-endian bytes (NOTE [packed values in files])."""
        code = self.choice(v["packed"], f"{where}.packed", _PACKED_CODES)
        text = self.str_(self.get(v, "data", where), f"{where}.data")
        try:
            raw = base64.b64decode(text, validate=True)
        except ValueError:  # binascii.Error, or a character that is not ASCII
            raise self.fail(f"{where}.data", "it is not base64") from None
        size = PACKED_SIZES[code]
        if len(raw) % size or not _holds(shape, len(raw) // size):
            raise self.fail(where, f"shape {list(shape)} does not hold {len(raw) // size} values")
        numbers = PackedNumbers.from_little_endian(raw, code)
        return Values(shape, numbers, self.str_(v.get("dtype", "float32"), f"{where}.dtype"))

    def number(self, value: Any, where: str) -> Number:
        if isinstance(value, float) or (isinstance(value, int) and _INT_RANGE[0] <= value < _INT_RANGE[1]):
            return value  # bool is an int
        if isinstance(value, int):
            raise self.fail(where, "a whole number out of the 64-bit range")
        if isinstance(value, str) and value in _NON_FINITE:
            return _NON_FINITE[value]
        raise self.fail(where, f"expected a number, found {_type_name(value)}")

    def named_values(self, value: Any, where: str) -> Mapping[str, Values | None]:
        table = self.obj(value, where)
        return MappingProxyType({k: self.optional(v, f"{where}.{k}", self.values) for k, v in table.items()})

    def named_present_values(self, value: Any, where: str) -> Mapping[str, Values]:
        table = self.obj(value, where)
        return MappingProxyType({k: self.values(v, f"{where}.{k}") for k, v in table.items()})

    def by_slot(
        self, value: Any, where: str, read: Callable[[Any, str], T], usual: Callable[[Any], bool]
    ) -> Mapping[SlotKey, T]:
        """``{node: {slot: item}}`` by slot key; an item ``usual`` accepts is taken as it is, any
        other is ``read`` (which names the place of what is wrong)."""
        out: dict[SlotKey, T] = {}
        for node, slots in self.obj(value, where).items():
            self.node_id(node, where)
            names = self.node_slots[node]
            for slot, item in self.obj(slots, f"{where}.{node}").items():
                if slot not in names:
                    raise self.fail(f"{where}.{node}", f"{slot[:40]!r} is not a saved slot of that node")
                out[(node, slot)] = item if usual(item) else read(item, f"{where}.{node}.{slot}")
        return MappingProxyType(out)

    def slot_state(self, value: Any, where: str) -> SlotState:
        return cast(SlotState, self.choice(value, where, _SLOT_STATES))

    def step(self, value: Any, index: int) -> Step:
        step = self.usual_step(value, index)
        if step is not None:
            return step
        where = f"steps[{index}]"
        fields = self.fields(self.obj(value, where), where, self.step_fields, ("kind", "saved_bytes"))
        return Step(index=index, **(_STEP_READ_DEFAULTS | fields))

    def usual_step(self, value: Any, index: int) -> Step | None:
        """``value`` as a step when it is what the writer writes and holds no values (NOTE [usual
        entries]: gradients and results are read field by field), else None."""
        if type(value) is not dict or not value.keys() <= _USUAL_STEP_KEYS:
            return None
        kind, call, node, line = value.get("kind"), value.get("call"), value.get("node"), value.get("line")
        saved, alive, caption = (
            value.get("saved_bytes"),
            value.get("alive_nodes", 0),
            value.get("caption", ""),
        )
        slots = self.usual_by_slot(value.get("slot_changes", ...), _is_slot_state)
        versions = self.usual_by_slot(value.get("version_changes", ...), _is_count)
        added, gone = value.get("added_nodes", ()), value.get("gone_nodes", ())
        loops = self.usual_loops(value.get("loops", ()))
        if not (
            type(kind) is str
            and kind in _STEP_KINDS
            and (call is None or (type(call) is int and 0 <= call < self.call_count))
            and (node is None or (type(node) is str and node in self.node_slots))
            and _is_whole(saved)
            and _is_whole(alive)
            and alive >= 0
            and type(caption) is str
            and (line is None or _is_whole(line))
            and slots is not None
            and versions is not None
            and loops is not None
            and self.usual_node_ids(added)
            and self.usual_node_ids(gone)
        ):
            return None
        return Step(
            index, cast(StepKind, kind), call, node, slots, _NO_VALUES, cast(int, saved), caption=caption,
            added_nodes=tuple(added), line=line, loops=loops, alive_nodes=alive, gone_nodes=tuple(gone),
            version_changes=versions,
        )  # fmt: skip

    def usual_by_slot(self, value: Any, usual: Callable[[Any], bool]) -> Mapping[SlotKey, Any] | None:
        """``{node: {slot: item}}`` by slot key when every node, slot and item is as it should be;
        None when something is not (``...``, the field left out: no changes)."""
        if value is ...:
            return _NO_CHANGES
        if type(value) is not dict:
            return None
        out: dict[SlotKey, Any] = {}
        node_slots = self.node_slots
        for node, slots in value.items():
            names = node_slots.get(node)
            if names is None or type(slots) is not dict:
                return None
            for slot, item in slots.items():
                if slot not in names or not usual(item):
                    return None
                out[(node, slot)] = item
        return MappingProxyType(out)

    def usual_node_ids(self, value: Any) -> bool:
        return value == () or (
            type(value) is list and all(type(v) is str and v in self.node_slots for v in value)
        )

    def leaves(self, value: Any) -> Mapping[str, str]:
        """Leaf name -> its AccumulateGrad node, or "" for a leaf no graph has used yet."""
        return {
            name: "" if node == "" else self.node_id(node, f"leaves.{name}")
            for name, node in self.obj(value, "leaves").items()
        }

    def call_info(self, value: Any, position: int) -> CallInfo:
        where = f"calls[{position}]"
        c = self.obj(value, where)
        index = self.call_index(self.get(c, "index", where), f"{where}.index")
        if index != position:
            raise self.fail(f"{where}.index", f"{index} is not its place in the list ({position})")
        first = self.step_index(self.get(c, "first_step", where), f"{where}.first_step")
        last = self.step_index(self.get(c, "last_step", where), f"{where}.last_step")
        if last < first:
            raise self.fail(where, f"its last step ({last}) comes before its first ({first})")
        return CallInfo(
            index=index,
            call=self.call(self.obj(self.get(c, "call", where), f"{where}.call"), f"{where}.call"),
            first_step=first,
            last_step=last,
            error=self.optional(c.get("error"), f"{where}.error", self.str_),
            failed_node=self.optional(c.get("failed_node"), f"{where}.failed_node", self.node_id),
        )

    def call(self, c: dict[str, Any], where: str) -> Call:
        def number(key: str) -> int:
            return self.int_(self.get(c, key, where), f"{where}.{key}")

        keywords = self.obj(c.get("keywords", {}), f"{where}.keywords")
        return Call(
            kind=cast(CallKind, self.choice(self.get(c, "kind", where), f"{where}.kind", _CALL_KINDS)),
            line=number("line"),
            col=number("col"),
            end_line=number("end_line"),
            end_col=number("end_col"),
            text=self.str_(self.get(c, "text", where), f"{where}.text"),
            keywords=MappingProxyType(
                {k: self.str_(v, f"{where}.keywords.{k}") for k, v in keywords.items()}
            ),
            retain_graph=self.optional(c.get("retain_graph"), f"{where}.retain_graph", self.bool_),
            create_graph=self.bool_(c.get("create_graph", False), f"{where}.create_graph"),
            loops=self.loops(c.get("loops", []), f"{where}.loops"),
        )

    def freed_by(self, value: Any) -> Mapping[SlotKey, int]:
        out: dict[SlotKey, int] = {}
        for i, item in enumerate(self.seq(value, "freed_by")):
            where = f"freed_by[{i}]"
            entry = self.seq(item, where)
            if len(entry) != 3:
                raise self.fail(where, "expected [node, slot, call]")
            node = self.node_id(entry[0], where)
            slot = self.str_(entry[1], where)
            if slot not in self.node_slots[node]:
                raise self.fail(where, f"{slot[:40]!r} is not a saved slot of {node[:40]!r}")
            out[(node, slot)] = self.call_index(entry[2], where)
        return out

    def needed_by(self, value: Any) -> Mapping[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        for node, calls in self.obj(value, "needed_by").items():
            where = f"needed_by.{node}"
            self.node_id(node, where)
            out[node] = tuple(
                self.call_index(c, f"{where}[{i}]") for i, c in enumerate(self.seq(calls, where))
            )
        return out
