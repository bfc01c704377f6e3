"""A ``.lens`` file's bytes: gzip members, the header before the recording (format's NOTE [picture
first]), and the bounds that stop a hostile file before it fills memory (NOTE [untrusted lens
files]). Knows nothing of what the recording holds.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.lensfile.format import (
    MAX_CONTAINERS,
    MAX_HEADER_BYTES,
    MAX_JSON_BYTES,
    LensError,
    checked_top,
    damaged,
)

__all__ = ["GZIP_MAGIC", "count_containers", "file_bytes", "gzip", "inflate", "split"]

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20  # bytes inflated per call


def gzip(text: str) -> bytes:
    # 31: a gzip header, mtime 0. Level 1: a model's recording (7 MB of JSON, mostly gradients)
    # compresses in 0.06 s to 3.1 MB, where level 6 took 0.33 s for 2.9 MB.
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    return compressor.compress(text.encode("utf-8")) + compressor.flush()


def file_bytes(path: str | Path) -> bytes:
    """A file's bytes, refused past :data:`MAX_JSON_BYTES` before reading it all."""
    with open(path, "rb") as file:
        data = file.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise LensError(f"this file is larger than {MAX_JSON_BYTES // 2**20} MB, too large for a recording")
    return data


def split(data: bytes, *, whole: bool = True) -> tuple[dict[str, Any] | None, bytes]:
    """A file's header (NOTE [picture first]; None when it has none) and the bytes of its
    recording: gzip, or JSON text when the file was one gzip member small enough to inflate here.
    ``whole=False``: ``data`` is the file's start only (the recording's bytes are then partial)."""
    if not data.startswith(GZIP_MAGIC):
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
    if not rest.startswith(GZIP_MAGIC):
        return None, data  # "bytes after its compressed data", as reading it whole says
    return _header(first), rest


def _header(text: bytes) -> dict[str, Any]:
    """A header member's JSON, checked as far as this module goes: format and version."""
    try:
        top = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise damaged("its header is not JSON") from None
    return checked_top(top)


def inflate(data: bytes) -> bytes:
    """Gunzip ``data`` a piece of :data:`CHUNK` bytes at a time, stopping at
    :data:`MAX_JSON_BYTES` and :data:`MAX_CONTAINERS`, so a zip bomb cannot fill memory."""
    return b"".join(_inflated(data))


def _inflated(data: bytes) -> Iterator[bytes]:
    inflater = zlib.decompressobj(31)
    size = containers = 0
    pending = data
    try:
        while not inflater.eof:
            part = inflater.decompress(pending, CHUNK)
            pending = inflater.unconsumed_tail
            if not part and not pending:  # all input read, nothing more came out: it stops short
                break
            size += len(part)
            if size > MAX_JSON_BYTES:
                raise LensError(
                    f"this recording inflates to more than {MAX_JSON_BYTES // 2**20} MB, too large to read"
                )
            containers = count_containers(part, containers)
            yield part
    except zlib.error as exc:
        raise damaged(f"its compressed data is broken ({exc})") from None
    if not inflater.eof:
        raise damaged("it ends before its compressed data does (truncated?)")
    if inflater.unused_data:
        raise damaged("it has bytes after its compressed data")


def count_containers(text: bytes, before: int = 0) -> int:
    """``before`` plus the arrays and objects ``text`` opens (a bracket inside a string counts too:
    a bound, not a parse); :class:`LensError` past :data:`MAX_CONTAINERS`."""
    count = before + text.count(b"[") + text.count(b"{")
    if count > MAX_CONTAINERS:
        raise LensError(
            f"this recording holds more than {MAX_CONTAINERS:,} arrays and objects, too large to read"
        )
    return count
