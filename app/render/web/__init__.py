"""The one-file HTML player: a recording stepped through in any browser, without Qt or a network.

``python -m app export SOURCE --format html --out lesson.html`` writes one, and a
notebook shows one inline (``app.lens``). See ``page.py``.
"""

from app.render.web.page import page_layout, player_html, write_player

__all__ = ["page_layout", "player_html", "write_player"]
