"""What a program's classes make: classes, objects, and modules that are real ``nn.Module`` s.

# NOTE [program classes]
``class Net(nn.Module)`` makes a :class:`ProgramClass`. Calling it makes a
real ``nn.Module`` (an instance of a subclass of :class:`ProgramModule` named
after the class), so PyTorch names its parameters by their
``named_parameters`` path as it would in a script, prints it as it would,
and an ``nn.Sequential`` or an optimizer takes it like any module; its
``forward`` runs the program's ``forward`` with the same evaluator. The
program holds it through a :class:`ProgramModuleProxy`, which answers only
what the program itself put there (parameters, buffers, submodules, its own
values), ``training``, and the listed methods. A plain class makes
:class:`ProgramObject` s that hold the program's own values. No member
starting with ``_`` is ever read or assigned, except the listed method names
a class may define (``grammar.CLASS_METHOD_NAMES``), which the evaluator
calls itself; a class's bases, MRO, ``__dict__`` and code are never values.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import torch
from torch import nn

from app.core.language.gradchecks import FunctionApply
from app.core.language.hints import refused
from app.core.language.module_proxies import (
    ContainerProxy,
    ModuleProxy,
    SequentialFactory,
    held_module,
    unwrap,
)
from app.core.language.objects import Checked, is_own_name
from app.core.language.scopes import Scope, local_names, own_nodes
from app.core.model.errors import ProgramError

__all__ = [
    "FUNCTION_BASE",
    "MODULE_BASE",
    "SUPER",
    "BaseMarker",
    "BoundMethod",
    "ContainerProxy",
    "ProgramClass",
    "ProgramFunction",
    "ProgramModule",
    "ProgramModuleProxy",
    "ProgramObject",
    "SuperMarker",
    "autograd_class_members",
    "nn_class_members",
    "unwrap",
    "wrap_module",
]


class ProgramFunction(Checked):
    """A function the program defined (NOTE [program functions]): callable, and nothing else."""

    def __init__(
        self,
        node: ast.FunctionDef | ast.Lambda,
        name: str,
        defaults: list[Any],
        kw_defaults: dict[str, Any],
        closure: Scope | None,
    ) -> None:
        self.node = node
        self.name = name
        self.defaults = defaults
        self.kw_defaults = kw_defaults
        self.closure = closure
        body = node.body if isinstance(node, ast.FunctionDef) else []
        self.local, self.declared_global = local_names(body, _parameter_names(node.args))
        self.grad_enabled: bool | None = None  # @torch.no_grad() / @torch.enable_grad()
        self.static = False  # @staticmethod: no self
        self.owner_class: Any = None  # the program's class whose body defined it (for super())
        # A body with yield runs whole at the call, and the call gives what it yielded (NOTE [program
        # generators]): snippets loop over such generators at once, and the loop caps still hold.
        self.generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(body))
        self.kind = f"the function {name}"
        self.runner: Callable[[list[Any], dict[str, Any]], Any] | None = None  # set by the evaluator

    def __repr__(self) -> str:
        return f"<function {self.name}>"

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the function's body in the evaluator that made it (what PyTorch calls, as
        ``torch.autograd.functional.hvp(f, x)`` calls ``f``)."""
        if self.runner is None:
            raise TypeError(f"{self.kind} cannot be called here")
        return self.runner(list(args), kwargs)

    def __deepcopy__(self, memo: dict[int, Any]) -> ProgramFunction:
        return self  # the program's own code, shared by a copy (NOTE [program copies] in copies.py)


class SuperMarker(Checked):
    """``super``: callable in a method only, as ``super()`` or ``super(ClassName, self)``."""

    kind = "super"


SUPER = SuperMarker()


