"""Lay out a graph once with Graphviz ``dot`` and keep the result as plain data.

# NOTE [layout once]
``dot`` runs once per recording (``layout_graph``), never per step: stepping
only restyles boxes that already have their places. The result is frozen,
Qt-free data keyed by our ids, so this module is safe to call from a worker
thread. Coordinates are Graphviz points (1/72 inch) turned into scene units
with the origin top-left and y growing downwards, as Qt draws.

# NOTE [layout ladder]
A recording must always draw, but ``dot`` refuses some graphs: Graphviz 2.43,
the ``dot`` of Debian and Ubuntu (newer releases fixed many of these, but the
distributions still ship 2.42/2.43), fails to route edges around boxes inside
nested clusters ("triangulation failed", exit status 1). So when dot runs and
fails, the layout is asked for again along :data:`LADDER`, each rung plainer
than the one before: edges drawn straight (``splines=line``, no routing); then
frames drawn by us around boxes dot laid out without clusters; then both; at
last no frames and no rank constraints at all. The first rung dot accepts is
kept, each refusal is logged, and ``Layout.simplified`` says in a few words
what was left out, for the one quiet line the user sees. A missing ``dot``, a
label too long for Graphviz or a timeout is not a refusal: the ladder stops.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from app.core.json_reading import free_in_pieces, loads_in_pieces
from app.core.model.graph import Edge, Graph
from app.core.model.timeline import SlotKey
from app.render.dot_source import (
    FULL,
    TITLE_ROOM,
    DotStringTooLong,
    Drawing,
    dot_source,
    iterations,
    proxied_edges,
    proxy_dot_id,
    slot_dot_id,
)
from app.render.labels import SLOT_FONT_PX, drawn_slots
from app.render.modules import default_collapsed, fold, module_groups

if TYPE_CHECKING:
    from app.render.places import Places

__all__ = [
    "INSTALL_HINT",
    "LADDER",
    "Box",
    "EdgePath",
    "Layout",
    "LayoutError",
    "layout_graph",
    "parse_layout",
]

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "install Graphviz: sudo apt-get install graphviz (macOS: brew install graphviz; "
    "Windows: winget install graphviz)"
)
POINTS_PER_INCH = 72.0
ARROW_LENGTH = 10.0  # points: Graphviz's arrowhead at arrowsize 1
Point = tuple[float, float]
READ_PIECE = 1 << 20  # bytes of dot's output read (and decoded) per call
# NOTE [helpers below the window]: a big layout keeps dot busy for seconds on a machine of two
# cores, where the window's GUI thread then waits for a processor (0.4-0.6 s gaps in its
# heartbeat, runnable but not running). dot runs at this much lower priority: it still gets
# every processor nothing else wants, so on an idle machine it is as quick.
DOT_NICE = 10


class LayoutError(RuntimeError):
    """Graphviz is missing, failed or took too long; the message says what happened."""


class _Refused(LayoutError):
    """``dot`` ran and gave no usable layout of this drawing: a plainer one may do (NOTE [layout ladder])."""


# The rungs of NOTE [layout ladder], each with what the user is told was simplified.
LADDER: tuple[tuple[Drawing, str], ...] = (
    (FULL, ""),
    (Drawing(routing="line"), "edges drawn straight"),
    (Drawing(frames="iterations"), "module frames drawn around their boxes"),
    (Drawing(routing="line", frames="iterations"), "module frames drawn around their boxes, edges straight"),
    (Drawing(routing="line", frames="placed"), "frames drawn around their boxes, edges straight"),
    (Drawing(routing="line", frames="none"), "drawn without frames, edges straight"),
)
FRAME_MARGIN = 10.0  # points between a frame and its boxes, as dot_source's cluster margin
FRAME_LABEL_ROW = SLOT_FONT_PX + 6  # points: the row at a frame's top its label is written in


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
    simplified: str = ""  # what NOTE [layout ladder] left out of the full drawing ("" for nothing)

    @cached_property
    def places(self) -> Places:
        """Every item by where it is drawn (``places.py``): made on the first ask, kept."""
        from app.render.places import Places

        return Places(self)


def layout_graph(
    graph: Graph,
    *,
    collapsed: Collection[str] | None = None,
    timeout_s: float = 20.0,
    ladder: Iterable[tuple[Drawing, str]] = LADDER,
) -> Layout:
    """Run ``dot -Tjson0`` over ``graph`` and parse where every box goes: once, unless dot refuses
    the full drawing (NOTE [layout ladder]; ``ladder`` is the rungs tried, in order).

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
    refusals: list[str] = []
    for drawing, simplified in ladder:
        try:
            layout = _lay_out(exe, folded.graph, drawing, timeout_s)
        except _Refused as exc:
            log.info("Graphviz could not lay out %d nodes as %s: %s", len(folded.graph), drawing, exc)
            refusals.append(str(exc))
            continue
        if refusals:  # one quiet line; what dot said is in the log lines above
            log.warning("Graphviz could not lay out the full drawing: %s", simplified)
        return replace(layout, collapsed=folded.collapsed, simplified=simplified)
    raise LayoutError(f"Graphviz could not lay out this graph ({refusals[0] if refusals else 'no drawing'})")


