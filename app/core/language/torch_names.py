"""The members of ``torch``, ``torch.nn.functional``, ``torch.linalg``, ``torch.fft``,
``torch.special``, ``torch.nn.init`` and ``torch.nn.utils`` a program may reach, by name, and the
torch dtypes (NOTE [whitelist] in ``whitelist.py``, NOTE [torch surface] below)."""

from __future__ import annotations

from functools import cache
from types import ModuleType

import torch
import torch.nn.functional as F

from app.core.language.denials import refused_op

__all__ = [
    "FUNCTIONAL_FUNCTIONS",
    "INIT_FUNCTIONS",
    "LISTED_FUNCTIONAL_FUNCTIONS",
    "LISTED_TORCH_FUNCTIONS",
    "NN_MODULES",
    "NN_UTILS_FUNCTIONS",
    "NN_UTILS_RNN_FUNCTIONS",
    "TORCH_DTYPES",
    "TORCH_FUNCTIONS",
    "registry_functions",
]

# NOTE [torch surface]
# The functions of torch's modules come from torch itself: every function PyTorch declares
# overridable by ``__torch_function__`` (``torch.overrides.get_testing_overrides()``, the
# registry of its tensor operations) that its module exposes under that public name, minus the
# one reasoned deny-list of ``denials.refused_op`` (files, raw memory, hooks, RNG state,
# threads, quantisation and backend kernels, functions taking Python callables). What a call
# may cost is the size guard's, op by op, on meta first (NOTE [size guard]); an op it cannot
# size is refused with that reason. The hand list below keeps what the registry leaves out:
# the factories (``torch.zeros``, ``torch.randn``), which take no tensor to dispatch on.


def _overridable_in(module: ModuleType) -> frozenset[str]:
    declared = {id(fn) for fn in torch.overrides.get_testing_overrides()}
    names = {n for n in dir(module) if id(getattr(module, n, None)) in declared}
    names |= _in_place_twins(module, names)
    return frozenset(n for n in names if refused_op(n) is None)


# y.detach_() lets go of y's graph, which the evaluator notes at the method (NOTE [calls that let go])
_NO_TWIN = frozenset(["detach"])


def _in_place_twins(module: ModuleType, names: set[str]) -> set[str]:
    """``F.relu_``, ``torch.sigmoid_``: the registry leaves out the in-place twin of an op it
    declares; the twin is the same ATen op writing its input (``relu_``), which autograd records
    and the guard sizes as a write. Only twins the module itself exposes, as functions."""
    twins = (name + "_" for name in names if not name.endswith("_") and name not in _NO_TWIN)
    return {
        t for t in twins if callable(getattr(module, t, None)) and not isinstance(getattr(module, t), type)
    }


@cache
def registry_functions(path: str) -> frozenset[str]:
    """The public functions of ``path`` (``torch``, ``torch.nn.functional``, ``torch.linalg``,
    ``torch.fft``, ``torch.special``) that torch's registry declares, minus the deny-list.

    >>> {"unfold", "linear"} <= registry_functions("torch.nn.functional")
    True
    >>> "save" in registry_functions("torch") or "quantize_per_tensor" in registry_functions("torch")
    False
    """
    modules = {"torch": torch, "torch.nn.functional": F, "torch.linalg": torch.linalg}
    modules.update({"torch.fft": torch.fft, "torch.special": torch.special})
    return _overridable_in(modules[path])


# What the registry leaves out: factories and settings that take no tensor to dispatch on, and
# mm, which PyTorch routes to matmul.
LISTED_TORCH_FUNCTIONS = frozenset(
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
        "rand_like",
        "randn_like",
        "randperm",
        "normal",
        "manual_seed",
        "mm",
        "is_tensor",
        "is_grad_enabled",
        "device",
        "as_tensor",
        "scalar_tensor",
        "randint_like",
        "tril_indices",
        "triu_indices",
        "get_default_dtype",
        "result_type",
        "promote_types",
        "broadcast_shapes",
        "finfo",
        "iinfo",
    ]
)

TORCH_FUNCTIONS = LISTED_TORCH_FUNCTIONS | registry_functions("torch")

# torch.nn.functional's wrappers the registry names under torch (F.sigmoid is torch.sigmoid).
LISTED_FUNCTIONAL_FUNCTIONS = frozenset(
    [
        "sigmoid",
        "tanh",
        "hardsigmoid",
        "hardswish",
    ]
)

FUNCTIONAL_FUNCTIONS = LISTED_FUNCTIONAL_FUNCTIONS | registry_functions("torch.nn.functional")

# torch.nn.init: the functions fill a tensor in place without recording it (the deprecated
# names without the underscore too, which older snippets use); calculate_gain is arithmetic.
INIT_FUNCTIONS = frozenset(
    [
        "calculate_gain",
        "uniform_",
        "normal_",
        "constant_",
        "ones_",
        "zeros_",
        "eye_",
        "dirac_",
        "xavier_uniform_",
        "xavier_normal_",
        "kaiming_uniform_",
        "kaiming_normal_",
        "trunc_normal_",
        "orthogonal_",
        "uniform",
        "normal",
        "constant",
        "xavier_uniform",
        "xavier_normal",
        "kaiming_uniform",
        "kaiming_normal",
        "orthogonal",
    ]
)
# torch.nn.utils: functions of tensors; spectral_norm and weight_norm put hooks on a module: left out.
NN_UTILS_FUNCTIONS = frozenset(
    ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
)
NN_UTILS_RNN_FUNCTIONS = frozenset(
    ["pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "unpad_sequence"]
)

# The torch.nn modules a program may build (module_proxies.py wraps each).
NN_MODULES: tuple[str, ...] = (
    "Linear",
    "Bilinear",
    "RNNCell",
    "GRUCell",
    "LSTMCell",
    "RNN",
    "LSTM",
    "GRU",
    "Embedding",
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "Upsample",
    "Flatten",
    "Unflatten",
    "Identity",
    "LayerNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "PReLU",
    "ELU",
    "SELU",
    "GELU",
    "SiLU",
    "Mish",
    "Softplus",
    "Softsign",
    "Hardtanh",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "LogSoftmax",
    "CosineSimilarity",
    "PairwiseDistance",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "KLDivLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "TripletMarginLoss",
)  # and Sequential and TransformerEncoder, which take modules

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
