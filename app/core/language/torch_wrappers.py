"""``torch.distributions``, ``torch.utils.checkpoint``, ``nn.DataParallel`` and ``torch.Generator``
in programs: torch's own objects behind checked proxies, or calls passed straight through.

# NOTE [torch wrappers]
- A distribution (``Normal(mu, sigma)``) is PyTorch's own, held in a :class:`DistributionProxy`
  that lists its sampling and density methods and its parameters; sampling draws from torch's
  generator, which a recording seeds with the program's seed, so a plain run draws the same.
- ``checkpoint(fn, *args)`` calls ``fn(*args)`` as it is: the gradients are PyTorch's, the
  recomputation in backward (which only saves memory) is not recorded.
- ``nn.DataParallel(model)`` and ``DistributedDataParallel(model)`` are PyTorch's ``DataParallel``
  around the module, on one process: on a CPU, or one GPU, it calls the module as it is, and its
  parameters are named ``module.<name>`` as a plain run names them.
- ``torch.Generator()`` is PyTorch's own generator, seeded by the program; it answers
  ``manual_seed`` and ``initial_seed`` only (never its state, nor a seed from the clock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import distributions, nn

from app.core.language.hints import refused
from app.core.language.module_proxies import ModuleProxy
from app.core.language.objects import Checked

__all__ = [
    "GENERATOR_METHODS",
    "DistributionProxy",
    "PassThrough",
    "checkpoint_members",
    "distribution_members",
    "distribution_submodules",
    "generator",
    "parallel_members",
]

DISTRIBUTIONS = (
    "Normal",
    "Categorical",
    "Bernoulli",
    "Uniform",
    "MultivariateNormal",
    "Beta",
    "Gamma",
    "Exponential",
    "Laplace",
    "LogNormal",
    "Poisson",
    "Binomial",
    "Dirichlet",
    "OneHotCategorical",
    "Geometric",
    "Cauchy",
    "StudentT",
    "Independent",
)
_METHODS = ("sample", "rsample", "log_prob", "entropy", "cdf", "icdf", "perplexity")
_PROPERTIES = (
    "mean",
    "mode",
    "stddev",
    "variance",
    "probs",
    "logits",
    "loc",
    "scale",
    "concentration",
    "rate",
    "low",
    "high",
    "covariance_matrix",
    "scale_tril",
    "batch_shape",
    "event_shape",
    "has_rsample",
)


class DistributionProxy(Checked):
    """A ``torch.distributions`` distribution as a program holds it (NOTE [torch wrappers]).

    >>> normal = DistributionProxy(distributions.Normal(torch.zeros(2), 1.0))
    >>> normal.method("log_prob")(torch.zeros(2)).shape, normal.get_attribute("mean").tolist()
    (torch.Size([2]), [0.0, 0.0])
    """

    def __init__(self, dist: distributions.Distribution) -> None:
        self.dist = dist
        self.kind = f"a {type(dist).__name__} distribution"

    def get_attribute(self, name: str) -> Any:
        if name not in _PROPERTIES or not hasattr(self.dist, name):
            raise KeyError(name)
        return getattr(self.dist, name)

    def method(self, name: str) -> Callable[..., Any]:
        if name not in _METHODS:
            raise KeyError(name)
        bound: Callable[..., Any] = getattr(self.dist, name)
        return bound

    def members(self) -> list[str]:
        return sorted({*_METHODS, *(p for p in _PROPERTIES if hasattr(self.dist, p))})

    def __repr__(self) -> str:
        return repr(self.dist)


def _parameter(value: Any, where: str) -> Any:
    if isinstance(value, DistributionProxy):
        return value.dist
    if isinstance(value, (torch.Tensor, bool, int, float, type(None))):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
        return value
    raise refused(f"{where} takes tensors and numbers")


def _distribution(cls: type[distributions.Distribution]) -> Callable[..., DistributionProxy]:
    where = f"torch.distributions.{cls.__name__}"

    def make(*args: Any, **kwargs: Any) -> DistributionProxy:
        given = [_parameter(a, where) for a in args]
        named = {k: _parameter(v, where) for k, v in kwargs.items()}
        return DistributionProxy(cls(*given, **named))

    make.__name__ = make.__qualname__ = cls.__name__
    make.__module__ = "torch.distributions"
    return make


def _kl_divergence(p: Any, q: Any) -> torch.Tensor:
    if not isinstance(p, DistributionProxy) or not isinstance(q, DistributionProxy):
        raise refused("kl_divergence(p, q) takes two distributions")
    return distributions.kl_divergence(p.dist, q.dist)


_kl_divergence.__name__, _kl_divergence.__module__ = "kl_divergence", "torch.distributions"


def distribution_members() -> dict[str, Any]:
    """``torch.distributions``: the listed distributions and ``kl_divergence``."""
    members: dict[str, Any] = {name: _distribution(getattr(distributions, name)) for name in DISTRIBUTIONS}
    members["kl_divergence"] = _kl_divergence
    return members


def distribution_submodules(members: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The submodule PyTorch defines each one in (``from torch.distributions.normal import Normal``)."""
    submodules: dict[str, dict[str, Any]] = {"kl": {"kl_divergence": members["kl_divergence"]}}
    for name in DISTRIBUTIONS:
        where = getattr(distributions, name).__module__.rsplit(".", 1)[-1]  # "normal"
        submodules.setdefault(where, {})[name] = members[name]
    return submodules


