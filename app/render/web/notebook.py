"""The player inline in a Jupyter notebook: what ``rec`` shows as a cell's value (Qt-free).

The page is the one ``export --format html`` writes, put in an ``<iframe>`` by
its ``srcdoc`` (the whole page as an attribute, escaped), so its script and
style stay inside the frame: nothing of the notebook's page is styled or read,
and the frame's sandbox lets the script run but gives it no origin of its own.

>>> from app.core import load_builtin, record
>>> html = inline_player(record(load_builtin("two-losses")))
>>> html.startswith("<iframe"), "<script" in html, "&lt;script" in html
(True, False, True)
"""

from __future__ import annotations

import html

from app.core.model.recording import Recording
from app.render.layout import LayoutError
from app.render.web.page import player_html

__all__ = ["FRAME_HEIGHT_PX", "inline_player"]

FRAME_HEIGHT_PX = 640  # a notebook's output area is about as wide as a 1280-pixel page's middle


def inline_player(
    recording: Recording, height: int = FRAME_HEIGHT_PX, *, lines: tuple[int, int] | None = None
) -> str:
    """The player page of ``recording`` in an ``<iframe>``, as ``_repr_html_`` returns it
    (``lines``: the ``with lens.record()`` block's lines of its file, shown alone)."""
    try:
        page = player_html(recording, lines=lines)
    except LayoutError as exc:  # no Graphviz here: say so in the cell, as text
        return f"<pre>{html.escape(f'Autograd Lens cannot draw this recording: {exc}')}</pre>"
    title = html.escape(recording.program.title or recording.program.name, quote=True)
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" title="{title}" sandbox="allow-scripts" '
        f'style="width: 100%; height: {int(height)}px; border: 1px solid #ccc; border-radius: 4px;">'
        "</iframe>"
    )