def _lay_out(exe: str, graph: Graph, drawing: Drawing, timeout_s: float) -> Layout:
    """One run of ``dot`` over ``graph`` drawn as ``drawing``; :class:`_Refused` when dot fails."""
    try:
        source = dot_source(graph, reserve_tags=True, drawing=drawing)
    except DotStringTooLong as exc:  # not Graphviz's fault, and the same on every rung
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
            raise _Refused(_dot_failure(done))
        try:
            stream = out_path.open("rb")
        except OSError as exc:
            raise _Refused(f"dot wrote no layout ({exc.strerror or exc})") from None
        with stream:
            layout = parse_layout(iter(partial(stream.read, READ_PIECE), b""), graph)
    if drawing.frames in ("iterations", "placed"):
        placed = _frames_around(graph, layout, iterations_too=drawing.frames == "placed")
        layout = replace(layout, clusters=MappingProxyType({**layout.clusters, **placed}))
    return layout


def _dot_failure(done: subprocess.CompletedProcess[bytes]) -> str:
    """What ``dot`` said when it failed, in one line: its status and the start of its messages."""
    said = " ".join(done.stderr.decode("utf-8", "replace").split())[:300]
    if done.returncode < 0:
        status = f"dot was ended by signal {-done.returncode}"
    else:
        status = f"dot exited with status {done.returncode}"
    return f"{status}: {said}" if said else f"{status} and printed nothing"


def _run_dot(command: list[str], nodes: int, timeout_s: float) -> subprocess.CompletedProcess[bytes]:
    try:
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            _below_the_window(process.pid)
            try:
                out, err = process.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                raise
        return subprocess.CompletedProcess(command, process.returncode, out, err)
    except subprocess.TimeoutExpired:
        raise LayoutError(
            f"Graphviz could not lay out this graph: dot took longer than {timeout_s:g} s for {nodes} "
            "nodes; collapse its module groups, or record a smaller program"
        ) from None
    except OSError as exc:
        raise LayoutError(f"Graphviz 'dot' could not start ({exc.strerror or exc}); {INSTALL_HINT}") from None


def _below_the_window(pid: int) -> None:
    """Lower a helper process's priority (NOTE [helpers below the window]); where the system has no
    such call, or refuses it, the helper runs as it is."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, 0) + DOT_NICE)
    except (AttributeError, OSError):  # Windows has no setpriority; the helper may have ended
        log.debug("dot runs at the window's priority")


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
            proxies={proxy_dot_id(e): e for e in proxied_edges(graph)},
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
        raise _Refused(f"could not read Graphviz's layout ({exc!r})") from None
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
        raise _Refused(f"Graphviz's layout has no place for {', '.join(missing[:5])}")
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


def _frames_around(graph: Graph, layout: Layout, *, iterations_too: bool) -> dict[str, Box]:
    """Each module's frame (and, ``iterations_too``, each iteration's) drawn around its boxes, for a
    layout dot made without those clusters (NOTE [layout ladder]): a module's frame inside its
    iteration's, title row and all."""
    held: dict[str, list[Box]] = defaultdict(list)  # a node's box, its saved values' and its stand-ins'
    for node_id, box in layout.nodes.items():
        held[node_id].append(box)
    for (node_id, _), box in layout.slots.items():
        held[node_id].append(box)
    for edge, box in layout.proxies.items():
        held[edge.src].append(box)
    groups = iterations(graph)
    iteration_of = {node_id: group.name for group in groups for node_id in group.nodes}
    modules: dict[str, Box] = {}
    inside: dict[str, list[Box]] = defaultdict(list)  # module frames, with their title rows, by iteration
    for module in module_groups(graph):
        modules[module.name] = frame = _around([b for n in module.nodes for b in held[n]])
        if module.loops and module.nodes[0] in iteration_of:
            band = Box(frame.x, frame.y - TITLE_ROOM / 2, frame.width, frame.height + TITLE_ROOM)
            inside[iteration_of[module.nodes[0]]].append(band)
    if not iterations_too:
        return modules
    frames = {g.name: _around([b for n in g.nodes for b in held[n]] + inside[g.name]) for g in groups}
    return frames | modules


def _around(boxes: list[Box]) -> Box:
    """The frame around ``boxes``: a margin on each side and the label's row at the top."""
    left = min(b.left for b in boxes) - FRAME_MARGIN
    right = max(b.left + b.width for b in boxes) + FRAME_MARGIN
    top = min(b.top for b in boxes) - FRAME_MARGIN - FRAME_LABEL_ROW
    bottom = max(b.top + b.height for b in boxes) + FRAME_MARGIN
    return Box((left + right) / 2, (top + bottom) / 2, right - left, bottom - top)