class PassThrough(Checked):
    """``checkpoint(fn, *args)``: the evaluator calls ``fn(*args)`` (NOTE [torch wrappers]).

    ``sequential``: ``checkpoint_sequential(functions, segments, input)``, each in turn.
    """

    # checkpoint's own settings, which change what is kept for backward, not what is computed
    SETTINGS = frozenset(["use_reentrant", "preserve_rng_state", "determinism_check", "debug"])

    def __init__(self, name: str, *, sequential: bool = False) -> None:
        self.sequential = sequential
        self.kind = f"the function torch.utils.checkpoint.{name}"


def checkpoint_members() -> dict[str, Any]:
    """``torch.utils.checkpoint``: ``checkpoint`` and ``checkpoint_sequential``, passed through."""
    return {
        "checkpoint": PassThrough("checkpoint"),
        "checkpoint_sequential": PassThrough("checkpoint_sequential", sequential=True),
    }


def _data_parallel(module: Any, *args: Any, **kwargs: Any) -> ModuleProxy:
    if not isinstance(module, ModuleProxy):
        raise refused("DataParallel takes a module, as in nn.DataParallel(model)")
    return ModuleProxy(nn.DataParallel(module.module))


def parallel_members() -> dict[str, Any]:
    """``DataParallel`` and ``DistributedDataParallel``: PyTorch's ``DataParallel``, one process."""
    members = {}
    for name in ("DataParallel", "DistributedDataParallel"):

        def wrap(module: Any, *args: Any, **kwargs: Any) -> ModuleProxy:
            return _data_parallel(module, *args, **kwargs)

        wrap.__name__ = wrap.__qualname__ = name
        wrap.__module__ = "torch.nn"
        members[name] = wrap
    return members


# seed() would draw a seed from the clock: a recording would differ from run to run.
GENERATOR_METHODS = frozenset(["manual_seed", "initial_seed"])


def generator(device: Any = None) -> torch.Generator:
    """``torch.Generator()``: PyTorch's own, on the device the program runs on."""
    if device is not None and torch.device(device).type != torch.get_default_device().type:
        raise refused(f"this program runs on {torch.get_default_device()}: a generator cannot be on {device}")
    return torch.Generator(device=torch.get_default_device())


generator.__name__, generator.__module__ = "Generator", "torch"
