"""The one-file player page: a recording anyone can step through in a browser (Qt-free).

# NOTE [a page that holds only text]
The page is the template ``resources/web/player.html`` with its style, its
script and the recording's data put in. Every string of a recording (names,
captions, program text, error messages) is untrusted: it goes in only inside
the JSON data, where ``<``, ``>``, ``&`` and the two JavaScript line
separators are written as ``\\u`` escapes, so no text can close the
``<script>`` element that holds it; the script then puts it on the page as
text (``textContent``), never as markup. The page's Content-Security-Policy
allows its own script alone (by its SHA-256) and no request of any kind, so a
page opened from a course site or a notebook fetches nothing.

>>> from app.core import load_builtin, record
>>> page = player_html(record(load_builtin("forgot-retain")))
>>> page.startswith("<!doctype html>"), "</script>" in page.split('id="lens-data">')[1].split("</script>")[0]
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.core.lesson.prove import ProvenFix
from app.core.model.recording import Recording
from app.core.resources import resource_path
from app.render.layout import Layout, LayoutError, layout_graph
from app.render.web.page_style import page_constants, style_css
from app.render.web.scene_data import scene_data
from app.render.web.steps import step_data

__all__ = ["embedded_json", "export_html", "page_layout", "player_html", "write_player"]

_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_UNSAFE_RE = re.compile("[<>&\u2028\u2029]")
_SLOT = re.compile(r"\{\{([A-Z_]+)\}\}")


def embedded_json(value: Any) -> str:
    """``value`` as JSON that can sit inside a ``<script>`` element (NOTE [a page that holds only text]).

    >>> embedded_json({"name": "</script><img src=x>"})
    '{"name":"\\\\u003c/script\\\\u003e\\\\u003cimg src=x\\\\u003e"}'
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return _UNSAFE_RE.sub(lambda m: _UNSAFE[m.group(0)], text)


def page_layout(recording: Recording, stored: Any = None) -> Layout:
    """The layout the window would draw ``recording`` with: the one a ``.lens`` file kept when it
    fits the graph (``layout_store``), else one Graphviz run."""
    if stored is not None:
        from app.render.layout_store import layout_from_json

        try:
            return layout_from_json(stored, recording.graph)
        except LayoutError:
            pass
    return layout_graph(recording.graph)


def _template(name: str) -> str:
    return resource_path("web", name).read_text(encoding="utf-8")


def player_html(
    recording: Recording,
    layout: Layout | None = None,
    *,
    fixes: Sequence[ProvenFix] = (),
    lines: tuple[int, int] | None = None,
) -> str:
    """The player page of ``recording`` as one HTML text (``layout``: Graphviz's, made when None;
    ``lines``: the part of the program's file it shows, all of it when None)."""
    placed = layout if layout is not None else page_layout(recording)
    data = {
        "format": 1,
        "steps": step_data(recording, fixes=fixes, lines=lines),
        "scene": scene_data(recording, placed).json(),
        "constants": page_constants(),
    }
    script = _template("player.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    parts = {
        "TITLE": html.escape(f"{recording.program.title or recording.program.name} · Autograd Lens"),
        "CSS": _template("player.css"),
        "STATE_CSS": style_css(),
        "SCRIPT_HASH": f"'sha256-{digest}'",
        "DATA": embedded_json(data),
        "JS": script,
    }
    # one pass: what is put in is never read again for slots
    return _SLOT.sub(lambda m: parts[m.group(1)], _template("player.html"))


def write_player(
    recording: Recording,
    path: str | Path,
    layout: Layout | None = None,
    *,
    fixes: Sequence[ProvenFix] = (),
    lines: tuple[int, int] | None = None,
) -> Path:
    """Write the player page of ``recording`` to ``path`` (UTF-8); returns the path."""
    out = Path(path)
    out.write_text(player_html(recording, layout, fixes=fixes, lines=lines), encoding="utf-8")
    return out


def export_html(
    recording: Recording,
    stored: Any,
    out: str | Path,
    fixes: Sequence[ProvenFix] = (),
    *,
    name: str = "recording",
) -> Path:
    """The command line's ``export --format html``: the page written to ``out`` (a folder: to
    ``NAME.html`` in it, ``name`` being the source the person named, never the recording's own
    program name: a ``.lens`` file's text cannot choose where a page is written), laid out as a
    ``.lens`` source's stored layout says when it fits, with the error's ``fixes`` that were proven
    by recording."""
    path = Path(out)
    if path.is_dir():
        path = path / f"{Path(name).name or 'recording'}.html"
    return write_player(recording, path, page_layout(recording, stored), fixes=fixes)
