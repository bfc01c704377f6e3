"""Checked proxies for ``torch.nn`` modules: the classes a program may build, their factories
(``nn.Linear(2, 3)``, ``nn.Sequential(...)``) and :class:`ModuleProxy` (NOTE [proxy values] in
``proxies.py``)."""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from app.core.language.hints import refused
from app.core.language.objects import Checked, listed_method
from app.core.language.proxies import check_settings, is_plain_setting, kind_text, named_arguments
from app.core.language.torch_names import NN_MODULES

__all__ = [
    "NN_MODULES",
    "ContainerProxy",
    "ModuleFactory",
    "ModuleProxy",
    "SequentialFactory",
    "TransformerEncoderFactory",
    "held_module",
    "nn_members",
    "unwrap",
]


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
        if len(args) == 1 and isinstance(args[0], dict):  # nn.Sequential(OrderedDict([("fc", ...)]))
            named = args[0]
            if not all(isinstance(k, str) and isinstance(v, ModuleProxy) for k, v in named.items()):
                raise refused(
                    "nn.Sequential takes a dict of modules by name, such as {'fc': nn.Linear(2, 3)}"
                )
            return ModuleProxy(
                nn.Sequential(collections.OrderedDict((k, v._module) for k, v in named.items()))
            )
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

    # nn.Module's public surface, as a program uses it on any module (NOTE [module surface]).
    METHODS = (
        "eval",
        "named_parameters",
        "parameters",
        "to",
        "train",
        "zero_grad",
        "cuda",
        "cpu",
        "float",
        "double",
        "half",
        "requires_grad_",
        "children",
        "named_children",
        "modules",
        "named_modules",
        "buffers",
        "named_buffers",
        "state_dict",
        "load_state_dict",
        "add_module",
        "register_buffer",
        "register_parameter",
    )

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
        """The module's own parameter ``name`` (``weight``), a setting it was built with, or a value
        the program set on it (``lin.cache = t``)."""
        if name in self._own_parameters():
            return self._own_parameters()[name]
        buffers = self._module._buffers
        if name in buffers:  # bn.running_mean
            return buffers[name]
        if name in self._settings():
            return self._settings()[name]
        if name in _own_values(self._module) or name in self._module._modules:  # model.module, layer.linear1
            return _wrapped(getattr(self._module, name))
        raise KeyError(name)

    def set_attribute(self, name: str, value: Any) -> None:
        """``lin.cache = t``: a name of the program's own, one the module does not have already;
        ``lin.weight = nn.Parameter(t)``: a parameter, buffer or module in its place, set as
        nn.Module sets it (NOTE [module attributes])."""
        module = self._module
        if name in module._parameters or name in module._buffers or name in module._modules:
            if not isinstance(value, _LAYER_VALUES):
                raise KeyError(name)  # a function or object of the program's is no part of a layer
            setattr(module, name, value.module if isinstance(value, ModuleProxy) else value)
            return
        own = _own_values(module)
        if name.startswith(("__", "lens_")) or (name not in own and hasattr(module, name)):
            raise KeyError(name)
        setattr(module, name, value.module if isinstance(value, ModuleProxy) else value)
        own.add(name)

    def delete_attribute(self, name: str) -> None:
        """``del lin.cache``: a value the program set on it."""
        own = _own_values(self._module)
        if name not in own:
            raise KeyError(name)
        delattr(self._module, name)
        own.discard(name)

    def method(self, name: str) -> Callable[..., Any]:
        """One of :attr:`METHODS`, bound to this proxy."""
        return listed_method(self, name, self.METHODS)

    def members(self) -> list[str]:
        """Parameters, settings and methods, sorted."""
        return sorted({*self._own_parameters(), *self._module._buffers, *self._settings(), *self.METHODS})

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
        ``nn.Sequential`` (asked after each statement that binds one) took minutes. A path is
        spelled only for a module that holds a tensor (the chain's every level spelled its own,
        each one longer than the last)."""
        modules = _modules_in_order(self._module)
        for own in ("_parameters", "_buffers"):
            seen: set[int] = set()
            for place in modules:
                tensors = vars(place[2])[own]
                if not tensors:
                    continue
                prefix = _path(place)
                for name, tensor in tensors.items():
                    if tensor is not None and id(tensor) not in seen:
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

    def requires_grad_(self, requires_grad: bool = True) -> ModuleProxy:
        """Turn gradients of every parameter on or off; returns this proxy."""
        if not isinstance(requires_grad, bool):
            raise refused("requires_grad_(...) takes True or False")
        self._module.requires_grad_(requires_grad)
        return self

    def float(self) -> ModuleProxy:
        """Parameters and buffers as float32; returns this proxy."""
        self._module.float()
        return self

    def double(self) -> ModuleProxy:
        """Parameters and buffers as float64; returns this proxy."""
        self._module.double()
        return self

    def half(self) -> ModuleProxy:
        """Parameters and buffers as float16; returns this proxy."""
        self._module.half()
        return self

    def children(self) -> list[ModuleProxy]:
        """The modules it holds directly, each as the program holds it."""
        return [_wrapped(m) for m in self._module.children()]

    def named_children(self) -> list[tuple[str, ModuleProxy]]:
        return [(name, _wrapped(m)) for name, m in self._module.named_children()]

    def modules(self) -> list[ModuleProxy]:
        """This module and every module inside it, in PyTorch's order."""
        return [_wrapped(m) for m in self._module.modules()]

    def named_modules(self) -> list[tuple[str, ModuleProxy]]:
        return [(name, _wrapped(m)) for name, m in self._module.named_modules()]

    def buffers(self) -> list[torch.Tensor]:
        return list(self._module.buffers())

    def named_buffers(self) -> list[tuple[str, torch.Tensor]]:
        return list(self._module.named_buffers())

    def state_dict(self, *, prefix: str = "", keep_vars: bool = False) -> dict[str, torch.Tensor]:
        """PyTorch's own state dict: its parameters and buffers, detached, by path."""
        if not isinstance(prefix, str) or not isinstance(keep_vars, bool):
            raise refused("state_dict(...) takes prefix= as text and keep_vars= as True or False")
        return self._module.state_dict(prefix=prefix, keep_vars=keep_vars)

    def load_state_dict(self, state: Any, strict: bool = True) -> Any:
        """Copy tensors into the parameters and buffers, by path (a dict of tensors only)."""
        if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
        ):
            raise refused("load_state_dict(...) takes a dict of tensors by name, as state_dict() gives")
        if not isinstance(strict, bool):
            raise refused("load_state_dict(..., strict=...) takes True or False")
        return self._module.load_state_dict(state, strict=strict)

    def add_module(self, name: Any, module: Any) -> None:
        """``seq.add_module("fc", nn.Linear(2, 3))``: a module the program made, under a new name."""
        if not isinstance(name, str) or not isinstance(module, (ModuleProxy, type(None))):
            raise refused("add_module(name, module) takes a name and a module such as nn.Linear(2, 3)")
        self._module.add_module(name, None if module is None else module.module)

    def register_buffer(self, name: Any, tensor: Any, persistent: bool = True) -> None:
        """A tensor kept with the module (moved and saved with it), not a parameter."""
        if not isinstance(name, str) or not isinstance(tensor, (torch.Tensor, type(None))):
            raise refused("register_buffer(name, tensor) takes a name and a tensor")
        self._module.register_buffer(name, tensor, persistent=bool(persistent))

    def register_parameter(self, name: Any, param: Any) -> None:
        """``m.register_parameter("scale", nn.Parameter(...))``."""
        if not isinstance(name, str) or not isinstance(param, (torch.nn.Parameter, type(None))):
            raise refused("register_parameter(name, param) takes a name and an nn.Parameter")
        self._module.register_parameter(name, param)

    def cpu(self) -> ModuleProxy:
        """``model.cpu()``: as ``model.to("cpu")``."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> ModuleProxy:
        """``model.cuda()``: as ``model.to("cuda")``."""
        return self.to("cuda" if device is None else torch.device("cuda", device))

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


# What nn.Module's __setattr__ is given in a parameter's, buffer's or module's place: it names the
# type of anything else in its TypeError, so no evaluator type may reach it (NOTE [module attributes]).
_LAYER_VALUES = (ModuleProxy, torch.Tensor, type(None), bool, int, float, str, list, tuple, dict)

# NOTE [module attributes]
# A parameter, buffer or module of a torch layer is set as nn.Module's ``__setattr__`` sets it
# (``lin.weight = nn.Parameter(t)``, ``bn.running_mean = t``, ``lin.bias = None``, ``net.fc =
# nn.Linear(...)``): nn.Module itself checks the value and raises its own TypeError for a plain
# tensor in a parameter's place, as in a plain run. Only values a layer can hold reach it: a
# function or object of the program's is refused, so no evaluator type is ever named in an error.

# NOTE [module surface]
# Every module a program holds answers nn.Module's public surface (METHODS above): moving it
# (to/cuda/cpu: the device the program runs on already), its dtype, modes, gradients, the
# modules inside it (each as the program holds it), its state dict. Values the program sets on
# a module (``lin.cache = t``) are its own, kept by name on the module (``lens_own``): a name the
# module has already (a parameter, a setting, nn.Module's own) is refused.


class ContainerProxy(ModuleProxy):
    """``nn.ModuleList``, ``nn.ModuleDict`` or ``nn.Sequential``: items, length, loops over them."""

    def method(self, name: str) -> Callable[..., Any]:
        module = self.module
        if name in ("append", "extend", "insert") and isinstance(
            module, (nn.ModuleList, nn.Sequential, nn.ParameterList)
        ):
            if name == "extend":
                return lambda values: module.extend([unwrap(v) for v in values]) and None
            if name == "insert" and not isinstance(module, nn.ParameterList):  # it has no insert
                return lambda index, value: module.insert(index, unwrap(value))
            if name == "append":
                return lambda value: module.append(unwrap(value)) and None
        if name in ("items", "keys", "values") and isinstance(module, (nn.ModuleDict, nn.ParameterDict)):
            if name == "keys":
                return lambda: list(module.keys())
            if name == "values":
                return lambda: [_wrapped(m) for m in module.values()]
            return lambda: [(k, _wrapped(m)) for k, m in module.items()]
        return super().method(name)

    def item(self, index: Any) -> Any:
        found = self.module[index]
        return _wrapped(found)  # a module as its proxy; a parameter of a ParameterList as it is

    def set_item(self, index: Any, value: Any) -> None:
        """``seq[0] = nn.Linear(2, 2)``, ``heads["a"] = layer``: PyTorch's own ``__setitem__``,
        given only what a container can hold (NOTE [module attributes])."""
        if not isinstance(value, (ModuleProxy, torch.Tensor)):
            raise refused(f"the items of {self.kind} are modules or tensors")
        self.module[index] = unwrap(value)

    def items(self) -> list[Any]:
        module = self.module
        if isinstance(module, (nn.ModuleDict, nn.ParameterDict)):
            return list(module.keys())
        return [_wrapped(m) for m in module]

    def __len__(self) -> int:
        return len(self.module)

    def __iter__(self) -> Iterator[Any]:
        """``list(seq)``, ``zip(self.layers, ...)``: its modules (a ModuleDict's keys), as PyTorch's."""
        return iter(self.items())


def held_module(module: nn.Module) -> ModuleProxy:
    """The proxy a program holds for ``module``: a program's module has its own already."""
    proxy = module.__dict__.get("lens_proxy")
    if isinstance(proxy, ModuleProxy):
        return proxy
    if isinstance(module, (nn.ModuleList, nn.ModuleDict, nn.Sequential, nn.ParameterList, nn.ParameterDict)):
        return ContainerProxy(module)
    return ModuleProxy(module)


def unwrap(value: Any) -> Any:
    """What goes into PyTorch for a value the program holds: a module for its proxy."""
    if isinstance(value, ModuleProxy):
        return value.module
    return value


def _own_values(module: nn.Module) -> set[str]:
    own = module.__dict__.get("lens_own")
    if not isinstance(own, set):
        own = set()
        module.__dict__["lens_own"] = own
    return own


def _wrapped(value: Any) -> Any:
    """A module as the program holds it (its proxy); any other value as it is."""
    return held_module(value) if isinstance(value, nn.Module) else value


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


# A module's place under the root: (its parent's place, its name there, the module); the root's
# parent is None.
_Place = tuple[Any, str, nn.Module]


def _path(place: _Place) -> str:
    """The prefix of the paths of the tensors of the module at ``place`` (``"0.1."``; ``""`` at the root)."""
    names: list[str] = []
    while place[0] is not None:
        names.append(place[1])
        place = place[0]
    return "".join(f"{name}." for name in reversed(names))


def _modules_in_order(root: nn.Module) -> list[_Place]:
    """``root``'s modules each once, at their places, in ``named_modules()``'s order."""
    found: list[_Place] = []
    seen: set[int] = set()
    stack: list[_Place] = [(None, "", root)]
    while stack:
        place = stack.pop()
        module = place[2]
        if id(module) in seen:
            continue
        seen.add(id(module))
        found.append(place)
        children = vars(module)["_modules"]
        if children:
            stack.extend(
                reversed([(place, name, child) for name, child in children.items() if child is not None])
            )
    return found
