"""``torch.optim.lr_scheduler`` in programs: schedulers over a checked optimizer.

A scheduler is PyTorch's own, built over the optimizer inside an :class:`OptimizerProxy`;
the program holds a proxy that answers ``step()`` and ``get_last_lr()``. Its settings are
numbers (``step_size``, ``gamma``) or a short list of them (``milestones``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from torch.optim import lr_scheduler

from app.core.language.hints import refused
from app.core.language.objects import Checked, listed_method
from app.core.language.optimizer_proxies import OptimizerProxy
from app.core.language.proxies import MAX_SETTING_ITEMS

__all__ = ["SCHEDULER_SETTINGS", "SchedulerFactory", "SchedulerProxy", "scheduler_members"]

SCHEDULER_SETTINGS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "StepLR": frozenset({"step_size", "gamma", "last_epoch"}),
        "MultiStepLR": frozenset({"milestones", "gamma", "last_epoch"}),
        "ExponentialLR": frozenset({"gamma", "last_epoch"}),
        "CosineAnnealingLR": frozenset({"T_max", "eta_min", "last_epoch"}),
        "LinearLR": frozenset({"start_factor", "end_factor", "total_iters", "last_epoch"}),
        "OneCycleLR": frozenset(
            {
                "max_lr",
                "total_steps",
                "epochs",
                "steps_per_epoch",
                "pct_start",
                "anneal_strategy",
                "cycle_momentum",
                "base_momentum",
                "max_momentum",
                "div_factor",
                "final_div_factor",
                "three_phase",
                "last_epoch",
            }
        ),
        "ReduceLROnPlateau": frozenset(
            {"mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lr", "eps"}
        ),
    }
)


def scheduler_members() -> dict[str, Any]:
    """The listed schedulers, by name.

    >>> sorted(scheduler_members())  # doctest: +NORMALIZE_WHITESPACE
    ['CosineAnnealingLR', 'ExponentialLR', 'LinearLR', 'MultiStepLR', 'OneCycleLR',
     'ReduceLROnPlateau', 'StepLR']
    """
    return {name: SchedulerFactory(name) for name in SCHEDULER_SETTINGS}


class SchedulerFactory:
    """``lr_scheduler.StepLR(optimizer, step_size=..., gamma=...)`` in a program."""

    def __init__(self, name: str) -> None:
        self._cls: Callable[..., lr_scheduler.LRScheduler] = getattr(lr_scheduler, name)
        self.__name__ = self.__qualname__ = name
        self.__module__ = "torch.optim.lr_scheduler"

    def __repr__(self) -> str:
        return f"lr_scheduler.{self.__name__}"

    def __call__(self, optimizer: Any, *args: Any, **kwargs: Any) -> SchedulerProxy:
        where = f"lr_scheduler.{self.__name__}"
        if not isinstance(optimizer, OptimizerProxy):
            raise refused(f"{where} takes an optimizer such as optim.SGD(...) first")
        allowed = SCHEDULER_SETTINGS[self.__name__]
        for name in kwargs:
            if name not in allowed:
                raise refused(
                    f"{where} has no setting '{name}' in programs; it takes {', '.join(sorted(allowed))}"
                )
        for value in (*args, *kwargs.values()):
            items = value if isinstance(value, (list, tuple)) else (value,)
            plain = all(isinstance(item, (int, float, str)) for item in items)  # mode="min"
            if not plain or len(items) > MAX_SETTING_ITEMS:
                raise refused(f"{where} takes numbers and words (mode='min') as settings")
        return SchedulerProxy(self._cls(optimizer._optimizer, *args, **kwargs))


class SchedulerProxy(Checked):
    """A learning-rate scheduler as a program holds it: ``step()`` and ``get_last_lr()``."""

    METHODS = ("get_last_lr", "step")

    def __init__(self, scheduler: lr_scheduler.LRScheduler) -> None:
        self._scheduler = scheduler
        self.kind = f"an lr_scheduler.{type(scheduler).__name__} scheduler"

    def method(self, name: str) -> Callable[..., Any]:
        return listed_method(self, name, self.METHODS)

    def members(self) -> list[str]:
        return list(self.METHODS)

    def step(self, *metrics: Any) -> None:
        """Move to the next epoch's learning rate; ``ReduceLROnPlateau`` takes the loss it watches."""
        plateau = isinstance(self._scheduler, lr_scheduler.ReduceLROnPlateau)
        if len(metrics) != int(plateau):
            wanted = "the value it watches, e.g. step(val_loss)" if plateau else "nothing: step()"
            raise refused(f"{self.kind}'s step() takes {wanted}")
        if isinstance(self._scheduler, lr_scheduler.ReduceLROnPlateau):
            self._scheduler.step(float(metrics[0]))
        else:
            self._scheduler.step()

    def get_last_lr(self) -> list[float]:
        """The learning rate of each parameter group, as the last step set it."""
        return [float(lr) for lr in self._scheduler.get_last_lr()]
