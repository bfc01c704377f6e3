"""Recordings built by hand, without torch: small ones to read, long ones to measure.

The program they stand for::

    1  import torch
    2  x = torch.tensor([1.0, 2.0], requires_grad=True)
    3  for i in range(2):
    4      y = x.square()
    5      print(i)
    6      y.sum().backward(retain_graph=False)

The first iteration's backward frees ``y``'s saved ``self``; every node carries
its line and loop mark, and step 1 shows a version change. The ``PowBackward0``
nodes also name a module and a source file and line, as a script's recording does.
"""

from __future__ import annotations

import functools
from types import MappingProxyType

from app.core.model.graph import Edge, Graph, GraphNode, LoopMark, SavedSlot, SourceRef, StorageRef
from app.core.model.program import Call, CallInfo, Program
from app.core.model.recording import Recording
from app.core.model.timeline import Step, Timeline
from app.core.model.values import Values

CODE = (
    "import torch\n"
    "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "for i in range(2):\n"
    "    y = x.square()\n"
    "    print(i)\n"
    "    y.sum().backward(retain_graph=False)\n"
)
LOOP0, LOOP1 = LoopMark(3, 0, 2), LoopMark(3, 1, 2)


def _pow_node(node_id: str, step: int, loop: LoopMark, gone: int | None) -> GraphNode:
    return GraphNode(
        id=node_id,
        name="PowBackward0",
        label="y = x.square()",
        saved=(
            SavedSlot(
                "self",
                "tensor",
                shape=(2,),
                dtype="torch.float32",
                device="cpu",
                nbytes=8,
                storages=(StorageRef("cpu", 140_000_000_000, 8),),
                saved_version=0,
            ),
            SavedSlot("exponent", "value", value="2"),
        ),
        line=4,
        loops=(loop,),
        created_at_step=step,
        gone_at_step=gone,
        module="net.0",
        source=SourceRef("two_losses.py", 4),
    )


def _sum_node(node_id: str, step: int, loop: LoopMark) -> GraphNode:
    return GraphNode(
        id=node_id,
        name="SumBackward0",
        label="y.sum()",
        saved=(SavedSlot("self_sym_sizes", "value", value="(2,)"),),
        line=6,
        loops=(loop,),
        created_at_step=step,
    )


def small_graph() -> Graph:
    leaf = GraphNode("n0", "AccumulateGrad", "x", is_leaf=True, line=2, created_at_step=0)
    nodes = (leaf, _pow_node("n1", 0, LOOP0, 4), _sum_node("n2", 2, LOOP0), _pow_node("n3", 5, LOOP1, None))
    nodes += (_sum_node("n4", 7, LOOP1),)
    edges = (Edge("n1", "n0"), Edge("n2", "n1"), Edge("n3", "n0"), Edge("n4", "n3"))
    return Graph(nodes, edges)


def _grad(*flat: float) -> Values:
    return Values((len(flat),), flat)


def small_steps() -> tuple[Step, ...]:
    g1, g2 = _grad(2.0, 4.0), _grad(4.0, 8.0)
    return (
        Step(0, "forward", None, None, {("n1", "self"): "alive"}, {}, 8, line=4, loops=(LOOP0,),
             added_nodes=("n0", "n1"), alive_nodes=2, version_changes={("n1", "self"): 0}),
        Step(1, "forward", None, None, {}, {}, 8, line=5, loops=(LOOP0,), printed=("0",),
             alive_nodes=2, version_changes={("n1", "self"): 1}),
        Step(2, "node", 0, "n2", {}, {}, 8, caption="SumBackward0 ran.", line=6, loops=(LOOP0,),
             added_nodes=("n2",), alive_nodes=3),
        Step(3, "node", 0, "n1", {("n1", "self"): "freed"}, {"x": g1}, 0, caption="PowBackward0 ran.",
             line=6, loops=(LOOP0,), alive_nodes=3, device_bytes=1024),
        Step(4, "call_end", 0, None, {}, {}, 0, caption="The first backward ended.", line=6, loops=(LOOP0,),
             contribution={"x": g1}, alive_nodes=2, gone_nodes=("n1", "n2")),
        Step(5, "forward", None, None, {("n3", "self"): "alive"}, {}, 8, line=4, loops=(LOOP1,),
             added_nodes=("n3",), alive_nodes=2, version_changes={("n3", "self"): 0}),
        Step(6, "forward", None, None, {}, {}, 8, line=5, loops=(LOOP1,), printed=("1", "more"),
             alive_nodes=2),
        Step(7, "error", 1, "n4", {}, {"x": g2}, 8, error="RuntimeError: boom\nsecond line",
             caption="The second backward failed.", line=6, loops=(LOOP1,), added_nodes=("n4",),
             alive_nodes=3, result={"x": _grad(float("inf"), -0.0)}),
    )  # fmt: skip


