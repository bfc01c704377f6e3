"""Lay out a graph once with Graphviz ``dot`` and keep the result as plain data.

# NOTE [layout once]
``dot`` runs once per recording (``layout_graph``), never per step: stepping
only restyles boxes that already have their places. The result is frozen,
Qt-free data keyed by our ids, so this module is safe to call from a worker
thread. Coordinates are Graphviz points (1/72 inch) turned into scene units
with the origin top-left and y growing downwards, as Qt draws.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from app.core.json_pieces import free_in_pieces, loads_in_pieces
from app.core.model.graph import Edge, Graph
from app.core.model.timeline import SlotKey
from app.render.dot_source import (
    TITLE_ROOM,
    DotStringTooLong,
    dot_source,
    long_edges,
    proxy_dot_id,
    slot_dot_id,
)
from app.render.labels import drawn_slots
from app.render.modules import default_collapsed, fold

__all__ = ["INSTALL_HINT", "Box", "EdgePath", "Layout", "LayoutError", "layout_graph", "parse_layout"]

INSTALL_HINT = (
    "install Graphviz: sudo apt-get install graphviz (macOS: brew install graphviz; "
    "Windows: winget install graphviz)"
)
POINTS_PER_INCH = 72.0
ARROW_LENGTH = 10.0  # points: Graphviz's arrowhead at arrowsize 1
Point = tuple[float, float]
READ_PIECE = 1 << 20  # bytes of dot's output read (and decoded) per call


class LayoutError(RuntimeError):
    """Graphviz is missing, failed or took too long; the message says how to fix it."""


@dataclass(frozen=True)
class Box:
    """A box by its centre and size, in scene units."""

    x: float
    y: float
    width: float
    height: float

    @property
    def left(self) -> float:
        return self.x - self.width / 2

    @property
    def top(self) -> float:
        return self.y - self.height / 2

    def contains(self, point: Point, slack: float = 0.0) -> bool:
        px, py = point
        return abs(px - self.x) <= self.width / 2 + slack and abs(py - self.y) <= self.height / 2 + slack


@dataclass(frozen=True)
class EdgePath:
    """A Graphviz spline: ``points`` = start, then (control, control, end) triples."""

    points: tuple[Point, ...]
    arrow: Point | None = None  # tip of the arrowhead, after the last point


@dataclass(frozen=True)
class Layout:
    """Where everything goes. ``edges`` are keyed by the graph's ``Edge(src, dst)``;
    their paths run from ``dst`` (the next function) to ``src``, as torchviz draws,
    or, for a long edge, from ``proxies[edge]``, a stand-in box of ``dst`` beside ``src``."""

    width: float
    height: float
    nodes: Mapping[str, Box]
    slots: Mapping[SlotKey, Box]
    edges: Mapping[Edge, EdgePath]
    slot_edges: Mapping[SlotKey, EdgePath]
    proxies: Mapping[Edge, Box] = field(default_factory=lambda: MappingProxyType({}))
    clusters: Mapping[str, Box] = field(default_factory=lambda: MappingProxyType({}))  # iteration frames
    collapsed: frozenset[str] = frozenset()  # module groups drawn as one box (modules.py's NOTE)


def layout_graph(
    graph: Graph, *, collapsed: Collection[str] | None = None, timeout_s: float = 20.0
) -> Layout:
    """Run ``dot -Tjson0`` once over ``graph`` and parse where every box goes.

    ``collapsed``: the module groups drawn as one box each (``modules.fold``); by default every
    group of a graph larger than ``modules.COLLAPSE_ABOVE`` nodes, else none. The layout's
    boxes are then keyed by the folded graph's ids (a box's ``m:model.0``).

    >>> from app.core.model.graph import Edge, Graph, GraphNode
    >>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), GraphNode("n1", "AccumulateGrad", "x",
    ...           is_leaf=True)), (Edge("n0", "n1"),))
    >>> lay = layout_graph(g)
    >>> lay.nodes["n1"].y < lay.nodes["n0"].y  # leaves on top, as torchviz
    True
    """
    exe = shutil.which("dot")
    if exe is None:
        raise LayoutError(f"Graphviz 'dot' was not found on PATH; {INSTALL_HINT}")
    folded = fold(graph, default_collapsed(graph) if collapsed is None else collapsed)
    graph = folded.graph
    try:
        source = dot_source(graph, reserve_tags=True)
    except DotStringTooLong as exc:  # not Graphviz's fault: no install hint
        raise LayoutError(f"this graph cannot be drawn: {exc}") from None
    # Files, not pipes: the 18 MB of JSON for 5,000 nodes would otherwise be read 32 KB at a time
    # in a Python loop and joined in one 18 MB copy, both holding the GIL while the GUI thread waits; a file
    # is read a megabyte per call and parsed as it comes (``loads_in_pieces``).
    with tempfile.TemporaryDirectory(prefix="lens-dot-") as folder:
        source_path, out_path = Path(folder, "graph.dot"), Path(folder, "layout.json")
        with source_path.open("wb") as file:  # encoded a megabyte at a time: no long hold of the GIL
            for start in range(0, len(source), 1 << 20):
                file.write(source[start : start + (1 << 20)].encode("utf-8"))
        done = _run_dot([exe, "-Tjson0", "-o", str(out_path), str(source_path)], len(graph), timeout_s)
        if done.returncode != 0:
            why = " ".join(done.stderr.decode("utf-8", "replace").split())[:300] or "no message"
            raise LayoutError(
                f"Graphviz 'dot' failed with exit status {done.returncode}: {why}; {INSTALL_HINT}"
            )
        try:
            stream = out_path.open("rb")
        except OSError as exc:
            raise LayoutError(
                f"Graphviz 'dot' wrote no layout ({exc.strerror or exc}); {INSTALL_HINT}"
            ) from None
        with stream:
            layout = parse_layout(iter(partial(stream.read, READ_PIECE), b""), graph)
    return replace(layout, collapsed=folded.collapsed) if folded.collapsed else layout


def _run_dot(command: list[str], nodes: int, timeout_s: float) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(command, capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutError(
            f"Graphviz 'dot' took longer than {timeout_s:g} s to lay out {nodes} nodes; "
            f"try a smaller scenario, or {INSTALL_HINT} (a recent version)"
        ) from None
    except OSError as exc:
        raise LayoutError(f"Graphviz 'dot' could not start ({exc.strerror or exc}); {INSTALL_HINT}") from None


@dataclass(frozen=True)
class _Names:
    """Our keys by their DOT names."""

    nodes: dict[str, str]
    slots: dict[str, SlotKey]
    proxies: dict[str, Edge]

    @classmethod
    def of(cls, graph: Graph) -> _Names:
        return cls(
            nodes={n.id: n.id for n in graph.nodes},
            slots={slot_dot_id(n.id, s.name): (n.id, s.name) for n in graph.nodes for s in drawn_slots(n)},
            proxies={proxy_dot_id(e): e for e in long_edges(graph)},
        )


def _point(text: str, top: float, left: float) -> Point:
    x, y = text.split(",")[:2]
    return (float(x) - left, top - float(y))


def _box(obj: Mapping[str, Any], top: float, left: float) -> Box:
    x, y = _point(obj["pos"], top, left)
    return Box(x, y, float(obj["width"]) * POINTS_PER_INCH, float(obj["height"]) * POINTS_PER_INCH)


def _frame(bb: str, top: float, left: float) -> Box:
    """A cluster's bounding box (``llx,lly,urx,ury`` in points) as the frame the scene draws: less
    the room kept above it for its title (dot_source's NOTE [frame titles])."""
    llx, lly, urx, ury = (float(v) for v in bb.split(","))
    ury -= TITLE_ROOM
    return Box((llx + urx) / 2 - left, top - (lly + ury) / 2, urx - llx, ury - lly)


def _spline(pos: str, top: float, left: float) -> EdgePath:
    arrow: Point | None = None
    points: list[Point] = []
    for token in pos.split(";", maxsplit=1)[0].split():
        if token.startswith("e,"):
            arrow = _point(token[2:], top, left)
        elif not token.startswith("s,"):
            points.append(_point(token, top, left))
    return EdgePath(tuple(points), arrow)


def _straight(source: Box, target: Box, *, arrow: bool = False) -> EdgePath | None:
    """A straight line from ``source``'s side to ``target``'s, when both sit on one row (else None).

    Graphviz arcs such flat edges over the boxes in between: the dotted rail
    from a node to its saved values, drawn straight under the boxes, reads as
    one line through them; a proxy's arrow into the node beside it (``arrow``)
    ends in an arrowhead at the node's side.
    """
    if abs(source.y - target.y) > 1.0:
        return None
    side = 1.0 if target.x >= source.x else -1.0
    start = (source.x + side * source.width / 2, source.y)
    tip = (target.x - side * target.width / 2, target.y)
    if not arrow:
        return EdgePath((start, start, tip, tip))
    end = (tip[0] - side * ARROW_LENGTH, tip[1])
    return EdgePath((start, start, end, end), tip)


def parse_layout(text: str | Iterable[bytes], graph: Graph) -> Layout:
    """Turn ``dot -Tjson0`` output for ``dot_source(graph)`` (text, or its UTF-8 bytes in pieces)
    into a :class:`Layout`."""
    data: dict[str, Any] = {}
    try:
        data = loads_in_pieces(text)
        left, bottom, right, top = (float(v) for v in data["bb"].split(","))
        objects = data.get("objects", [])
        by_gvid = {obj["_gvid"]: obj["name"] for obj in objects}
        boxes = {obj["name"]: _box(obj, top, left) for obj in objects if "pos" in obj}
        frames = {
            obj["name"]: _frame(obj["bb"], top, left)
            for obj in objects
            if "bb" in obj and str(obj.get("name", "")).startswith("cluster_")
        }
        paths = [
            (by_gvid[e["tail"]], by_gvid[e["head"]], _spline(e["pos"], top, left))
            for e in data.get("edges", [])
            if "pos" in e
        ]
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise LayoutError(f"could not read Graphviz's layout ({exc!r}); {INSTALL_HINT}") from None
    finally:
        free_in_pieces(data)
    layout = _assemble(graph, boxes, paths, right - left, top - bottom)
    return replace(layout, clusters=MappingProxyType(frames)) if frames else layout


def _assemble(
    graph: Graph, boxes: dict[str, Box], paths: list[tuple[str, str, EdgePath]], width: float, height: float
) -> Layout:
    names = _Names.of(graph)
    missing = [name for name in (*names.nodes, *names.slots, *names.proxies) if name not in boxes]
    if missing:
        raise LayoutError(f"Graphviz's layout has no place for {', '.join(missing[:5])}; {INSTALL_HINT}")
    edges: dict[Edge, EdgePath] = {}
    slot_edges: dict[SlotKey, EdgePath] = {}
    for tail, head, path in paths:
        if head in names.slots:
            key = names.slots[head]
            slot_edges[key] = _straight(boxes[key[0]], boxes[head]) or path
        elif tail in names.proxies:
            edges[names.proxies[tail]] = _straight(boxes[tail], boxes[head], arrow=True) or path
        elif tail in names.nodes and head in names.nodes:  # not an edge of the ordering boxes
            edges[Edge(head, tail)] = path  # drawn child -> parent; ours is parent -> child
    return Layout(
        width=width,
        height=height,
        nodes=MappingProxyType({n: boxes[n] for n in names.nodes}),
        slots=MappingProxyType({key: boxes[name] for name, key in names.slots.items()}),
        edges=MappingProxyType(edges),
        slot_edges=MappingProxyType(slot_edges),
        proxies=MappingProxyType({edge: boxes[name] for name, edge in names.proxies.items()}),
    )
