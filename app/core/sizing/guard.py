"""The size guard: nothing a program asks for is computed before its cost is known.

# NOTE [size guard]
Nothing a program asks for is computed before its cost is known. Every call
the language makes (a torch function, a tensor method, an operator, reading a
tensor property) runs under a :class:`SizeGuard`: a ``TorchDispatchMode``
that sees each ATen operation *before* it runs, including the ones that
composite functions such as ``F.one_hot`` or ``torch.einsum`` decompose into.
For each one the guard first works out its output sizes: directly for
pointwise ops, reductions, ``cat``, ``mv``, ``dot`` and a few common ops with
closed-form rules (``layer_norm``, ``stack``, ``softmax``, losses ...: many of
their meta kernels are Python references whose first use imports Dynamo,
seconds), and otherwise by running it on ``meta`` copies of its arguments,
which computes shapes without allocating (every ``device=`` is replaced by
``meta``, so an explicit device cannot dodge it); a meta run's cost is
remembered per op, shapes, strides, dtypes and non-tensor arguments. It refuses the operation when
- an output, view or not, would have more than ``Limits.max_elements``
  elements (an expanded view is refused too: summing it would still touch
  every element),
- the work (multiply-adds for matmul and convolution, window size for
  pooling, n**3 for linear algebra, elements touched otherwise) summed over
  one call of the language would pass ``Limits.max_work``,
- the elements allocated so far would pass the :class:`Budget`,
- it would split a tensor into more than ``MAX_PIECES`` tensors.
Operations whose output size depends on the values (tagged
``dynamic_output_shape``: nonzero, unique, bincount, boolean masks ...) cannot
run on meta; for those a bound is computed from the real inputs, and one
without a known bound (or without a meta kernel) is refused. When the meta run rejects the arguments
(a shape mismatch), the real call runs so that the learner sees PyTorch's own
message; real outputs are checked again after every operation.
Plain Python values are bounded as well, because ``[0] * 10**9``, ``9**9**9``
or ``'%*d' % (10**9, 1)`` never reach PyTorch: lists and text hold at most
``MAX_SEQUENCE`` items nested ``MAX_NESTING`` deep, integers ``MAX_INT_BITS``
bits, text constants ``MAX_TEXT`` characters.

Where each part lives: the costs in ``op_costs.py`` and ``op_bounds.py``, the
plain-Python bounds in ``python_values.py``, the numbers in ``limits.py``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from app.core.model.errors import ProgramError, ProgramRaised, RecordingTimeout
from app.core.sizing.aten_calls import ArgumentsRejected, flat_tensors, op_name, storage_elements
from app.core.sizing.limits import (
    MAX_OPS_PER_CALL,
    MAX_PIECES,
    Budget,
    Limits,
    budget_message,
    timeout_message,
    too_big,
)
from app.core.sizing.op_bounds import pieces_in
from app.core.sizing.op_costs import Cost, meta_cost, quick_cost

__all__ = ["SizeGuard", "guarded_call", "oversized_tensor"]


class SizeGuard(TorchDispatchMode):
    """Checks every ATen operation on meta before it runs; see NOTE [size guard].

    A refusal is kept in ``refusal`` (a :class:`ProgramError` without a
    position) and raised, so the caller can report it even when PyTorch
    swallows the exception on its way out.

    >>> with SizeGuard(Limits(max_elements=100)) as guard:
    ...     torch.ones(10, 1) + torch.ones(1, 20)
    Traceback (most recent call last):
    ...
    app.core.model.errors.ProgramError: this would make a tensor of 200 elements; the limit is 100;
    to record a script of your own with full Python, run: python -m app run SCRIPT.py
    """

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # The default wraps __torch_dispatch__ in torch._dynamo.disable, which
        # imports Dynamo (seconds) for a mode that is never compiled.
        return False

    def __init__(
        self, limits: Limits, budget: Budget | None = None, *, deadline: float | None = None
    ) -> None:
        super().__init__()
        self.limits = limits
        self.budget = budget or Budget(limits.max_total_elements)
        self.deadline = deadline
        self.work = 0
        self.ops = 0
        self.refusal: ProgramError | None = None

    def __torch_dispatch__(
        self,
        func: torch._ops.OpOverload,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if self.refusal is None:
            self.refusal = self._refusal(func, args, kwargs)
        if self.refusal is not None:
            raise self.refusal
        if func._schema.is_mutable:  # in place, out=, x[i] = v: saved tensors may change
            self.budget.writes += 1
        out = func(*args, **kwargs)
        for tensor in flat_tensors(out):
            if tensor.numel() > self.limits.max_elements:
                self.refusal = ProgramError(too_big(tensor.numel(), self.limits))
                raise self.refusal
        return out

    def _refusal(
        self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ProgramError | None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            return RecordingTimeout(timeout_message(self.limits))
        message = self._check(func, args, kwargs)
        return None if message is None else ProgramError(message)

    def _check(
        self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> str | None:
        self.ops += 1
        if self.ops > MAX_OPS_PER_CALL:
            return f"this runs more than {MAX_OPS_PER_CALL:,} operations at once: make it smaller"
        pieces = pieces_in(func, args, kwargs)
        if pieces > MAX_PIECES:
            return f"this would make or take {pieces:,} separate tensors; the limit is {MAX_PIECES:,}"
        if _has_exotic_tensor(args, kwargs):
            return "only ordinary (dense) tensors can be used in programs"
        try:
            cost = quick_cost(func, args) or meta_cost(func, args, kwargs)
        except ArgumentsRejected:
            return None  # the real call raises PyTorch's own message
        except NotImplementedError:
            return f"PyTorch cannot size {op_name(func)} before running it, so it is refused"
        return self._check_cost(cost)

    def _check_cost(self, cost: Cost) -> str | None:
        limit = self.limits.max_elements
        if cost.count > MAX_PIECES:
            return f"this would make {cost.count:,} separate tensors; the limit is {MAX_PIECES:,}"
        if cost.largest > limit:
            return too_big(cost.largest, self.limits)
        if cost.scratch > limit:
            return f"this needs a scratch buffer of {cost.scratch:,} elements; the limit is {limit:,}"
        self.work += cost.work
        if self.work > self.limits.max_work:
            return (
                f"this would take about {self.work:,} operations; the limit is {self.limits.max_work:,}: "
                "make the tensors smaller"
            )
        return None if self.budget.charge(cost.new) else budget_message(self.budget)


def _has_exotic_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return any(
        t.layout != torch.strided or t.is_quantized or t.is_nested for t in flat_tensors((args, kwargs))
    )


# -- one call of the language under a guard ---------------------------------


def guarded_call(
    fn: Callable[..., Any],
    args: list[Any],
    kwargs: dict[str, Any],
    *,
    limits: Limits,
    budget: Budget,
    deadline: float | None,
) -> tuple[Any, list[warnings.WarningMessage]]:
    """Call ``fn`` under a :class:`SizeGuard`; turn every failure into a :class:`ProgramError`.

    Returns the result and the warnings it gave. The errors it makes carry no
    position: the caller knows where in the text the call stands.
    """
    guard = SizeGuard(limits, budget, deadline=deadline)
    try:
        with warnings.catch_warnings(record=True) as caught, guard:
            warnings.simplefilter("always")
            result = fn(*args, **kwargs)
    except ProgramError:
        raise
    except MemoryError:
        raise (guard.refusal or _out_of_memory()) from None
    except Exception as exc:
        if guard.refusal is not None:
            raise guard.refusal from None
        said = _first_line(exc)  # NOTE [caught errors]: what an except clause sees
        raise ProgramRaised(
            f"{_who(fn, args, kwargs)} says: {said}", python_type=type(exc), python_text=said
        ) from None
    if guard.refusal is not None:  # raised inside PyTorch and swallowed there
        raise guard.refusal
    return result, caught


def oversized_tensor(value: Any, limits: Limits) -> str | None:
    """Why a result holds a tensor, or a view of a storage, over the element limit; or None."""
    for tensor in _tensors_in(value):
        elements = max(tensor.numel(), _storage_elements(tensor))
        if elements > limits.max_elements:
            return too_big(elements, limits)
    return None


def _who(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> str:
    module = getattr(fn, "__module__", None) or ""
    touches_torch = module.startswith("torch") or any(
        True for _ in _tensors_in([args, list(kwargs.values())])
    )
    return "PyTorch" if touches_torch else "Python"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _out_of_memory() -> ProgramError:
    return ProgramError("this ran out of memory: make the tensors smaller")


def _tensors_in(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)


def _storage_elements(tensor: torch.Tensor) -> int:
    try:
        return storage_elements(tensor)
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return tensor.numel()
