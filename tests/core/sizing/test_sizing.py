"""Closed-form costs of the matrix products every nn.Linear runs, checked against a meta run."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from app.core.sizing import op_costs

CASES = [
    ("mm", lambda: (torch.ones(4, 3), torch.ones(3, 5))),
    ("addmm", lambda: (torch.ones(5), torch.ones(4, 3), torch.ones(3, 5))),
    ("addmm", lambda: (torch.ones(4, 5), torch.ones(4, 3), torch.ones(3, 5))),
]


@pytest.mark.parametrize(("op", "make"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matrix_product_costs_agree_with_a_meta_run(op: str, make: Any) -> None:
    func = getattr(torch.ops.aten, op).default
    args = make()
    quick = op_costs.quick_cost(func, args)
    meta = op_costs._run_on_meta(func, args, {})
    assert quick is not None
    assert (quick.largest, quick.count) == (meta.largest, meta.count)
    assert quick.new >= meta.new and quick.work >= meta.work and quick.scratch >= meta.scratch


def test_mismatched_shapes_are_left_to_pytorch() -> None:
    """No closed form for shapes the real call refuses: PyTorch's own message reaches the learner."""
    assert op_costs.quick_cost(torch.ops.aten.mm.default, (torch.ones(4, 3), torch.ones(2, 5))) is None


ELEMENT_CASES = [
    (torch.ops.aten.select.int, lambda: (torch.ones(4, 3), 0, 2)),
    (torch.ops.aten.select.int, lambda: (torch.ones(4, 3), -1, -3)),
    (torch.ops.aten.copy_.default, lambda: (torch.ones(4, 3), torch.ones(3))),
    (torch.ops.aten.copy_.default, lambda: (torch.ones(()), torch.ones(()))),
]


@pytest.mark.parametrize(("func", "make"), ELEMENT_CASES, ids=[str(i) for i in range(len(ELEMENT_CASES))])
def test_element_by_element_costs_agree_with_a_meta_run(func: Any, make: Any) -> None:
    """t[i, j] = v: a select and a copy_ per element, sized without a meta run (NOTE [element by element])."""
    args = make()
    quick = op_costs.quick_cost(func, args)
    meta = op_costs._run_on_meta(func, args, {})
    assert quick is not None
    assert (quick.largest, quick.count) == (meta.largest, meta.count)
    assert quick.new >= meta.new and quick.work >= meta.work


def test_an_element_out_of_range_is_left_to_pytorch() -> None:
    assert op_costs.quick_cost(torch.ops.aten.select.int, (torch.ones(4, 3), 0, 4)) is None
    assert op_costs.quick_cost(torch.ops.aten.copy_.default, (torch.ones(3), torch.ones(4))) is None
