"""The per-graph table of drawn slots against the rule worked out here from each node's saved slots.

The oracle reads a node's ``saved`` alone (each tensor its own box, ``None`` slots none, one value
its own box, two or more values one box named by their count where the first was), sharing no code
with the table or with ``drawn_slots``. The table is kept per graph: graphs alive together, and
graphs made after others are gone (their ids reused), must each get their own.
"""

from __future__ import annotations

import gc
import weakref

import pytest

from app.core.model.graph import Graph, GraphNode, SavedSlot
from app.render.labels import drawn_slot_table
from tests.support.recorded import builtin_recording


def _expected(node: GraphNode) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, kind, the names of the values it holds) of each box ``node``'s saved slots get."""
    values = [s.name for s in node.saved if s.kind == "value"]
    out = []
    for slot in node.saved:
        if slot.kind == "tensor":
            out.append((slot.name, "tensor", ()))
        elif slot.kind == "value" and len(values) == 1:
            out.append((slot.name, "value", ()))
        elif slot.kind == "value" and slot.name == values[0]:
            out.append((f"{len(values)} values", "value", tuple(values)))
    return out


def _seen(graph: Graph) -> list[tuple[str, list[tuple[str, str, tuple[str, ...]]]]]:
    return [
        (node_id, [(s.name, s.kind, tuple(m.name for m in getattr(s, "members", ()))) for s in slots])
        for node_id, slots in drawn_slot_table(graph).items()
    ]


def _graph(seed: int) -> Graph:
    """Nodes ``n0``.. with a mix of tensors, values and ``None`` slots that differs with ``seed``."""
    kinds = ("tensor", "value", "none")
    nodes = []
    for i in range(12):
        saved = tuple(
            SavedSlot(f"s{j}", kinds[(i * 7 + j * 5 + seed) % 3], value="1")  # type: ignore[arg-type]
            for j in range((i + seed) % 6)
        )
        nodes.append(GraphNode(f"n{i}", "MulBackward0", None, saved=saved))
    return Graph(tuple(nodes), ())


@pytest.mark.parametrize("name", ["rnn-no-detach", "forgot-retain", "two-losses"])
def test_the_table_holds_each_recorded_nodes_boxes_in_order(name: str) -> None:
    graph = builtin_recording(name).graph
    assert _seen(graph) == [(n.id, _expected(n)) for n in graph.nodes]


def test_graphs_alive_together_each_get_their_own_table() -> None:
    graphs = [_graph(seed) for seed in range(6)]  # the same node ids, other slots
    assert len({repr(_seen(g)) for g in graphs}) > 1
    for graph in graphs + graphs[::-1]:
        assert _seen(graph) == [(n.id, _expected(n)) for n in graph.nodes]


def test_a_graph_made_after_another_is_gone_gets_its_own_table() -> None:
    nodes = [_graph(seed).nodes for seed in range(30)]
    ids = set()
    for some in nodes:  # CPython reuses a dead graph's memory, and so its id, for the next
        graph = Graph(some, ())
        ids.add(id(graph))
        assert _seen(graph) == [(n.id, _expected(n)) for n in graph.nodes]
        del graph
    assert len(ids) < len(nodes)  # an id was reused: the table was found by identity, not by id


def test_the_table_does_not_keep_its_graph_alive() -> None:
    graph = _graph(3)
    drawn_slot_table(graph)
    gone = weakref.ref(graph)
    del graph
    gc.collect()
    assert gone() is None


def test_the_table_is_made_once_per_graph() -> None:
    graph = _graph(4)
    assert drawn_slot_table(graph) is drawn_slot_table(graph)
