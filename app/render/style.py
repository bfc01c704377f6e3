"""Colours, line styles and text tags for every state the graph can show (Qt-free).

The view (``app.ui.graph.graph_view``), the headless export and the legend all ask
the same pure functions here, so a state looks the same everywhere.

# NOTE [state is never colour alone]
Every state carries a text tag (``● alive``, ``✕ freed``, ``▶ running``...)
and most carry a pattern too (dashed border and diagonal hatch for freed,
thick border for running/failed), so a washed-out projector or colour-blind
eyes still read it. State colours follow the Okabe-Ito colour-blind-safe set.

# NOTE [gone]
A node nothing the program holds reaches any more (``StepState.gone``) keeps
its place, faded less than a node not built yet and with a dashed border and
the ``⊘ gone`` tag, so the room sees what a re-binding let go; its saved
values and arrows fade with it (``faded``). A projector keeps it at higher
opacity, where pale greys wash out.

>>> slot_style("freed", PALETTES["light"]).tag
'✕ freed'
>>> slot_style("freed", PALETTES["light"]).hatch is not None
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Literal

__all__ = [
    "DEFAULT_PALETTE",
    "LEGEND",
    "NODE_TAGS",
    "PALETTES",
    "SLOT_GLYPHS",
    "SLOT_TAGS",
    "BoxStyle",
    "ClusterState",
    "EdgeState",
    "EdgeStyle",
    "LegendEntry",
    "NodeKind",
    "NodeState",
    "Palette",
    "SlotShow",
    "Swatch",
    "cluster_style",
    "dot_colour",
    "edge_style",
    "faded",
    "node_style",
    "slot_style",
    "slot_tags",
    "text_readable",
]

NodeKind = Literal["op", "leaf", "root"]  # backward node, leaf's AccumulateGrad, a loss's grad_fn
NodeState = Literal["idle", "running", "done", "failed", "hidden", "gone"]
SlotShow = Literal["alive", "retained", "freed", "modified", "value", "unknown", "hidden"]
EdgeState = Literal["normal", "flow", "hidden", "gone"]
ClusterState = Literal["normal", "hidden", "gone"]  # a loop iteration's frame
Dash = Literal["solid", "dash", "dot"]

SLOT_TAGS: dict[str, str] = {
    "alive": "● alive",
    "retained": "◆ retained",
    "freed": "✕ freed",
    "modified": "⚠ modified",
    "value": "▪ value",
    "unknown": "? unknown",
    "hidden": "◌ later",
}
# a saved-value box too small for its text draws only its state's glyph, as large as it fits
SLOT_GLYPHS: dict[str, str] = {state: tag.split(" ", 1)[0] for state, tag in SLOT_TAGS.items()}
NODE_TAGS: dict[str, str] = {
    "idle": "",
    "running": "▶ running",
    "done": "✓ ran",
    "failed": "✖ failed",
    "hidden": "◌ not built yet",
    "gone": "⊘ gone",
}
MIN_READABLE_PX = 5.0  # text smaller than this on screen is not drawn (level of detail)


@dataclass(frozen=True)
class Swatch:
    fill: str
    border: str


@dataclass(frozen=True)
class Palette:
    """Every colour a drawing uses (``#rrggbb``), plus line widths and a text scale."""

    name: str
    background: str
    text: str
    edge: str
    selection: str
    op: Swatch
    leaf: Swatch
    root: Swatch
    alive: Swatch
    retained: Swatch
    freed: Swatch
    modified: Swatch
    value: Swatch
    unknown: Swatch
    running: Swatch
    failed: Swatch
    done: Swatch
    hatch: str
    cluster: Swatch = Swatch("#f2f5f9", "#8a97a6")  # the frame around one loop iteration's nodes
    hidden_opacity: float = 0.22
    gone_opacity: float = 0.45  # NOTE [gone]
    line_width: float = 1.2
    bold_width: float = 3.5
    text_scale: float = 1.0
    bold_text: bool = False


LIGHT = Palette(
    name="light",
    background="#ffffff",
    text="#1a1a1a",
    edge="#4d4d4d",
    selection="#0072b2",
    op=Swatch("#d3d3d3", "#4d4d4d"),  # torchviz: lightgrey grad_fn boxes
    leaf=Swatch("#add8e6", "#2f5f73"),  # torchviz: lightblue leaves
    root=Swatch("#caff70", "#4f6b1f"),  # torchviz: darkolivegreen1 outputs
    alive=Swatch("#ffc94d", "#9a6200"),
    retained=Swatch("#8fdcc0", "#00664a"),
    freed=Swatch("#f4f4f4", "#5c5c5c"),
    modified=Swatch("#f2bedb", "#8a2f64"),
    value=Swatch("#f7f7f2", "#8c8c8c"),
    unknown=Swatch("#e6e6e6", "#8c8c8c"),
    running=Swatch("#fff4b8", "#0057a8"),
    failed=Swatch("#ffd0d0", "#d00000"),
    done=Swatch("#d3d3d3", "#3b6ea5"),
    hatch="#9a9a9a",
)

DARK = Palette(
    name="dark",
    background="#1e1f22",
    text="#ececec",
    edge="#a8a8a8",
    selection="#56b4e9",
    op=Swatch("#3b3e44", "#9a9a9a"),
    leaf=Swatch("#1f4e66", "#7cc4e6"),
    root=Swatch("#3c5a1c", "#a9e05a"),
    alive=Swatch("#7a5200", "#f0b323"),
    retained=Swatch("#00563f", "#3fe0aa"),
    freed=Swatch("#26272b", "#9a9a9a"),
    modified=Swatch("#5c2a48", "#e58fc3"),
    value=Swatch("#2c2d31", "#8a8a8a"),
    unknown=Swatch("#333438", "#8a8a8a"),
    running=Swatch("#4a4213", "#56b4e9"),
    failed=Swatch("#5e1a1a", "#ff5c5c"),
    done=Swatch("#3b3e44", "#7fa8d6"),
    hatch="#77787c",
    cluster=Swatch("#26282d", "#6f7a86"),
    gone_opacity=0.5,
)

# Washed-out projectors lose pale colours and thin lines: pure white and black,
# saturated fills, thick strokes, bigger bold text.
PROJECTOR = Palette(
    name="projector",
    background="#ffffff",
    text="#000000",
    edge="#000000",
    selection="#0040ff",
    op=Swatch("#d9d9d9", "#000000"),
    leaf=Swatch("#8ccfff", "#000000"),
    root=Swatch("#b5f55a", "#000000"),
    alive=Swatch("#ffb000", "#000000"),
    retained=Swatch("#00c48c", "#000000"),
    freed=Swatch("#ffffff", "#000000"),
    modified=Swatch("#ff6ec7", "#000000"),
    value=Swatch("#ffffff", "#000000"),
    unknown=Swatch("#e0e0e0", "#000000"),
    running=Swatch("#fff06a", "#0030e0"),
    failed=Swatch("#ffb3b3", "#e00000"),
    done=Swatch("#d9d9d9", "#0030e0"),
    hatch="#000000",
    cluster=Swatch("#f0f0f0", "#000000"),
    hidden_opacity=0.18,
    gone_opacity=0.6,
    line_width=2.5,
    bold_width=6.0,
    text_scale=1.25,
    bold_text=True,
)

PALETTES: dict[str, Palette] = {p.name: p for p in (LIGHT, DARK, PROJECTOR)}
DEFAULT_PALETTE = "light"


@dataclass(frozen=True)
class BoxStyle:
    """How one node or slot box is drawn in one state."""

    fill: str
    border: str
    border_width: float
    dash: Dash
    text: str
    tag: str
    hatch: str | None = None  # diagonal lines in this colour over the fill
    opacity: float = 1.0
    rounded: bool = False


@dataclass(frozen=True)
class EdgeStyle:
    colour: str
    width: float
    dash: Dash
    opacity: float = 1.0


def _kind_swatch(kind: NodeKind, palette: Palette) -> Swatch:
    return {"op": palette.op, "leaf": palette.leaf, "root": palette.root}[kind]


@functools.cache  # a pure function of three small values, asked for every node of a step
def node_style(kind: NodeKind, state: NodeState, palette: Palette) -> BoxStyle:
    """Style of a graph node: fill by kind (as torchviz), border and tag by state.

    >>> node_style("op", "failed", PALETTES["light"]).tag
    '✖ failed'
    """
    base = _kind_swatch(kind, palette)
    tag = NODE_TAGS[state]
    if state == "running":
        return BoxStyle(
            palette.running.fill, palette.running.border, palette.bold_width, "solid", palette.text, tag
        )
    if state == "failed":
        return BoxStyle(
            palette.failed.fill, palette.failed.border, palette.bold_width, "solid", palette.text, tag
        )
    if state == "done":
        return BoxStyle(base.fill, palette.done.border, palette.line_width * 1.5, "solid", palette.text, tag)
    if state == "hidden":
        return BoxStyle(
            base.fill,
            base.border,
            palette.line_width,
            "dash",
            palette.text,
            tag,
            opacity=palette.hidden_opacity,
        )
    if state == "gone":
        sw = palette.freed
        return BoxStyle(
            sw.fill,
            sw.border,
            palette.line_width * 1.5,
            "dash",
            palette.text,
            tag,
            opacity=palette.gone_opacity,
        )
    return BoxStyle(base.fill, base.border, palette.line_width, "solid", palette.text, tag)


@functools.cache
def dot_colour(kind: NodeKind, state: NodeState, palette: Palette) -> str:
    """A node's colour where the graph is drawn as dots (the overview, a file's preview): its
    fill, or its border where the fill is the background's (NOTE [gone]: a gone node too).

    >>> dot_colour("op", "failed", PALETTES["light"]) == PALETTES["light"].failed.fill
    True
    """
    style = node_style(kind, state, palette)
    pale = style.fill.lower() == palette.background.lower() or state == "gone"
    return style.border if pale else style.fill


def slot_style(state: SlotShow, palette: Palette) -> BoxStyle:
    """Style of a saved-value box (tensor or non-tensor) in one state."""
    tag = SLOT_TAGS[state]
    width = palette.line_width
    if state == "hidden":
        sw = palette.unknown
        return BoxStyle(sw.fill, sw.border, width, "dash", palette.text, tag, opacity=palette.hidden_opacity)
    if state == "freed":
        sw = palette.freed
        return BoxStyle(sw.fill, sw.border, width * 1.5, "dash", palette.text, tag, hatch=palette.hatch)
    if state == "modified":
        sw = palette.modified
        return BoxStyle(sw.fill, sw.border, width * 2, "dot", palette.text, tag)
    if state == "value":
        sw = palette.value
        return BoxStyle(sw.fill, sw.border, width, "solid", palette.text, tag, rounded=True)
    sw = {"alive": palette.alive, "retained": palette.retained, "unknown": palette.unknown}[state]
    return BoxStyle(sw.fill, sw.border, width * (2 if state == "retained" else 1), "solid", palette.text, tag)


def faded(style: BoxStyle, palette: Palette) -> BoxStyle:
    """A saved value of a gone node: its recorded state, dashed and faded with the node (NOTE [gone])."""
    if style.opacity < 1.0:
        return style  # already dimmer (not built yet)
    return replace(style, dash="dash", opacity=palette.gone_opacity)


@functools.cache  # asked for every frame at every step
def cluster_style(state: ClusterState, palette: Palette) -> BoxStyle:
    """The frame around one loop iteration's nodes: faint before they are built, faded once all are gone."""
    opacity = {"normal": 1.0, "hidden": palette.hidden_opacity, "gone": palette.gone_opacity}[state]
    sw = palette.cluster
    return BoxStyle(
        sw.fill, sw.border, palette.line_width, "dash", palette.text, "", opacity=opacity, rounded=True
    )


def slot_tags(kind: str) -> tuple[str, ...]:
    """Every tag a slot of ``kind`` (``tensor`` or ``value``) can show; sizes its box."""
    states = ("value", "hidden") if kind == "value" else tuple(k for k in SLOT_TAGS if k != "value")
    return tuple(SLOT_TAGS[s] for s in states)


def edge_style(state: EdgeState, palette: Palette, *, slot_edge: bool = False) -> EdgeStyle:
    """Arrows between nodes; dotted lines from a node to its saved values."""
    dash: Dash = "dot" if slot_edge else "solid"
    if state == "hidden":
        return EdgeStyle(palette.edge, palette.line_width, "dash", palette.hidden_opacity)
    if state == "gone":
        return EdgeStyle(palette.edge, palette.line_width, "dash", palette.gone_opacity)
    if state == "flow":
        return EdgeStyle(palette.running.border, palette.bold_width * 0.8, dash)
    return EdgeStyle(palette.edge, palette.line_width, dash)


def text_readable(scale: float, font_px: float) -> bool:
    """Whether text of ``font_px`` scene units is worth drawing at view ``scale``."""
    return scale * font_px >= MIN_READABLE_PX


@dataclass(frozen=True)
class LegendEntry:
    state: str
    box: Literal["slot", "node"]
    meaning: str

    @property
    def tag(self) -> str:
        return (SLOT_TAGS if self.box == "slot" else NODE_TAGS)[self.state]


LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry("alive", "slot", "saved tensor, waiting for backward"),
    LegendEntry("retained", "slot", "saved tensor kept by retain_graph=True"),
    LegendEntry("freed", "slot", "saved tensor released; a later backward cannot use it"),
    LegendEntry("modified", "slot", "saved tensor changed in place; backward would fail"),
    LegendEntry("value", "slot", "saved non-tensor value (never freed)"),
    LegendEntry("running", "node", "the node running now"),
    LegendEntry("done", "node", "finished earlier in this call"),
    LegendEntry("failed", "node", "the node where the call failed"),
    LegendEntry("hidden", "node", "built by a later statement or call"),
    LegendEntry("gone", "node", "nothing the program holds reaches it any more"),
)
