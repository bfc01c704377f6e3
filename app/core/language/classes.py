"""The classes part of the evaluator: ``class`` statements, instances, methods and ``super()``.

What the values are is ``instances.py`` (NOTE [program classes]); this part
runs a class body, makes instances, and calls methods with the same
evaluator, so a method's statements are counted, timed and recorded like any
other.
"""

from __future__ import annotations

import ast
from typing import Any

from torch import nn

from app.core.language.data import DATASET_BASES
from app.core.language.dataclass_rules import DATACLASS, Field, dataclass_fields
from app.core.language.evaluation import Evaluation
from app.core.language.flow import first_line
from app.core.language.gradchecks import FunctionApply
from app.core.language.instances import (
    FUNCTION_BASE,
    MODULE_BASE,
    BaseMarker,
    BoundMethod,
    ProgramClass,
    ProgramFunction,
    ProgramModule,
    ProgramModuleProxy,
    ProgramObject,
    SuperMarker,
    autograd_function_class,
    unwrap,
    wrap_module,
)
from app.core.language.module_proxies import ModuleProxy
from app.core.language.objects import Checked
from app.core.language.python_values import kind
from app.core.language.raised import raised_error
from app.core.language.safe_builtins import SafeBuiltin
from app.core.language.scopes import Scope
from app.core.model.errors import ProgramError, ProgramRaised

__all__ = ["Classes", "SuperProxy"]

_BASE_REFUSAL = "a class here derives from nn.Module, torch.autograd.Function, a class of yours, or nothing"


class SuperProxy(Checked):
    """What ``super()`` gives: the methods of the class above ``cls``, bound to ``owner``."""

    kind = "super()"

    def __init__(self, cls: ProgramClass, owner: Checked) -> None:
        self.cls = cls
        self.owner = owner


