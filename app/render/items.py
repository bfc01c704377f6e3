"""Scene items for nodes, saved-value boxes and edges; restyled in place, never rebuilt.

Items share their Qt pens and brushes (one set per distinct style, cached)
and their text measurements (one per distinct text, cached in :class:`Fonts`),
so building thousands of items and restyling them stays cheap; ``set_look``
is a no-op when nothing changed. Level of detail: text is skipped when too
small to read (a saved-value box then shows its state's glyph, as large as the
box allows: ● alive, ✕ freed...), and saved-value boxes and their dotted lines
are skipped altogether when the view is zoomed far out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from app.core.model.graph import GraphNode, SavedSlot
from app.core.model.timeline import SlotKey
from app.render.dot_source import TITLE_ROOM
from app.render.labels import (
    FONT_FAMILY,
    NODE_FONT_PX,
    SLOT_FONT_PX,
    node_lines,
    proxy_lines,
    slot_lines,
    version_room,
)
from app.render.layout import Box, EdgePath
from app.render.style import NODE_TAGS, SLOT_GLYPHS, BoxStyle, EdgeStyle, slot_tags, text_readable

__all__ = [
    "MIN_SLOT_LOD",
    "BoxItem",
    "ClusterItem",
    "EdgeItem",
    "Fonts",
    "NodeItem",
    "ProxyItem",
    "SlotItem",
    "Texts",
    "growth",
    "measure",
    "node_texts",
    "paint_box",
    "proxy_texts",
    "qfont",
    "slot_texts",
]

PAD_X = 10.0
PAD_Y = 5.0
HATCH_STEP = 7.0
MAX_HATCH_LINES = 1000  # per box: a box's every paint makes them
SELECT_MARGIN = 6.0
MIN_SLOT_LOD = 0.12  # below this zoom, saved-value boxes (and their lines) are not drawn at all
CLUSTER_LABEL_PX = 16.0  # on screen: an iteration's label is never drawn smaller while it fits
CLUSTER_LABEL_ROOM = float(TITLE_ROOM)  # above a frame, for its label when zoomed out; no box is there
GLYPH_FILL = 0.9  # of a small box's height (width, if narrower; a two-line box's at most): its glyph
ARROW_HALF_WIDTH = 0.35  # of the arrowhead's length, as Graphviz draws it

# Enum members read once: attribute access on PySide6 enums is slow in hot paths.
SOLID, DASH, DOT = Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine
NO_PEN, NO_BRUSH = Qt.PenStyle.NoPen, Qt.BrushStyle.NoBrush
CENTRE = Qt.AlignmentFlag.AlignCenter
PEN_STYLES = {"solid": SOLID, "dash": DASH, "dot": DOT}
Role = Literal["node_head", "node_body", "slot_head", "slot_body"]


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

    def width(self, role: Role, text: str) -> float:
        key = (role, text)
        if key not in self._widths:
            self._widths[key] = self._metrics[role].horizontalAdvance(text)
        return self._widths[key]

    def height(self, role: Role) -> float:
        return self._heights[role]


# -- text a box may show, and the size it needs ---------------------------------
Texts = list[tuple[tuple[str, ...], tuple[Role, ...]]]  # every (lines, font roles) a box can show


def _node_roles(base: int, count: int) -> tuple[Role, ...]:
    body: list[Role] = ["node_body"] * (base - 1)
    tag: list[Role] = ["node_head"] * (count - base)  # the state tag reads bold
    return ("node_head", *body, *tag)


def _small_roles(count: int) -> tuple[Role, ...]:
    body: list[Role] = ["slot_body"] * (count - 1)
    return ("slot_head", *body)


def node_texts(node: GraphNode) -> Texts:
    base = node_lines(node)
    return [((*base, tag), _node_roles(len(base), len(base) + 1)) for tag in NODE_TAGS.values() if tag]


def slot_texts(slot: SavedSlot) -> Texts:
    variants = [slot_lines(slot, tag) for tag in slot_tags(slot.kind)]
    if slot.kind == "tensor":  # room for "saved at v0, now v1" (NOTE [gone]'s neighbour: versions)
        variants.append(slot_lines(slot, "", version_room(slot)))
    return [(lines, _small_roles(len(lines))) for lines in variants]


def proxy_texts(node: GraphNode) -> Texts:
    lines = proxy_lines(node)
    return [(lines, _small_roles(len(lines)))]


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


@dataclass(frozen=True)
class _Look:
    pen: QPen
    brush: QBrush
    hatch: QPen | None
    text: QColor


@lru_cache(maxsize=512)
def _look(style: BoxStyle) -> _Look:
    """Qt objects for a style, shared by every item in that style (never mutated)."""
    pen = QPen(QColor(style.border), style.border_width)
    pen.setStyle(PEN_STYLES[style.dash])
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    hatch = QPen(QColor(style.hatch), 1.0) if style.hatch else None
    return _Look(pen, QBrush(QColor(style.fill)), hatch, QColor(style.text))


@lru_cache(maxsize=256)
def _edge_look(style: EdgeStyle) -> tuple[QPen, QPen, QBrush]:
    pen = QPen(QColor(style.colour), style.width)
    pen.setStyle(PEN_STYLES[style.dash])
    arrow = QPen(pen)
    arrow.setStyle(SOLID)
    return pen, arrow, QBrush(QColor(style.colour))


def _hatch_lines(rect: QRectF) -> list[QLineF]:
    """Diagonal '/' lines filling ``rect`` without clipping (SVG export has no clip)."""
    w, h = rect.width(), rect.height()
    lines = []
    step = max(HATCH_STEP, (w + h) / MAX_HATCH_LINES)  # a huge box gets a coarser hatch, not millions
    c = step
    while c < w + h:
        top = QPointF(rect.left() + min(c, w), rect.top() + c - min(c, w))
        bottom = QPointF(rect.left() + c - min(c, h), rect.top() + min(c, h))
        lines.append(QLineF(top, bottom))
        c += step
    return lines


def paint_box(painter: QPainter, rect: QRectF, style: BoxStyle, look: _Look | None = None) -> None:
    """Fill, hatch and border of a box; shared by the scene items and the legend swatches."""
    look = look or _look(style)
    radius = min(8.0, rect.height() / 3) if style.rounded else 0.0
    painter.setPen(NO_PEN)
    painter.setBrush(look.brush)
    painter.drawRoundedRect(rect, radius, radius)
    if look.hatch is not None:
        painter.setPen(look.hatch)
        painter.drawLines(_hatch_lines(rect))
    painter.setPen(look.pen)
    painter.setBrush(NO_BRUSH)
    painter.drawRoundedRect(rect, radius, radius)


@lru_cache(maxsize=8192)
def _centred(width: float, height: float) -> tuple[QRectF, QRectF]:
    """A box's rectangle around its centre, and its bounds (room for the selection outline).

    Shared by every box of that size and never changed in place: most boxes of a big graph
    have one of a few sizes, and each Qt value object kept from Python is an entry in
    PySide's table of wrappers, which is rehashed on the GUI thread as it grows (a 5,000-node
    graph kept 50,000 such rectangles, one table rehash alone 40 ms).
    """
    rect = QRectF(-width / 2, -height / 2, width, height)
    grow = SELECT_MARGIN + 4
    return rect, rect.adjusted(-grow, -grow, grow, grow)


@lru_cache(maxsize=64)
def _glyph_font(px: int) -> QFont:
    """The font of a state glyph ``px`` scene units tall (a few box heights: a few fonts)."""
    return qfont(px, bold=False)


class BoxItem(QGraphicsItem):
    """A box centred on its layout position, drawing lines of text in a style.

    Subclasses say which text a state shows (``_lines_for``), in which font
    role each line is drawn (``_roles``), and every text the box may ever show
    (``_texts``), so the box is sized once for all of its states.
    """

    min_lod = 0.0  # zoom below which the item is not drawn at all

    def __init__(self, box: Box, state: str, style: BoxStyle) -> None:
        super().__init__()
        self._origin = (box.x, box.y)
        self._base = (box.width, box.height)
        self._rect, self._bounds = _centred(box.width, box.height)
        self._fonts: Fonts | None = None
        self._font_px = 1.0
        self._state = state
        self._style = style
        self._note = ""  # a line a state may add (a saved slot's versions)
        self._look = _look(style)
        self._lines: tuple[str, ...] = ()
        self.setPos(box.x, box.y)
        self.setZValue(2)
        if style.opacity != 1.0:
            self.setOpacity(style.opacity)

    def _start(self) -> None:
        """Called by subclasses once their own fields are set."""
        self._lines = self._lines_for(self._style.tag)

    # -- what tests and views read (brought up to date first if a restyle was put off) --
    @property
    def state(self) -> str:
        _freshen(self)
        return self._state

    @property
    def style(self) -> BoxStyle:
        _freshen(self)
        return self._style

    @property
    def lines(self) -> tuple[str, ...]:
        _freshen(self)
        return self._lines

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def note(self) -> str:
        _freshen(self)
        return self._note

    def rect(self) -> QRectF:
        return QRectF(self._rect)

    @property
    def font_px(self) -> float:
        """The pixel size of its text in scene units (times the view's zoom: on screen)."""
        return self._font_px

    # -- what subclasses define ------------------------------------------
    def _lines_for(self, tag: str) -> tuple[str, ...]:
        raise NotImplementedError

    def _roles(self, count: int) -> tuple[Role, ...]:
        raise NotImplementedError

    def _texts(self) -> Texts:
        raise NotImplementedError

    # -- restyling -------------------------------------------------------
    def set_look(self, state: str, style: BoxStyle, note: str = "") -> bool:
        """Show ``state`` in ``style`` (and ``note``); False (nothing repainted) when unchanged."""
        if state == self._state and style == self._style and note == self._note:
            return False
        self._state, self._style, self._note = state, style, note
        self._look = _look(style)
        self._lines = self._lines_for(style.tag)
        self.setOpacity(style.opacity)
        self.update()
        return True

    def set_fonts(self, fonts: Fonts, px: float) -> float:
        """Use ``fonts``; the box grows to fit its widest text. Returns the growth factor."""
        need_w, need_h = measure(fonts, self._base, self._texts())
        rect, bounds = _centred(need_w, need_h)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect, self._bounds = rect, bounds
        self._font_px = px
        self._fonts = fonts
        return growth(self._base, (need_w, need_h))

    def place(self, spread: float) -> None:
        """Sit at the layout position scaled by ``spread`` (see ``GraphScene._apply_fonts``)."""
        self.setPos(self._origin[0] * spread, self._origin[1] * spread)

    # -- painting --------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return self._bounds  # asked for thousands of times per frame: made once per size

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        if lod < self.min_lod:
            return
        paint_box(painter, self._rect, self._style, self._look)
        if self._fonts is None:
            return
        if text_readable(lod, self._font_px):
            self._paint_text(painter, self._fonts)
        else:
            self._paint_small(painter)

    def _paint_small(self, painter: QPainter) -> None:
        """What the box draws instead of its text when the text is too small to read: nothing."""

    def _paint_text(self, painter: QPainter, fonts: Fonts) -> None:
        roles = self._roles(len(self._lines))
        heights = [fonts.height(r) for r in roles]
        y = -sum(heights) / 2
        if self._look.hatch is not None:  # a plate under the text keeps it readable over the hatch
            plate = max(fonts.width(r, t) for r, t in zip(roles, self._lines, strict=True))
            painter.setPen(NO_PEN)
            painter.setBrush(self._look.brush)
            painter.drawRect(QRectF(-plate / 2 - 3, y, plate + 6, sum(heights)))
        painter.setPen(self._look.text)
        left, width = self._rect.left(), self._rect.width()
        for line, role, height in zip(self._lines, roles, heights, strict=True):
            painter.setFont(fonts.fonts[role])
            painter.drawText(QRectF(left, y, width, height), CENTRE, line)
            y += height


class NodeItem(BoxItem):
    """A backward node (or a leaf's AccumulateGrad): name, label, state tag."""

    def __init__(self, node: GraphNode, box: Box, state: str, style: BoxStyle) -> None:
        super().__init__(box, state, style)
        self.node = node
        self.node_id = node.id
        self.selected = False
        self._base_lines = node_lines(node)
        self._selection = QPen(QColor("#0072b2"), 3.0, DASH)
        self._start()

    def _lines_for(self, tag: str) -> tuple[str, ...]:
        return (*self._base_lines, tag) if tag else self._base_lines

    def _roles(self, count: int) -> tuple[Role, ...]:
        return _node_roles(len(self._base_lines), count)

    def _texts(self) -> Texts:
        return node_texts(self.node)

    def set_selected(self, on: bool, colour: str) -> None:
        self.selected = on
        self._selection = QPen(QColor(colour), 3.0, DASH)
        self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        super().paint(painter, option, widget)
        if self.selected:
            painter.setPen(self._selection)
            painter.setBrush(NO_BRUSH)
            m = SELECT_MARGIN
            painter.drawRect(self._rect.adjusted(-m, -m, m, m))


class SlotItem(BoxItem):
    """One saved value of a node: ``self ● alive`` over ``(2,) float32 · 8 B``."""

    min_lod = MIN_SLOT_LOD

    def __init__(self, node_id: str, slot: SavedSlot, box: Box, state: str, style: BoxStyle) -> None:
        super().__init__(box, state, style)
        self.node_id = node_id
        self.slot = slot
        self.key: SlotKey = (node_id, slot.name)
        self._start()

    def _lines_for(self, tag: str) -> tuple[str, ...]:
        return slot_lines(self.slot, tag, self._note)

    def _roles(self, count: int) -> tuple[Role, ...]:
        return _small_roles(count)

    def _texts(self) -> Texts:
        return slot_texts(self.slot)

    def _paint_small(self, painter: QPainter) -> None:
        """The state's glyph centred in the box, in the text colour, on a plate over a hatch."""
        rect, fonts = self._rect, self._fonts
        usual = 2 * fonts.height("slot_head") + 2 * PAD_Y if fonts else rect.height()  # a 2-line box
        side = GLYPH_FILL * min(rect.height(), rect.width(), usual)  # a tall values box: no giant glyph
        square = QRectF(-side / 2, -side / 2, side, side)
        if self._look.hatch is not None:
            painter.setPen(NO_PEN)
            painter.setBrush(self._look.brush)
            painter.drawRect(square)
        painter.setPen(self._look.text)
        painter.setFont(_glyph_font(round(side)))
        painter.drawText(square, CENTRE, SLOT_GLYPHS.get(self._state, "?"))


class ProxyItem(BoxItem):
    """A small stand-in for a node at the far end of a long edge (see dot_source's NOTE [large graphs]).

    It mirrors the node's state (colour and dimming, dashed border); clicking it finds the node.
    """

    min_lod = MIN_SLOT_LOD

    def __init__(self, node: GraphNode, user: str, box: Box, state: str, style: BoxStyle) -> None:
        super().__init__(box, state, style)
        self.node = node
        self.node_id = node.id
        self.user = user
        self._start()

    def _lines_for(self, tag: str) -> tuple[str, ...]:
        return proxy_lines(self.node)

    def _roles(self, count: int) -> tuple[Role, ...]:
        return _small_roles(count)

    def _texts(self) -> Texts:
        return proxy_texts(self.node)


class ClusterItem(QGraphicsItem):
    """The frame around one loop iteration's nodes (dot_source's NOTE [iteration clusters]), under
    every box and arrow, its label at the top left; a step only shows, fades or dims it."""

    def __init__(self, name: str, label: str, box: Box, state: str, style: BoxStyle) -> None:
        super().__init__()
        self.name = name
        self.label = label
        self.module: str | None = None  # the module group's name, when the frame is a module's
        self._box = box
        self._rect = QRectF()
        self._fonts: Fonts | None = None
        self.state = state
        self.style = style
        self.setZValue(-1)
        self.place(1.0)
        self.setOpacity(style.opacity)

    def set_look(self, state: str, style: BoxStyle) -> bool:
        if state == self.state and style == self.style:
            return False
        self.state, self.style = state, style
        self.setOpacity(style.opacity)
        self.update()
        return True

    def set_fonts(self, fonts: Fonts) -> None:
        self._fonts = fonts
        self.update()

    def place(self, spread: float) -> None:
        """The frame around the layout's box, scaled by ``spread`` as the boxes inside it are."""
        b = self._box
        rect = QRectF(
            (b.x - b.width / 2) * spread, (b.y - b.height / 2) * spread, b.width * spread, b.height * spread
        )
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect

    def rect(self) -> QRectF:
        return QRectF(self._rect)

    @property
    def frame_rect(self) -> QRectF:
        """The frame's rectangle in scene units, shared (never change it in place)."""
        return self._rect

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-4, -CLUSTER_LABEL_ROOM, 4, 4)

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        paint_box(painter, self._rect, self.style)
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        if self._fonts is not None and lod > 0:
            self._paint_label(painter, self._fonts, lod)

    def _paint_label(self, painter: QPainter, fonts: Fonts, lod: float) -> None:
        """The label in the room Graphviz left at the frame's top; zoomed out (a whole loop on a
        projector), above the frame at a size the room can read, since the boxes are unreadable then."""
        inside = fonts.slot_px * lod >= CLUSTER_LABEL_PX
        px = fonts.slot_px if inside else min(CLUSTER_LABEL_PX / lod, CLUSTER_LABEL_ROOM * 0.75)
        if not text_readable(lod, px):
            return
        font = _label_font(round(px))
        height = QFontMetricsF(font).height()
        width = self._rect.width() - (2 * PAD_X if inside else 0)
        top = self._rect.top() + 2 if inside else self._rect.top() - height - 2
        text = QFontMetricsF(font).elidedText(self.label, Qt.TextElideMode.ElideRight, width)
        painter.setPen(QColor(self.style.text))
        painter.setFont(font)
        left = self._rect.left() + (PAD_X if inside else 0)
        painter.drawText(QRectF(left, top, width, height), Qt.AlignmentFlag.AlignLeft, text)


