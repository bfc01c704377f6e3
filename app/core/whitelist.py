"""What the scenario language may reach: a closed list, nothing by default.

# NOTE [whitelist]
Module members are listed explicitly. Tensor methods are open (every public
method or property of ``torch.Tensor``) minus ``DENIED_TENSOR_ATTRS``: the
ones that touch files, raw memory, storages, NumPy, Python callables or the
autograd engine itself. Names starting with ``_`` are refused everywhere, so
dunder escapes (``x.__class__``) never reach this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F

__all__ = [
    "DENIED_TENSOR_ATTRS",
    "FUNCTIONAL_FUNCTIONS",
    "TORCH_DTYPES",
    "TORCH_FUNCTIONS",
    "Namespace",
    "SafeBuiltin",
    "build_namespaces",
]

TORCH_FUNCTIONS = frozenset(
    [
        "tensor",
        "zeros",
        "ones",
        "full",
        "eye",
        "arange",
        "linspace",
        "logspace",
        "rand",
        "randn",
        "randint",
        "zeros_like",
        "ones_like",
        "full_like",
        "rand_like",
        "randn_like",
        "cat",
        "stack",
        "hstack",
        "vstack",
        "split",
        "chunk",
        "matmul",
        "mm",
        "bmm",
        "mv",
        "dot",
        "outer",
        "einsum",
        "kron",
        "inner",
        "tensordot",
        "add",
        "sub",
        "mul",
        "div",
        "neg",
        "pow",
        "square",
        "sqrt",
        "rsqrt",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "sigmoid",
        "relu",
        "abs",
        "sign",
        "erf",
        "clamp",
        "clip",
        "where",
        "maximum",
        "minimum",
        "max",
        "min",
        "sum",
        "mean",
        "prod",
        "norm",
        "var",
        "std",
        "cumsum",
        "cumprod",
        "logsumexp",
        "softmax",
        "log_softmax",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "transpose",
        "reshape",
        "flatten",
        "squeeze",
        "unsqueeze",
        "permute",
        "t",
        "trace",
        "diag",
        "tril",
        "triu",
        "flip",
        "roll",
        "gather",
        "index_select",
        "masked_fill",
        "lerp",
        "addmm",
        "baddbmm",
        "floor",
        "ceil",
        "round",
        "trunc",
        "frac",
        "reciprocal",
        "dist",
        "cdist",
        "cross",
        "det",
        "inverse",
        "allclose",
        "equal",
        "isfinite",
        "isnan",
        "numel",
        "manual_seed",
    ]
)

FUNCTIONAL_FUNCTIONS = frozenset(
    [
        "relu",
        "relu6",
        "gelu",
        "silu",
        "elu",
        "selu",
        "celu",
        "leaky_relu",
        "softplus",
        "softsign",
        "hardtanh",
        "sigmoid",
        "tanh",
        "softmax",
        "log_softmax",
        "logsigmoid",
        "normalize",
        "linear",
        "bilinear",
        "layer_norm",
        "group_norm",
        "batch_norm",
        "instance_norm",
        "conv1d",
        "conv2d",
        "avg_pool1d",
        "avg_pool2d",
        "max_pool1d",
        "max_pool2d",
        "pad",
        "one_hot",
        "embedding",
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "cross_entropy",
        "nll_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "kl_div",
        "cosine_similarity",
        "dropout",
    ]
)

TORCH_DTYPES = frozenset(
    [
        "float",
        "float32",
        "float64",
        "double",
        "half",
        "float16",
        "bfloat16",
        "int",
        "int32",
        "int64",
        "long",
        "int8",
        "int16",
        "uint8",
        "bool",
        "complex64",
        "complex128",
    ]
)

DENIED_TENSOR_ATTRS = frozenset(
    [
        "numpy",
        "tofile",
        "storage",
        "untyped_storage",
        "storage_type",
        "storage_offset",
        "data_ptr",
        "share_memory_",
        "is_shared",
        "pin_memory",
        "record_stream",
        "set_",
        "resize_",
        "resize_as_",
        "as_strided",
        "as_strided_",
        "as_strided_scatter",
        "new",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "backward",
        "apply_",
        "map_",
        "map2_",
        "grad_fn",
        "module_load",
        "put_",
        "put",
        "index_put_",
        "to_dlpack",
        "dim_order",
    ]
)


@dataclass(frozen=True)
class Namespace:
    """A module as the language sees it: only the listed members exist."""

    path: str
    members: dict[str, Any] = field(default_factory=dict)

    def member(self, name: str) -> Any:
        return self.members[name]


@dataclass(frozen=True)
class SafeBuiltin:
    """A plain Python function the language may call by name."""

    name: str
    fn: Callable[..., Any]


def _members(module: Any, names: frozenset[str]) -> dict[str, Any]:
    return {name: getattr(module, name) for name in sorted(names) if hasattr(module, name)}


@cache
def build_namespaces() -> dict[str, Any]:
    """The names every scenario starts with: ``torch``, ``F`` and a few builtins (shared; do not mutate)."""
    functional = Namespace("torch.nn.functional", _members(F, FUNCTIONAL_FUNCTIONS))
    nn = Namespace("torch.nn", {"functional": functional})
    torch_members = _members(torch, TORCH_FUNCTIONS | TORCH_DTYPES)
    torch_members["nn"] = nn
    builtins = {name: SafeBuiltin(name, fn) for name, fn in _BUILTINS.items()}
    return {"torch": Namespace("torch", torch_members), "F": functional, **builtins}


_BUILTINS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "len": len,
    "min": min,
    "max": max,
    "float": float,
    "int": int,
    "round": round,
}
