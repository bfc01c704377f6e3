"""Places filed by band against a plain scan: every item whose drawn rectangle meets the asked one.

The oracle works each item's rectangle out from the layout itself (a box's centre and size; a
path's points and arrow tip, widened by the pen's reach) and scans them all, sharing no code with
the bands.
"""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from app.core.model.graph import Edge
from app.render.layout import Box, EdgePath, Layout
from app.render.places import BAND, PEN_ROOM, Places


def _layout(seed: int) -> Layout:
    rng = random.Random(seed)

    def box() -> Box:
        return Box(rng.uniform(0, 900), rng.uniform(0, 6 * BAND), rng.uniform(1, 80), rng.uniform(1, 40))

    def path() -> EdgePath:
        size = rng.choice((4, 7, 10))
        points = tuple((rng.uniform(0, 900), rng.uniform(0, 6 * BAND)) for _ in range(size))
        tip = (rng.uniform(0, 900), rng.uniform(0, 6 * BAND)) if rng.random() < 0.5 else None
        return EdgePath(points, tip)

    ids = [f"n{i}" for i in range(60)]
    return Layout(
        width=900.0,
        height=6 * BAND,
        nodes={n: box() for n in ids},
        slots={(n, "self"): box() for n in ids[::2]},
        edges={Edge(a, b): path() for a, b in pairwise(ids)},
        slot_edges={(n, "self"): path() for n in ids[::3]},
        proxies={Edge(a, b): box() for a, b in zip(ids[::5], ids[3::5], strict=False)},
    )


def _scan(layout: Layout, left: float, top: float, right: float, bottom: float) -> set[tuple[str, object]]:
    found: set[tuple[str, object]] = set()

    def meets(x0: float, y0: float, x1: float, y1: float) -> bool:
        return x0 <= right and x1 >= left and y0 <= bottom and y1 >= top

    def box_meets(b: Box) -> bool:
        return meets(b.x - b.width / 2, b.y - b.height / 2, b.x + b.width / 2, b.y + b.height / 2)

    def path_meets(p: EdgePath) -> bool:
        points = list(p.points) + ([p.arrow] if p.arrow is not None else [])
        xs, ys = [x for x, _ in points], [y for _, y in points]
        return meets(min(xs) - PEN_ROOM, min(ys) - PEN_ROOM, max(xs) + PEN_ROOM, max(ys) + PEN_ROOM)

    found |= {("edge", e) for e, p in layout.edges.items() if path_meets(p)}
    found |= {("node", n) for n, b in layout.nodes.items() if box_meets(b)}
    found |= {("node", k[0]) for k, b in layout.slots.items() if box_meets(b)}
    found |= {("node", k[0]) for k, p in layout.slot_edges.items() if path_meets(p)}
    found |= {("proxy", e) for e, b in layout.proxies.items() if box_meets(b)}
    return found


@pytest.mark.parametrize("seed", range(5))
def test_within_finds_exactly_what_a_plain_scan_finds(seed: int) -> None:
    layout = _layout(seed)
    places = Places(layout)
    rng = random.Random(100 + seed)
    for _ in range(40):
        left, top = rng.uniform(-50, 900), rng.uniform(-50, 6 * BAND)
        right, bottom = left + rng.uniform(0, 400), top + rng.uniform(0, 2 * BAND)
        got = list(places.within(left, top, right, bottom))
        assert len(got) == len(set(got))  # each item once, however many bands it is filed in
        assert set(got) == _scan(layout, left, top, right, bottom)
