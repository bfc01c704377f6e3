"""JSON decoded in small pieces, so that no single call holds the interpreter for long.

A pool thread that decodes a big JSON text (Graphviz's layout of 5,000 nodes:
18 MB) with one ``json.loads`` holds the GIL for the whole C call, 100-500 ms
in which the GUI thread cannot run (a recording is decoded a node and a step
at a time by ``app.core.lensfile.reader``). :func:`loads_in_pieces` gives the same
result a field, an array element or an input piece at a time (Qt-free, torch-free).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["free_in_pieces", "loads_in_pieces"]

_DECODER = json.JSONDecoder()
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # (text, index) -> (value, end): no space skipping
_SPACE = re.compile(r"[ \t\n\r]*")


def loads_in_pieces(
    text: str | Iterable[bytes], *, depth: int = 1, errors: str = "replace"
) -> dict[str, Any]:
    """``json.loads`` of one JSON object, decoded an array element at a time as its text arrives.

    ``dot -Tjson0`` for 5,000 nodes is 18 MB: one ``json.loads`` is a single
    C call of ~120 ms that holds the GIL, and the GUI thread stalls for as
    long; so is decoding or joining the whole text at once (~40 ms). Here no
    call handles more than one field, one array element (a node or an edge,
    ~1 KB) or one piece of the input, so other threads run in between. Same
    result. ``text``: the whole text, or its UTF-8 bytes in pieces of any size.
    ``depth``: objects nested this deep (1: only the top one) are taken apart
    too, so the arrays inside them come in pieces as well. ``errors``: what bytes
    that are not UTF-8 become (``"strict"``: a :class:`UnicodeDecodeError`).

    >>> loads_in_pieces('{"bb": "0,0,1,2", "objects": [{"a": 1}, {"b": [2, 3]}], "e": []}')
    {'bb': '0,0,1,2', 'objects': [{'a': 1}, {'b': [2, 3]}], 'e': []}
    >>> loads_in_pieces([b'{"n": 12', b'34, "s": "\\xc3', b'\\xa9"}'])
    {'n': 1234, 's': 'é'}
    >>> loads_in_pieces('{"graph": {"nodes": [1, 2]}, "steps": [{"i": 0}]}', depth=2)
    {'graph': {'nodes': [1, 2]}, 'steps': [{'i': 0}]}
    """
    stream = _JsonStream([text] if isinstance(text, str) else text, errors)
    out = _object_in_pieces(stream, depth)
    if stream.peek() != "":
        raise ValueError("more text after the JSON object")
    return out


def free_in_pieces(value: Any, *, piece: int = 500) -> None:
    """Drop decoded JSON a few hundred list items at a time: every list inside ``value``'s objects
    is emptied from its end, ``piece`` items per call, so that each call frees a little.

    Dropping a 5,000-node recording's JSON at once is one cascade of ~10^6
    deallocations inside a single C call (60-190 ms) that holds the GIL, like
    decoding it whole. Whatever ``value`` holds must not be used afterwards.

    >>> data = {"steps": [{"i": i} for i in range(1200)], "graph": {"nodes": [1, 2]}, "n": 3}
    >>> free_in_pieces(data)
    >>> data
    {'steps': [], 'graph': {'nodes': []}, 'n': 3}
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            while item:
                del item[-piece:]


def _object_in_pieces(stream: _JsonStream, depth: int) -> dict[str, Any]:
    """The object starting at the stream's ``{``, a field at a time (its arrays element by element)."""
    out: dict[str, Any] = {}
    stream.take("{")
    while stream.peek() != "}":
        key = stream.value()
        if not isinstance(key, str):
            raise ValueError("a key that is not a string")
        stream.take(":")
        ahead = stream.peek()
        if ahead == "[":
            out[key] = _list_in_pieces(stream)
        elif ahead == "{" and depth > 1:
            out[key] = _object_in_pieces(stream, depth - 1)
        else:
            out[key] = stream.value()
        if stream.peek() != "}":
            stream.take(",")
    stream.take("}")
    return out


def _list_in_pieces(stream: _JsonStream) -> list[Any]:
    """The array starting at the stream's ``[``, decoded element by element."""
    items: list[Any] = []
    stream.take("[")
    if stream.peek() == "]":
        stream.pos += 1
        return items
    while True:
        if _compact_items(stream, items):
            return items
        items.append(stream.value())  # the careful way, for one element
        if stream.peek() == "]":
            stream.pos += 1
            return items
        stream.take(",")


def _compact_items(stream: _JsonStream, items: list[Any]) -> bool:
    """Elements from the stream's position, as compact JSON (``json.dumps`` with no spaces) writes
    them, while each is followed by its ``,`` in the window: one C call each, where the careful way
    makes a dozen Python ones (a 5,000-node recording has ~60,000 elements: 0.3 s of them). True
    at the array's ``]``; False where the careful way must go on (a space, or the window's end)."""
    text, pos = stream.text, stream.pos
    last = len(text) - 1
    scan = _SCAN
    while pos < last:
        try:
            value, end = scan(text, pos)
        except (StopIteration, ValueError):  # not a value here (a space), or cut off by the window
            break
        if end >= last:
            break  # "12" may be the start of "1234": the careful way adds the next piece
        after = text[end]
        if after == ",":
            items.append(value)
            pos = end + 1
        elif after == "]":
            items.append(value)
            stream.pos = end + 1
            return True
        else:
            break
    stream.pos = pos
    return False


class _JsonStream:
    """JSON text arriving in pieces: a window of decoded text, read from ``pos`` on.

    A value is only taken when something follows it in the window (``12`` may
    be the start of ``1234``); else the next piece is added and it is decoded
    again (values are small: one node or edge).
    """

    def __init__(self, pieces: Iterable[bytes | str], errors: str = "replace") -> None:
        self._pieces = iter(pieces)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)
        self._ended = False
        self.text = ""
        self.pos = 0

    def _more(self, at_least: int = 1) -> bool:
        """Add the next pieces, ``at_least`` characters of them, to the window (dropping what was
        read), copying the window once; False at the end."""
        if self._ended:
            return False
        tails: list[str] = []
        got = 0
        while got < at_least:
            piece = next(self._pieces, None)
            if piece is None:
                self._ended = True
                tails.append(self._decoder.decode(b"", final=True))
                break
            tail = piece if isinstance(piece, str) else self._decoder.decode(piece)
            tails.append(tail)
            got += len(tail)
        self.text = self.text[self.pos :] + "".join(tails)
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character after any JSON whitespace ("" at the end of the text)."""
        while True:
            self.pos = _skip(self.text, self.pos)
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._more():
                return ""

    def take(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise ValueError(f"expected {char!r} in the JSON, found {found or 'the end'!r}")
        self.pos += 1

    def value(self) -> Any:
        """The JSON value at the next character."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                # More text may complete the value (a long string cut by a piece) or not (a syntax
                # error): the window at least doubles, so a value or an error that needs all of a
                # big input copies it a few times, not once per piece.
                if self._more(max(1, len(self.text) - self.pos)):
                    continue
                raise
            if self._ended or _skip(self.text, end) < len(self.text):
                self.pos = end
                return value
            self._more()


def _skip(text: str, pos: int) -> int:
    """Past any JSON whitespace at ``pos``."""
    space = _SPACE.match(text, pos)
    return pos if space is None else space.end()
