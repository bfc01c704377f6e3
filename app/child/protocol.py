"""Frames on the pipes between a recording child and its parent.

A frame is eight bytes (the header's length and the payload's length, big
endian), a JSON header, and a payload of raw bytes (a recording in the
``.lens`` form, or nothing). The parent never unpickles anything: what comes
back from a child is read as JSON and checked like any ``.lens`` file.

>>> import io
>>> pipe = io.BytesIO()
>>> write_frame(pipe, {"op": "record"}, b"data")
>>> _ = pipe.seek(0)
>>> read_frame(pipe)
({'op': 'record'}, b'data')
"""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

__all__ = [
    "MAX_HEADER",
    "MAX_PAYLOAD",
    "ProtocolError",
    "check_prefix",
    "decode_header",
    "encode_frame",
    "read_frame",
    "write_frame",
]

PREFIX = struct.Struct(">II")
MAX_HEADER = 1 << 20  # a header is a small JSON object
MAX_PAYLOAD = (1 << 31) - 1  # a recording; the .lens reader has its own, smaller bound


class ProtocolError(Exception):
    """The other side sent something that is not a frame."""


def encode_frame(header: dict[str, Any], payload: bytes = b"") -> bytes:
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(head) > MAX_HEADER or len(payload) > MAX_PAYLOAD:
        raise ProtocolError("a frame too large to send")
    return PREFIX.pack(len(head), len(payload)) + head + payload


def write_frame(stream: BinaryIO, header: dict[str, Any], payload: bytes = b"") -> None:
    stream.write(encode_frame(header, payload))
    stream.flush()


def read_frame(stream: BinaryIO) -> tuple[dict[str, Any], bytes]:
    """One frame from a blocking stream; ``EOFError`` when it ends cleanly between frames."""
    prefix = _read_exactly(stream, PREFIX.size)
    if not prefix:
        raise EOFError
    head_size, payload_size = check_prefix(prefix)
    head = _read_exactly(stream, head_size)
    return decode_header(head), _read_exactly(stream, payload_size)


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes (a pipe hands them over in pieces); b"" at a clean end before the first."""
    parts: list[bytes] = []
    left = size
    while left:
        part = stream.read(left)
        if not part:
            if left == size:
                return b""
            raise ProtocolError("the stream ended inside a frame")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def check_prefix(prefix: bytes) -> tuple[int, int]:
    head_size, payload_size = PREFIX.unpack(prefix)
    if head_size > MAX_HEADER or payload_size > MAX_PAYLOAD:
        raise ProtocolError("a frame larger than the protocol allows")
    return head_size, payload_size


def decode_header(head: bytes) -> dict[str, Any]:
    try:
        header = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"a header that is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ProtocolError("a header that is not a JSON object")
    return header
