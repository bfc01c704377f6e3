"""Leaf naming against PyTorch: a leaf's row follows the tensor its ``AccumulateGrad`` accumulates into."""

from __future__ import annotations

import torch

from app.core.recorder.capture import GraphCapture
from app.core.recorder.leaves import LeafNames


def _named(held: dict[str, torch.Tensor], *roots: torch.Tensor) -> tuple[LeafNames, GraphCapture]:
    capture = GraphCapture()
    leaves = LeafNames(
        capture,
        name_of=lambda t: next((k for k, v in held.items() if v is t), None),
        in_use=lambda name: name in held,
    )
    for node_id in capture.add_roots([r.grad_fn for r in roots]):
        variable = capture.leaf_variable(node_id)
        if variable is not None:
            leaves.name_node(node_id, variable)
    return leaves, capture


def test_each_leaf_is_named_by_what_holds_it_and_its_node_is_the_one_pytorch_accumulates_through() -> None:
    w = torch.ones(2, requires_grad=True)
    y = (w * torch.full((2,), 3.0, requires_grad=True)).sum()
    leaves, capture = _named({"w": w}, y)
    assert set(leaves.nodes) == {"w", "leaf1"}
    for name, node_id in leaves.nodes.items():
        assert capture.fns[node_id].variable is leaves.tensors[name]  # PyTorch's own AccumulateGrad.variable
        assert capture.labels[node_id] == name and leaves.names[node_id] == name
    y.backward()
    assert torch.equal(leaves.tensors["w"].grad, torch.full((2,), 3.0))
    assert torch.equal(leaves.tensors["leaf1"].grad, torch.ones(2))


def test_an_inline_leaf_takes_no_name_in_use() -> None:
    leaf = torch.ones(2, requires_grad=True)
    held = {"leaf0": torch.zeros(1), "leaf1": torch.zeros(1)}
    leaves, _ = _named(held, leaf.exp())
    assert list(leaves.nodes) == ["leaf2"]


def test_a_name_that_comes_to_hold_another_leaf_keeps_both_rows() -> None:
    leaves = LeafNames(GraphCapture(), name_of=lambda t: None, in_use=lambda name: False)
    first, second = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    assert leaves.known(first, "w") == "w"
    assert leaves.known(second, "w") == "w1"
    assert leaves.known(first, "anything") == "w"  # known already: its first name stays
    assert leaves.tensors == {"w": first, "w1": second} and list(leaves.unread) == ["w", "w1"]


LOST_LEAF = """import torch

torch.manual_seed(0)
inputs = torch.randn(2, 3)
inputs.requires_grad = True
inputs = inputs.to(torch.float64)
loss = (inputs ** 2).sum()
loss.backward()
print(inputs.grad)
"""


def test_a_leaf_whose_name_was_rebound_to_a_copy_is_shown_under_the_line_that_named_it(tmp_path) -> None:
    """``inputs = inputs.to(...)`` after ``inputs.requires_grad = True``: PyTorch's ``inputs.grad``
    is None (the name holds the copy), so the leaf's row must not claim the name ``inputs``."""
    import contextlib
    import io
    import runpy
    import warnings

    from app.core.lesson.prove import final_grads
    from app.core.recorder.script import record_script

    path = tmp_path / "lost.py"
    path.write_text(LOST_LEAF, encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = runpy.run_path(str(path), run_name="__main__")
    assert printed.getvalue().strip() == "None" and plain["inputs"].grad is None  # PyTorch's own answer
    recording = record_script(path, stdout=io.StringIO()).recording
    grads = final_grads(recording)
    assert "inputs" not in grads and list(grads) == ["inputs (line 5)"]
    leaf = grads["inputs (line 5)"]
    assert leaf is not None and [round(float(v), 5) for v in leaf.flat] == [
        round(float(2 * v), 5) for v in plain["inputs"].detach().flatten()
    ]


def test_the_name_that_now_holds_the_copy_shows_grad_none_with_pytorchs_warning(tmp_path) -> None:
    """The name ``inputs`` holds the copy: PyTorch gives None for its ``.grad`` and warns that a
    non-leaf's ``.grad`` is not filled; the trace table and the words say the same."""
    import contextlib
    import io
    import runpy
    import warnings

    from app.core.lesson.copies import copied_names, copy_grad_text
    from app.core.recorder.script import record_script
    from app.core.report import to_table

    path = tmp_path / "lost.py"
    path.write_text(LOST_LEAF, encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plain = runpy.run_path(str(path), run_name="__main__")
        plain_grad = plain["inputs"].grad
    told = [str(w.message) for w in caught if "not a leaf Tensor" in str(w.message)]
    assert plain["inputs"].grad_fn is not None and told  # PyTorch: a non-leaf, and it warned
    recording = record_script(path, stdout=io.StringIO()).recording
    assert copied_names(recording.leaves) == {"inputs": "inputs (line 5)"}
    words = copy_grad_text("inputs", "inputs (line 5)")
    assert words.startswith(f"inputs.grad = {plain_grad}") and "retain_grad()" in told[0]
    assert "not a leaf" in words and "retain_grad()" in words
    assert words in to_table(recording)


def test_a_name_rebound_to_another_leaf_or_a_number_is_no_copy() -> None:
    leaves = LeafNames(GraphCapture(), name_of=lambda t: None, in_use=lambda name: False)
    leaf = torch.ones(1, requires_grad=True)
    leaves.known(leaf, "x", line=3)
    leaves.rebound("x", 3.0)
    leaves.rebound("x", torch.ones(1, requires_grad=True))
    assert list(leaves.tensors) == ["x"]
    leaves.rebound("x", leaf * 2)
    assert list(leaves.tensors) == ["x (line 3)"]


REBOUND_LEAF = """import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(a * 2).sum().backward()
first = a
a = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
(a * a).sum().backward()
"""


def test_a_name_rebound_to_another_leaf_shows_pytorchs_grad_under_that_name(tmp_path) -> None:
    """``a = torch.tensor(...)`` twice: PyTorch's ``a.grad`` is the second leaf's, so the row ``a``
    follows the name, and the first leaf's row is ``a (line 3)``, in ``trace`` and in ``run``."""
    import io
    import runpy

    from app.core.lesson.prove import final_grads
    from app.core.model.program import Program
    from app.core.recorder.recorder import record
    from app.core.recorder.script import record_script

    path = tmp_path / "rebound.py"
    path.write_text(REBOUND_LEAF, encoding="utf-8")
    plain = runpy.run_path(str(path), run_name="__main__")
    expected = {"a": plain["a"].grad.tolist(), "a (line 3)": plain["first"].grad.tolist()}
    for recording in (record(Program(REBOUND_LEAF)), record_script(path, stdout=io.StringIO()).recording):
        grads = final_grads(recording)
        got = {k: [float(v) for v in g.flat] for k, g in grads.items() if g is not None and k in expected}
        assert got == expected, grads
