"""Checked proxies for ``torch.nn`` modules and ``torch.optim`` optimizers (NOTE [checked objects]).

A program builds a module or an optimizer by calling a factory from the
``nn`` or ``optim`` namespace (``nn.Linear(2, 3)``, ``optim.SGD(params,
lr=0.1)``). The factory builds the real PyTorch object and hands the program a
proxy that answers only the members listed here.

# NOTE [proxy values]
What goes into a proxy and what comes out is kept to the language's own
values. Settings given to a constructor are numbers, ``True``/``False``,
text, ``None``, torch dtypes, and short tuples or lists of numbers
(``kernel_size=(3, 3)``, ``betas=(0.9, 0.99)``); a tensor only where PyTorch
takes one (a loss's ``weight`` and ``pos_weight``), a module only inside
``nn.Sequential``. A module's forward takes tensors, numbers and tuples of
tensors (an LSTM's ``(h, c)``). Out come tensors, numbers, lists and tuples
of those, and proxies (``train()`` returns the same proxy): never the module
or optimizer, a bound method of one, or a Python function the program could
take apart. Names starting with ``_`` are never listed.

# NOTE [optimizer without Dynamo]
``Optimizer.add_param_group`` and ``zero_grad`` are wrapped by PyTorch in
``torch._disable_dynamo`` and ``step`` in ``_use_grad_for_differentiable``;
each imports ``torch._dynamo`` on first use: about two seconds inside the
program's first ``optim.SGD(...)``, in the middle of a recording. Nothing here
is compiled, so the proxy calls the functions those wrappers wrap
(``inspect.unwrap``): it builds the optimizer with the unwrapped
``add_param_group`` shadowing the wrapped one on that instance only, and runs
the unwrapped ``step`` under ``torch.no_grad()``, as the wrapper does for a
non-differentiable optimizer. What else the step wrapper does is run step
hooks and mark the profiler; a program can register neither. Every optimizer
runs with ``foreach=False`` and ``fused=None``: one plain ATen op per
parameter, each of which the size guard sees.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch import nn

from app.core.language.hints import refused
from app.core.language.objects import Checked

__all__ = [
    "NN_MODULES",
    "OPTIMIZER_SETTINGS",
    "ModuleFactory",
    "ModuleProxy",
    "OptimizerFactory",
    "OptimizerProxy",
    "ParamGroupProxy",
    "SequentialFactory",
    "nn_members",
    "optim_members",
]

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

# The settings a program may give each optimizer, besides its list of tensors.
OPTIMIZER_SETTINGS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "SGD": frozenset({"lr", "momentum", "dampening", "weight_decay", "nesterov"}),
        "Adam": frozenset({"lr", "betas", "eps", "weight_decay", "amsgrad"}),
        "AdamW": frozenset({"lr", "betas", "eps", "weight_decay", "amsgrad"}),
        "RMSprop": frozenset({"lr", "alpha", "eps", "weight_decay", "momentum", "centered"}),
        "Adagrad": frozenset({"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"}),
    }
)

# Constructor settings that take a tensor in PyTorch: a loss's class weights.
TENSOR_SETTINGS = frozenset({"weight", "pos_weight"})

# Settings PyTorch takes that stay out, with the reason a learner is shown.
REFUSED_SETTINGS: Mapping[str, str] = MappingProxyType(
    {"sparse": "sparse gradients are not part of programs: leave out sparse=True"}
)

MAX_SETTING_ITEMS = 8  # kernel_size=(3, 3), normalized_shape=[4, 5], betas=(0.9, 0.99)

# Layers of one RNN, LSTM or GRU. PyTorch builds each layer's parameters in a
# Python loop; without this, nn.LSTM(2, 2, num_layers=10**6) would spend
# seconds in that loop before the guard's cap on operations stopped it.
MAX_LAYERS = 100

# nn.RNN, nn.LSTM and nn.GRU take ``*args``; their first positional settings are these.
_RNN_POSITIONAL = ("input_size", "hidden_size", "num_layers")

_PLAIN = (bool, int, float, str, type(None), torch.dtype, torch.device)


def nn_members() -> dict[str, Any]:
    """The ``torch.nn`` classes a program may build, by name (each makes a :class:`ModuleProxy`).

    >>> nn_members()["Linear"](2, 3).kind
    'an nn.Linear module'
    """
    members: dict[str, Any] = {name: ModuleFactory(getattr(nn, name)) for name in NN_MODULES}
    members["Sequential"] = SequentialFactory()
    members["TransformerEncoder"] = TransformerEncoderFactory()
    return members


def optim_members() -> dict[str, Any]:
    """The ``torch.optim`` optimizers a program may build, by name (each makes an :class:`OptimizerProxy`).

    >>> sorted(optim_members())
    ['Adagrad', 'Adam', 'AdamW', 'RMSprop', 'SGD']
    """
    return {name: OptimizerFactory(getattr(torch.optim, name)) for name in OPTIMIZER_SETTINGS}


# -- factories ----------------------------------------------------------------


class ModuleFactory:
    """``nn.<Name>(...)`` in a program: checks the settings, builds the module, wraps it.

    Named like the class it builds (``__name__``, ``__module__ == "torch.nn"``),
    so that messages about a failed call speak of PyTorch.

    >>> relu = ModuleFactory(nn.ReLU)
    >>> relu.__name__, relu(inplace=True).kind
    ('ReLU', 'an nn.ReLU module')
    >>> relu(torch.ones(1))
    Traceback (most recent call last):
    ...
    app.core.model.errors.ProgramError: nn.ReLU takes numbers, True/False, text and torch dtypes
    as settings, not a tensor for inplace; to record a script of your own with full Python,
    run: python -m app run SCRIPT.py
    """

    def __init__(self, cls: type[nn.Module]) -> None:
        self._cls = cls
        self.__name__ = self.__qualname__ = cls.__name__
        self.__module__ = "torch.nn"

    def __call__(self, *args: Any, **kwargs: Any) -> ModuleProxy:
        where = f"nn.{self.__name__}"
        _check_settings(where, _named_arguments(self._cls, args, kwargs))
        return ModuleProxy(self._cls(*args, **kwargs))

    def __repr__(self) -> str:
        return f"nn.{self.__name__}"


class SequentialFactory(ModuleFactory):
    """``nn.Sequential(m1, m2, ...)``: takes module proxies only, in order.

    >>> seq = SequentialFactory()(nn_members()["Linear"](2, 3), nn_members()["Tanh"]())
    >>> [name for name, _ in seq.named_parameters()]
    ['0.weight', '0.bias']
    """

    def __init__(self) -> None:
        super().__init__(nn.Sequential)

    def __call__(self, *args: Any, **kwargs: Any) -> ModuleProxy:
        if kwargs:
            raise refused("nn.Sequential takes its modules in order, without keywords")
        modules = []
        for arg in args:
            if not isinstance(arg, ModuleProxy):
                raise refused(f"nn.Sequential takes modules such as nn.Linear(2, 3), not {_kind(arg)}")
            modules.append(arg._module)
        return ModuleProxy(nn.Sequential(*modules))


class TransformerEncoderFactory(ModuleFactory):
    """``nn.TransformerEncoder(layer, num_layers)``: copies of one layer module, and an optional norm.

    >>> layer = nn_members()["TransformerEncoderLayer"](4, 2, dim_feedforward=8)
    >>> encoder = TransformerEncoderFactory()(layer, num_layers=2, enable_nested_tensor=False)
    >>> encoder.call(torch.ones(3, 1, 4)).shape
    torch.Size([3, 1, 4])
    """

    def __init__(self) -> None:
        super().__init__(nn.TransformerEncoder)

    def __call__(self, *args: Any, **kwargs: Any) -> ModuleProxy:
        where = "nn.TransformerEncoder"
        settings = _named_arguments(self._cls, args, kwargs)
        layer, norm = settings.pop("encoder_layer", None), settings.pop("norm", None)
        if not isinstance(layer, ModuleProxy) or not isinstance(layer._module, nn.TransformerEncoderLayer):
            raise refused(f"{where} takes a layer module first, such as nn.TransformerEncoderLayer(8, 2)")
        if norm is not None and not isinstance(norm, ModuleProxy):
            raise refused(f"{where} takes a module such as nn.LayerNorm(8) for norm, not {_kind(norm)}")
        _check_settings(where, settings)
        built = {**settings, "norm": norm._module if norm is not None else None}
        return ModuleProxy(nn.TransformerEncoder(layer._module, **built))


class OptimizerFactory:
    """``optim.<Name>(params, ...)`` in a program: checks the settings, builds the optimizer, wraps it.

    ``params`` is a list of tensors (``model.parameters()``, or the program's own
    leaves); the settings are those in :data:`OPTIMIZER_SETTINGS`.

    >>> w = torch.ones(2, requires_grad=True)
    >>> OptimizerFactory(torch.optim.SGD)([w], lr=0.1, momentum=0.9).kind
    'an optim.SGD optimizer'
    >>> OptimizerFactory(torch.optim.SGD)([w], lr=0.1, foreach=True)
    Traceback (most recent call last):
    ...
    app.core.model.errors.ProgramError: optim.SGD has no setting 'foreach' in programs;
    it takes dampening, lr, momentum, nesterov, weight_decay; to record a script of your own
    with full Python, run: python -m app run SCRIPT.py
    """

    def __init__(self, cls: type[torch.optim.Optimizer]) -> None:
        self._cls = cls
        self.__name__ = self.__qualname__ = cls.__name__
        self.__module__ = "torch.optim"

    def __call__(self, params: Any, *args: Any, **kwargs: Any) -> OptimizerProxy:
        where = f"optim.{self.__name__}"
        tensors = _parameter_list(where, params)
        settings = _named_arguments(self._cls, (tensors, *args), kwargs)
        settings.pop("params", None)
        allowed = OPTIMIZER_SETTINGS[self.__name__]
        for name, value in settings.items():
            if name not in allowed:
                listed = ", ".join(sorted(allowed))
                raise refused(f"{where} has no setting '{name}' in programs; it takes {listed}")
            _check_number_setting(where, name, value)
        return OptimizerProxy(_build_optimizer(self._cls, tensors, args, kwargs))

    def __repr__(self) -> str:
        return f"optim.{self.__name__}"


def _named_arguments(cls: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments by the names the constructor gives them (``*<i>`` for one it does not name)."""
    parameters = inspect.signature(cls).parameters.values()
    order = [
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if not order and any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters):
        order = list(_RNN_POSITIONAL)
    named = {order[i] if i < len(order) else f"*{i}": value for i, value in enumerate(args)}
    named.update(kwargs)
    return named


