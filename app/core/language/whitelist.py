"""What the checked language may reach: a closed list, nothing by default.

This module builds the namespaces a program starts with (``torch``, ``F``, ``nn``, ``optim``)
and the plain-Python modules it may import, from the names listed in ``torch_names.py``, the
proxies of ``module_proxies.py`` and ``optimizer_proxies.py`` and the builtins of
``safe_builtins.py``; what stays out is listed in ``denials.py``.

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

import gc
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F

from app.core.language.amp import AutocastEntry, amp_members
from app.core.language.autograd_functional import functional_members
from app.core.language.copies import copy_members
from app.core.language.data import data_members
from app.core.language.dataclass_rules import dataclasses_members
from app.core.language.gradchecks import gradcheck_members
from app.core.language.hints import refused
from app.core.language.instances import autograd_class_members, nn_class_members
from app.core.language.module_proxies import nn_members
from app.core.language.objects import AutogradEntry, GradModeEntry
from app.core.language.optimizer_proxies import optim_members
from app.core.language.os_paths import NO_SYSTEM, os_members, os_path_members
from app.core.language.performance_settings import set_float32_matmul_precision
from app.core.language.python_modules import math_members, random_members
from app.core.language.safe_builtins import BUILTINS, SafeBuiltin
from app.core.language.saved_hooks import graph_members
from app.core.language.schedulers import scheduler_members
from app.core.language.stand_ins import (
    argparse_members,
    collections_members,
    functools_members,
    itertools_members,
    logging_members,
    time_members,
    tqdm_members,
    typing_members,
    warnings_members,
)
from app.core.language.torch_names import (
    FUNCTIONAL_FUNCTIONS,
    INIT_FUNCTIONS,
    NN_UTILS_FUNCTIONS,
    NN_UTILS_RNN_FUNCTIONS,
    TORCH_DTYPES,
    TORCH_FUNCTIONS,
    registry_functions,
)
from app.core.language.torch_wrappers import (
    checkpoint_members,
    distribution_members,
    distribution_submodules,
    generator,
    parallel_members,
)
from app.core.model.errors import ProgramError

__all__ = [
    "RETURN_TYPES_MODULE",
    "TENSOR_TYPES",
    "ZEROED_METHODS",
    "Namespace",
    "TensorType",
    "build_namespaces",
    "python_modules",
    "result_fields",
]


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
        if len(args) == 1 and isinstance(args[0], torch.Tensor):  # an alias of it, as PyTorch gives
            copied: torch.Tensor = self.cls(args[0])
            return copied
        sizes = _sizes(args)
        if sizes is not None:  # NOTE [zeroed memory]: torch.Tensor(2, 3) is zeros, not old memory
            return torch.zeros(
                sizes, dtype=self.dtype if self.dtype is not None else torch.get_default_dtype()
            )
        if len(args) > 1 or not isinstance(args[0], (list, tuple)):
            raise refused(
                f"{self.path}(...) takes a list of values, as in {self.path}([1.0, 2.0]), or sizes, "
                f"as in {self.path}(2, 3)"
            )
        return torch.tensor(
            args[0], dtype=self.dtype if self.dtype is not None else torch.get_default_dtype()
        )


# NOTE [zeroed memory]
# PyTorch leaves the memory of ``torch.empty``, ``empty_like``, ``x.new_empty`` and
# ``torch.Tensor(2, 3)`` as it was: whatever the process held there, different from run to run.
# A program never sees its process's memory, so these give zeros, which is one of the values a
# plain run may hold there; code that fills them next (``nn.init``, ``.uniform_()``, ``w.data =``)
# ends as a plain run does. ``empty_strided`` and the rest of the family stay out.
ZEROED_METHODS = {"new_empty": "new_zeros"}


def _sizes(args: tuple[Any, ...]) -> tuple[int, ...] | None:
    """``(2, 3)``, ``(torch.Size([2, 3]),)`` as sizes; None for anything else."""
    if len(args) == 1 and isinstance(args[0], torch.Size):
        return tuple(args[0])
    if args and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return tuple(args)
    return None


def _zeroed(zeros: Any, name: str) -> Any:
    def made(*args: Any, **kwargs: Any) -> Any:
        return zeros(*args, **kwargs)

    made.__name__ = made.__qualname__ = name
    made.__module__ = "torch"
    return made


TENSOR_TYPES = {
    "Tensor": (torch.Tensor, None),
    "FloatTensor": (torch.FloatTensor, torch.float32),
    "DoubleTensor": (torch.DoubleTensor, torch.float64),
    "LongTensor": (torch.LongTensor, torch.int64),
    "IntTensor": (torch.IntTensor, torch.int32),
    "BoolTensor": (torch.BoolTensor, torch.bool),
}


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


def _cuda_device_count() -> int:
    """One device where the program runs on CUDA, none where it runs on the CPU (as is_available)."""
    return 1 if _cuda_is_available() else 0


def _nothing_to_do() -> None:
    """``torch.cuda.empty_cache()``, ``torch.cuda.synchronize()``: nothing a program can see."""


def _cuda_seed(seed: Any) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError("torch.cuda.manual_seed takes a whole number")
    torch.cuda.manual_seed_all(seed)  # lazy where there is no CUDA, as in a plain run


def _cuda_members() -> dict[str, Any]:
    """``torch.cuda``: whether the program runs there, and calls that change nothing it can see."""
    members: dict[str, Any] = {"is_available": _cuda_is_available, "device_count": _cuda_device_count}
    for name in ("empty_cache", "synchronize"):
        members[name] = _named_torch(_nothing_to_do, name)
    for name in ("manual_seed", "manual_seed_all"):
        members[name] = _named_torch(_cuda_seed, name)
    return members


def _named_torch(fn: Any, name: str) -> Any:
    def named(*args: Any) -> Any:
        return fn(*args)

    named.__name__ = named.__qualname__ = name
    named.__module__ = "torch"
    return named


def _distributions() -> Namespace:
    members = distribution_members()
    subs = distribution_submodules(members)
    inner = {sub: Namespace(f"torch.distributions.{sub}", found) for sub, found in subs.items()}
    return Namespace("torch.distributions", {**members, **inner})


@cache
def build_namespaces() -> dict[str, Any]:
    """The names every program starts with: ``torch``, ``F`` and a few builtins (shared; do not mutate)."""
    functional = Namespace("torch.nn.functional", _members(F, FUNCTIONAL_FUNCTIONS))
    init = Namespace("torch.nn.init", _members(torch.nn.init, INIT_FUNCTIONS))
    rnn = Namespace("torch.nn.utils.rnn", _members(torch.nn.utils.rnn, NN_UTILS_RNN_FUNCTIONS))
    nn_utils = Namespace("torch.nn.utils", {**_members(torch.nn.utils, NN_UTILS_FUNCTIONS), "rnn": rnn})
    parallel = Namespace("torch.nn.parallel", parallel_members())  # NOTE [torch wrappers]
    nn = Namespace(
        "torch.nn",
        {
            "functional": functional,
            "init": init,
            "utils": nn_utils,
            "parallel": parallel,
            **nn_members(),
            **nn_class_members(),
            "DataParallel": parallel.members["DataParallel"],
        },
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
            "graph": Namespace("torch.autograd.graph", graph_members()),
            # the modules PyTorch defines these in, which older snippets import them from
            "variable": Namespace("torch.autograd.variable", {"Variable": _variable}),
            "function": Namespace("torch.autograd.function", autograd_class_members()),
            **autograd_class_members(),
            **gradcheck_members(),  # NOTE [gradchecks]
        },
    )
    checkpoint = Namespace("torch.utils.checkpoint", checkpoint_members())
    utils = Namespace(
        "torch.utils", {"data": Namespace("torch.utils.data", data_members()), "checkpoint": checkpoint}
    )
    cuda = Namespace(
        "torch.cuda", {**_cuda_members(), "amp": Namespace("torch.cuda.amp", amp_members("torch.cuda.amp"))}
    )
    matmul = Namespace("torch.backends.cuda.matmul")  # speed settings (performance_settings.py)
    cuda_backend = Namespace("torch.backends.cuda", {"matmul": matmul})
    backends = Namespace("torch.backends", {"cudnn": Namespace("torch.backends.cudnn"), "cuda": cuda_backend})
    torch_members = _members(torch, TORCH_FUNCTIONS | TORCH_DTYPES)
    for name in ("linalg", "fft", "special"):  # NOTE [torch surface]
        path = f"torch.{name}"
        torch_members[name] = Namespace(path, _members(getattr(torch, name), registry_functions(path)))
    torch_members.update(
        set_float32_matmul_precision=set_float32_matmul_precision,  # performance_settings.py
        empty=_zeroed(torch.zeros, "empty"),  # NOTE [zeroed memory]
        empty_like=_zeroed(torch.zeros_like, "empty_like"),
        __version__=str(torch.__version__),  # NOTE [version string]
        nn=nn,
        optim=optim,
        autograd=autograd,
        utils=utils,
        cuda=cuda,
        backends=backends,
        distributions=_distributions(),
        Generator=generator,
        **{name: TensorType(f"torch.{name}", cls, dtype) for name, (cls, dtype) in TENSOR_TYPES.items()},
        no_grad=GradModeEntry("no_grad", enabled=False),
        enable_grad=GradModeEntry("enable_grad", enabled=True),
        set_grad_enabled=GradModeEntry("set_grad_enabled", enabled=None),
        amp=Namespace("torch.amp", amp_members("torch.amp")),  # NOTE [mixed precision]
        autocast=AutocastEntry("autocast", enabled=None),
    )
    builtins = {name: SafeBuiltin(name, fn) for name, fn in BUILTINS.items()}
    # nn and optim are bound from the start, as F is: a pasted snippet may leave out its imports.
    return {"torch": Namespace("torch", torch_members), "F": functional, "nn": nn, "optim": optim, **builtins}


# NOTE [version string]
# ``print(torch.__version__)`` opens many snippets. It is the one name with underscores a program
# may read from torch, as plain text, and only as ``torch.__version__`` written out (the parser
# checks the owner is torch itself); every other dunder stays refused (NOTE [own names]).


def _tqdm_module() -> Namespace:
    members = tqdm_members()
    inner = {sub: Namespace(f"tqdm.{sub}", members) for sub in ("auto", "notebook")}
    return Namespace("tqdm", {**members, **inner})


@cache
def python_modules() -> dict[str, Namespace]:
    """The plain-Python modules a program may import (not bound until it does): ``math``, ``random``.

    ``numpy`` and ``matplotlib`` are stand-ins (NOTE [stand-in modules]).

    The modules training code imports for its bookkeeping are stand-ins with closed lists
    (NOTE [stand-in modules: bookkeeping] in ``stand_ins.py``, NOTE [program copies] in ``copies.py``).

    >>> sorted(python_modules())[:4], python_modules()["math"].member("sqrt")(4.0)
    (['argparse', 'collections', 'copy', 'dataclasses'], 2.0)
    """
    pyplot = Namespace("matplotlib.pyplot", refusal=NO_PLOTS)
    return {
        "math": Namespace("math", math_members()),
        "random": Namespace("random", random_members()),
        "time": Namespace("time", time_members()),
        "argparse": Namespace("argparse", argparse_members()),
        "logging": Namespace("logging", logging_members()),
        "warnings": Namespace("warnings", warnings_members()),
        "copy": Namespace("copy", copy_members()),
        "collections": Namespace("collections", collections_members()),
        "itertools": Namespace("itertools", itertools_members()),
        "typing": Namespace("typing", typing_members()),
        "functools": Namespace("functools", functools_members()),
        "tqdm": _tqdm_module(),
        "os": Namespace(  # NOTE [stand-in modules: os] in os_paths.py
            "os",
            {**os_members(), "path": Namespace("os.path", os_path_members(), refusal=NO_SYSTEM)},
            refusal=NO_SYSTEM,
        ),
        "sys": Namespace("sys", refusal=NO_SYSTEM),
        "dataclasses": Namespace("dataclasses", dataclasses_members()),  # NOTE [program dataclasses]
        "gc": Namespace("gc", {"collect": _collect}, refusal=NO_COLLECTOR),
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
NO_COLLECTOR = "the collector's other parts reach every object of the process"


def _collect(generation: Any = 2) -> int:
    """``gc.collect()``: Python's collector runs, as in a plain run (weakly held graph nodes go)."""
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise TypeError("gc.collect takes a generation number")
    return gc.collect(generation)


_collect.__name__ = "collect"
_collect.__module__ = "gc"


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
