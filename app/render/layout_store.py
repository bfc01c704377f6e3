"""A layout kept in a ``.lens`` file, so a shared recording opens without running Graphviz.

# NOTE [stored layouts]
``dot`` is the slowest part of opening a big recording (4.7 s of the 7.4 s the
5,000-node chain took here: 3.2 s of Graphviz, 1.5 s reading its answer), and
its answer depends only on the graph: a
``.lens`` file written with a layout (``trace --save``, ``run --out``,
``lens.record().save``) carries the boxes and splines of the view it opens
with, so whoever opens it shares the one Graphviz run of whoever made it.
The stored layout is untrusted data like the rest of the file (``lensfile.format``'s
NOTE [untrusted lens files]), and it is only a cache: one that does not fit
the graph exactly (another box, a missing one, a number that is not finite,
a layout from another :data:`STYLE`) is dropped with :class:`LayoutError`
and the graph is laid out again, as a file without one would be.

Each kind of thing is stored as columns: its keys, then all its numbers in one
flat list, so reading 5,000 nodes' boxes and 20,000 splines checks a few long
lists in C rather than tens of thousands of short ones. Numbers are Python
floats written by ``json`` (shortest round-trip form), so a layout read back is
equal to the one written.

>>> from app.core.model.graph import Edge, Graph, GraphNode
>>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), GraphNode("n1", "AccumulateGrad", "x",
...           is_leaf=True)), (Edge("n0", "n1"),))
>>> from app.render.layout import layout_graph
>>> lay = layout_graph(g)
>>> layout_from_json(layout_json(lay), g) == lay
True
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from itertools import accumulate
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import Meta

from app.core.lensfile import save_lens
from app.core.model.graph import Graph
from app.core.model.recording import Recording
from app.render.dot_source import frame_names, proxied_edges
from app.render.labels import drawn_slot_table
from app.render.layout import LADDER, Box, EdgePath, Layout, LayoutError, layout_graph
from app.render.modules import fold, module_groups
from app.render.preview import preview_json

__all__ = ["STYLE", "layout_from_json", "layout_json", "save_with_layout"]

log = logging.getLogger(__name__)

STYLE = 4  # raise it when a change to dot_source moves or resizes boxes: older layouts are then redone
MAX_COORD = 1e8  # points; Graphviz's own canvas ends long before
# A node's, a slot's or a stand-in's box: a few lines of label (a frame holds many boxes and may be
# as large as the canvas). A box is drawn whole, hatched and all, at every paint.
MAX_BOX = 5_000.0

K = TypeVar("K")


def layout_json(layout: Layout) -> dict[str, Any]:
    """``layout`` as the JSON a ``.lens`` file keeps."""
    return {
        "style": STYLE,
        "collapsed": sorted(layout.collapsed),
        "size": [layout.width, layout.height],
        "nodes": _boxes_json(list(layout.nodes), layout.nodes.values()),
        "slots": _boxes_json([list(k) for k in layout.slots], layout.slots.values()),
        "proxies": _boxes_json([[e.src, e.dst] for e in layout.proxies], layout.proxies.values()),
        "clusters": _boxes_json(list(layout.clusters), layout.clusters.values()),
        "edges": _paths_json([[e.src, e.dst] for e in layout.edges], layout.edges.values()),
        "slot_edges": _paths_json([list(k) for k in layout.slot_edges], layout.slot_edges.values()),
        "simplified": layout.simplified,
    }


def _boxes_json(keys: list[Any], boxes: Iterable[Box]) -> dict[str, Any]:
    return {"keys": keys, "xywh": [v for b in boxes for v in (b.x, b.y, b.width, b.height)]}


def _paths_json(keys: list[Any], paths: Iterable[EdgePath]) -> dict[str, Any]:
    paths = list(paths)
    return {
        "keys": keys,
        "sizes": [len(p.points) for p in paths],
        "points": [c for p in paths for point in p.points for c in point],
        "arrows": [c for p in paths if p.arrow for c in p.arrow],
        "with_arrow": [int(p.arrow is not None) for p in paths],
    }


def save_with_layout(recording: Recording, path: str | Path, *, stored: Any = None) -> None:
    """Write ``recording`` to a ``.lens`` file with its default layout (when Graphviz can make it),
    and, for a big graph, the picture the window paints first (``app.render.preview``).

    ``stored``: the layout the file it was read from kept; written again (checked against the
    graph and written anew, nothing else of it) when it fits, so a copy needs no Graphviz.
    """
    layout = None
    if stored is not None:
        try:
            layout = layout_from_json(stored, recording.graph)
        except LayoutError as exc:
            log.info("%s; laying it out again", exc)
    if layout is None:
        layout = _default_layout(recording.graph)
    if layout is None:
        save_lens(recording, path)
        return
    save_lens(recording, path, layout=layout_json(layout), preview=preview_json(recording, layout))


def _default_layout(graph: Graph) -> Layout | None:
    try:
        return layout_graph(graph)
    except LayoutError as exc:
        log.warning("the recording is saved without a layout: %s", exc)
        return None


def layout_from_json(raw: Any, graph: Graph) -> Layout:
    """The stored layout ``raw`` of ``graph``, checked; :class:`LayoutError` when it does not fit."""
    return _StoredLayout(graph).read(raw)


class _StoredLayout:
    """Reads one stored layout, checking every key against the graph it was made for."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def fail(self, what: str) -> LayoutError:
        return LayoutError(f"the recording's stored layout does not fit its graph ({what})")

    def read(self, raw: Any) -> Layout:
        table = self.obj(raw, "the layout")
        style = table.get("style")
        if type(style) is not int or style != STYLE:
            shown = style if type(style) is int else type(style).__name__
            raise self.fail(f"made for layout style {shown}, not {STYLE}")
        collapsed = frozenset(self.names(table.get("collapsed", []), "collapsed"))
        unknown = collapsed - {g.name for g in module_groups(self.graph)}
        if unknown:
            raise self.fail(f"no module group {sorted(unknown)[0][:40]!r}")
        drawn = fold(self.graph, collapsed)
        width, height = self.numbers(table.get("size"), "size", 2)
        if width < 0 or height < 0:
            raise self.fail("a negative size")
        simplified = table.get("simplified", "")
        rungs = {said for _, said in LADDER}  # a rung's own words, never a file's text
        if type(simplified) is not str or simplified not in rungs:  # a list is not even hashable
            raise self.fail("an unknown simplification")
        frames = frame_names(drawn.graph)
        slot_boxes = drawn_slot_table(drawn.graph).items()  # shared with ShownStates: NOTE [drawn slot table]
        slots = {(node, s.name): (node, s.name) for node, boxes in slot_boxes for s in boxes}
        proxies = {(e.src, e.dst): e for e in proxied_edges(drawn.graph)}
        return Layout(
            width=width,
            height=height,
            nodes=self.boxes(table.get("nodes"), {n.id: n.id for n in drawn.graph.nodes}, "nodes"),
            slots=self.boxes(table.get("slots"), slots, "slots"),
            edges=self.paths(table.get("edges"), {(e.src, e.dst): e for e in drawn.graph.edges}, "edges"),
            slot_edges=self.paths(table.get("slot_edges"), slots, "slot_edges"),
            proxies=self.boxes(table.get("proxies"), proxies, "proxies"),
            clusters=self.boxes(  # a simplified layout may have no frames (layout.py's NOTE [layout ladder])
                table.get("clusters"), {n: n for n in frames}, "clusters", MAX_COORD, all_of=not simplified
            ),
            collapsed=drawn.collapsed,
            simplified=simplified,
        )

    # -- checked pieces --

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{where} is not an object")
        return value

    def names(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{where} is not a list of names")
        return value

    def numbers(self, value: Any, where: str, count: int) -> list[float]:
        """``count`` finite numbers of at most :data:`MAX_COORD` each, checked in two passes in C
        (five when they are not, to name the fault)."""
        if not isinstance(value, list) or len(value) != count:
            raise self.fail(f"{where} is not a list of {count} numbers")
        if not set(map(type, value)) <= {int, float}:  # not bool, which json reads as True/False
            raise self.fail(f"{where} holds something that is not a number")
        if _within_canvas(value):
            return value  # what the passes below would let through, found in one
        try:
            total = math.fsum(value)  # a NaN or an infinity makes it not finite
        except (OverflowError, ValueError):  # a huge integer or sum; inf + -inf
            raise self.fail(f"{where} holds a number that is not finite or is too large") from None
        if not math.isfinite(total) or (value and (max(value) > MAX_COORD or min(value) < -MAX_COORD)):
            raise self.fail(f"{where} holds a number that is not finite or is too large")
        return value

    def keys(self, table: dict[str, Any], expected: Mapping[Any, K], where: str) -> list[K]:
        """Our keys for ``table["keys"]``: each must name one of ``expected`` (a list as a tuple), once."""
        names = table.get("keys")
        if not isinstance(names, list):
            raise self.fail(f"{where}.keys is not a list")
        try:
            keys = [expected[tuple(n) if isinstance(n, list) else n] for n in names]
        except (KeyError, TypeError):  # not one of the graph's, or a list holding a list
            raise self.fail(f"{where}.keys names something the graph has not") from None
        if len(set(keys)) != len(keys):
            raise self.fail(f"{where}.keys names one thing twice")
        return keys

    def boxes(
        self,
        value: Any,
        expected: Mapping[Any, K],
        where: str,
        largest: float = MAX_BOX,
        *,
        all_of: bool = True,
    ) -> Mapping[K, Box]:
        """A box for every one of ``expected`` (some of them, unless ``all_of``), none else, none
        wider or taller than ``largest``."""
        table = self.obj(value, where)
        keys = self.keys(table, expected, where)
        if all_of and len(keys) != len(expected):
            raise self.fail(f"{where}: {len(expected) - len(keys)} of the graph's have no place")
        v = self.numbers(table.get("xywh"), f"{where}.xywh", 4 * len(keys))
        if v and min(*v[2::4], *v[3::4]) < 0:
            raise self.fail(f"{where}.xywh: a box of negative size")
        if v and max(*v[2::4], *v[3::4]) > largest:
            raise self.fail(f"{where}.xywh: a box larger than {largest:,.0f} points")
        return MappingProxyType(dict(zip(keys, map(Box, v[0::4], v[1::4], v[2::4], v[3::4]), strict=True)))

    def paths(self, value: Any, expected: Mapping[Any, K], where: str) -> Mapping[K, EdgePath]:
        """A spline for some of ``expected`` (Graphviz may route none for an edge)."""
        table = self.obj(value, where)
        keys = self.keys(table, expected, where)
        sizes = self.counts(table.get("sizes"), f"{where}.sizes", len(keys))
        if any(size < 4 or size % 3 != 1 for size in set(sizes)):  # a start, then (control, control, end)
            raise self.fail(f"{where}.sizes: a spline is a start and whole Bezier segments")
        flags = self.counts(table.get("with_arrow"), f"{where}.with_arrow", len(keys))
        if max(flags, default=0) > 1:
            raise self.fail(f"{where}.with_arrow holds something other than 0 and 1")
        points = self.numbers(table.get("points"), f"{where}.points", 2 * sum(sizes))
        arrows = self.numbers(table.get("arrows"), f"{where}.arrows", 2 * sum(flags))
        # every point and arrow tip paired once, in C; each path then takes its run of pairs, its
        # slice made in C too (the 5,000-node chain's 20,000 paths took 43 ms in a loop, now 37 ms)
        pairs = list(zip(points[0::2], points[1::2], strict=True))
        ends = list(accumulate(sizes))
        runs = map(tuple, map(pairs.__getitem__, map(slice, [0, *ends[:-1]], ends)))
        tips = iter(zip(arrows[0::2], arrows[1::2], strict=True))
        heads = [next(tips) if flag else None for flag in flags]
        return MappingProxyType(dict(zip(keys, map(EdgePath, runs, heads), strict=True)))

    def counts(self, value: Any, where: str, count: int) -> list[int]:
        if (
            not isinstance(value, list)
            or len(value) != count
            or not set(map(type, value)) <= {int}  # not bool, which json reads as True/False
            or min(value, default=0) < 0
        ):
            raise self.fail(f"{where} is not a list of {count} counts")
        return value


# Every number within MAX_COORD of 0 (neither NaN nor an infinity is within a bound), checked by
# msgspec in C as it converts: 2 ms for the 5,000-node chain's 233,000 numbers, where fsum, max and
# min took 10 ms. A list that fails it goes through those three, which say what is wrong, as before.
_COORDS = list[
    Annotated[int, Meta(ge=-int(MAX_COORD), le=int(MAX_COORD))]
    | Annotated[float, Meta(ge=-MAX_COORD, le=MAX_COORD)]
]


def _within_canvas(value: list[Any]) -> bool:
    try:
        msgspec.convert(value, _COORDS)
    except msgspec.ValidationError:
        return False
    return True