def small_calls() -> tuple[CallInfo, ...]:
    def call(loop: LoopMark) -> Call:
        text = "y.sum().backward(retain_graph=False)"
        keywords = MappingProxyType({"retain_graph": "False"})
        return Call("backward", 6, 5, 6, 41, text, keywords, retain_graph=False, loops=(loop,))

    return (
        CallInfo(0, call(LOOP0), 2, 4),
        CallInfo(1, call(LOOP1), 7, 7, error="RuntimeError: boom\nsecond line", failed_node="n4"),
    )


def small_recording() -> Recording:
    program = Program(
        CODE, name="loop-twice", title="Loop twice", summary="Two backwards.", notes="n", twin="t"
    )
    return Recording(
        program=program,
        device="cpu",
        torch_version="2.13.0",
        graph=small_graph(),
        timeline=Timeline(small_steps()),
        leaves={"x": "n0"},
        calls=small_calls(),
        freed_by={("n1", "self"): 0},
        needed_by={"n1": (0,), "n2": (0,), "n3": (1,), "n4": (1,)},
        error=None,
        error_line=None,
    )


@functools.cache
def long_recording(steps: int = 5_000, width: int = 4) -> Recording:
    """A training-loop-like recording: each iteration adds a node with ``width`` grads, runs, frees it.

    Made once per size and shared (a recording is frozen): building 5,000 steps took seconds."""
    nodes, edges, timeline, calls = [GraphNode("n0", "AccumulateGrad", "w", is_leaf=True)], [], [], []
    for i in range(steps // 2):
        node = f"n{i + 1}"
        loop = LoopMark(3, i, steps // 2)
        nodes.append(_pow_node(node, 2 * i, loop, 2 * i + 1))
        edges.append(Edge(node, "n0"))
        grad = Values((width,), tuple(float(i * width + k) * 0.1 for k in range(width)))
        timeline.append(
            Step(2 * i, "forward", None, None, {(node, "self"): "alive"}, {}, 8, line=4, loops=(loop,),
                 added_nodes=(node,), alive_nodes=2, version_changes={(node, "self"): 0})
        )  # fmt: skip
        timeline.append(
            Step(2 * i + 1, "node", i, node, {(node, "self"): "freed"}, {"w": grad}, 0, line=6, loops=(loop,),
                 caption=f"PowBackward0 ran in iteration {i}.", alive_nodes=1, gone_nodes=(node,))
        )  # fmt: skip
        call = Call("backward", 6, 5, 6, 41, "y.sum().backward()", loops=(loop,))
        calls.append(CallInfo(i, call, 2 * i + 1, 2 * i + 1))
    return Recording(
        program=Program(CODE, name="long"),
        device="cpu",
        torch_version="2.13.0",
        graph=Graph(tuple(nodes), tuple(edges)),
        timeline=Timeline(tuple(timeline)),
        leaves={"w": "n0"},
        calls=tuple(calls),
        freed_by={(f"n{i + 1}", "self"): i for i in range(steps // 2)},
        needed_by={f"n{i + 1}": (i,) for i in range(steps // 2)},
    )