@lru_cache(maxsize=64)
def _label_font(px: int) -> QFont:
    return qfont(px, bold=True)


def _freshen(item: BoxItem | EdgeItem) -> None:
    """Restyle ``item`` now if its scene put that off while it was hidden (scene.py's NOTE
    [restyle what is seen]); hidden items are not painted, so only reads need this."""
    scene = item.scene()
    is_stale = getattr(scene, "is_stale", None)
    if is_stale is not None and is_stale(item):
        scene.refresh_item(item)  # type: ignore[union-attr, attr-defined]


def _spline_path(points: Sequence[tuple[float, float]]) -> QPainterPath:
    path = QPainterPath(QPointF(*points[0]))
    for i in range(1, len(points) - 2, 3):
        path.cubicTo(QPointF(*points[i]), QPointF(*points[i + 1]), QPointF(*points[i + 2]))
    return path


def _arrowhead(base: tuple[float, float], tip: tuple[float, float]) -> tuple[tuple[float, float], ...]:
    """The arrowhead's three corners: its tip and the two ends of its base (as Graphviz draws it)."""
    (tx, ty), (bx, by) = tip, base
    # the base line's normal, as long as ARROW_HALF_WIDTH of the arrow (QLineF.normalVector's turn)
    nx, ny = (by - ty) * ARROW_HALF_WIDTH, -(bx - tx) * ARROW_HALF_WIDTH
    return (tip, (bx + nx, by + ny), (bx - nx, by - ny))


