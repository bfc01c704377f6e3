"""What one ATen operation would make and do, worked out before it runs.

Three ways, cheapest first (see NOTE [size guard] in ``guard.py``):
:func:`quick_cost` from the input shapes alone, for common ops whose meta
kernels are slow to load; :func:`meta_cost` by running the op on ``meta``
copies of its arguments; and, when the output size depends on the values,
a bound from the real inputs (``op_bounds.py``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._pytree import tree_map

from app.core.sizing.aten_calls import (
    ArgumentsRejected,
    broadcast,
    flat_elements,
    flat_tensors,
    numel,
    op_name,
    op_names,
    shape,
    storage_elements,
)
from app.core.sizing.meta_without_dynamo import references_without_dynamo
from app.core.sizing.op_bounds import dynamic_bound

__all__ = ["Cost", "meta_cost", "quick_cost"]

_META = torch.device("meta")


@dataclass(frozen=True)
class Cost:
    """What one ATen operation would make and do."""

    largest: int  # elements of its largest output
    count: int  # tensors it returns
    new: int  # elements it allocates (outputs that are not views or in-place)
    work: int  # multiply-adds, or elements touched
    scratch: int = 0  # elements of temporary buffers


# -- from shapes alone ----------------------------------------------------


def quick_cost(func: torch._ops.OpOverload, args: tuple[Any, ...]) -> Cost | None:
    """Sizes of pointwise ops, reductions and cat without a meta run.

    Many meta kernels are Python references whose first use imports Dynamo
    (seconds); these common ops need none.
    """
    tensors = list(flat_tensors(args))
    touched = sum(t.numel() for t in tensors)
    aliased = func._schema.returns and func._schema.returns[0].alias_info is not None
    name = op_name(func)
    if torch.Tag.pointwise in func.tags:
        largest = math.prod(broadcast([tuple(t.shape) for t in tensors]))
        return Cost(largest, 1, 0 if aliased else largest, touched + largest)
    if torch.Tag.reduction in func.tags:  # every output is no bigger than the input
        largest = max((t.numel() for t in tensors), default=1)
        count = len(func._schema.returns)
        return Cost(largest, count, 0 if aliased else largest * count, touched + largest)
    if name == "cat":
        return Cost(touched, 1, 0 if aliased else touched, 2 * touched)
    if name in ("mv", "dot") and len(tensors) == 2:
        rows = tensors[0].shape[0] if name == "mv" and tensors[0].dim() == 2 else 1
        return Cost(rows, 1, 0 if aliased else rows, touched + rows)
    if name in _ELEMENT_RULES:  # t[i, j] = v in a loop: a view and a copy, thousands of times
        return _ELEMENT_RULES[name](args)
    rule = _SHAPE_RULES.get(name)
    return None if rule is None or aliased else rule(args, touched)


# NOTE [element by element]
# A table filled one element at a time (``pe[pos, i] = math.sin(...)``) makes a select view and a
# copy_ into it per element, each at a new index and storage offset, so a meta run's memo never
# hits: a meta run per element. Their sizes are known from the shapes; arguments they would
# reject (an index out of range) fall back to the meta run, and the real call gives PyTorch's error.


def _select_cost(args: tuple[Any, ...]) -> Cost | None:
    x, dim, index = (*args, None, None)[:3]
    if not isinstance(x, torch.Tensor) or not isinstance(dim, int) or not isinstance(index, int):
        return None
    if not -x.dim() <= dim < x.dim() or not -x.shape[dim] <= index < x.shape[dim]:
        return None
    out = x.numel() // x.shape[dim] if x.shape[dim] else 0
    return Cost(out, 1, 0, x.numel() + out)  # what a meta run counts: elements touched


def _copy_cost(args: tuple[Any, ...]) -> Cost | None:
    target, source = (*args, None)[:2]
    if not isinstance(target, torch.Tensor) or not isinstance(source, torch.Tensor):
        return None
    try:
        if broadcast([tuple(target.shape), tuple(source.shape)]) != tuple(target.shape):
            return None
    except ArgumentsRejected:
        return None
    return Cost(target.numel(), 1, 0, 2 * target.numel() + source.numel())


_ELEMENT_RULES = {"select": _select_cost, "copy_": _copy_cost}


# Ops common in programs whose meta kernels are Python references (the first
# one run imports Dynamo: about a second, once per process). Each rule gives
# what a meta run gives for valid arguments (tests/core/language/test_language.py checks it
# against one); invalid ones fail in the real call with PyTorch's message.


def _layer_norm_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    x, normalized = args[0], args[1]
    if not isinstance(x, torch.Tensor) or not isinstance(normalized, (list, tuple)):
        return None
    rows = math.prod(x.shape[: max(x.dim() - len(normalized), 0)])
    return Cost(x.numel(), 3, x.numel() + 2 * rows, touched + 5 * x.numel())


def _stack_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    return Cost(touched, 1, touched, 2 * touched)


def _same_shape_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    """softmax, log_softmax, cumsum, tril, triu: one output the size of the input."""
    return Cost(touched, 1, touched, 3 * touched)


def _batch_norm_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    x = args[0]
    if not isinstance(x, torch.Tensor) or x.dim() < 2:
        return None
    channels = int(x.shape[1])
    return Cost(x.numel(), 3, x.numel() + 2 * channels, touched + 5 * x.numel())


def _nll_loss_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    target = args[1] if len(args) > 1 else None
    if not isinstance(target, torch.Tensor) or len(args) < 4:
        return None
    out = target.numel() if args[3] == 0 else 1  # reduction: 0 none, 1 mean, 2 sum
    return Cost(out, 2, out + 1, touched + out + 1)


def _bce_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    x = args[0]
    if not isinstance(x, torch.Tensor):
        return None
    reduced = len(args) < 4 or args[3] != 0
    out = 1 if reduced else x.numel()
    return Cost(out, 1, out, touched + 3 * x.numel(), scratch=x.numel() if reduced else 0)


def _eye_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    sizes = [a for a in args[:2] if isinstance(a, int) and not isinstance(a, bool)]
    if not sizes or min(sizes) < 0:
        return None  # the meta run reports PyTorch's own refusal
    n, m = sizes[0], sizes[-1]
    return Cost(n * m, 1, n * m, n * m)


def _mse_loss_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    tensors = [a for a in args[:2] if isinstance(a, torch.Tensor)]
    if len(tensors) != 2:
        return None
    pairs = math.prod(broadcast([tuple(t.shape) for t in tensors]))
    reduced = len(args) < 3 or args[2] != 0  # reduction: 0 none, 1 mean, 2 sum
    out = 1 if reduced else pairs
    return Cost(out, 1, out, touched + 3 * pairs, scratch=pairs if reduced else 0)


def _mm_cost(args: tuple[Any, ...], touched: int) -> Cost | None:
    """mm(a, b) and addmm(bias, a, b) (every nn.Linear): (n, k) @ (k, m) makes (n, m), n*k*m work."""
    a, b = args[-2:] if len(args) >= 2 else (None, None)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dim() != 2 or b.dim() != 2:
        return None
    if a.shape[1] != b.shape[0]:
        return None  # the real call gives PyTorch's own message
    rows, cols = int(a.shape[0]), int(b.shape[1])
    return Cost(rows * cols, 1, rows * cols, touched + a.numel() * cols)


_SHAPE_RULES: dict[str, Callable[[tuple[Any, ...], int], Cost | None]] = {
    "mm": _mm_cost,
    "addmm": _mm_cost,
    "native_layer_norm": _layer_norm_cost,
    "native_batch_norm": _batch_norm_cost,
    "stack": _stack_cost,
    "_softmax": _same_shape_cost,
    "_log_softmax": _same_shape_cost,
    "cumsum": _same_shape_cost,
    "tril": _same_shape_cost,
    "triu": _same_shape_cost,
    "eye": _eye_cost,
    "mse_loss": _mse_loss_cost,
    "nll_loss_forward": _nll_loss_cost,
    "binary_cross_entropy": _bce_cost,
}


# -- from a meta run, or a bound for value-dependent sizes ------------------


def meta_cost(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Cost:
    """Run ``func`` on meta copies; fall back to a bound for value-dependent sizes.

    Raises :class:`ArgumentsRejected` when the meta run refuses the arguments,
    and ``NotImplementedError`` when the cost cannot be known at all.

    A meta run sees only shapes, strides, dtypes and the non-tensor arguments,
    so its cost is remembered under exactly those: a model repeats a few
    signatures thousands of times, and some meta kernels (``layer_norm``'s is
    a Python reference) cost far more than the real op on small tensors.
    """
    key = _signature(func, args, kwargs)
    cost = _MEMO.get(key) if key is not None else None
    if cost is None:
        cost = _run_on_meta(func, args, kwargs)
        if key is not None:
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.clear()  # a model repeats a few signatures: no need for LRU order
            _MEMO[key] = cost
    return cost


_MEMO_SIZE = 4096
_MEMO: dict[tuple[Any, ...], Cost] = {}


class _NoKey(Exception):
    """An argument the memo cannot key on exactly: run on meta every time."""


def _signature(
    func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...] | None:
    """What a meta run of ``func`` depends on, or None when that includes the values."""
    if torch.Tag.dynamic_output_shape in func.tags:  # sized from the real values
        return None
    try:
        return (func, _key(args), _key(tuple(sorted(kwargs.items()))))
    except _NoKey:
        return None


def _key(value: Any) -> Any:
    if type(value) is torch.Tensor:
        offset = value.storage_offset()
        base = storage_elements(value) if offset else -1  # the meta copy's storage (_meta_tensor)
        return (torch.Tensor, tuple(value.shape), value.stride(), offset, base, value.dtype, value.device)
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_key(item) for item in value))
    if value is None or type(value) in _PLAIN_TYPES:
        return (type(value), value)  # the type too: 1, 1.0 and True promote differently
    raise _NoKey


_PLAIN_TYPES = (bool, int, float, complex, str, torch.dtype, torch.device, torch.layout, torch.memory_format)


def _run_on_meta(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Cost:
    references_without_dynamo()  # NOTE [meta runs without Dynamo]
    try:
        meta_args, meta_kwargs = _to_meta(func, args, kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = func(*meta_args, **meta_kwargs)
    except Exception as exc:
        if torch.Tag.dynamic_output_shape in func.tags:  # nonzero, unique, x[mask] ...
            return _dynamic_cost(func, args, kwargs)
        if isinstance(exc, NotImplementedError):
            raise
        raise ArgumentsRejected from None
    outputs = list(flat_tensors(out))
    return Cost(
        largest=max((t.numel() for t in outputs), default=0),
        count=len(outputs),
        new=_new_elements(func, out),
        work=_work(func, meta_args, out),
        scratch=_scratch_elements(func, meta_args, out),
    )


def _dynamic_cost(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Cost:
    bound = dynamic_bound(func, args, kwargs)
    if bound is None:
        raise NotImplementedError(op_name(func))
    touched = flat_elements(args)
    return Cost(largest=bound, count=len(func._schema.returns), new=bound, work=touched + bound)


def _meta_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.device.type == "meta":
        return tensor
    if tensor.storage_offset() == 0:
        return torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=_META)
    base = torch.empty(storage_elements(tensor), dtype=tensor.dtype, device=_META)
    return base.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def _meta_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return _meta_tensor(value)
    if isinstance(value, torch.device):
        return _META
    return value


def _to_meta(
    func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    meta_args, meta_kwargs = tree_map(_meta_value, (args, kwargs))
    names = {a.name for a in func._schema.arguments if a.kwarg_only}
    if "device" in names:  # a factory: without this, device=None would mean the CPU
        meta_kwargs["device"] = _META
    if "pin_memory" in names:
        meta_kwargs["pin_memory"] = False
    if "generator" in meta_kwargs:
        meta_kwargs["generator"] = None
    return meta_args, meta_kwargs


# -- what a meta run does not say: allocation, work, scratch ---------------


def _new_elements(func: torch._ops.OpOverload, out: Any) -> int:
    """Elements ``func`` allocates: outputs that are not views or in-place results."""
    returns = func._schema.returns
    outputs = out if isinstance(out, (list, tuple)) and len(returns) > 1 else (out,)
    total = 0
    for index, value in enumerate(outputs):
        alias = returns[index].alias_info if index < len(returns) else None
        if alias is None:
            total += flat_elements(value)
    return total


def _work(func: torch._ops.OpOverload, args: tuple[Any, ...], out: Any) -> int:
    """Rough cost: multiply-adds where known, else the elements the op touches."""
    name = op_name(func)
    out_numel = flat_elements(out)
    touched = out_numel + flat_elements(args)
    special = _SPECIAL_WORK.get(name)
    if special is not None:
        return max(touched, special(args, out))
    if name.lstrip("_").startswith("linalg_") or name.lstrip("_") in _CUBIC:
        matrices = [t for t in flat_tensors(args) if t.dim() >= 2]
        return max(touched, sum(t.numel() * t.shape[-1] * _LINALG_FACTOR for t in matrices))
    if name.startswith(("max_pool", "avg_pool")) and len(args) > 1 and isinstance(args[1], (list, tuple)):
        return max(touched, out_numel * _window(name, args[1]))
    return touched


_LINALG_FACTOR = 64  # scaling-and-squaring and iterative solvers repeat n**3 steps many times
_CUBIC = op_names(
    "triangular_solve cholesky cholesky_solve cholesky_inverse geqrf ormqr orgqr lu_solve lu_with_info "
    "lu_unpack symeig eig svd qr inverse det logdet slogdet matrix_exp pinverse"
)


def _window(name: str, kernel: list[int] | tuple[int, ...]) -> int:
    dims = next((int(c) for c in name if c.isdigit()), len(kernel))
    sizes = list(kernel) * dims if len(kernel) == 1 else list(kernel)
    return math.prod(max(int(k), 1) for k in sizes)


def _matmul_work(args: tuple[Any, ...], out: Any) -> int:
    a, b = [t for t in args if isinstance(t, torch.Tensor) and t.dim() >= 2][-2:]
    return math.prod(shape(a)) * int(shape(b)[-1])


def _conv_work(args: tuple[Any, ...], out: Any) -> int:
    x, weight = args[0], args[1]
    per_output = int(weight.numel()) // max(int(weight.shape[0]), 1)
    transposed = bool(args[6]) if len(args) > 6 else False
    return (numel(x) if transposed else flat_elements(out)) * per_output


def _cdist_work(args: tuple[Any, ...], out: Any) -> int:
    return flat_elements(out) * int(shape(args[0])[-1] or 1)


def _trilinear_work(args: tuple[Any, ...], out: Any) -> int:
    shapes = []
    for tensor, expand in zip(args[:3], args[3:6], strict=False):
        dims = list(shape(tensor))
        for dim in sorted(expand):
            dims.insert(dim, 1)
        shapes.append(tuple(dims))
    return math.prod(broadcast(shapes))


_SPECIAL_WORK: dict[str, Callable[[tuple[Any, ...], Any], int]] = {
    "mm": _matmul_work,
    "addmm": _matmul_work,
    "bmm": _matmul_work,
    "baddbmm": _matmul_work,
    "convolution": _conv_work,
    "_convolution": _conv_work,
    "_cdist_forward": _cdist_work,
    "_trilinear": _trilinear_work,
}


def _scratch_elements(func: torch._ops.OpOverload, args: tuple[Any, ...], out: Any) -> int:
    """The largest temporary an op is known to need (im2col columns for convolution)."""
    if op_name(func) not in ("convolution", "_convolution"):
        return 0
    x, weight = args[0], args[1]
    outputs = list(flat_tensors(out))
    spatial = math.prod(outputs[0].shape[2:]) if outputs else 1
    return int(x.shape[1]) * math.prod(weight.shape[2:]) * spatial if x.dim() > 1 else 0
