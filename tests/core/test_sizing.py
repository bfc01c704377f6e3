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
