"""What every checked proxy takes and gives (NOTE [checked objects]): the checks of the settings
given to a ``torch.nn`` module or a ``torch.optim`` optimizer, shared by ``module_proxies.py`` and
``optimizer_proxies.py``.

A program builds a module or an optimizer by calling a factory from the
``nn`` or ``optim`` namespace (``nn.Linear(2, 3)``, ``optim.SGD(params,
lr=0.1)``). The factory builds the real PyTorch object and hands the program a
proxy that answers only the members listed in its class.

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
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import torch

from app.core.language.hints import refused
from app.core.language.objects import Checked

__all__ = [
    "MAX_SETTING_ITEMS",
    "check_number_setting",
    "check_settings",
    "is_plain_setting",
    "kind_text",
    "named_arguments",
]

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


def named_arguments(cls: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
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


def check_settings(where: str, settings: Mapping[str, Any]) -> None:
    for name, value in settings.items():
        if name.startswith("_"):
            raise refused(f"{where} has no setting '{name}' in programs")
        if name in REFUSED_SETTINGS and value:
            raise refused(f"{where}: {REFUSED_SETTINGS[name]}")
        if name == "num_layers" and isinstance(value, int) and value > MAX_LAYERS:
            raise refused(f"{where} has at most {MAX_LAYERS} layers in programs")
        if isinstance(value, torch.Tensor) and name in TENSOR_SETTINGS:
            continue
        if not is_plain_setting(value):
            setting = "" if name.startswith("*") else f" for {name}"
            raise refused(
                f"{where} takes numbers, True/False, text and torch dtypes as settings, "
                f"not {kind_text(value)}{setting}"
            )


def check_number_setting(where: str, name: str, value: Any) -> None:
    """A setting of plain numbers; ``lr`` may be a one-element tensor, as PyTorch's optimizers type
    it (``lr: float | Tensor``), which PyTorch checks itself."""
    if name == "lr" and isinstance(value, torch.Tensor) and value.numel() == 1:
        return
    numbers = (bool, int, float)
    items = value if isinstance(value, (tuple, list)) and name == "betas" else (value,)
    if len(items) > MAX_SETTING_ITEMS or not all(isinstance(item, numbers) for item in items):
        raise refused(f"{where} takes a plain number for {name}, not {kind_text(value)}")


def is_plain_setting(value: Any) -> bool:
    if isinstance(value, (tuple, list)):  # torch.Size too: nn.LayerNorm(x.shape[1:])
        return len(value) <= MAX_SETTING_ITEMS and all(isinstance(item, (bool, int, float)) for item in value)
    return isinstance(value, _PLAIN)


def kind_text(value: Any) -> str:
    if isinstance(value, Checked):
        return value.kind
    if isinstance(value, torch.Tensor):
        return "a tensor"
    if isinstance(value, (list, tuple)):
        held = ", ".join(sorted({kind_text(v) for v in value})) or "nothing"
        return f"a {type(value).__name__} holding {held}"
    if callable(value):
        return "a function"
    return f"a {type(value).__name__}"
