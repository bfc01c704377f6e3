"""A big recording's graph as the window first draws it, small enough to lead a ``.lens`` file.

Fitted to a window, a graph of thousands of nodes is drawn as its overview (``qt/overview.py``'s
NOTE [overview]): a dot per node in its state's colour, a line per edge, the loop and module
frames. That picture needs only where the boxes are and how each node looks at the step the
window opens on, a small fraction of the file: this module writes it for ``lensfile.format``'s header
(NOTE [picture first]) and reads it back, checked, with no Qt and no torch. The window paints it
while the recording is read (``app.ui.graph.graph_preview``).

Numbers are packed as in ``lensfile.format``'s NOTE [packed values in files], little-endian, base64::

    {"size": [width, height], "box": median box height,
     "looks": [[kind, state], ...],        every (kind, state) pair a dot shows
     "dots": BASE64 float32 x, y a node,   box centres, in layout units
     "dot_looks": BASE64 uint8 a node,     its index in "looks"
     "lines": BASE64 uint32 pairs,         an edge's two nodes, as indices into "dots"
     "frames": [[x, y, width, height, state], ...]}   frame centres and sizes, ClusterState

A preview is a cache, like a stored layout: :func:`preview_from_json` gives None for one that
does not check out, and the window then waits for the recording as it would without one.

>>> from app.core.model.graph import Edge, Graph, GraphNode
>>> from app.core.model.program import Program
>>> from app.core.model.recording import Recording
>>> from app.core.model.timeline import Step, Timeline
>>> from app.render.layout import Box, Layout
>>> g = Graph((GraphNode("n0", "SumBackward0", "y.sum()"), GraphNode("n1", "AccumulateGrad", "x",
...           is_leaf=True)), (Edge("n0", "n1"),))
>>> rec = Recording(Program(""), "cpu", "", g, Timeline((Step(0, "forward", None, None, {}, {}, 0),)), {}, ())
>>> lay = Layout(100.0, 200.0, {"n0": Box(50, 30, 80, 36), "n1": Box(50, 170, 80, 36)}, {}, {}, {})
>>> preview = preview_from_json(preview_json(rec, lay, from_nodes=0))
>>> preview.nodes, list(preview.dots), list(preview.lines), preview.look(1)
(2, [50.0, 30.0, 50.0, 170.0], [0, 1], ('leaf', 'hidden'))
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
import statistics
import sys
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args

from app.render.style import ClusterState, NodeKind, NodeState

if TYPE_CHECKING:  # the window reads a preview before any of these is needed: imported to write one
    from app.core.model.recording import Recording
    from app.render.layout import Layout

__all__ = [
    "MARGIN",
    "MAX_FIT_ZOOM",
    "OVERVIEW_DOT_PX",
    "OVERVIEW_PX",
    "PREVIEW_FROM_NODES",
    "Frame",
    "Preview",
    "preview_from_json",
    "preview_json",
]

log = logging.getLogger(__name__)

# How the graph is drawn fitted, shared by the graph view's scene and the preview widget (which
# must not import the scene's modules to paint the window's first frame):
MARGIN = 24.0  # scene units around the layout
OVERVIEW_PX = 4.0  # boxes shorter than this on screen: the graph is drawn as an overview
OVERVIEW_DOT_PX = 4  # an overview node's dot, in pixels at any zoom
MAX_FIT_ZOOM = 3.0  # a 4-node graph fitted to a big window should not get absurdly large

# A graph with fewer nodes is read whole before the window opens (a few tens of milliseconds) and
# is seldom small enough on screen to be drawn as dots: its file has no preview.
PREVIEW_FROM_NODES = 500
MAX_NODES = 200_000  # far past what a window lays out; its header (~27 bytes a node) stays under
# lens.MAX_HEADER_BYTES
MAX_COORD = 1e8  # as a stored layout's (layout_store.MAX_COORD)
MAX_LOOKS = 256  # a dot's look is one byte
_KINDS = frozenset(get_args(NodeKind))
_NODE_STATES = frozenset(get_args(NodeState))
_CLUSTER_STATES = frozenset(get_args(ClusterState))


@dataclass(frozen=True)
class Frame:
    """A loop iteration's or an expanded module's frame: its centre and size, and its state."""

    x: float
    y: float
    width: float
    height: float
    state: ClusterState


@dataclass(frozen=True, eq=False)
class Preview:
    """The picture: ``dots`` holds x, y per node; ``dot_looks`` each node's index in ``looks``;
    ``lines`` two node indices per edge."""

    width: float
    height: float
    box_height: float  # the median box's: below a few pixels of it on screen the graph is dots
    looks: tuple[tuple[NodeKind, NodeState], ...]
    dots: array[float]
    dot_looks: bytes
    lines: array[int]
    frames: tuple[Frame, ...]

    @property
    def nodes(self) -> int:
        return len(self.dot_looks)

    def look(self, node: int) -> tuple[NodeKind, NodeState]:
        return self.looks[self.dot_looks[node]]


# -- writing ---------------------------------------------------------------------------------------


def preview_json(
    recording: Recording, layout: Layout, *, from_nodes: int | None = None
) -> dict[str, Any] | None:
    """The preview of ``recording`` drawn by ``layout`` at its opening step, as a file keeps it;
    None for a graph of fewer than ``from_nodes`` (default :data:`PREVIEW_FROM_NODES`) nodes."""
    from app.render.dot_source import frame_names
    from app.render.modules import fold
    from app.render.states import DrawnStates, ShownStates

    least = PREVIEW_FROM_NODES if from_nodes is None else from_nodes
    if len(layout.nodes) < max(least, 1) or len(layout.nodes) > MAX_NODES:
        return None
    folded = fold(recording.graph, layout.collapsed)
    drawn = DrawnStates(ShownStates(recording), folded)
    state = recording.timeline.state(recording.opening_step)
    ids = list(layout.nodes)
    index = {node: i for i, node in enumerate(ids)}
    pairs = [(drawn.kinds[node], drawn.node_state(state, node)) for node in ids]
    looks = sorted(set(pairs))
    look_of = {look: i for i, look in enumerate(looks)}
    dots = array("f", [c for box in layout.nodes.values() for c in (box.x, box.y)])
    ends = ((index.get(e.src), index.get(e.dst)) for e in folded.graph.edges)
    lines = array("I", [i for src, dst in ends if src is not None and dst is not None for i in (src, dst)])
    frames = [
        [box.x, box.y, box.width, box.height, drawn.cluster_state(state, name)]
        for name in frame_names(folded.graph)
        if (box := layout.clusters.get(name)) is not None
    ]
    return {
        "size": [layout.width, layout.height],
        "box": statistics.median(box.height for box in layout.nodes.values()),
        "looks": [list(look) for look in looks],
        "dots": _packed(dots),
        "dot_looks": base64.b64encode(bytes(look_of[pair] for pair in pairs)).decode("ascii"),
        "lines": _packed(lines),
        "frames": frames,
    }


def _packed(numbers: array[Any]) -> str:
    if sys.byteorder != "little":
        numbers = array(numbers.typecode, numbers)
        numbers.byteswap()
    return base64.b64encode(numbers.tobytes()).decode("ascii")


# -- reading ---------------------------------------------------------------------------------------


class _Refused(ValueError):
    pass


def preview_from_json(raw: Any) -> Preview | None:
    """The preview a file's header holds, checked; None (and a note in the log) when it does not
    check out: a preview is only a cache."""
    if raw is None:
        return None
    try:
        return _read(raw)
    except _Refused as exc:
        log.info("the file's preview is left out: %s", exc)
        return None


def _read(raw: Any) -> Preview:
    if not isinstance(raw, dict):
        raise _Refused("not an object")
    width, height = _numbers(raw.get("size"), 2, "size")
    (box,) = _numbers([raw.get("box")], 1, "box")
    if min(width, height) < 0 or box <= 0:
        raise _Refused("a negative size")
    looks = _looks(raw.get("looks"))
    dot_looks = _decoded(raw.get("dot_looks"), "dot_looks")
    nodes = len(dot_looks)
    if not 0 < nodes <= MAX_NODES or max(dot_looks) >= len(looks):
        raise _Refused("dot_looks does not fit looks")
    dots = _unpacked(raw.get("dots"), "f", 2 * nodes, "dots")
    try:
        finite = math.isfinite(math.fsum(dots)) and max(map(abs, dots)) <= MAX_COORD
    except (OverflowError, ValueError):  # inf + -inf
        finite = False
    if not finite:
        raise _Refused("a dot that is not finite or too far out")
    lines = _unpacked(raw.get("lines"), "I", None, "lines")
    if len(lines) % 2 or (lines and max(lines) >= nodes):
        raise _Refused("a line to a node the preview has not")
    return Preview(width, height, box, looks, dots, dot_looks, lines, _frames(raw.get("frames")))


def _numbers(value: Any, count: int, where: str) -> list[float]:
    if (
        not isinstance(value, list)
        or len(value) != count
        or not all(type(v) in (int, float) and math.isfinite(v) and abs(v) <= MAX_COORD for v in value)
    ):
        raise _Refused(f"{where} is not {count} finite numbers")
    return [float(v) for v in value]


def _looks(value: Any) -> tuple[tuple[NodeKind, NodeState], ...]:
    if not isinstance(value, list) or not 0 < len(value) <= MAX_LOOKS:
        raise _Refused("looks is not a list of up to 256")
    looks = []
    for look in value:
        if not (
            isinstance(look, list)
            and len(look) == 2
            and _one_of(look[0], _KINDS)
            and _one_of(look[1], _NODE_STATES)
        ):
            raise _Refused("a look is not a node kind and state")
        looks.append((look[0], look[1]))
    return tuple(looks)


def _one_of(value: Any, names: frozenset[str]) -> bool:
    return isinstance(value, str) and value in names  # a list or a dict is no name (nor hashable)


def _decoded(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise _Refused(f"{where} is not base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _Refused(f"{where} is not base64") from None


def _unpacked(value: Any, code: str, count: int | None, where: str) -> array[Any]:
    data = _decoded(value, where)
    numbers = array(code)
    if len(data) % numbers.itemsize:
        raise _Refused(f"{where} does not hold whole numbers")
    numbers.frombytes(data)
    if sys.byteorder != "little":
        numbers.byteswap()
    if count is not None and len(numbers) != count:
        raise _Refused(f"{where} holds {len(numbers)} numbers, not {count}")
    return numbers


def _frames(value: Any) -> tuple[Frame, ...]:
    if not isinstance(value, list) or len(value) > MAX_NODES:
        raise _Refused("frames is not a list")
    frames = []
    for frame in value:
        if not isinstance(frame, list) or len(frame) != 5 or not _one_of(frame[4], _CLUSTER_STATES):
            raise _Refused("a frame is not a place, a size and a state")
        x, y, width, height = _numbers(frame[:4], 4, "a frame")
        if min(width, height) < 0:
            raise _Refused("a frame of negative size")
        frames.append(Frame(x, y, width, height, frame[4]))
    return tuple(frames)
