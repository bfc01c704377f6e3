"""``.lens`` files by path: read whole, checked ahead of the window, or only their header's
picture (format's NOTE [picture first])."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, NamedTuple

from app.core.lensfile.container import file_bytes, inflate, split
from app.core.lensfile.format import LensError
from app.core.lensfile.reader import read
from app.core.model.recording import Recording

__all__ = ["HEAD_BYTES", "lens_preview", "open_lens", "preread_lens", "read_lens", "recording_from_bytes"]

HEAD_BYTES = 4 * 1024 * 1024  # how much of a file lens_preview reads to find its header


class _Checked(NamedTuple):
    """A file whose header and whole compressed bytes were checked, its recording not yet read."""

    header: dict[str, Any]
    text: bytes  # the recording's JSON, inflated


_Opened = tuple[Recording, dict[str, Any] | None]
_PREREAD: dict[tuple[str, int, int] | None, _Opened | _Checked] = {}
_PREREAD_LOCK = threading.Lock()


def read_lens(path: str | Path) -> Recording:
    """Read a ``.lens`` file; raises :class:`LensError` for a damaged or newer file.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "notes.lens")
    ...     _ = path.write_text("not a recording", encoding="utf-8")
    ...     try:
    ...         read_lens(path)
    ...     except LensError as exc:
    ...         print(exc.message.split(":")[0])
    this .lens file is damaged or not a recording
    """
    return open_lens(path)[0]


def recording_from_bytes(data: bytes) -> Recording:
    """The recording in a ``.lens`` file's bytes; raises :class:`LensError` for anything else.

    >>> from app.core import load_builtin, record
    >>> from app.core.lensfile import lens_bytes
    >>> rec = record(load_builtin("forgot-retain"))
    >>> recording_from_bytes(lens_bytes(rec)) == rec
    True
    """
    return read(split(data)[1])[0]


def open_lens(path: str | Path, *, lazy: bool = False) -> tuple[Recording, dict[str, Any] | None]:
    """A ``.lens`` file's recording and its stored layout (None when it has none), unchecked
    beyond being a JSON object: ``app.render.layout_store`` checks it against the graph.

    ``lazy``: its steps are made and checked when first asked for (``reader.read``); a step
    may then raise :class:`LensError` (the window's stepping says so).

    >>> import pathlib, tempfile
    >>> from app.core import load_builtin, record
    >>> from app.core.lensfile import save_lens
    >>> rec = record(load_builtin("two-losses"))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     save_lens(rec, pathlib.Path(folder, "a.lens"), layout={"nodes": {}})
    ...     opened, layout = open_lens(pathlib.Path(folder, "a.lens"))
    >>> opened == rec, layout
    (True, {'nodes': {}})
    """
    if _PREREAD:
        with _PREREAD_LOCK:
            opened = _PREREAD.pop(_file_key(path), None)
        if isinstance(opened, _Checked):
            return read(opened.text, lazy=lazy)
        if opened is not None:
            return opened
    return read(split(file_bytes(path))[1], lazy=lazy)


def preread_lens(path: str | Path) -> None:
    """Check a ``.lens`` file now (raising :class:`LensError` as :func:`open_lens` does), and hand
    what was read to the next :func:`open_lens` of the same unchanged file: the command line tells
    a damaged file before the window opens, and the window does not read a big file twice.

    A file with a preview is checked as far as its header and its compressed bytes go, and its
    recording is read by :func:`open_lens`, once the window shows the picture; any other file is
    read whole here.

    >>> import pathlib, tempfile
    >>> from app.core import load_builtin, record
    >>> from app.core.lensfile import save_lens
    >>> rec = record(load_builtin("two-losses"))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "a.lens")
    ...     save_lens(rec, path)
    ...     preread_lens(path)  # checked now: a damaged file would raise here
    ...     open_lens(path)[0] == rec  # and not read again
    True
    """
    key = _file_key(path)  # before reading: a file rewritten meanwhile is not handed over as new
    header, body = split(file_bytes(path))
    opened: _Opened | _Checked
    if header is not None and header.get("preview") is not None:
        opened = _Checked(header, inflate(body))
    else:
        opened = read(body)  # split once: a big file inflated once
    with _PREREAD_LOCK:
        _PREREAD.clear()
        if key is not None and key == _file_key(path):
            _PREREAD[key] = opened


def lens_preview(path: str | Path) -> Any | None:
    """The preview in a ``.lens`` file's header, as JSON (``app.render.preview`` checks it), or
    None: the file has none, or :func:`preread_lens` read it whole already. Reads at most
    :data:`HEAD_BYTES` of a file not pre-read; raises no :class:`LensError` (the read does).

    >>> import pathlib, tempfile
    >>> from app.core import load_builtin, record
    >>> from app.core.lensfile import save_lens
    >>> rec = record(load_builtin("two-losses"))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     save_lens(rec, pathlib.Path(folder, "a.lens"), preview={"nodes": []})
    ...     save_lens(rec, pathlib.Path(folder, "b.lens"))
    ...     lens_preview(pathlib.Path(folder, "a.lens")), lens_preview(pathlib.Path(folder, "b.lens"))
    ({'nodes': []}, None)
    """
    with _PREREAD_LOCK:
        opened = _PREREAD.get(_file_key(path))
    if opened is not None:
        return opened.header.get("preview") if isinstance(opened, _Checked) else None
    try:
        with open(path, "rb") as file:
            head = file.read(HEAD_BYTES)
        header, _ = split(head, whole=False)
    except (OSError, LensError):
        return None
    return None if header is None else header.get("preview")


def _file_key(path: str | Path) -> tuple[str, int, int] | None:
    try:
        info = Path(path).stat()
        return (str(Path(path).resolve()), info.st_mtime_ns, info.st_size)
    except OSError:  # gone: open() says so
        return None
