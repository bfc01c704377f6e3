"""A weight every iteration reads is drawn once, outside the frames; later iterations read it from a
proxy beside the user (dot_source.py's NOTE [shared leaves]). Checked on the laid-out drawing: which
frame each box sits in, from Graphviz's own coordinates."""

from __future__ import annotations

import pytest

from app.core import record
from app.core.model.program import Program
from app.render.layout import Box, Layout, layout_graph

PARAMETERS = ("w", "b")


def _loop(iterations: int) -> str:
    return (
        "import torch\n"
        "w = torch.randn(3, 3, requires_grad=True)\n"
        "b = torch.zeros(3, requires_grad=True)\n"
        "x = torch.randn(2, 3)\n"
        f"for step in range({iterations}):\n"
        "    loss = torch.tanh(x @ w + b).sum()\n"
        "    loss.backward()\n"
    )


def _frames_holding(lay: Layout, box: Box) -> set[str]:
    return {name for name, frame in lay.clusters.items() if frame.contains((box.x, box.y))}


def _laid_out(iterations: int) -> tuple[Layout, dict[str, str]]:
    graph = record(Program(_loop(iterations))).graph
    leaves = {n.label: n.id for n in graph.nodes if n.is_leaf and n.label in PARAMETERS}
    assert sorted(leaves) == sorted(PARAMETERS)
    lay = layout_graph(graph)
    assert len(lay.clusters) == iterations  # one frame per iteration of the program's loop
    return lay, leaves


def test_a_weight_read_by_many_iterations_has_real_edges_into_one_frame_only():
    lay, leaves = _laid_out(6)
    for name, leaf in leaves.items():
        assert not _frames_holding(lay, lay.nodes[leaf]), f"{name} is drawn inside a frame"
        real_users = {e.src for e in lay.edges if e.dst == leaf and e not in lay.proxies}
        reached = set().union(*(_frames_holding(lay, lay.nodes[user]) for user in real_users))
        assert len(reached) == 1, f"{name}'s real edges reach {len(reached)} frames"
        with_proxy = set().union(
            *(_frames_holding(lay, box) for e, box in lay.proxies.items() if e.dst == leaf)
        )
        assert with_proxy == set(lay.clusters) - reached  # every other iteration reads a stand-in


@pytest.mark.parametrize("iterations", [2, 3])
def test_a_lessons_few_iterations_keep_the_real_edges(iterations):
    lay, leaves = _laid_out(iterations)
    for leaf in leaves.values():
        assert not [e for e in lay.proxies if e.dst == leaf]
        users = {e.src for e in lay.edges if e.dst == leaf}
        assert set().union(*(_frames_holding(lay, lay.nodes[u]) for u in users)) == set(lay.clusters)