def _check_settings(where: str, settings: Mapping[str, Any]) -> None:
    for name, value in settings.items():
        if name.startswith("_"):
            raise refused(f"{where} has no setting '{name}' in programs")
        if name in REFUSED_SETTINGS and value:
            raise refused(f"{where}: {REFUSED_SETTINGS[name]}")
        if name == "num_layers" and isinstance(value, int) and value > MAX_LAYERS:
            raise refused(f"{where} has at most {MAX_LAYERS} layers in programs")
        if isinstance(value, torch.Tensor) and name in TENSOR_SETTINGS:
            continue
        if not _is_plain_setting(value):
            setting = "" if name.startswith("*") else f" for {name}"
            raise refused(
                f"{where} takes numbers, True/False, text and torch dtypes as settings, "
                f"not {_kind(value)}{setting}"
            )


def _check_number_setting(where: str, name: str, value: Any) -> None:
    numbers = (bool, int, float)
    items = value if isinstance(value, (tuple, list)) and name == "betas" else (value,)
    if len(items) > MAX_SETTING_ITEMS or not all(isinstance(item, numbers) for item in items):
        raise refused(f"{where} takes a plain number for {name}, not {_kind(value)}")


def _is_plain_setting(value: Any) -> bool:
    if isinstance(value, (tuple, list)):  # torch.Size too: nn.LayerNorm(x.shape[1:])
        return len(value) <= MAX_SETTING_ITEMS and all(isinstance(item, (bool, int, float)) for item in value)
    return isinstance(value, _PLAIN)


