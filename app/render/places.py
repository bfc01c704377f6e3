"""Where each item of a layout is drawn, filed by horizontal band: what a rectangle shows, quickly.

A graph opened zoomed in makes the items in view first (``qt/scene_items.py``'s NOTE [build what
is seen first]); a view pans while the rest is built, so the question "which items lie in this
rectangle" is asked per paint. Filed by bands of :data:`BAND` scene units, it looks at the few
bands the rectangle crosses, not at the 40,000 items of a 5,000-node graph. The table is made
once per layout, off the GUI thread (the window's worker asks for it with the layout).

>>> from app.core.model.graph import Edge
>>> from app.render.layout import Box, EdgePath, Layout
>>> layout = Layout(100.0, 500.0, {"a": Box(50, 20, 40, 20), "b": Box(50, 480, 40, 20)}, {},
...                 {Edge("a", "b"): EdgePath(((50, 470), (50, 300), (50, 100), (50, 30)))}, {})
>>> sorted(key for kind, key in Places(layout).within(0, 0, 100, 40) if kind == "node")
['a']
>>> [kind for kind, key in Places(layout).within(0, 200, 100, 260)]
['edge']
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from app.render.layout import Box, EdgePath, Layout

__all__ = ["BAND", "PEN_ROOM", "Places"]

BAND = 256.0  # scene units a band is tall
PEN_ROOM = 8.0  # scene units an edge's pen and arrowhead may reach past its points

Kind = Literal["edge", "node", "proxy"]  # a node stands for its box, its saved values and their lines


class _Band:
    """The items filed in one band: their bounds four numbers each in one array, their kinds and
    keys in two lists: a few objects per band, not a tuple per item, for the garbage collector to
    walk while a big graph loads (10,097 objects it tracks for the 5,000-node chain, now 6,058)."""

    __slots__ = ("bounds", "keys", "kinds")

    def __init__(self) -> None:
        self.bounds = array("d")
        self.kinds: list[Kind] = []
        self.keys: list[object] = []


class Places:
    """Every item of ``layout`` by where it is drawn at spread 1; :meth:`within` finds them."""

    def __init__(self, layout: Layout) -> None:
        self._bands: dict[int, _Band] = {}
        # each kind's bounds in one loop, filed in one more: the 5,000-node chain's 40,000 items
        # took 72 ms with a call per item's bounds and one per filing, now 62 ms
        slot_edges = layout.slot_edges
        self._file_all("edge", layout.edges.keys(), _paths_bounds(layout.edges.values()))
        self._file_all("node", layout.nodes.keys(), _boxes_bounds(layout.nodes.values()))
        self._file_all("node", [k[0] for k in layout.slots], _boxes_bounds(layout.slots.values()))
        self._file_all("node", [k[0] for k in slot_edges], _paths_bounds(slot_edges.values()))
        self._file_all("proxy", layout.proxies.keys(), _boxes_bounds(layout.proxies.values()))

    def _file_all(
        self, kind: Kind, keys: Iterable[object], bounds: list[tuple[float, float, float, float]]
    ) -> None:
        """File each of ``keys`` in every band its ``bounds`` (the same order) cross."""
        bands = self._bands
        for key, item in zip(keys, bounds, strict=True):
            first, last = int(item[1] // BAND), int(item[3] // BAND)
            for number in (first,) if first == last else range(first, last + 1):
                band = bands.get(number)
                if band is None:
                    band = bands[number] = _Band()
                band.bounds.extend(item)
                band.kinds.append(kind)
                band.keys.append(key)

    def within(self, left: float, top: float, right: float, bottom: float) -> Iterator[tuple[Kind, object]]:
        """The kind and key of each item drawn within the rectangle (spread 1 units), once each."""
        found: set[tuple[Kind, object]] = set()  # an item filed in two bands the rectangle crosses
        for number in range(int(top // BAND), int(bottom // BAND) + 1):
            band = self._bands.get(number)
            if band is None:
                continue
            bounds = band.bounds
            for i, (kind, key) in enumerate(zip(band.kinds, band.keys, strict=True)):
                x0, y0, x1, y1 = bounds[4 * i : 4 * i + 4]
                if x0 <= right and x1 >= left and y0 <= bottom and y1 >= top and (kind, key) not in found:
                    found.add((kind, key))
                    yield kind, key


def _boxes_bounds(boxes: Iterable[Box]) -> list[tuple[float, float, float, float]]:
    return [(b.x - b.width / 2, b.y - b.height / 2, b.x + b.width / 2, b.y + b.height / 2) for b in boxes]


def _paths_bounds(paths: Iterable[EdgePath]) -> list[tuple[float, float, float, float]]:
    out = []
    for path in paths:
        xs, ys = zip(*path.points, path.arrow, strict=True) if path.arrow else zip(*path.points, strict=True)
        out.append((min(xs) - PEN_ROOM, min(ys) - PEN_ROOM, max(xs) + PEN_ROOM, max(ys) + PEN_ROOM))
    return out
