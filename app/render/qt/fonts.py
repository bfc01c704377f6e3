"""Label fonts at one scale, and the text every box may show with the size it needs.

Text measurements are cached in :class:`Fonts` (one per distinct text), so sizing thousands of
boxes stays cheap: most boxes of a big graph show one of a few texts.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF, QStaticText, QTransform

from app.core.model.graph import GraphNode, SavedSlot
from app.render.labels import (
    FONT_FAMILY,
    NODE_FONT_PX,
    SLOT_FONT_PX,
    node_lines,
    proxy_lines,
    slot_lines,
    version_room,
)
from app.render.style import NODE_TAGS, slot_tags

__all__ = [
    "PAD_X",
    "PAD_Y",
    "Fonts",
    "Role",
    "Texts",
    "growth",
    "measure",
    "node_roles",
    "node_texts",
    "proxy_texts",
    "qfont",
    "slot_texts",
    "small_roles",
]

PAD_X = 10.0
PAD_Y = 5.0
STATIC_TEXTS_KEPT = 4096  # laid-out lines kept per font scale (most boxes show one of a few)
Role = Literal["node_head", "node_body", "slot_head", "slot_body"]
Texts = list[tuple[tuple[str, ...], tuple[Role, ...]]]  # every (lines, font roles) a box can show


def qfont(px: float, *, bold: bool) -> QFont:
    font = QFont(FONT_FAMILY)
    font.setStyleHint(QFont.StyleHint.SansSerif)
    font.setPixelSize(max(1, round(px)))
    font.setBold(bold)
    return font


class Fonts:
    """The four label fonts at one font scale, with cached text measurements."""

    def __init__(self, scale: float, *, bold_body: bool = False) -> None:
        self.node_px = NODE_FONT_PX * scale
        self.slot_px = SLOT_FONT_PX * scale
        self.fonts: dict[Role, QFont] = {
            "node_head": qfont(self.node_px, bold=True),
            "node_body": qfont(self.node_px, bold=bold_body),
            "slot_head": qfont(self.slot_px, bold=True),
            "slot_body": qfont(self.slot_px, bold=bold_body),
        }
        self._metrics = {role: QFontMetricsF(font) for role, font in self.fonts.items()}
        self._heights = {role: m.height() for role, m in self._metrics.items()}
        self._widths: dict[tuple[Role, str], float] = {}
        self._static: OrderedDict[tuple[Role, str], QStaticText] = OrderedDict()

    def width(self, role: Role, text: str) -> float:
        key = (role, text)
        if key not in self._widths:
            self._widths[key] = self._metrics[role].horizontalAdvance(text)
        return self._widths[key]

    def height(self, role: Role) -> float:
        return self._heights[role]

    def static_text(self, role: Role, text: str) -> QStaticText:
        """``text`` laid out once in the ``role``'s font, to be drawn again and again: a box's
        ``drawText`` laid its lines out anew at every paint (itemized, shaped, its glyphs looked up:
        ~47 us a line, against ~15 us for a laid-out line), and a step that moves the view paints
        dozens of them. The most recently drawn :data:`STATIC_TEXTS_KEPT` are kept."""
        key = (role, text)
        made = self._static.get(key)
        if made is not None:
            self._static.move_to_end(key)
            return made
        made = QStaticText(text)
        made.setTextFormat(Qt.TextFormat.PlainText)  # a name such as "<lambda>" is not markup
        made.prepare(QTransform(), self.fonts[role])
        self._static[key] = made
        if len(self._static) > STATIC_TEXTS_KEPT:
            self._static.popitem(last=False)
        return made


def node_roles(base: int, count: int) -> tuple[Role, ...]:
    """A node box's lines: its name bold, then its ``base - 1`` body lines, then its bold tag."""
    body: list[Role] = ["node_body"] * (base - 1)
    tag: list[Role] = ["node_head"] * (count - base)  # the state tag reads bold
    return ("node_head", *body, *tag)


def small_roles(count: int) -> tuple[Role, ...]:
    """A saved value's or a proxy's lines: the first bold."""
    body: list[Role] = ["slot_body"] * (count - 1)
    return ("slot_head", *body)


def node_texts(node: GraphNode) -> Texts:
    base = node_lines(node)
    return [((*base, tag), node_roles(len(base), len(base) + 1)) for tag in NODE_TAGS.values() if tag]


def slot_texts(slot: SavedSlot) -> Texts:
    variants = [slot_lines(slot, tag) for tag in slot_tags(slot.kind)]
    if slot.kind == "tensor":  # room for "saved at v0, now v1" (NOTE [gone]'s neighbour: versions)
        variants.append(slot_lines(slot, "", version_room(slot)))
    return [(lines, small_roles(len(lines))) for lines in variants]


def proxy_texts(node: GraphNode) -> Texts:
    lines = proxy_lines(node)
    return [(lines, small_roles(len(lines)))]


def measure(fonts: Fonts, base: tuple[float, float], texts: Texts) -> tuple[float, float]:
    """The size a box needs: its layout size, grown to fit every text it may show."""
    need_w, need_h = base
    for lines, roles in texts:
        widest = max(fonts.width(r, t) for r, t in zip(roles, lines, strict=True))
        need_w = max(need_w, widest + 2 * PAD_X)
        need_h = max(need_h, sum(fonts.height(r) for r in roles) + 2 * PAD_Y)
    return need_w, need_h


def growth(base: tuple[float, float], need: tuple[float, float]) -> float:
    return max(need[0] / max(base[0], 1.0), need[1] / max(base[1], 1.0))
