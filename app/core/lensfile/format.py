"""The ``.lens`` file format: what a file holds, its limits, and the one error it raises.

A ``.lens`` file is gzip-compressed JSON (plain JSON is read too)::

    {"format": "autograd-lens", "version": 3, "program": {...}, "device": ..., "graph": {...},
     "steps": [...], "calls": [...], "leaves": {...}, "freed_by": [...], "needed_by": {...},
     "layout": {...}}

``layout`` (optional) is where the window draws the graph, so a shared file opens without
Graphviz (``app.render.layout_store``'s NOTE [stored layouts]). Steps are stored as their
changes, as the :class:`~app.core.model.timeline.Timeline` holds them; fields at their default
value are left out. :mod:`.writer` writes a file, :mod:`.container` holds its gzip members and
header, :mod:`.reader` checks and reads one.

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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeGuard

from app.core.model.errors import UserError
from app.core.sizing.limits import MAX_SOURCE_CHARS

__all__ = [
    "FORMAT",
    "MAX_CODE_CHARS",
    "MAX_CODE_LINE",
    "MAX_CONTAINERS",
    "MAX_DIMS",
    "MAX_HEADER_BYTES",
    "MAX_JSON_BYTES",
    "SUFFIX",
    "VERSION",
    "LensError",
    "checked_top",
    "code_refusal",
    "damaged",
    "is_lens",
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
# characters opened in 4.6 s, one of 200,000 froze it for 23 s). A program is at most
# MAX_SOURCE_CHARS, so every program the checked language takes fits.
MAX_CODE_CHARS = 1_000_000
MAX_CODE_LINE = MAX_SOURCE_CHARS
MAX_DIMS = 64


class LensError(UserError):
    """A ``.lens`` file that cannot be read: damaged, not a recording, or from a newer version.

    >>> from app.core.lensfile import recording_from_bytes
    >>> try:
    ...     recording_from_bytes(b"not a recording")
    ... except LensError as exc:
    ...     print(exc.message.split(":")[0])
    this .lens file is damaged or not a recording
    """


def damaged(what: str) -> LensError:
    return LensError(f"this .lens file is damaged or not a recording: {what}")


def is_lens(source: object) -> TypeGuard[str | Path]:
    """Whether ``source`` (a path, or its text) names a saved recording: read, never run.

    >>> is_lens("runs/Step.LENS"), is_lens(Path("a.toml")), is_lens(None)
    (True, False, False)
    """
    return isinstance(source, (str, Path)) and Path(source).suffix.lower() == SUFFIX


def code_refusal(code: str) -> str | None:
    """Why a program's text is too long for a recording (None when it is not): the window's
    editor would freeze laying it out.

    >>> code_refusal("x = 1\\n"), code_refusal("x" * 100_001)
    (None, 'a line of 100,001 characters, longer than 100,000')
    """
    if len(code) > MAX_CODE_CHARS:
        return f"more than {MAX_CODE_CHARS:,} characters"
    longest = max(map(len, code.splitlines()), default=0)
    if longest > MAX_CODE_LINE:
        return f"a line of {longest:,} characters, longer than {MAX_CODE_LINE:,}"
    return None


def checked_top(top: Any) -> dict[str, Any]:
    """A header's or a recording's JSON object, when it names this format at a version read here."""
    if not isinstance(top, dict) or top.get("format") != FORMAT:
        raise LensError(
            "this file is not an Autograd Lens recording (it does not say format 'autograd-lens')"
        )
    version = top.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise damaged("its format version is not a whole number from 1 up")
    if version > VERSION:
        raise LensError(
            f"this recording was made by a newer Autograd Lens (format version {version}); "
            f"this version reads versions up to {VERSION}"
        )
    return top
