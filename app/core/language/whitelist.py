"""What the checked language may reach: a closed list, nothing by default.

# NOTE [whitelist]
Module members are listed explicitly. Tensor methods are open (every public
method or property of ``torch.Tensor``) minus ``DENIED_TENSOR_ATTRS``: the
ones that touch files, raw memory, storages, NumPy, Python callables or the
autograd engine itself, each with the reason a learner is shown; and minus
every member whose name holds one of ``DENIED_FAMILIES`` (``const_data_ptr``
as ``data_ptr``), on any value (:func:`denied_attribute`). Names
starting with ``_`` are refused everywhere, so dunder escapes
(``x.__class__``) never reach this table. What a member may *cost* (tensor
sizes, work) is checked separately, op by op: see NOTE [size guard] in
``guard.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any

import torch
import torch.nn.functional as F

from app.core.language.autograd_functional import functional_members
from app.core.language.data import data_members
from app.core.language.instances import autograd_class_members, nn_class_members
from app.core.language.objects import AutogradEntry, GradModeEntry
from app.core.language.proxies import nn_members, optim_members
from app.core.language.python_modules import math_members, random_members
from app.core.language.schedulers import scheduler_members
from app.core.model.errors import ProgramError
from app.core.sizing.limits import MAX_SEQUENCE

__all__ = [
    "DENIED_FAMILIES",
    "DENIED_TENSOR_ATTRS",
    "FUNCTIONAL_FUNCTIONS",
    "INIT_FUNCTIONS",
    "LAZY_BUILTINS",
    "NN_UTILS_FUNCTIONS",
    "PRINT_LIMIT",
    "REFUSED_TORCH_MEMBERS",
    "RETURN_TYPES_MODULE",
    "TORCH_DTYPES",
    "TORCH_FUNCTIONS",
    "Namespace",
    "SafeBuiltin",
    "build_namespaces",
    "denied_attribute",
    "format_field",
    "print_text",
    "python_modules",
    "result_fields",
    "without_addresses",
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
        "randperm",
        "normal",
        "bernoulli",
        "multinomial",
        "sort",
        "argsort",
        "topk",
        "repeat_interleave",
        "tile",
        "broadcast_to",
        "sigmoid",
        "is_tensor",
        "is_grad_enabled",
        "device",
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
        "dropout1d",
        "dropout2d",
        "mish",
        "hardswish",
        "hardsigmoid",
        "glu",
        "softmin",
        "conv_transpose1d",
        "conv_transpose2d",
        "adaptive_avg_pool1d",
        "adaptive_avg_pool2d",
        "adaptive_max_pool1d",
        "adaptive_max_pool2d",
        "interpolate",
        "scaled_dot_product_attention",
        "pairwise_distance",
        "cosine_embedding_loss",
        "margin_ranking_loss",
        "triplet_margin_loss",
        "gaussian_nll_loss",
        "poisson_nll_loss",
        "soft_margin_loss",
    ]
)

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
NN_UTILS_FUNCTIONS = frozenset(["clip_grad_norm_", "clip_grad_value_"])

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

_FILES = "programs cannot read or write files"
_MEMORY = "it reaches raw memory, which programs never touch"
_CODE = "it would run Python code of its own, which programs never do"
_UNINITIALISED = "it holds whatever was in memory, different from run to run; use new_zeros"

# Tensor members a program may not use, and why (the rest of the public API is open).
DENIED_TENSOR_ATTRS: Mapping[str, str] = MappingProxyType(
    {
        "numpy": "NumPy is not part of programs",
        "tofile": _FILES,
        "storage": _MEMORY,
        "untyped_storage": _MEMORY,
        "storage_type": _MEMORY,
        "storage_offset": _MEMORY,
        "data_ptr": _MEMORY,
        "share_memory_": _MEMORY,
        "is_shared": _MEMORY,
        "pin_memory": _MEMORY,
        "record_stream": _MEMORY,
        "set_": _MEMORY,
        "resize": _MEMORY,
        "resize_": _MEMORY,
        "resize_as": _MEMORY,
        "resize_as_": _MEMORY,
        "sparse_resize_": _MEMORY,
        "sparse_resize_and_clear_": _MEMORY,
        "as_strided": _MEMORY,
        "as_strided_": _MEMORY,
        "as_strided_scatter": _MEMORY,
        "new": _MEMORY,
        "to_dlpack": _MEMORY,
        "module_load": _MEMORY,
        "as_subclass": _CODE,
        "register_hook": _CODE,
        "register_post_accumulate_grad_hook": _CODE,
        "apply_": _CODE,
        "map_": _CODE,
        "map2_": _CODE,
        "new_empty": _UNINITIALISED,
        "new_empty_strided": _UNINITIALISED,
        "grad_fn": "the program draws the graph itself; grad_fn objects are not values in programs",
    }
)

# Members denied by what their names hold, on any value, whatever PyTorch adds beside them:
# const_data_ptr and mutable_data_ptr give an address as data_ptr does; the storages,
# DLPack capsules, shared and pinned memory reach raw memory.
DENIED_FAMILIES: tuple[tuple[str, str], ...] = (
    ("data_ptr", _MEMORY),
    ("storage", _MEMORY),
    ("address", _MEMORY),
    ("dlpack", _MEMORY),
    ("share_memory", _MEMORY),
    ("pin_memory", _MEMORY),
    ("ipc_", _MEMORY),
)


def denied_attribute(name: str) -> str | None:
    """Why ``.name`` is denied (by name, or by its family), or None.

    >>> denied_attribute("const_data_ptr") == denied_attribute("data_ptr"), denied_attribute("grad")
    (True, None)
    """
    reason = DENIED_TENSOR_ATTRS.get(name)
    if reason is None:
        reason = next((why for part, why in DENIED_FAMILIES if part in name), None)
    return reason


# torch members people reach for that stay out, with the reason a learner is shown.
REFUSED_TORCH_MEMBERS: Mapping[str, str] = MappingProxyType(
    {
        "save": _FILES,
        "load": _FILES,
        "from_file": _FILES,
        "serialization": _FILES,
        "package": _FILES,
        "hub": "programs cannot download code or models",
        "ops": "torch.ops reaches PyTorch's raw operators, outside the checked language",
        "library": "torch.library reaches PyTorch's raw operators, outside the checked language",
        "classes": "torch.classes reaches PyTorch's raw operators, outside the checked language",
        "jit": "programs cannot compile code",
        "compile": "programs cannot compile code",
        "fx": "programs cannot compile code",
        "export": "programs cannot compile code",
        "from_numpy": "NumPy is not part of programs",
        "frombuffer": _MEMORY,
        "as_strided": _MEMORY,
        "empty": "an empty tensor holds whatever was in memory; use torch.zeros",
        "distributed": "programs run in one process",
        "multiprocessing": "programs run in one process",
        "set_default_device": "choose the device in the window or with --device, not in the program",
        "set_default_dtype": "global settings would leak into later recordings",
        "set_grad_enabled": "global settings would leak into later recordings: use with torch.no_grad():",
        "use_deterministic_algorithms": "global settings would leak into later recordings",
    }
)


@dataclass(frozen=True)
class Namespace:
    """A module as the language sees it: only the listed members exist."""

    path: str
    members: dict[str, Any] = field(default_factory=dict)
    refusal: str | None = None  # a stand-in module: every member is refused with this reason

    def member(self, name: str) -> Any:
        return self.members[name]


class TensorType:
    """``torch.Tensor``, ``torch.FloatTensor``, ``torch.LongTensor``: a type for ``isinstance`` and a
    constructor of a tensor from its values, as old snippets write ``torch.Tensor([1.0, 2.0])``.

    Given sizes (``torch.Tensor(2, 3)``) PyTorch leaves the memory as it was; that is refused.

    >>> TensorType("torch.LongTensor", torch.LongTensor, torch.int64)([1, 2])
    tensor([1, 2])
    """

    def __init__(self, path: str, cls: Any, dtype: torch.dtype | None = None) -> None:
        self.cls = cls
        self.dtype = dtype
        self.path = path
        self.__name__ = self.__qualname__ = path.rsplit(".", 1)[-1]
        self.__module__ = "torch"

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"

    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        if kwargs:
            raise ProgramError(f"{self.path}(...) takes its values only here, as in {self.path}([1.0, 2.0])")
        if not args:
            return torch.tensor([], dtype=self.dtype)
        if len(args) > 1 or not isinstance(args[0], (list, tuple)) or isinstance(args[0], torch.Size):
            raise ProgramError(
                f"{self.path}(...) takes a list of values here, as in {self.path}([1.0, 2.0]); given sizes "
                "it holds whatever was in memory: use torch.zeros(...) or torch.randn(...)"
            )
        return torch.tensor(
            args[0], dtype=self.dtype if self.dtype is not None else torch.get_default_dtype()
        )


TENSOR_TYPES = {
    "Tensor": (torch.Tensor, None),
    "FloatTensor": (torch.FloatTensor, torch.float32),
    "DoubleTensor": (torch.DoubleTensor, torch.float64),
    "LongTensor": (torch.LongTensor, torch.int64),
    "IntTensor": (torch.IntTensor, torch.int32),
    "BoolTensor": (torch.BoolTensor, torch.bool),
}
# Settings snippets write for reproducible GPU runs; they change nothing the language records.
CUDNN_SETTINGS = frozenset(["deterministic", "benchmark"])


@dataclass(frozen=True)
class SafeBuiltin:
    """A plain Python function the language may call by name."""

    name: str
    fn: Callable[..., Any]


def _members(module: Any, names: frozenset[str]) -> dict[str, Any]:
    return {name: getattr(module, name) for name in sorted(names) if hasattr(module, name)}


def _variable(data: Any, requires_grad: Any = False, volatile: Any = False) -> Any:
    """``Variable(t, requires_grad=...)``, as PyTorch treats it today: ``t`` as a new leaf
    (detached), requiring grad when asked; ``volatile`` has no effect (PyTorch warns)."""
    if not isinstance(data, torch.Tensor):
        raise TypeError("Variable takes a tensor, as in Variable(torch.randn(3), requires_grad=True)")
    if not isinstance(requires_grad, bool) or not isinstance(volatile, bool):
        raise TypeError("Variable(t, requires_grad=...) takes True or False")
    return torch.autograd.Variable(data, requires_grad=requires_grad, volatile=volatile)


_variable.__name__ = "Variable"
_variable.__module__ = "torch"


def _cuda_is_available() -> bool:
    """Whether the program runs on CUDA: the device is chosen in the window or with ``--device``, so
    ``torch.device("cuda" if torch.cuda.is_available() else "cpu")`` names the one it runs on."""
    return torch.get_default_device().type == "cuda"


_cuda_is_available.__name__ = "is_available"
_cuda_is_available.__module__ = "torch"


@cache
def build_namespaces() -> dict[str, Any]:
    """The names every program starts with: ``torch``, ``F`` and a few builtins (shared; do not mutate)."""
    functional = Namespace("torch.nn.functional", _members(F, FUNCTIONAL_FUNCTIONS))
    init = Namespace("torch.nn.init", _members(torch.nn.init, INIT_FUNCTIONS))
    nn_utils = Namespace("torch.nn.utils", _members(torch.nn.utils, NN_UTILS_FUNCTIONS))
    nn = Namespace(
        "torch.nn",
        {"functional": functional, "init": init, "utils": nn_utils, **nn_members(), **nn_class_members()},
    )
    schedulers = Namespace("torch.optim.lr_scheduler", scheduler_members())
    optim = Namespace("torch.optim", {"lr_scheduler": schedulers, **optim_members()})
    autograd = Namespace(
        "torch.autograd",
        {
            "backward": AutogradEntry("backward", torch.autograd.backward),
            "grad": AutogradEntry("grad", torch.autograd.grad),
            "Variable": _variable,
            "functional": Namespace("torch.autograd.functional", functional_members()),
            **autograd_class_members(),
        },
    )
    utils = Namespace("torch.utils", {"data": Namespace("torch.utils.data", data_members())})
    cuda = Namespace("torch.cuda", {"is_available": _cuda_is_available})
    backends = Namespace("torch.backends", {"cudnn": Namespace("torch.backends.cudnn")})
    torch_members = _members(torch, TORCH_FUNCTIONS | TORCH_DTYPES)
    torch_members.update(
        nn=nn,
        optim=optim,
        autograd=autograd,
        utils=utils,
        cuda=cuda,
        backends=backends,
        **{name: TensorType(f"torch.{name}", cls, dtype) for name, (cls, dtype) in TENSOR_TYPES.items()},
        no_grad=GradModeEntry("no_grad", enabled=False),
        enable_grad=GradModeEntry("enable_grad", enabled=True),
    )
    builtins = {name: SafeBuiltin(name, fn) for name, fn in _BUILTINS.items()}
    # nn and optim are bound from the start, as F is: a pasted snippet may leave out its imports.
    return {"torch": Namespace("torch", torch_members), "F": functional, "nn": nn, "optim": optim, **builtins}


@cache
def python_modules() -> dict[str, Namespace]:
    """The plain-Python modules a program may import (not bound until it does): ``math``, ``random``.

    ``numpy`` and ``matplotlib`` are stand-ins (NOTE [stand-in modules]).

    >>> sorted(python_modules()), python_modules()["math"].member("sqrt")(4.0)
    (['math', 'matplotlib', 'numpy', 'random'], 2.0)
    """
    pyplot = Namespace("matplotlib.pyplot", refusal=NO_PLOTS)
    return {
        "math": Namespace("math", math_members()),
        "random": Namespace("random", random_members()),
        "numpy": Namespace("numpy", refusal=NO_NUMPY),
        "matplotlib": Namespace("matplotlib", {"pyplot": pyplot}, refusal=NO_PLOTS),
    }


# NOTE [stand-in modules]
# Snippets import numpy and matplotlib.pyplot at the top out of habit and often use them for
# nothing, or only at the end to plot the losses. Refusing the import would refuse the whole
# program for one line it never needs, so the import binds a stand-in with no members: the
# program runs, and any use (np.array, plt.plot) is refused at its own line with the reason.
# Plots are refused rather than drawn as nothing: a learner who asked for a plot and saw the
# program end quietly would look for a window that never opens; the refusal says to print
# the values, and the recording up to that line is there to see.
NO_NUMPY = "NumPy is not part of programs: build tensors with torch (torch.tensor, torch.randn)"
NO_PLOTS = "programs draw no plots: print the values, or see them in the window"


MAX_ROUND_DIGITS = 1000
PRINT_LIMIT = 2_000  # characters of one print(...)'s text; the rest is cut off with an ellipsis
# Builtins that go through a range, zip or enumerate one item at a time (or not at all):
# everything else that takes one makes all its items at once, so its length is checked first.
LAZY_BUILTINS = frozenset(["enumerate", "zip", "len", "bool", "print"])


def _round(number: Any, ndigits: Any = None) -> Any:
    """``round``, except that ``round(5, -10**9)`` (which computes 10**10**9) is refused."""
    if isinstance(ndigits, int) and abs(ndigits) > MAX_ROUND_DIGITS:
        raise ProgramError(f"round() takes at most {MAX_ROUND_DIGITS} digits")  # a refusal, not Python's
    return round(number) if ndigits is None else round(number, ndigits)


def _sum(values: Any, /, start: Any = 0) -> Any:
    """``sum`` of numbers or tensors; joining lists this way copies them again and again."""
    if isinstance(start, (list, tuple, str)):
        raise ProgramError("sum() adds numbers and tensors here; join lists with +")  # a refusal
    return sum(values, start)


def print_text(*values: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: Any = False) -> str:
    """The text ``print(*values)`` would write, without ``end``, at most PRINT_LIMIT characters.

    >>> print_text("loss", 0.5, [1, "a"], (2,))
    "loss 0.5 [1, 'a'] (2,)"
    """
    if file is not None:
        raise ProgramError("print() writes to the program's output only: leave out file=")  # a refusal
    if sep is None:
        sep = " "
    if not isinstance(sep, str):
        raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
    text = ""
    for index, value in enumerate(values):
        text += (sep if index else "") + _limited_text(value, PRINT_LIMIT + 1 - len(text), top=True)
        if len(text) > PRINT_LIMIT:
            return text[: PRINT_LIMIT - 1] + "\u2026"
    return text


def format_field(value: Any, conversion: int, spec: str) -> str:
    """One ``{value!conversion:spec}`` field of an f-string; the spec was checked when parsed.

    >>> format_field(0.123456, -1, ".3f"), format_field("a", ord("r"), ""), format_field([1, "b"], -1, "")
    ('0.123', "'a'", "[1, 'b']")
    """
    if conversion in (ord("r"), ord("a")):
        text = _limited_text(value, MAX_SEQUENCE)
        value = text.encode("ascii", "backslashreplace").decode() if conversion == ord("a") else text
    elif conversion == ord("s") or (not spec and isinstance(value, (list, tuple))):
        value = _limited_text(value, MAX_SEQUENCE, top=True)
    text = format(value, spec)  # an object's format() with no spec is its str(): its address too
    return text if isinstance(value, str) else without_addresses(text)


# NOTE [no addresses in a recording]
# Python writes an object's memory address into its default repr (``<zip object at
# 0x7f...>``, ``<torch._C.Generator object at 0x...>``, what torch.manual_seed returns).
# An address tells where the recording process keeps things, which a recording shared
# with others must not say. Every object a program turns into text goes through
# _limited_text or format_field, so the address is taken out there (``<zip object>``), before
# the text can be printed, taken apart or joined: print(list(f"{g}")) finds no address either.
_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")  # a literal start, one run of digits: linear


def without_addresses(text: str) -> str:
    """``text`` without the addresses Python writes in object reprs.

    >>> without_addresses("<zip object at 0x7f3a9c0e1d40> and 0x1f")
    '<zip object> and 0x1f'
    """
    return _ADDRESS.sub("", text) if " at 0x" in text else text


def _limited_text(value: Any, room: int, *, top: bool = False) -> str:
    """``str(value)`` (``repr`` inside lists), built only as far as ``room`` characters."""
    if isinstance(value, str):
        return value if top else repr(value)
    if not isinstance(value, (list, tuple)) or isinstance(value, torch.Size):
        return without_addresses(str(value))  # NOTE [no addresses in a recording]
    opening, closing = ("[", "]") if isinstance(value, list) else ("(", ",)" if len(value) == 1 else ")")
    text = opening
    for index, item in enumerate(value):
        if len(text) > room:
            return text
        text += (", " if index else "") + _limited_text(item, room - len(text))
    return text + closing


_BUILTINS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "len": len,
    "min": min,
    "max": max,
    "sum": _sum,
    "float": float,
    "int": int,
    "bool": bool,
    "round": _round,
    "range": range,
    "enumerate": enumerate,
    "zip": zip,
    "list": list,
    "print": print_text,  # the evaluator sends the text to the recorder (NOTE [program hooks])
}

# Named results such as ``x.max(dim=0)`` come from this module; their fields
# (``.values``, ``.indices``) may be read like tensor attributes.
RETURN_TYPES_MODULE = "torch.return_types"


def result_fields(value: Any) -> tuple[str, ...]:
    """The field names of a named PyTorch result, or () for anything else."""
    kind = type(value)
    if kind.__module__ != RETURN_TYPES_MODULE or not isinstance(value, tuple):
        return ()
    fields = getattr(kind, "__match_args__", ())
    return tuple(f for f in fields if isinstance(f, str))