class Classes:
    """The classes part of an evaluator (NOTE [program classes])."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev
        self.call_site: ast.AST | None = None  # where the running method was called from

    def define(self, node: ast.ClassDef) -> ProgramClass:
        """Run the class body in a scope of its own; the class it makes."""
        ev = self.ev
        base: ProgramClass | BaseMarker | None = None
        if node.bases:
            found = ev.eval(node.bases[0])
            if isinstance(found, SafeBuiltin) and found.name == "object":  # NOTE [object]
                found = None
            if found is not None and not isinstance(found, (ProgramClass, BaseMarker)):
                raise ev.error(f"{_BASE_REFUSAL}, not {kind(found)}", node.bases[0])
            base = found
        scope = Scope(frozenset(), parent=ev.scope, is_class=True)
        outer = ev.scope
        ev.scope = scope
        try:
            ev.block(node.body)
        finally:
            ev.scope = outer
        cls = ProgramClass(node.name, base, scope.values)
        if node.decorator_list:  # @dataclass (NOTE [program dataclasses]); the checks list no other
            if base is not None or ev.eval(node.decorator_list[0]) is not DATACLASS:
                raise ev.error("@dataclass here is dataclasses.dataclass, on a class with no base", node)
            cls.dataclass_fields = dataclass_fields(node)
        for value in scope.values.values():
            if isinstance(value, ProgramFunction):
                value.owner_class = cls
        cls.run_method = self.run_method
        if cls.root is FUNCTION_BASE:
            cls.function_class = autograd_function_class(cls, self.run_static(cls, node))
        if cls.root is MODULE_BASE:
            parent = base.python_class if isinstance(base, ProgramClass) else None
            namespace = {"lens_class": cls, "__module__": "__main__", "__qualname__": node.name}
            cls.python_class = type(node.name, (parent or ProgramModule,), namespace)
        return cls

    # -- calls ----------------------------------------------------------------
    def call(self, value: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """Call a checked value: a class, an object, a method, ``super``, or a proxy's forward."""
        ev = self.ev
        if isinstance(value, ProgramClass):
            return self.instantiate(value, args, kwargs, node)
        if isinstance(value, BoundMethod):
            return ev.functions.invoke(value.function, [value.owner, *args], kwargs, node)
        if isinstance(value, ProgramModuleProxy):
            return self.call_module(value, args, kwargs, node)
        if isinstance(value, ProgramObject):
            method = self.method_of(value, "__call__", node)
            return ev.functions.invoke(method, [value, *args], kwargs, node)
        if isinstance(value, FunctionApply):  # f = MyFn.apply; f(x)
            return self.apply_with(value.cls, args, kwargs, node)
        if isinstance(value, SuperMarker):
            return self.super_proxy(node)
        if isinstance(value, BaseMarker):
            example = (
                "class Net(nn.Module):" if value is MODULE_BASE else "class MyFn(torch.autograd.Function):"
            )
            raise ev.error(f"{value.path} is a base for classes: write {example}", node)
        return ev.apply(value.call, args, kwargs, node)

    def call_method(self, owner: Any, func: ast.Attribute, node: ast.Call) -> Any:
        """``owner.name(...)`` on a checked value."""
        ev = self.ev
        if isinstance(owner, SuperProxy):
            return self.call_super(owner, func, node)
        if isinstance(owner, ProgramClass) and owner.function_class is not None and func.attr == "apply":
            return self.apply_function(owner, node)
        if isinstance(owner, ModuleProxy) and func.attr == "apply":
            return self.apply_to_modules(owner, node)
        if isinstance(owner, (ProgramObject, ProgramModuleProxy, ProgramClass)):
            ev.members.refuse_private(func, owner)
            try:
                found = owner.get_attribute(func.attr)
            except KeyError:
                found = None
            plain_module = isinstance(found, ModuleProxy) and not isinstance(found, ProgramModuleProxy)
            if isinstance(found, Checked) and not plain_module and not isinstance(found, ProgramFunction):
                args, kwargs = ev.calls.arguments(node)
                return self.call(found, args, kwargs, node)
            if isinstance(found, ProgramFunction):  # a static method, or read from the class
                args, kwargs = ev.calls.arguments(node)
                return ev.functions.invoke(found, args, kwargs, node)
        return ev.calls.checked_call(owner, node, func)

    def instantiate(self, cls: ProgramClass, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        ev = self.ev
        owner: Checked
        if cls.python_class is not None:
            module = cls.python_class.__new__(cls.python_class)
            owner = ProgramModuleProxy(module)
        elif cls.root is None or cls.root in DATASET_BASES:  # NOTE [program datasets] in data.py
            owner = ProgramObject(cls)
        elif cls.function_class is not None and not args and not kwargs and "__init__" not in cls.namespace:
            # exp = Exp(); exp.apply(x): PyTorch's apply is the class's, reached through an instance
            return cls
        else:
            raise ev.error(f"{cls.name} is a torch.autograd.Function: call {cls.name}.apply(...)", node)
        try:
            init = cls.find("__init__")
        except KeyError:
            init = None
        if init is None and cls.dataclass_fields is not None and isinstance(owner, ProgramObject):
            self.dataclass_init(cls, owner, args, kwargs, node)
            return owner
        if isinstance(init, ProgramFunction):
            result = ev.functions.invoke(init, [owner, *args], kwargs, node)
            if result is not None:
                raise ev.located(raised_error(TypeError, "__init__() should return None"), node)
        elif args or kwargs:
            raise ev.located(raised_error(TypeError, f"{cls.name}() takes no arguments"), node)
        elif isinstance(owner, ProgramModuleProxy):
            nn.Module.__init__(owner.module)
        return owner

    def dataclass_init(
        self, cls: ProgramClass, owner: ProgramObject, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> None:
        """What Python's generated ``__init__`` does (NOTE [program dataclasses])."""
        ev = self.ev
        names = cls.dataclass_fields or []
        if len(args) > len(names):
            text = (
                f"{cls.name}.__init__() takes {len(names) + 1} positional arguments "
                f"but {len(args) + 1} were given"
            )
            raise ev.located(raised_error(TypeError, text), node)
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names or key in given:
                text = f"{cls.name}.__init__() got an unexpected keyword argument '{key}'"
                raise ev.located(raised_error(TypeError, text), node)
            given[key] = value
        for name in names:
            if name in given:
                value = given[name]
            else:
                try:
                    value = cls.find(name)
                except KeyError:
                    text = f"{cls.name}.__init__() missing 1 required positional argument: '{name}'"
                    raise ev.located(raised_error(TypeError, text), node) from None
                if isinstance(value, Field):
                    value = (
                        value.default
                        if value.default_factory is None
                        else self.ev.calls.call_value_with(value.default_factory, [], {}, node)
                    )
            owner.set_attribute(name, value)

    def call_module(
        self, proxy: ProgramModuleProxy, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """``net(x)``: PyTorch's own ``Module.__call__``, whose forward runs the program's forward.

        Not under one guard around the whole call: every operation inside forward is guarded itself.
        """
        outer = self.call_site
        self.call_site = node
        try:
            return proxy.module(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
        except ProgramError:
            raise
        except Exception as exc:  # Module.__call__'s own checks
            raise self.ev.located(ProgramRaised(f"PyTorch says: {first_line(exc)}"), node) from None
        finally:
            self.call_site = outer

    def run_method(self, owner: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """A method of the program's class, called by PyTorch (a module's forward)."""
        node = self.call_site or ast.Pass(lineno=1, col_offset=0)
        cls = owner.cls
        method = self.method_of(owner, name, node)
        del cls
        return self.ev.functions.invoke(method, [owner, *args], kwargs, node)

    def run_static(self, cls: ProgramClass, node: ast.ClassDef) -> Any:
        """What a custom autograd function's forward and backward run: the program's own."""

        def run(ctx: Checked, name: str, args: list[Any]) -> Any:
            ev = self.ev
            try:
                method = cls.find(name)
            except KeyError:
                method = None
            if not isinstance(method, ProgramFunction):
                text = f"You must implement the {name} function for custom autograd.Function."
                raise ev.located(raised_error(NotImplementedError, text), node)
            site = self.call_site or node
            if name == "forward":
                return ev.functions.invoke(method, [ctx, *args], {}, site)
            ev.quiet += 1  # the engine runs it inside a call: no statement of it is a step of its own
            try:
                return ev.functions.invoke(method, [ctx, *args], {}, site)
            finally:
                ev.quiet -= 1

        return run

    def apply_to_modules(self, owner: ModuleProxy, node: ast.Call) -> ModuleProxy:
        """``model.apply(init_weights)``: the program's function on every module inside, then on
        ``model`` itself, in PyTorch's order (NOTE [module surface])."""
        ev = self.ev
        args, kwargs = ev.calls.arguments(node)
        if kwargs or len(args) != 1:
            raise ev.error("apply(...) takes one function, as in model.apply(init_weights)", node)

        def visit(module: nn.Module) -> None:
            for child in module.children():
                visit(child)
            ev.calls.call_value_with(args[0], [wrap_module(module)], {}, node)

        visit(owner.module)
        return owner

    def apply_function(self, cls: ProgramClass, node: ast.Call) -> Any:
        """``MyFn.apply(x, w)``: PyTorch's own apply, with the program's forward and backward."""
        args, kwargs = self.ev.calls.arguments(node)
        return self.apply_with(cls, args, kwargs, node)

    def apply_with(self, cls: ProgramClass, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """``MyFn.apply`` with its arguments already evaluated."""
        if kwargs:
            raise self.ev.error(f"{cls.name}.apply takes its inputs by position", node)
        outer = self.call_site
        self.call_site = node
        try:
            assert cls.function_class is not None
            return cls.function_class.apply(*args)
        except ProgramError:
            raise
        except Exception as exc:
            raise self.ev.located(ProgramRaised(f"PyTorch says: {first_line(exc)}"), node) from None
        finally:
            self.call_site = outer

    def method_of(self, owner: Any, name: str, node: ast.AST) -> ProgramFunction:
        try:
            method = owner.cls.find(name)
        except KeyError:
            method = None
        if not isinstance(method, ProgramFunction):
            what = f"'{owner.cls.name}' object"
            if name == "forward":
                text = f'Module [{owner.cls.name}] is missing the required "forward" function'
                raise self.ev.located(raised_error(NotImplementedError, text), node)
            raise self.ev.located(raised_error(TypeError, f"{what} is not callable"), node)
        return method

    # -- the methods Python calls by their names (NOTE [program classes]) -------
    def defines(self, owner: Any, name: str) -> bool:
        """Whether ``owner`` is the program's object or module and its class defines ``name``."""
        if not isinstance(owner, (ProgramObject, ProgramModuleProxy)):
            return False
        try:
            return isinstance(owner.cls.find(name), ProgramFunction)
        except KeyError:
            return False

    def special(self, owner: Any, name: str, args: list[Any], node: ast.AST) -> Any:
        """``len(obj)``, ``obj[i]``, ``obj[i] = v``, ``iter(obj)``: the program's own method, or
        Python's TypeError when its class does not define it."""
        if not self.defines(owner, name):
            what = f"'{owner.cls.name}' object" if hasattr(owner, "cls") else kind(owner)
            text = {
                "__len__": f"object of type '{getattr(owner.cls, 'name', '?')}' has no len()",
                "__getitem__": f"{what} is not subscriptable",
                "__setitem__": f"{what} does not support item assignment",
                "__iter__": f"{what} is not iterable",
            }[name]
            raise self.ev.located(raised_error(TypeError, text), node)
        result = self.ev.functions.invoke(owner.cls.find(name), [owner, *args], {}, node)
        if name == "__len__" and (not isinstance(result, int) or isinstance(result, bool) or result < 0):
            text = "'__len__' should return a whole number >= 0"
            raise self.ev.located(raised_error(TypeError, text), node)
        return result

    # -- super() --------------------------------------------------------------
    def super_proxy(self, node: ast.Call) -> SuperProxy:
        ev = self.ev
        frame = ev.functions.current()
        if frame is None or frame[0].owner_class is None or not frame[1]:
            raise ev.located(raised_error(RuntimeError, "super(): no arguments"), node)
        fn, args = frame
        cls = fn.owner_class
        if node.args:
            named, owner = ev.eval(node.args[0]), ev.eval(node.args[1])
            if not isinstance(named, ProgramClass) or not isinstance(owner, Checked):
                raise ev.error("super() is written super() or super(ClassName, self)", node)
            return SuperProxy(named, owner)
        assert cls is not None
        return SuperProxy(cls, args[0])

    def call_super(self, proxy: SuperProxy, func: ast.Attribute, node: ast.Call) -> Any:
        ev = self.ev
        args, kwargs = ev.calls.arguments(node)
        base = proxy.cls.base
        if isinstance(base, ProgramClass):
            try:
                method = base.find(func.attr)
            except KeyError:
                method = None
            if isinstance(method, ProgramFunction):
                return ev.functions.invoke(method, [proxy.owner, *args], kwargs, node)
        if func.attr == "__init__":
            if isinstance(proxy.owner, ProgramModuleProxy):
                return ev.apply(nn.Module.__init__, [proxy.owner.module, *args], kwargs, node)
            if args or kwargs:
                raise ev.located(
                    raised_error(TypeError, "object.__init__() takes exactly one argument"), node
                )
            return None
        text = f"'super' object has no attribute '{func.attr}'"
        raise ev.located(raised_error(AttributeError, text), node)
