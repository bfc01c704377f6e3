"""The alive walk against PyTorch: a node is gone exactly when no held value's ``next_functions``
reach it, and a node let go is freed by Python (its saved buffers with it)."""

from __future__ import annotations

import ast
import gc
import weakref
from typing import Any

import torch

from app.core.model.program import Program
from app.core.recorder.alive import AliveWalk, graph_fns
from app.core.recorder.capture import GraphCapture
from app.core.recorder.recorder import ProgramRecorder, record


def _reachable(values: list[Any]) -> set[int]:
    """ids of every node PyTorch's graph reaches from ``values`` (the oracle walk)."""
    stack, seen = list(graph_fns(values)), set()
    while stack:
        fn = stack.pop()
        if id(fn) not in seen:
            seen.add(id(fn))
            stack.extend(c for c, _ in fn.next_functions if c is not None)
    return seen


class _Program:
    """A tiny program: names bound to tensors, captured and walked like a recording does."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = {}
        self.capture = GraphCapture()
        self.walk = AliveWalk(self.capture, lambda: graph_fns(self.env.values()))

    def run(self, line: str, value: Any = None) -> list[str]:
        statement = ast.parse(line).body[0]
        if value is not None:
            name = line.split("=", maxsplit=1)[0].strip()
            self.env[name] = value
            self.walk.made.extend(self.capture.fns[n] for n in self.capture.add_roots(graph_fns([value])))
        elif isinstance(statement, ast.Delete):
            for target in statement.targets:
                del self.env[target.id]  # type: ignore[attr-defined]
        self.walk.note_rebinding(statement, self.env)
        gone = self.walk.gone()
        for node_id in gone:
            self.capture.forget(node_id)
        self.walk.just_bound = []
        return gone


def test_what_is_let_go_is_what_pytorch_no_longer_reaches() -> None:
    program = _Program()
    x = torch.ones(3, requires_grad=True)
    assert program.run("h = torch.tanh(x)", torch.tanh(x)) == []
    first = program.env["h"].grad_fn
    assert program.run("h = torch.tanh(h)", torch.tanh(program.env["h"])) == []  # the new h reaches the old
    assert program.run("y = h.exp()", program.env["h"].exp()) == []
    kept = _reachable(list(program.env.values()))
    assert id(first) in kept
    gone = program.run("del y")
    assert [program.capture.node(n).name for n in gone] == ["ExpBackward0"]
    alive = _reachable(list(program.env.values()))
    assert {id(fn) for fn in program.capture.fns.values()} == alive


def test_a_node_let_go_is_freed_with_its_buffers() -> None:
    program = _Program()
    x = torch.ones(1000, requires_grad=True)
    a = x * 1
    program.run("y = a.sin()", a.sin())  # SinBackward0 saves a for the backward
    saved = weakref.ref(a)
    del a
    gc.collect()
    assert saved() is not None  # PyTorch keeps it while the graph lives
    program.run("y = x * 2", x * 2)  # re-bound: the sin graph is held by nothing
    gc.collect()
    assert saved() is None


def test_a_made_node_bound_to_no_name_is_let_go_at_once() -> None:
    program = _Program()
    x = torch.ones(2, requires_grad=True)
    program.run("w = x * 2", x * 2)
    detached = (program.env["w"] * 3).detach()  # the statement made MulBackward0 and kept only data
    program.walk.made.extend(
        program.capture.fns[n] for n in program.capture.add_roots([(program.env["w"] * 3).grad_fn])
    )
    program.env["h"] = detached
    program.walk.note_rebinding(ast.parse("h = (w * 3).detach()").body[0], program.env)
    gone = program.walk.gone()
    assert [program.capture.node(n).name for n in gone] == ["MulBackward0"]
    assert len(program.capture.fns) - len(gone) == len(_reachable(list(program.env.values())))


def test_the_same_roots_are_not_walked_again(monkeypatch: Any) -> None:
    program = _Program()
    x = torch.ones(2, requires_grad=True)
    program.run("y = made", x.exp())  # (a statement with no call: nothing walked yet)
    walks: list[int] = []
    real = GraphCapture.reachable_from_all
    monkeypatch.setattr(
        GraphCapture, "reachable_from_all", lambda self, roots: walks.append(1) or real(self, roots)
    )
    for _ in range(3):
        program.walk.dirty = True
        assert program.walk.gone() == []
    assert len(walks) == 1  # NOTE [walks not repeated]


def test_torch_calls_let_go_of_nothing(monkeypatch: Any) -> None:
    """``h = torch.tanh(h @ w)`` drops only the old ``h``: settled by the short walk from the new
    one, not by walking every captured node (NOTE [calls that let go])."""
    walks: list[int] = []
    real = GraphCapture.reachable_from_all
    monkeypatch.setattr(
        GraphCapture, "reachable_from_all", lambda self, roots: walks.append(1) or real(self, roots)
    )
    code = (
        "import torch\nw = torch.ones(3, 3, requires_grad=True)\nh = torch.ones(3)\n"
        "for i in range(40):\n    h = torch.tanh(h @ w).clamp(-1, 1)\nh.sum().backward()\n"
    )
    recording = record(Program(code))
    assert sum(n.name == "TanhBackward0" for n in recording.graph.nodes) == 40
    assert len(walks) < 5


RETURNED = """import torch
x = torch.ones(3, requires_grad=True)
def f(v):
    return (v * 2).exp()
