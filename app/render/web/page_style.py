"""The player page's style sheet and constants, made from the window's own style definitions.

# NOTE [one source of looks]
Every colour, line width, dash, opacity and state tag the page shows comes from
``app.render.style`` (``node_style``, ``slot_style``, ``edge_style``,
``cluster_style``, the palettes, ``NODE_TAGS``/``SLOT_TAGS``, ``LEGEND``): this
module turns them into CSS rules, one per state and kind per palette, and into
the constants the page's script reads. Nothing in ``resources/web/`` names a
colour of a state, so a change to the window's looks is the page's too.

>>> ".theme-dark .nd.k-op.s-failed>.bx{" in style_css()
True
"""

from __future__ import annotations

from typing import Any

from app.render.labels import MAX_CHARS, NODE_FONT_PX, SLOT_FONT_PX
from app.render.style import (
    LEGEND,
    MIN_READABLE_PX,
    NODE_TAGS,
    PALETTES,
    SLOT_GLYPHS,
    SLOT_TAGS,
    BoxStyle,
    ClusterState,
    EdgeState,
    EdgeStyle,
    NodeKind,
    NodeState,
    Palette,
    SlotShow,
    cluster_style,
    edge_style,
    faded,
    node_style,
    slot_style,
)

__all__ = ["page_constants", "proxy_style", "style_css"]

KINDS: tuple[NodeKind, ...] = ("op", "leaf", "root")
NODE_STATES: tuple[NodeState, ...] = ("idle", "running", "done", "failed", "hidden", "gone")
SLOT_STATES: tuple[SlotShow, ...] = ("alive", "retained", "freed", "modified", "value", "unknown", "hidden")
EDGE_STATES: tuple[EdgeState, ...] = ("normal", "flow", "hidden", "gone")
CLUSTER_STATES: tuple[ClusterState, ...] = ("normal", "hidden", "gone")


def proxy_style(style: BoxStyle) -> BoxStyle:
    """A stand-in box at a long edge looks like its node with a dashed border and no tag, as the
    window's scene draws it."""
    return BoxStyle(
        style.fill,
        style.border,
        min(style.border_width, 2.0),
        "dash",
        style.text,
        "",
        style.hatch,
        style.opacity,
        style.rounded,
    )


def _dashes(dash: str, width: float) -> str:
    """Qt's dash patterns (in line widths) as SVG's ``stroke-dasharray``."""
    pattern = {"solid": (), "dash": (4.0, 2.0), "dot": (1.0, 2.0)}[dash]
    return " ".join(f"{v * width:g}" for v in pattern) or "none"


def _box_rule(selector: str, style: BoxStyle) -> list[str]:
    rules = [
        f"{selector}>.bx{{fill:{style.fill};stroke:{style.border};stroke-width:{style.border_width:g};"
        f"stroke-dasharray:{_dashes(style.dash, style.border_width)}}}",
        f"{selector}{{opacity:{style.opacity:g}}}",
    ]
    if style.hatch is not None:
        rules.append(f"{selector}>.ht{{display:inline}}")
    return rules


def _line_rule(selector: str, style: EdgeStyle) -> str:
    return (
        f"{selector}{{stroke:{style.colour};stroke-width:{style.width:g};"
        f"stroke-dasharray:{_dashes(style.dash, style.width)};opacity:{style.opacity:g}}}"
        f"{selector}>.ar{{fill:{style.colour};stroke:none}}"
    )


def _palette_css(p: Palette) -> list[str]:
    t = f".theme-{p.name}"
    out = [
        f"{t}{{--bg:{p.background};--fg:{p.text};--edge:{p.edge};--sel:{p.selection};"
        f"--hatch:{p.hatch};--mark:{p.running.fill};--mark-border:{p.running.border};"
        f"--fail:{p.failed.fill};--fail-border:{p.failed.border};--panel:{p.cluster.fill};"
        f"--panel-border:{p.cluster.border};--alive:{p.alive.border};"
        f"--weight:{700 if p.bold_text else 400}}}",
    ]
    for kind in KINDS:
        for state in NODE_STATES:
            style = node_style(kind, state, p)
            out += _box_rule(f"{t} .nd.k-{kind}.s-{state}", style)
            out += _box_rule(f"{t} .px.k-{kind}.s-{state}", proxy_style(style))
    for show in SLOT_STATES:
        style = slot_style(show, p)
        out += _box_rule(f"{t} .sl.s-{show}", style)
        out += _box_rule(f"{t} .sl.s-{show}.fd", faded(style, p))
    for line in EDGE_STATES:
        out.append(_line_rule(f"{t} .ed.e-{line}", edge_style(line, p)))
        out.append(_line_rule(f"{t} .se.e-{line}", edge_style(line, p, slot_edge=True)))
    for cluster in CLUSTER_STATES:
        out += _box_rule(f"{t} .cl.c-{cluster}", cluster_style(cluster, p))
    return out


def style_css() -> str:
    """The CSS rules of every state in every palette (NOTE [one source of looks])."""
    return "\n".join(rule for p in PALETTES.values() for rule in _palette_css(p))


def page_constants() -> dict[str, Any]:
    """What the page's script reads of the window's definitions: tags, glyphs, sizes, the legend."""
    return {
        "node_tags": NODE_TAGS,
        "slot_tags": SLOT_TAGS,
        "slot_glyphs": SLOT_GLYPHS,
        "themes": list(PALETTES),
        "min_readable_px": MIN_READABLE_PX,
        "node_font_px": NODE_FONT_PX,
        "slot_font_px": SLOT_FONT_PX,
        "max_chars": MAX_CHARS,
        "legend": [{"state": e.state, "box": e.box, "tag": e.tag, "meaning": e.meaning} for e in LEGEND],
    }