class BaseMarker(Checked):
    """``nn.Module`` or ``torch.autograd.Function``: a base a program's class may name."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.kind = f"the class {path}"

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"


MODULE_BASE = BaseMarker("torch.nn.Module")
FUNCTION_BASE = BaseMarker("torch.autograd.Function")


class ProgramClass(Checked):
    """A class the program defined (NOTE [program classes])."""

    def __init__(self, name: str, base: ProgramClass | BaseMarker | None, namespace: dict[str, Any]) -> None:
        self.name = name
        self.base = base
        self.namespace = namespace
        self.kind = f"the class {name}"
        self.root: BaseMarker | None = base.root if isinstance(base, ProgramClass) else base
        self.python_class: type[ProgramModule] | None = None
        self.function_class: type[torch.autograd.Function] | None = None  # a custom autograd function
        self.run_method: Callable[[Any, str, list[Any], dict[str, Any]], Any] | None = None
        self.dataclass_fields: list[str] | None = None  # NOTE [program dataclasses]

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"

    def __deepcopy__(self, memo: dict[int, Any]) -> ProgramClass:
        return self  # the program's own class, shared by a copy (NOTE [program copies] in copies.py)

    def find(self, name: str) -> Any:
        """A class attribute or method, here or in a base the program defined; KeyError if none."""
        cls: ProgramClass | None = self
        while cls is not None:
            if name in cls.namespace:
                return cls.namespace[name]
            cls = cls.base if isinstance(cls.base, ProgramClass) else None
        raise KeyError(name)

    holds_own_names = True

    def get_attribute(self, name: str) -> Any:
        if not _own_or_public(name):
            raise KeyError(name)
        if name == "apply" and self.function_class is not None and "apply" not in self.namespace:
            return FunctionApply(self)  # f = MyFn.apply: called later as MyFn.apply(...)
        return self.find(name)

    def members(self) -> list[str]:
        return sorted(n for n in self.namespace if _own_or_public(n))


class BoundMethod(Checked):
    """``obj.method`` read without calling it: the function with its object."""

    def __init__(self, owner: Checked, function: Any) -> None:
        self.owner = owner
        self.function = function
        self.kind = f"the method {getattr(function, 'name', '')}"


class ProgramObject(Checked):
    """An instance of a plain class of the program: the program's own values, by name."""

    def __init__(self, cls: ProgramClass) -> None:
        self.cls = cls
        self.values: dict[str, Any] = {}
        self.kind = f"a {cls.name} object"

    holds_own_names = True

    def get_attribute(self, name: str) -> Any:
        if not _own_or_public(name):
            raise KeyError(name)
        if name in self.values:
            return self.values[name]
        return class_member(self, self.cls, name)

    def set_attribute(self, name: str, value: Any) -> None:
        if not _own_or_public(name):
            raise KeyError(name)
        self.values[name] = value

    def delete_attribute(self, name: str) -> None:
        if not _own_or_public(name) or name not in self.values:
            raise KeyError(name)
        del self.values[name]

    def members(self) -> list[str]:
        return sorted({*self.values, *self.cls.members()})

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """The tensors this object holds, each once by its first path, through the program's
        objects it points to: walked with a stack, not recursion, as objects may point at each
        other or chain hundreds deep (a recursion would never end, or pass Python's limit)."""
        seen = {id(self)}
        stack: list[tuple[str, Iterator[tuple[str, Any]]]] = [("", iter(list(self.values.items())))]
        while stack:
            prefix, items = stack[-1]
            for name, value in items:
                if isinstance(value, torch.Tensor):
                    yield prefix + name, value
                elif isinstance(value, ProgramObject) and id(value) not in seen:
                    seen.add(id(value))
                    stack.append((f"{prefix}{name}.", iter(list(value.values.items()))))
                    break
                elif isinstance(value, Checked) and not isinstance(value, ProgramObject):
                    yield from ((f"{prefix}{name}.{path}", t) for path, t in value.named_tensors())
            else:
                stack.pop()

    def __repr__(self) -> str:
        fields = self.cls.dataclass_fields
        if fields is None:
            return f"<{self.cls.name} object>"
        if id(self) in _SHOWING:  # a dataclass that holds itself, as Python's repr shows it
            return "..."
        _SHOWING.add(id(self))
        try:  # NOTE [program dataclasses]: Config(lr=0.1, hidden=[])
            shown = ", ".join(f"{name}={self.values.get(name)!r}" for name in fields)
        finally:
            _SHOWING.discard(id(self))
        return f"{self.cls.name}({shown})"


_SHOWING: set[int] = set()  # the dataclass objects whose repr is being made


def _own_or_public(name: str) -> bool:
    """A name a program may give its own things: public, or one leading underscore (NOTE [own names])."""
    return not name.startswith("_") or is_own_name(name)


def class_member(owner: Checked, cls: ProgramClass, name: str) -> Any:
    """``obj.name`` found on the class: a method comes bound to ``obj``, unless static."""
    value = cls.get_attribute(name)
    if isinstance(value, ProgramFunction) and not value.static:
        return BoundMethod(owner, value)
    return value


