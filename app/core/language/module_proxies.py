"""Checked proxies for ``torch.nn`` modules: the classes a program may build, their factories
(``nn.Linear(2, 3)``, ``nn.Sequential(...)``) and :class:`ModuleProxy` (NOTE [proxy values] in
``proxies.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from app.core.language.hints import refused
from app.core.language.objects import Checked
from app.core.language.proxies import check_settings, is_plain_setting, kind_text, named_arguments

__all__ = [
    "NN_MODULES",
    "ModuleFactory",
    "ModuleProxy",
    "SequentialFactory",
    "TransformerEncoderFactory",
    "nn_members",
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


def nn_members() -> dict[str, Any]:
    """The ``torch.nn`` classes a program may build, by name (each makes a :class:`ModuleProxy`).

    >>> nn_members()["Linear"](2, 3).kind
    'an nn.Linear module'
    """
    members: dict[str, Any] = {name: ModuleFactory(getattr(nn, name)) for name in NN_MODULES}
    members["Sequential"] = SequentialFactory()
    members["TransformerEncoder"] = TransformerEncoderFactory()
    return members


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
        check_settings(where, named_arguments(self._cls, args, kwargs))
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
                raise refused(f"nn.Sequential takes modules such as nn.Linear(2, 3), not {kind_text(arg)}")
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
        settings = named_arguments(self._cls, args, kwargs)
        layer, norm = settings.pop("encoder_layer", None), settings.pop("norm", None)
        if not isinstance(layer, ModuleProxy) or not isinstance(layer._module, nn.TransformerEncoderLayer):
            raise refused(f"{where} takes a layer module first, such as nn.TransformerEncoderLayer(8, 2)")
        if norm is not None and not isinstance(norm, ModuleProxy):
            raise refused(f"{where} takes a module such as nn.LayerNorm(8) for norm, not {kind_text(norm)}")
        check_settings(where, settings)
        built = {**settings, "norm": norm._module if norm is not None else None}
        return ModuleProxy(nn.TransformerEncoder(layer._module, **built))


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
        """Parameters, then buffers (``running_mean``), by their paths in the module, as
        ``named_parameters()`` and ``named_buffers()`` give them. Walked with a stack: torch's own
        walk recurses once per level for every module it yields, so a chain of 2,000 nested
        ``nn.Sequential`` (asked after each statement that binds one) took minutes."""
        modules = _modules_in_order(self._module)
        for own in (nn.Module.named_parameters, nn.Module.named_buffers):
            seen: set[int] = set()
            for prefix, module in modules:
                for name, tensor in own(module, recurse=False, remove_duplicate=False):
                    if id(tensor) not in seen:
                        seen.add(id(tensor))
                        yield prefix + name, tensor

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
        return {name: value for name, value in values.items() if is_plain_setting(value)}


def _check_input(kind: str, value: Any, depth: int = 0) -> None:
    if isinstance(value, (torch.Tensor, bool, int, float, type(None))):
        return
    if isinstance(value, (tuple, list)) and depth < 2:
        for item in value:
            _check_input(kind, item, depth + 1)
        return
    raise refused(f"{kind} takes tensors, numbers and tuples of tensors, not {kind_text(value)}")


def _is_plain_result(value: Any) -> bool:
    if isinstance(value, (torch.Tensor, bool, int, float, type(None))):
        return True
    if isinstance(value, (tuple, list)):
        return all(_is_plain_result(item) for item in value)
    return False


def _modules_in_order(root: nn.Module) -> list[tuple[str, nn.Module]]:
    """``root``'s modules each once, with the prefix of their paths, in ``named_modules()``'s order."""
    found: list[tuple[str, nn.Module]] = []
    seen: set[int] = set()
    stack = [("", root)]
    while stack:
        prefix, module = stack.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        found.append((prefix, module))
        children = [(f"{prefix}{name}.", child) for name, child in module.named_children()]
        stack.extend(reversed(children))
    return found