def _parameter_list(where: str, params: Any) -> list[torch.Tensor]:
    hint = "a list of tensors, such as model.parameters() or [w, b]"
    if isinstance(params, ModuleProxy):
        raise refused(f"{where} takes {hint}, not {_kind(params)}: pass its parameters()")
    if not isinstance(params, (list, tuple)):
        raise refused(f"{where} takes {hint}, not {_kind(params)}")
    for item in params:
        if not isinstance(item, torch.Tensor):
            raise refused(f"{where} takes {hint}; this list holds {_kind(item)}")
    return list(params)


def _build_optimizer(
    cls: type[torch.optim.Optimizer],
    params: list[torch.Tensor],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
) -> torch.optim.Optimizer:
    """The optimizer, built without importing Dynamo (NOTE [optimizer without Dynamo])."""
    optimizer = cls.__new__(cls)
    add_group = inspect.unwrap(cls.add_param_group)
    optimizer.add_param_group = types.MethodType(add_group, optimizer)  # type: ignore[method-assign]
    plain = {"foreach": False, "fused": None}  # RMSprop has no fused implementation, nor its setting
    known = inspect.signature(cls).parameters
    try:
        init: Callable[..., None] = cls.__init__
        init(optimizer, params, *args, **{k: v for k, v in plain.items() if k in known}, **kwargs)
    finally:
        del optimizer.add_param_group
    return optimizer