class ProgramModule(nn.Module):
    """The ``nn.Module`` behind every instance of a program's module class (NOTE [program classes])."""

    lens_class: ClassVar[ProgramClass]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        run = self.lens_class.run_method
        if run is None:  # pragma: no cover - set when the class is made
            raise ProgramError("this class is not ready to run")
        return run(self.__dict__["lens_proxy"], "forward", list(args), dict(kwargs))


# Names a program may not assign on its module, nor read from its __dict__: nn.Module's own methods,
# settings and private fields (``_parameters``, ``_forward_hooks``); the rest are the program's own.
_MODULE_NAMES = frozenset([*dir(nn.Module), *vars(nn.Module())]) - {"training"}


class ProgramModuleProxy(ModuleProxy):
    """A program's own module as the program holds it (NOTE [program classes])."""

    def __init__(self, module: ProgramModule) -> None:
        super().__init__(module)
        self.cls = type(module).lens_class
        self.kind = f"a {self.cls.name} module"
        module.__dict__["lens_proxy"] = self  # the module hands its forward this proxy as self

    holds_own_names = True

    def get_attribute(self, name: str) -> Any:
        if not _own_or_public(name) or (name.startswith("_") and name in _MODULE_NAMES):
            raise KeyError(name)
        module = self.module
        for table in ("_parameters", "_buffers"):
            found = module.__dict__.get(table, {})
            if name in found:
                return found[name]
        modules = module.__dict__.get("_modules", {})
        if name in modules:
            return wrap_module(modules[name])
        if name in module.__dict__ and name not in _MODULE_NAMES and not name.startswith("lens_"):
            return module.__dict__[name]
        return class_member(self, self.cls, name)

    def set_attribute(self, name: str, value: Any) -> None:
        if not _own_or_public(name) or name in _MODULE_NAMES or name.startswith("lens_"):
            raise KeyError(name)
        setattr(self.module, name, unwrap(value))

    def delete_attribute(self, name: str) -> None:
        if not _own_or_public(name) or name in _MODULE_NAMES or name.startswith("lens_"):
            raise KeyError(name)
        delattr(self.module, name)

    def method(self, name: str) -> Callable[..., Any]:
        module = self.module
        if name in ("parameters", "buffers", "named_parameters", "named_buffers"):
            return lambda *a, **k: list(getattr(module, name)(*a, **k))
        return super().method(name)  # NOTE [module surface]

    def members(self) -> list[str]:
        module = self.module
        own = [*module._parameters, *module._buffers, *module._modules]
        return sorted({*own, *self.cls.members(), *self.METHODS})


def wrap_module(module: nn.Module) -> ModuleProxy:
    """The proxy a program holds for ``module``."""
    if isinstance(module, ProgramModule):
        proxy = module.__dict__.get("lens_proxy")
        return proxy if isinstance(proxy, ProgramModuleProxy) else ProgramModuleProxy(module)
    return held_module(module)


class _ContainerFactory:
    """``nn.ModuleList([...])`` / ``nn.ModuleDict({...})``: modules the program holds, in a container."""

    def __init__(self, cls: type[nn.Module]) -> None:
        self._cls = cls
        self.__name__ = self.__qualname__ = cls.__name__
        self.__module__ = "torch.nn"

    def __call__(self, modules: Any = None) -> ContainerProxy:
        if modules is None:
            return ContainerProxy(self._cls())
        if isinstance(modules, dict):
            return ContainerProxy(self._cls({k: _module_item(v) for k, v in modules.items()}))
        return ContainerProxy(self._cls([_module_item(v) for v in modules]))


class _ParameterContainerFactory:
    """``nn.ParameterList([...])`` / ``nn.ParameterDict({...})``: parameters the program made, held
    by a module so that its ``parameters()`` and an optimizer see them, as PyTorch's do."""

    def __init__(self, cls: type[nn.Module]) -> None:
        self._cls = cls
        self.__name__ = self.__qualname__ = cls.__name__
        self.__module__ = "torch.nn"

    def __call__(self, values: Any = None) -> ContainerProxy:
        if values is None:
            return ContainerProxy(self._cls())
        if isinstance(values, dict):
            return ContainerProxy(self._cls({k: _parameter_item(v) for k, v in values.items()}))
        return ContainerProxy(self._cls([_parameter_item(v) for v in values]))


def _parameter_item(value: Any) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise refused("a parameter container takes tensors such as nn.Parameter(torch.randn(3))")
    return value


