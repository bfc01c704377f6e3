"""What each drawn box, frame and edge looks like at the step shown, in the palette chosen (Qt-free).

One :class:`StepLooks` is shared by a scene and all of its items: the scene moves it to a step
(``state``) or a palette, and an item asks it for its own look when it is restyled or read, so
an item's state is computed on demand from the recording, never kept up to date by callbacks.

>>> from app.render.style import PALETTES, node_style
>>> style = proxy_style(node_style("op", "running", PALETTES["light"]))
>>> style.dash, style.tag
('dash', '')
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from app.core.model.graph import Edge
from app.core.model.timeline import SlotKey, StepState
from app.render.states import DrawnStates
from app.render.style import (
    BoxStyle,
    ClusterState,
    EdgeState,
    EdgeStyle,
    NodeKind,
    NodeState,
    Palette,
    SlotShow,
    cluster_style,
    dot_colour,
    edge_style,
    faded,
    node_style,
    slot_style,
)

__all__ = ["StepLooks", "proxy_style"]


@lru_cache(maxsize=256)  # a few styles a palette; a weight's proxies ask it at every step of it
def proxy_style(style: BoxStyle) -> BoxStyle:
    """A proxy looks like its node (fill, dimming) with a dashed border and no tag."""
    return replace(style, dash="dash", tag="", border_width=min(style.border_width, 2.0))


class StepLooks:
    """The look of every drawn thing of ``drawn`` at step ``state`` (None: before any step, all
    hidden) in ``palette``. Each method is a few dictionary lookups: asked per changed item."""

    def __init__(self, drawn: DrawnStates, palette: Palette, state: StepState | None = None) -> None:
        self.drawn = drawn
        self.state = state
        self._palette = palette
        self._dots: dict[tuple[NodeKind, NodeState], str] = {}  # a call's end recolours every dot

    @property
    def palette(self) -> Palette:
        return self._palette

    @palette.setter
    def palette(self, palette: Palette) -> None:
        self._palette = palette
        self._dots.clear()

    def node_state(self, node_id: str) -> NodeState:
        return "hidden" if self.state is None else self.drawn.node_state(self.state, node_id)

    def node(self, node_id: str) -> tuple[NodeState, BoxStyle]:
        """A node's state and style; a collapsed module's box has round corners."""
        state = self.node_state(node_id)
        style = node_style(self.drawn.kinds[node_id], state, self._palette)
        return state, replace(style, rounded=True) if self.drawn.folded.is_box(node_id) else style

    def proxy(self, node_id: str) -> tuple[NodeState, BoxStyle]:
        """A stand-in of ``node_id`` at a long edge's end: its node's state, :func:`proxy_style`."""
        state, style = self.node(node_id)
        return state, proxy_style(style)

    def slot(self, key: SlotKey) -> tuple[SlotShow, BoxStyle, str]:
        """A saved value's state, its style (faded with a gone node) and its version note."""
        if self.state is None:
            return "hidden", slot_style("hidden", self._palette), ""
        state = self.drawn.slot_state(self.state, key)
        style = slot_style(state, self._palette)
        if self.drawn.is_gone(self.state, key[0]):
            style = faded(style, self._palette)
        return state, style, self.drawn.version_note(self.state, key)

    def slot_line(self, key: SlotKey, shown: SlotShow | None = None) -> tuple[EdgeState, EdgeStyle]:
        """The dotted line from a node to its saved value ``key`` (``shown``: the value's state,
        when already known)."""
        shown = self.slot(key)[0] if shown is None else shown
        if shown == "hidden":
            state: EdgeState = "hidden"
        else:
            gone = self.state is not None and self.drawn.is_gone(self.state, key[0])
            state = "gone" if gone else "normal"
        return state, edge_style(state, self._palette, slot_edge=True)

    def edge(self, edge: Edge) -> tuple[EdgeState, EdgeStyle]:
        state: EdgeState = "hidden" if self.state is None else self.drawn.edge_state(self.state, edge)
        return state, edge_style(state, self._palette)

    def cluster(self, name: str) -> tuple[ClusterState, BoxStyle]:
        state: ClusterState = "hidden" if self.state is None else self.drawn.cluster_state(self.state, name)
        return state, cluster_style(state, self._palette)

    def dot(self, node_id: str, state: NodeState | None = None) -> str:
        """The colour of ``node_id``'s dot where the graph is drawn as dots (``state``: its state
        at this step, when already known)."""
        key = (self.drawn.kinds[node_id], self.node_state(node_id) if state is None else state)
        colour = self._dots.get(key)
        if colour is None:
            colour = self._dots[key] = dot_colour(key[0], key[1], self._palette)
        return colour
