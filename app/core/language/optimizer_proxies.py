"""Checked proxies for ``torch.optim`` optimizers: the optimizers a program may build and their
settings, :class:`OptimizerFactory`, :class:`OptimizerProxy` and :class:`ParamGroupProxy`.

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

from app.core.language.hints import refused
from app.core.language.module_proxies import ModuleProxy
from app.core.language.objects import Checked, listed_method
from app.core.language.proxies import check_number_setting, is_plain_setting, kind_text, named_arguments

__all__ = [
    "OPTIMIZER_SETTINGS",
    "OptimizerFactory",
    "OptimizerProxy",
    "ParamGroupProxy",
    "optim_members",
    "optimizer_without_dynamo",
]

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


def optim_members() -> dict[str, Any]:
    """The ``torch.optim`` optimizers a program may build, by name (each makes an :class:`OptimizerProxy`).

    >>> sorted(optim_members())
    ['Adagrad', 'Adam', 'AdamW', 'RMSprop', 'SGD']
    """
    return {name: OptimizerFactory(getattr(torch.optim, name)) for name in OPTIMIZER_SETTINGS}


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
        settings = named_arguments(self._cls, (tensors, *args), kwargs)
        settings.pop("params", None)
        allowed = OPTIMIZER_SETTINGS[self.__name__]
        for name, value in settings.items():
            if name not in allowed:
                listed = ", ".join(sorted(allowed))
                raise refused(f"{where} has no setting '{name}' in programs; it takes {listed}")
            check_number_setting(where, name, value)
        return OptimizerProxy(optimizer_without_dynamo(self._cls, tensors, args, kwargs))

    def __repr__(self) -> str:
        return f"optim.{self.__name__}"


def _parameter_list(where: str, params: Any) -> list[torch.Tensor]:
    hint = "a list of tensors, such as model.parameters() or [w, b]"
    if isinstance(params, ModuleProxy) and isinstance(params.module, torch.nn.ParameterList):
        return list(params.module)  # its parameters, as PyTorch goes through it
    if isinstance(params, ModuleProxy):
        raise refused(f"{where} takes {hint}, not {kind_text(params)}: pass its parameters()")
    if not isinstance(params, (list, tuple)):
        raise refused(f"{where} takes {hint}, not {kind_text(params)}")
    for item in params:
        if not isinstance(item, torch.Tensor):
            raise refused(f"{where} takes {hint}; this list holds {kind_text(item)}")
    return list(params)


def optimizer_without_dynamo(
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

    optimizer = property(
        lambda self: self._optimizer, doc="The wrapped optimizer (for the evaluator, never a program)."
    )

    def method(self, name: str) -> Callable[..., Any]:
        """``step`` or ``zero_grad``, bound to this proxy."""
        return listed_method(self, name, self.METHODS)

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
        for index, param in enumerate(self.parameters()):
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

    def parameters(self) -> list[torch.Tensor]:
        """The tensors it updates, group by group (not a program's method: ``METHODS`` are)."""
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
        held = key == "lr" and isinstance(value, torch.Tensor)  # lr given as a tensor: the same tensor
        if not (is_plain_setting(value) or value is None or held):
            raise refused(f"{self._where}'s group setting '{key}' is not a plain value in programs")
        return list(value) if isinstance(value, list) else value

    def set_item(self, key: Any, value: Any) -> None:
        """``group["lr"] = 0.01``: a setting the optimizer takes, checked like one given to it."""
        name = self._where.split(".", 1)[1]
        allowed = OPTIMIZER_SETTINGS[name]
        if not isinstance(key, str) or key not in allowed:
            listed = ", ".join(sorted(allowed))
            raise refused(f"in a group of {self._where} only its settings can be assigned: {listed}")
        check_number_setting(self._where, key, value)
        self._group[key] = tuple(value) if isinstance(value, list) else value

    def members(self) -> list[str]:
        return []

    def __len__(self) -> int:
        return len(self._group)