class _SequentialFactory(SequentialFactory):
    """``nn.Sequential(...)`` as the library checks it, held so that it can be indexed and looped over."""

    def __call__(self, *args: Any, **kwargs: Any) -> ContainerProxy:
        return ContainerProxy(super().__call__(*args, **kwargs).module)


def _module_item(value: Any) -> nn.Module:
    if not isinstance(value, ModuleProxy):
        raise ProgramError(
            f"a module container takes modules such as nn.Linear(2, 3), not {type(value).__name__}"
        )
    module: nn.Module = value.module
    return module


def _parameter(data: Any = None, requires_grad: bool = True) -> nn.Parameter:
    if data is not None and not isinstance(data, torch.Tensor):
        raise ProgramError("nn.Parameter takes a tensor, such as torch.randn(3, 4)")
    return nn.Parameter(torch.empty(0) if data is None else data, requires_grad=requires_grad)


_parameter.__name__ = "Parameter"
_parameter.__module__ = "torch.nn"


def nn_class_members() -> dict[str, Any]:
    """What ``torch.nn`` gives a program's classes: the base, ``Parameter`` and the containers."""
    return {
        "Module": MODULE_BASE,
        "Parameter": _parameter,
        "ModuleList": _ContainerFactory(nn.ModuleList),
        "ModuleDict": _ContainerFactory(nn.ModuleDict),
        "ParameterList": _ParameterContainerFactory(nn.ParameterList),
        "ParameterDict": _ParameterContainerFactory(nn.ParameterDict),
        "Sequential": _SequentialFactory(),
    }


def autograd_class_members() -> dict[str, Any]:
    """What ``torch.autograd`` gives a program's classes: the base of custom functions."""
    return {"Function": FUNCTION_BASE}


def _parameter_names(spec: ast.arguments) -> list[str]:
    return [a.arg for a in _parameters(spec)]


def _parameters(spec: ast.arguments) -> Iterator[ast.arg]:
    yield from spec.posonlyargs
    yield from spec.args
    if spec.vararg is not None:
        yield spec.vararg
    yield from spec.kwonlyargs
    if spec.kwarg is not None:
        yield spec.kwarg


class ContextProxy(Checked):
    """The ``ctx`` a custom autograd function's forward and backward get (NOTE [program classes]).

    Listed: ``save_for_backward``, ``mark_dirty``, ``mark_non_differentiable``,
    ``saved_tensors``, ``needs_input_grad``, and the program's own values set on it.
    """

    kind = "an autograd context (ctx)"
    METHODS = ("save_for_backward", "mark_dirty", "mark_non_differentiable")

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        if not hasattr(ctx, "lens_values"):  # the program's own values, kept from forward to backward
            ctx.lens_values = {}
        self.values: dict[str, Any] = ctx.lens_values

    def get_attribute(self, name: str) -> Any:
        if name in ("saved_tensors", "needs_input_grad"):
            return getattr(self.ctx, name)
        if name == "saved_variables":  # the old name of saved_tensors, which PyTorch still answers
            return self.ctx.saved_tensors
        if name in self.values:
            return self.values[name]
        raise KeyError(name)

    def set_attribute(self, name: str, value: Any) -> None:
        if name.startswith("_") or name in (
            "saved_tensors",
            "saved_variables",
            "needs_input_grad",
            *self.METHODS,
        ):
            raise KeyError(name)
        self.values[name] = value

    def method(self, name: str) -> Callable[..., Any]:
        if name not in self.METHODS:
            raise KeyError(name)
        bound: Callable[..., Any] = getattr(self.ctx, name)
        return bound

    def members(self) -> list[str]:
        return sorted({"saved_tensors", "needs_input_grad", *self.METHODS, *self.values})


def autograd_function_class(
    cls: ProgramClass, run: Callable[[Any, str, list[Any]], Any]
) -> type[torch.autograd.Function]:
    """The ``torch.autograd.Function`` behind a program's class: its forward and backward run the
    program's, with ``ctx`` as a :class:`ContextProxy`; PyTorch names the node ``<Name>Backward``."""

    def forward(ctx: Any, *args: Any) -> Any:
        return run(ContextProxy(ctx), "forward", list(args))

    def backward(ctx: Any, *grads: Any) -> Any:
        return run(ContextProxy(ctx), "backward", list(grads))

    namespace = {
        "forward": staticmethod(forward),
        "backward": staticmethod(backward),
        "__module__": "__main__",
        "__qualname__": cls.name,
    }
    return type(cls.name, (torch.autograd.Function,), namespace)