# NOTE [long edges]
# A leaf used by every iteration of a loop (a model's weight) has an edge to each of them, and
# each edge runs across the graph. Zoomed in, every such edge meets the view, and Qt strokes all
# of its length to draw the few pixels shown: stepping a 200-iteration loop at a readable zoom
# painted ~270 edges a step, a full frame 162 ms. A solid edge of more than LONG_EDGE_POINTS
# points that the repainted area does not hold whole draws only its Bezier pieces whose hulls
# meet that area (a full frame: 18-55 ms). A dashed one is drawn whole: started part way, its
# dashes are out of phase with the whole path's (Qt's dasher measures the flattened curve, not
# its true length) and would shift as the view pans.
LONG_EDGE_POINTS = 7  # two Bezier pieces: shorter edges are drawn whole


class EdgeItem(QGraphicsItem):
    """A Graphviz spline with an arrowhead (between nodes) or dotted (to a saved value).

    The Qt path and polygon are made at the first paint: a fitted 5,000-node graph paints no edge
    items (NOTE [overview] in scene.py), and every Qt object kept from Python is an entry in PySide's
    table of wrappers, rehashed on the GUI thread as it grows (items.py's ``_centred``).
    """

    def __init__(self, path: EdgePath, state: str, style: EdgeStyle, *, to_slot: bool = False) -> None:
        super().__init__()
        self._points = path.points or ((0.0, 0.0),)
        self._corners = _arrowhead(self._points[-1], path.arrow) if path.arrow else None
        self._path: QPainterPath | None = None
        self._arrow: QPolygonF | None = None
        self._pieces: list[tuple[QRectF, QPainterPath]] | None = None  # NOTE [long edges]
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)  # the exposed rect
        # a Bezier curve lies within the hull of its control points: their box bounds the curve
        every = (*self._points, *(self._corners or ()))
        xs, ys = [x for x, _ in every], [y for _, y in every]
        left, top = min(xs) - 8, min(ys) - 8
        self._bounds = QRectF(left, top, max(xs) + 8 - left, max(ys) + 8 - top)
        self.min_lod = MIN_SLOT_LOD if to_slot else 0.0
        self.key: object = None  # what the scene files it under (its Edge, or a slot's key)
        self._state = state
        self._style = style
        self._pen, self._arrow_pen, self._brush = _edge_look(style)
        if style.opacity != 1.0:
            self.setOpacity(style.opacity)

    @property
    def has_arrow(self) -> bool:
        return self._corners is not None

    @property
    def state(self) -> str:
        _freshen(self)
        return self._state

    @property
    def style(self) -> EdgeStyle:
        _freshen(self)
        return self._style

    def set_look(self, state: str, style: EdgeStyle) -> bool:
        if state == self._state and style == self._style:
            return False
        self._state, self._style = state, style
        self._pen, self._arrow_pen, self._brush = _edge_look(style)
        self.setOpacity(style.opacity)
        self.update()
        return True

    def boundingRect(self) -> QRectF:
        return self._bounds

    @property
    def _long(self) -> bool:
        return len(self._points) > LONG_EDGE_POINTS and self._pen.style() == SOLID

    def _visible_runs(self, exposed: QRectF) -> list[QPainterPath]:
        """The runs of this spline's Bezier pieces whose hulls meet ``exposed`` (item units)."""
        if self._pieces is None:
            pieces = [_spline_path(self._points[i : i + 4]) for i in range(0, len(self._points) - 3, 3)]
            self._pieces = [(piece.controlPointRect(), piece) for piece in pieces]
        margin = self._pen.widthF() + 1.0
        seen = exposed.adjusted(-margin, -margin, margin, margin)
        runs: list[QPainterPath] = []
        joined = False  # whether the last piece is in the last run
        for hull, piece in self._pieces:
            if not seen.intersects(hull):
                joined = False
            elif joined:
                runs[-1].connectPath(piece)
            else:
                runs.append(QPainterPath(piece))
                joined = True
        return runs

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if (
            self.min_lod
            and QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform()) < self.min_lod
        ):
            return
        if self._path is None:
            self._path = _spline_path(self._points)
            if self._corners is not None:
                self._arrow = QPolygonF([QPointF(x, y) for x, y in self._corners])
        painter.setPen(self._pen)
        painter.setBrush(NO_BRUSH)
        exposed = option.exposedRect  # type: ignore[attr-defined]
        if self._long and not exposed.contains(self._bounds):  # NOTE [long edges]
            for run in self._visible_runs(exposed):
                painter.drawPath(run)
        else:
            painter.drawPath(self._path)
        if self._arrow is not None and exposed.intersects(self._arrow.boundingRect()):
            painter.setPen(self._arrow_pen)
            painter.setBrush(self._brush)
            painter.drawPolygon(self._arrow)