def _kind(value: Any) -> str:
    if isinstance(value, Checked):
        return value.kind
    if isinstance(value, torch.Tensor):
        return "a tensor"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} holding {', '.join(sorted({_kind(v) for v in value})) or 'nothing'}"
    if callable(value):
        return "a function"
    return f"a {type(value).__name__}"


# -- modules --------------------------------------------------------------------


class ModuleProxy(Checked):
    """A ``torch.nn`` module as a program holds it (NOTE [checked objects], NOTE [proxy values]).

    Listed: calling it (its forward), ``parameters()``, ``named_parameters()``,
    ``zero_grad()``, ``train()``, ``eval()``, its own parameters as attributes
    (``lin.weight``) and, read-only, the settings PyTorch lists as the class's
    constants (``rnn.hidden_size``).

    >>> lin = ModuleProxy(nn.Linear(2, 3))
    >>> lin.call(torch.ones(2)).shape
    torch.Size([3])
    >>> [name for name, _ in lin.named_parameters()], lin.get_attribute("out_features")
    (['weight', 'bias'], 3)
    >>> lin.get_attribute("state_dict")
    Traceback (most recent call last):
    ...
    KeyError: 'state_dict'
    """

    METHODS = ("eval", "named_parameters", "parameters", "to", "train", "zero_grad")

    def __init__(self, module: nn.Module) -> None:
        self._module = module
        self.kind = f"an nn.{type(module).__name__} module"

    def __repr__(self) -> str:
        """PyTorch's own text for the module, as ``print(model)`` shows it."""
        return repr(self._module)

    module = property(
        lambda self: self._module, doc="The wrapped module (for the evaluator, never a program)."
    )

    # -- the Checked contract --
    def get_attribute(self, name: str) -> Any:
        """The module's own parameter ``name`` (``weight``), or a setting it was built with."""
        if name in self._own_parameters():
            return self._own_parameters()[name]
        if name in self._settings():
            return self._settings()[name]
        raise KeyError(name)

    def method(self, name: str) -> Callable[..., Any]:
        """One of :attr:`METHODS`, bound to this proxy."""
        if name not in self.METHODS:
            raise KeyError(name)
        bound: Callable[..., Any] = getattr(self, name)
        return bound

    def members(self) -> list[str]:
        """Parameters, settings and methods, sorted."""
        return sorted({*self._own_parameters(), *self._settings(), *self.METHODS})

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module's forward on tensors, numbers and tuples of tensors."""
        for value in (*args, *kwargs.values()):
            _check_input(self.kind, value)
        if any(name.startswith("_") for name in kwargs):
            raise refused(f"{self.kind} takes no private keywords")
        result = self._module(*args, **kwargs)
        if not _is_plain_result(result):
            raise refused(f"{self.kind} gave back something programs cannot hold")
        return result

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """Parameters, then buffers (``running_mean``), by their paths in the module."""
        yield from self._module.named_parameters()
        yield from self._module.named_buffers()

    # -- listed methods --
    def parameters(self) -> list[torch.Tensor]:
        """The parameter tensors, in PyTorch's order."""
        return list(self._module.parameters())

    def named_parameters(self) -> list[tuple[str, torch.Tensor]]:
        """``(path, tensor)`` for every parameter (``weight``, ``0.bias``)."""
        return list(self._module.named_parameters())

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients (to ``None`` by default, as PyTorch does)."""
        if not isinstance(set_to_none, bool):
            raise refused("zero_grad(set_to_none=...) takes True or False")
        self._module.zero_grad(set_to_none=set_to_none)

    def train(self, mode: bool = True) -> ModuleProxy:
        """Training mode (dropout active, batch statistics); returns this proxy."""
        if not isinstance(mode, bool):
            raise refused("train(mode) takes True or False")
        self._module.train(mode)
        return self

    def eval(self) -> ModuleProxy:
        """Evaluation mode; returns this proxy."""
        self._module.eval()
        return self

    def to(self, device: Any) -> ModuleProxy:
        """``model.to(device)`` for the device the program runs on: the module is there already.

        The device is chosen in the window or with ``--device`` (the program is made there), so
        ``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`` names it.
        """
        if not isinstance(device, (str, torch.device)):
            raise refused(f"to() on {self.kind} takes a device here, such as model.to(device)")
        tensors = [t for _, t in self.named_tensors()]
        here = tensors[0].device if tensors else torch.get_default_device()
        try:
            wanted = torch.device(device)
        except RuntimeError:
            raise refused(f"{device!r} is not a device: write 'cpu' or 'cuda'") from None
        if wanted.type != here.type or (wanted.index is not None and wanted != here):
            raise refused(
                f"this program runs on {here} (chosen in the window or with --device), "
                f"so {self.kind} cannot move to {wanted}"
            )
        return self

    # -- helpers --
    def _own_parameters(self) -> dict[str, torch.Tensor]:
        return dict(self._module.named_parameters(recurse=False))

    def _settings(self) -> dict[str, Any]:
        names = getattr(type(self._module), "__constants__", ())
        values = {name: getattr(self._module, name, None) for name in names if not name.startswith("_")}
        return {name: value for name, value in values.items() if _is_plain_setting(value)}


def _check_input(kind: str, value: Any, depth: int = 0) -> None:
    if isinstance(value, (torch.Tensor, bool, int, float, type(None))):
        return
    if isinstance(value, (tuple, list)) and depth < 2:
        for item in value:
            _check_input(kind, item, depth + 1)
        return
    raise refused(f"{kind} takes tensors, numbers and tuples of tensors, not {_kind(value)}")


def _is_plain_result(value: Any) -> bool:
    if isinstance(value, (torch.Tensor, bool, int, float, type(None))):
        return True
    if isinstance(value, (tuple, list)):
        return all(_is_plain_result(item) for item in value)
    return False


# -- optimizers -------------------------------------------------------------------


class OptimizerProxy(Checked):
    """A ``torch.optim`` optimizer as a program holds it: ``step()`` and ``zero_grad()``.

    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = optim_members()["SGD"]([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0., 0.], requires_grad=True)
    >>> opt.method("state_dict")
    Traceback (most recent call last):
    ...
    KeyError: 'state_dict'
    >>> opt.get_attribute("param_groups")[0].item("lr")
    0.5
    """

    METHODS = ("step", "zero_grad")

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self._optimizer = optimizer
        self.kind = f"an optim.{type(optimizer).__name__} optimizer"

    def __repr__(self) -> str:
        """PyTorch's own text for the optimizer and its settings."""
        return repr(self._optimizer)

    def method(self, name: str) -> Callable[..., Any]:
        """``step`` or ``zero_grad``, bound to this proxy."""
        if name not in self.METHODS:
            raise KeyError(name)
        bound: Callable[..., Any] = getattr(self, name)
        return bound

    def members(self) -> list[str]:
        """``step``, ``zero_grad`` and ``param_groups``."""
        return [*self.METHODS, "param_groups"]

    def get_attribute(self, name: str) -> Any:
        """``param_groups``: a new list of checked groups (NOTE [parameter groups])."""
        if name != "param_groups":
            raise KeyError(name)
        where = f"optim.{type(self._optimizer).__name__}"
        return [ParamGroupProxy(where, group) for group in self._optimizer.param_groups]

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """The optimizer's state tensors as ``state[<i>].<key>`` (``state[0].momentum_buffer``).

        ``<i>`` is the parameter's place in the list the optimizer was given.
        """
        for index, param in enumerate(self._params()):
            for key, value in self._optimizer.state.get(param, {}).items():
                if isinstance(value, torch.Tensor):
                    yield f"state[{index}].{key}", value

    def step(self, *closure: Any, **kwargs: Any) -> None:
        """One update of every parameter from its ``.grad``; takes no closure."""
        if closure or kwargs:
            raise refused(
                "step() takes no closure in programs: compute the loss and call backward() before step()"
            )
        raw_step = inspect.unwrap(type(self._optimizer).step)
        with torch.no_grad():  # what the wrapper does when differentiable=False
            raw_step(self._optimizer)
        # What a scheduler's wrapper of step() marks, so its step() knows this one came first.
        setattr(self._optimizer, "_opt_called", True)  # noqa: B010

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of the optimizer's parameters (to ``None`` by default)."""
        if not isinstance(set_to_none, bool):
            raise refused("zero_grad(set_to_none=...) takes True or False")
        inspect.unwrap(torch.optim.Optimizer.zero_grad)(self._optimizer, set_to_none)

    def _params(self) -> list[torch.Tensor]:
        return [p for group in self._optimizer.param_groups for p in group["params"]]


