"""Scene items for nodes, saved-value boxes and proxies; restyled in place, never rebuilt.

An item computes its look on demand from the scene's shared :class:`StepLooks` (``state``,
``style``, ``lines`` read the step shown), and paints the look it was last restyled to:
``restyle`` brings it up to date, a no-op when nothing changed. Level of detail: text is
skipped when too small to read (a saved-value box then shows its state's glyph, as large as
the box allows: ● alive, ✕ freed...), and saved-value boxes are skipped altogether when the
view is zoomed far out.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from app.core.model.graph import Edge, GraphNode, SavedSlot
from app.core.model.timeline import SlotKey
from app.render.labels import node_lines, proxy_lines, slot_lines
from app.render.layout import Box
from app.render.qt.box_paint import (
    CENTRE,
    DASH,
    NO_BRUSH,
    NO_PEN,
    SELECT_MARGIN,
    box_look,
    centred,
    draw_line,
    glyph_font,
    paint_box,
)
from app.render.qt.fonts import (
    PAD_Y,
    Fonts,
    Role,
    Texts,
    growth,
    measure,
    node_roles,
    node_texts,
    proxy_texts,
    slot_texts,
    small_roles,
)
from app.render.qt.repaint import fade, repaint
from app.render.step_style import StepLooks
from app.render.style import SLOT_GLYPHS, BoxStyle, text_readable

__all__ = ["MIN_SLOT_LOD", "BoxItem", "NodeItem", "ProxyItem", "SlotItem"]

MIN_SLOT_LOD = 0.12  # below this zoom, saved-value boxes (and their lines) are not drawn at all
GLYPH_FILL = 0.9  # of a small box's height (width, if narrower; a two-line box's at most): its glyph


class BoxItem(QGraphicsItem):
    """A box centred on its layout position, drawing lines of text in a style.

    Subclasses say which look the step shown gives them (``look_now``), which text a look
    shows (``_lines_for``), in which font role each line is drawn (``_roles``), and every text
    the box may ever show (``_texts``), so the box is sized once for all of its states.
    """

    min_lod = 0.0  # zoom below which the item is not drawn at all

    def __init__(self, box: Box, looks: StepLooks) -> None:
        super().__init__()
        self.looks = looks
        self._origin = (box.x, box.y)
        self._base = (box.width, box.height)
        self._rect, self._bounds = centred(box.width, box.height)
        self._fonts: Fonts | None = None
        self._font_px = 1.0
        self._lines: tuple[str, ...] = ()
        self.setPos(box.x, box.y)
        self.setZValue(2)

    def _start(self) -> None:
        """Called by subclasses once their own fields are set: the look of the step shown."""
        self._state, self._style, self._note = self.look_now()  # _note: a line a state may add
        self._look = box_look(self._style)
        self._lines = self._lines_for(self._style.tag, self._note)

    # -- the step shown, computed when read (what is painted may wait: restyle_later.py's NOTE) --
    def look_now(self) -> tuple[str, BoxStyle, str]:
        """State, style and note at the step shown."""
        raise NotImplementedError

    @property
    def state(self) -> str:
        return self.look_now()[0]

    @property
    def style(self) -> BoxStyle:
        return self.look_now()[1]

    @property
    def note(self) -> str:
        return self.look_now()[2]

    @property
    def lines(self) -> tuple[str, ...]:
        _, style, note = self.look_now()
        return self._lines_for(style.tag, note)

    @property
    def painted_state(self) -> str:
        """The state painted now (a hidden item's restyle may wait: restyle_later.py's NOTE)."""
        return self._state

    @property
    def painted_opacity(self) -> float:
        """The opacity painted now (the painter's, as it paints: repaint.py's NOTE)."""
        return self._style.opacity

    @property
    def painted_lines(self) -> tuple[str, ...]:
        """The text painted now."""
        return self._lines

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def rect(self) -> QRectF:
        return QRectF(self._rect)

    @property
    def font_px(self) -> float:
        """The pixel size of its text in scene units (times the view's zoom: on screen)."""
        return self._font_px

    # -- what subclasses define ------------------------------------------
    def _lines_for(self, tag: str, note: str) -> tuple[str, ...]:
        raise NotImplementedError

    def _roles(self, count: int) -> tuple[Role, ...]:
        raise NotImplementedError

    def _texts(self) -> Texts:
        raise NotImplementedError

    # -- restyling -------------------------------------------------------
    def restyle(self) -> bool:
        """Paint the look of the step shown; False (nothing repainted) when unchanged."""
        return self.set_look(*self.look_now())

    def set_look(self, state: str, style: BoxStyle, note: str = "") -> bool:
        """Paint ``state`` in ``style`` (and ``note``); False (nothing repainted) when unchanged."""
        if state == self._state and style == self._style and note == self._note:
            return False
        self._state, self._style, self._note = state, style, note
        self._look = box_look(style)
        self._lines = self._lines_for(style.tag, note)
        repaint(self)  # NOTE [a restyle repaints without a walk]
        return True

    def set_fonts(self, fonts: Fonts, px: float) -> float:
        """Use ``fonts``; the box grows to fit its widest text. Returns the growth factor."""
        need_w, need_h = measure(fonts, self._base, self._texts())
        rect, bounds = centred(need_w, need_h)
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
        fade(painter, self._style.opacity)
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
            draw_line(painter, fonts, role, line, QRectF(left, y, width, height))
            y += height


class NodeItem(BoxItem):
    """A backward node (or a leaf's AccumulateGrad): name, label, state tag."""

    def __init__(self, node: GraphNode, box: Box, looks: StepLooks) -> None:
        super().__init__(box, looks)
        self.node = node
        self.node_id = node.id
        self.selected = False
        self._base_lines = node_lines(node)
        self._selection = QPen(QColor("#0072b2"), 3.0, DASH)
        self._start()

    def look_now(self) -> tuple[str, BoxStyle, str]:
        return (*self.looks.node(self.node_id), "")

    def _lines_for(self, tag: str, note: str) -> tuple[str, ...]:
        return (*self._base_lines, tag) if tag else self._base_lines

    def _roles(self, count: int) -> tuple[Role, ...]:
        return node_roles(len(self._base_lines), count)

    def _texts(self) -> Texts:
        return node_texts(self.node)

    def set_selected(self, on: bool, colour: str) -> None:
        self.selected = on
        self._selection = QPen(QColor(colour), 3.0, DASH)
        repaint(self)

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

    def __init__(self, node_id: str, slot: SavedSlot, box: Box, looks: StepLooks) -> None:
        super().__init__(box, looks)
        self.node_id = node_id
        self.slot = slot
        self.key: SlotKey = (node_id, slot.name)
        self._start()

    def look_now(self) -> tuple[str, BoxStyle, str]:
        return self.looks.slot(self.key)

    def _lines_for(self, tag: str, note: str) -> tuple[str, ...]:
        return slot_lines(self.slot, tag, note)

    def _roles(self, count: int) -> tuple[Role, ...]:
        return small_roles(count)

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
        painter.setFont(glyph_font(round(side)))
        painter.drawText(square, CENTRE, SLOT_GLYPHS.get(self._state, "?"))


class ProxyItem(BoxItem):
    """A small stand-in for a node at the far end of a long edge (see dot_source's NOTE [large graphs]).

    It mirrors the node's state (colour and dimming, dashed border); clicking it finds the node.
    """

    min_lod = MIN_SLOT_LOD

    def __init__(self, node: GraphNode, user: str, box: Box, looks: StepLooks) -> None:
        super().__init__(box, looks)
        self.node = node
        self.node_id = node.id
        self.user = user
        self.edge = Edge(user, node.id)  # the long edge it stands at, restyled with it
        self._start()

    def look_now(self) -> tuple[str, BoxStyle, str]:
        return (*self.looks.proxy(self.node_id), "")

    def _lines_for(self, tag: str, note: str) -> tuple[str, ...]:
        return proxy_lines(self.node)

    def _roles(self, count: int) -> tuple[Role, ...]:
        return small_roles(count)

    def _texts(self) -> Texts:
        return proxy_texts(self.node)
