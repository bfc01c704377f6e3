"""``two_losses``, the exercise the project started from, against plain torch."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core import two_losses


def plain(x: torch.Tensor) -> torch.Tensor:
    """The same two backward calls, written out."""
    y = x.square()
    y.sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    assert x.grad is not None
    return x.grad


def leaf(values: list[float] | list[list[float]], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_fresh_grad_is_8x(dtype: torch.dtype) -> None:
    x = leaf([[1.0, -2.0, 0.5], [3.0, 0.0, -0.25]], dtype)
    got = two_losses(x)
    assert got is x.grad
    assert got.dtype == dtype
    assert torch.equal(got, plain(leaf(x.tolist(), dtype)))
    assert torch.equal(got, 8 * x.detach())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=6))
def test_matches_plain_torch_for_any_values(values: list[float]) -> None:
    x = leaf(values, torch.float64)
    assert torch.equal(two_losses(x), plain(leaf(values, torch.float64)))


def test_adds_onto_an_existing_grad() -> None:
    x = leaf([1.0, 2.0])
    x.grad = torch.ones(2)
    reference = leaf([1.0, 2.0])
    reference.grad = torch.ones(2)
    got = two_losses(x)
    assert torch.equal(got, plain(reference))
    assert torch.equal(got, 8 * x.detach() + 1)


def test_second_use_accumulates_and_leaves_x_alone() -> None:
    x = leaf([1.0, 2.0])
    before = x.detach().clone()
    two_losses(x)
    assert torch.equal(two_losses(x), 16 * before)
    assert torch.equal(x.detach(), before)


@pytest.mark.parametrize(
    ("value", "error", "words"),
    [
        ([1.0, 2.0], TypeError, "needs a tensor"),
        (torch.tensor([1, 2]), TypeError, "floating-point"),
        (torch.tensor([1.0, 2.0]), ValueError, "requires grad"),
        (torch.tensor([1.0, 2.0], requires_grad=True) * 2, ValueError, "leaf"),
    ],
    ids=["list", "int-tensor", "no-requires-grad", "non-leaf"],
)
def test_clear_errors(value: object, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        two_losses(value)  # type: ignore[arg-type]


def test_plain_torch_fails_the_same_way_for_the_errors() -> None:
    """What the checks stand in for: torch itself refuses these inputs, less clearly."""
    with pytest.raises(RuntimeError):
        plain(torch.tensor([1.0, 2.0]))
    non_leaf = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.warns(UserWarning, match="leaf"), pytest.raises(AssertionError):
        plain(non_leaf)  # .grad of a non-leaf stays None


def test_the_builtin_program_records_what_the_seed_function_computes() -> None:
    """The seed and the built-in program "two-losses" are the same exercise: the same 8x."""
    from app.core import load_builtin, record

    rec = record(load_builtin("two-losses"))
    x = leaf([1.0, 2.0])
    assert rec.grads_at_end(len(rec.calls) - 1)["x"].tolist() == two_losses(x).tolist()  # type: ignore[union-attr]
    assert [c.call.retain_graph for c in rec.calls] == [True, None]