# NOTE [parameter groups]
# ``for g in optimizer.param_groups: g["lr"] *= 0.1`` is how snippets decay the learning rate,
# and ``optimizer.param_groups[0]["lr"]`` how they print it. A group is a dict PyTorch reads at
# every step, so a program gets a proxy for it: its hyperparameters are read as numbers and
# those the optimizer takes as settings are written as checked numbers, into the very dict the
# next step() reads; "params" is read as a new list of the parameters themselves. Nothing else
# of the optimizer (its state, its defaults, the dict itself) is reachable through a group.
class ParamGroupProxy(Checked):
    """One of an optimizer's ``param_groups``, as a program holds it (NOTE [parameter groups]).

    >>> w = torch.ones(1, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> group = ParamGroupProxy("optim.SGD", opt.param_groups[0])
    >>> group.set_item("lr", group.item("lr") * 0.1); opt.param_groups[0]["lr"]
    0.05
    >>> group.item("params")[0] is w
    True
    """

    def __init__(self, where: str, group: dict[str, Any]) -> None:
        self._group = group
        self._where = where
        self.kind = f"a parameter group of an {where} optimizer"

    def __repr__(self) -> str:
        return repr({key: value for key, value in self._group.items() if key != "params"})

    def item(self, key: Any) -> Any:
        """``group["lr"]``: a hyperparameter, or ``group["params"]`` as a new list."""
        if not isinstance(key, str) or key not in self._group:
            raise KeyError(key)
        value = self._group[key]
        if key == "params":
            return list(value)
        if not (_is_plain_setting(value) or value is None):
            raise refused(f"{self._where}'s group setting '{key}' is not a plain value in programs")
        return list(value) if isinstance(value, list) else value

    def set_item(self, key: Any, value: Any) -> None:
        """``group["lr"] = 0.01``: a setting the optimizer takes, checked like one given to it."""
        name = self._where.split(".", 1)[1]
        allowed = OPTIMIZER_SETTINGS[name]
        if not isinstance(key, str) or key not in allowed:
            listed = ", ".join(sorted(allowed))
            raise refused(f"in a group of {self._where} only its settings can be assigned: {listed}")
        _check_number_setting(self._where, key, value)
        self._group[key] = tuple(value) if isinstance(value, list) else value

    def members(self) -> list[str]:
        return []

    def __len__(self) -> int:
        return len(self._group)