y = f(x)
loss = y.sum()
"""


def test_a_returned_graph_is_captured_once() -> None:
    """What a ``return`` line made is the caller's value: held, not let go and captured anew."""
    names: dict[str, Any] = {}
    exec(compile(RETURNED, "returned.py", "exec"), names)  # a plain run: PyTorch's own graph
    seen, todo, kinds = set(), [names["loss"].grad_fn], []
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        kinds.append(type(fn).__name__)
        todo.extend(child for child, _ in fn.next_functions)
    recorded = [n.name for n in record(Program(RETURNED)).graph.nodes]
    assert sorted(recorded) == sorted(kinds)


TRAINING = """import torch
import torch.nn as nn
import torch.optim as optim
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
x = torch.randn(16, 4)
y = torch.randn(16, 1)
for step in range(10):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
"""


def test_a_training_loop_walks_what_it_holds_once_an_iteration(monkeypatch: Any) -> None:
    """``opt.zero_grad()`` drops gradients that have no graph, and ``loss.backward()`` makes none
    and runs none of the program's code: neither lets go of a node, so of each iteration's four
    lines only the one that re-binds ``loss`` walks what the program holds (NOTE [calls that let
    go]); what it lets go of is still exactly what PyTorch no longer reaches."""
    walks: list[int] = []
    real = ProgramRecorder.held_tensors
    monkeypatch.setattr(ProgramRecorder, "held_tensors", lambda self: walks.append(1) or real(self))
    recording = record(Program(TRAINING))
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    loss = torch.nn.MSELoss()(model(torch.randn(16, 4)), torch.randn(16, 1))
    assert recording.timeline.steps[-1].alive_nodes == len(_reachable([loss]))  # the last loss's
    assert len(walks) <= 10 + 1


GRAPH_IN_GRAD = """import torch
x = torch.ones(3, requires_grad=True)
lin = torch.nn.Linear(3, 1)
opt = torch.optim.SGD([x], lr=0.1)
lin(x.exp()).sum().backward(create_graph=True)
opt.zero_grad()
lin.zero_grad()
"""


def test_zero_grad_lets_go_of_a_gradient_that_holds_a_graph() -> None:
    """A ``create_graph`` gradient holds a graph: zeroing it lets go of the nodes only it reached,
    as PyTorch no longer reaches them from anything the program holds."""
    recording = record(Program(GRAPH_IN_GRAD))
    x = torch.ones(3, requires_grad=True)
    lin = torch.nn.Linear(3, 1)
    lin(x.exp()).sum().backward(create_graph=True)
    held = [x, lin.weight, lin.bias]
    with_grads = len(_reachable(held))
    opt_zeroed, lin_zeroed = recording.timeline.steps[-2:]
    assert with_grads > 0
    x.grad = None
    assert opt_zeroed.alive_nodes == len(_reachable(held))  # only lin's gradients' graphs left
    lin.zero_grad()
    assert lin_zeroed.alive_nodes == len(_reachable(held)) == 0


def test_a_program_that_imports_sys_is_walked_without_every_module(monkeypatch: Any) -> None:
    """``sys.modules`` reaches every module ever imported; a walk that entered it would meet
    far more objects than a small program holds (and take seconds a line)."""
    import sys

    from app.core.recorder import reach

    monkeypatch.setattr(reach, "_MOST_OBJECTS", 20_000)
    x = torch.ones(2, requires_grad=True)
    kept = x.exp()
    namespace = {"sys": sys, "torch": torch, "kept": kept}
    found = list(reach.held_tensors([namespace], own_modules={"__main__"}))
    assert [t.grad_fn.name() for t in found if t.grad_fn is not None] == ["ExpBackward0"]
