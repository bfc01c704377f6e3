"""What each statement of a program does: one method per kind of statement.

A statement is counted (the program's ``max_statements``), checked against
the deadline, run, and then reported to the recorder (NOTE [program hooks]):
simple statements when they finish; ``for``, ``if`` and ``with`` report the
statements in their bodies instead.
"""

from __future__ import annotations

import ast
import contextlib
import operator
from collections.abc import Callable, Iterator
from typing import Any

import torch

from app.core.language.amp import AutocastEntry, autocast_context
from app.core.language.data import ProgramLoader
from app.core.language.definitions import FIXED_NAMES
from app.core.language.evaluation import Evaluation
from app.core.language.flow import Break, Continue, Return, first_line
from app.core.language.grammar import INPLACE
from app.core.language.instances import ContainerProxy, ProgramModuleProxy, ProgramObject
from app.core.language.objects import Checked, GradModeEntry
from app.core.language.optimizer_proxies import ParamGroupProxy
from app.core.language.parsing import WITH_REFUSAL, import_bindings
from app.core.language.program_data import loader_batches
from app.core.language.python_values import is_iterable, kind
from app.core.language.raised import catches, caught_value, raise_value, raised_error
from app.core.language.safe_builtins import SafeBuiltin, format_field
from app.core.language.saved_hooks import SavedHooksEntry, saved_hooks_context
from app.core.language.stand_ins import ProgressBar
from app.core.language.whitelist import Namespace
from app.core.model.errors import ProgramRaised
from app.core.model.graph import LoopMark
from app.core.sizing.limits import MAX_SEQUENCE, budget_message, loop_message, statements_message

__all__ = ["Statements"]


class Statements:
    """The statements part of an :class:`~app.core.language.evaluator.Evaluator`."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev
        self.handling: ProgramRaised | None = None  # the error an except block is handling
        self.compound: dict[type[ast.stmt], Callable[[Any], None]] = {
            ast.For: self.for_loop,
            ast.If: self.if_block,
            ast.With: self.with_block,
            ast.Break: self.leave_loop,
            ast.Continue: self.leave_loop,
            ast.While: self.while_loop,
            ast.Try: self.try_block,
            ast.Return: ev.functions.return_statement,
        }
        self.simple: dict[type[ast.stmt], Callable[[Any], None]] = {
            ast.Assign: self.assign_statement,
            ast.AugAssign: self.augassign,
            ast.AnnAssign: self.annotated_assign,
            ast.Expr: self.expression_statement,
            ast.Delete: self.delete_statement,
            ast.Import: self.import_statement,
            ast.ImportFrom: self.import_statement,
            ast.Pass: self.pass_statement,
            ast.Global: self.pass_statement,  # read with the function's text (NOTE [program scopes])
            ast.Nonlocal: self.pass_statement,
            ast.FunctionDef: self.function_definition,
            ast.ClassDef: self.class_definition,
            ast.Raise: self.raise_statement,
            ast.Assert: self.assert_statement,
        }

    def block(self, statements: list[ast.stmt]) -> None:
        """Run statements in order."""
        for statement in statements:
            self.run(statement)

    def run(self, node: ast.stmt) -> None:
        """Run one statement, counted and under the deadline."""
        ev = self.ev
        ev.tick(node)
        ev.statement_count += 1
        if ev.statement_count > ev.limits.max_statements:
            raise ev.error(statements_message(ev.limits), node)
        compound = self.compound.get(type(node))
        if compound is not None:
            compound(node)
            return
        simple = self.simple.get(type(node))
        if simple is None:  # pragma: no cover - the static checks refuse everything else
            raise ev.error(f"{type(node).__name__} is not allowed", node)
        simple(node)
        self.done(node)

    def done(self, node: ast.stmt) -> None:
        """Tell the recorder a statement finished (NOTE [program hooks])."""
        if self.ev.hooks is not None and not self.ev.quiet:
            self.ev.hooks.statement_done(node, tuple(self.ev.loops))

    # -- simple statements ------------------------------------------------
    def assign_statement(self, node: ast.Assign) -> None:
        value = self.ev.eval(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def annotated_assign(self, node: ast.AnnAssign) -> None:
        """``x: torch.Tensor = t`` is ``x = t``; ``n: int`` alone does nothing. The annotation is
        never run, as a function's annotations are not (``unread_children``)."""
        if node.value is not None:
            self.assign(node.target, self.ev.eval(node.value), node)

    def expression_statement(self, node: ast.Expr) -> None:
        self.ev.eval(node.value)

    def delete_statement(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.delete(target)

    def import_statement(self, node: ast.Import | ast.ImportFrom) -> None:
        ev = self.ev
        for name, value in import_bindings(node, field=ev.field, source=ev.source):
            scope = ev.scope.owner_of(name) if ev.scope is not None else None
            if scope is not None:  # an import in a function binds a local name, as in Python
                scope.values[name] = value
            elif name in ev.env or ev.builtins.get(name) is not value:  # nn, F: these very objects
                ev.env[name] = value

    def pass_statement(self, node: ast.stmt) -> None:
        pass

    def function_definition(self, node: ast.FunctionDef) -> None:
        self.bind(node.name, self.ev.functions.define(node), node)

    def class_definition(self, node: ast.ClassDef) -> None:
        self.bind(node.name, self.ev.classes.define(node), node)

    def raise_statement(self, node: ast.Raise) -> None:
        ev = self.ev
        if node.exc is None:
            if self.handling is None:
                raise ev.located(raised_error(RuntimeError, "No active exception to reraise"), node)
            raise self.handling
        value = ev.eval(node.exc)
        if node.cause is not None:
            ev.eval(node.cause)
        raise ev.located(raise_value(value, ev.error, node), node)

    def assert_statement(self, node: ast.Assert) -> None:
        if not self.ev.expressions.truth(node.test):
            said = "" if node.msg is None else format_field(self.ev.eval(node.msg), ord("s"), "")
            raise self.ev.located(raised_error(AssertionError, said), node)

    # -- blocks -------------------------------------------------------------
    def if_block(self, node: ast.If) -> None:
        self.ev.block(node.body if self.ev.expressions.truth(node.test) else node.orelse)

    def leave_loop(self, node: ast.Break | ast.Continue) -> None:
        self.done(node)
        raise Break if isinstance(node, ast.Break) else Continue

    def while_loop(self, node: ast.While) -> None:
        """``while``: counted like a for loop, with the same cap on iterations."""
        ev = self.ev
        line = node.lineno
        ev.loops.append(LoopMark(line, 0, None))
        finished, index = True, 0
        try:
            while ev.expressions.truth(node.test):
                if index >= ev.limits.max_iterations:
                    raise ev.error(loop_message(ev.limits), node)
                ev.loops[-1] = LoopMark(line, index, None)
                index += 1
                if not self.iteration(node.body):
                    finished = False
                    break
        finally:
            ev.loops.pop()
        if finished:
            ev.block(node.orelse)

    def iteration(self, body: list[ast.stmt]) -> bool:
        """One pass of a loop's body (``for`` and ``while`` alike); False when it ended in break."""
        try:
            self.ev.block(body)
        except Continue:
            pass
        except Break:
            return False
        return True

    def try_block(self, node: ast.Try) -> None:
        """``try``: catches the program's own errors only (NOTE [caught errors])."""
        ev = self.ev
        try:
            try:
                ev.block(node.body)
            except ProgramRaised as exc:
                handler = self.handler_for(node.handlers, exc)
                if handler is None:
                    raise
                self.handle(handler, exc)
            else:
                ev.block(node.orelse)
        except (ProgramRaised, Break, Continue, Return):
            ev.block(node.finalbody)
            raise
        ev.block(node.finalbody)

    def handler_for(self, handlers: list[ast.ExceptHandler], exc: ProgramRaised) -> ast.ExceptHandler | None:
        for handler in handlers:
            if handler.type is None or catches(self.ev.eval(handler.type), exc, self.ev.error, handler):
                return handler
        return None

    def handle(self, handler: ast.ExceptHandler, exc: ProgramRaised) -> None:
        outer = self.handling
        self.handling = exc
        try:
            if handler.name is not None:
                self.bind(handler.name, caught_value(exc, self.ev.scope), handler)
            self.ev.block(handler.body)
        finally:
            self.handling = outer
            if handler.name is not None:
                self.unbind(handler.name)  # as Python does: ``e`` goes at the handler's end
            self.ev.let_go = True  # and the scopes its traceback kept (NOTE [alive nodes])

    def unbind(self, name: str) -> None:
        """Let go of ``name`` where Python keeps it, if it is bound."""
        ev = self.ev
        scope = ev.scope.owner_of(name) if ev.scope is not None else None
        (ev.env if scope is None else scope.values).pop(name, None)

    def for_loop(self, node: ast.For) -> None:
        ev = self.ev
        iterable = ev.eval(node.iter)
        count = ev.sizes.length(iterable)
        items = self.iterate(iterable, node.iter)
        line = node.lineno
        ev.loops.append(LoopMark(line, 0, count))
        finished = True
        try:
            for index, item in enumerate(items):
                if index >= ev.limits.max_iterations:
                    raise ev.error(loop_message(ev.limits), node)
                ev.loops[-1] = LoopMark(line, index, count)
                self.assign(node.target, item, node)
                if not self.iteration(node.body):
                    finished = False
                    break
        finally:
            ev.loops.pop()
        if finished:
            ev.block(node.orelse)

    def iterate(self, value: Any, node: ast.expr) -> Iterator[Any]:
        """The items a for loop goes through; a tensor's rows are made at once, under the guard."""
        if isinstance(value, ProgressBar):  # for x, y in tqdm(loader): the loader's items
            value = value.inner
        if isinstance(value, ContainerProxy):  # for layer in self.layers
            value = value.items()
        elif isinstance(value, (ProgramObject, ProgramModuleProxy)):  # its own __iter__, or its items
            value = self.own_items(value, node)
        elif isinstance(value, ProgramLoader):  # NOTE [data loaders]: the program's own dataset
            value = loader_batches(self.ev, value, node)
        elif isinstance(value, (Namespace, SafeBuiltin)) or (
            isinstance(value, Checked) and not is_iterable(value)
        ):
            raise self.ev.error(f"a for loop cannot go over {kind(value)}", node)
        iterator = self.ev.apply(iter, [value], {}, node, lazy=True)
        self.ev.sizes.forget_lazy(value)
        return self.items(iterator, node)

    def own_items(self, value: ProgramObject | ProgramModuleProxy, node: ast.expr) -> Any:
        """What a loop over the program's object goes through: what its ``__iter__`` gives (a
        generator's items, made whole), else ``obj[0]``, ``obj[1]``... up to its ``__len__``."""
        classes = self.ev.classes
        if classes.defines(value, "__iter__") or not classes.defines(value, "__getitem__"):
            return classes.special(value, "__iter__", [], node)
        length = classes.special(value, "__len__", [], node)
        if length > min(self.ev.limits.max_iterations, MAX_SEQUENCE):  # made all at once (NOTE [caps])
            raise self.ev.error(loop_message(self.ev.limits), node)
        return [classes.special(value, "__getitem__", [i], node) for i in range(length)]

    def all_items(self, value: Any, node: ast.expr, *, loop: bool = False) -> list[Any]:
        """Every item of ``value`` at once (``*xs``, ``a, *rest = xs``, ``yield from xs``), sized first.

        ``loop``: counted against the loop cap, as going through them one by one would be.
        """
        ev = self.ev
        cap = min(ev.limits.max_iterations, MAX_SEQUENCE) if loop else MAX_SEQUENCE  # NOTE [caps]
        message = loop_message(ev.limits) if loop else f"this would unpack more than {cap:,} items"
        length = ev.sizes.length(value)
        if length is not None and length > cap:
            raise ev.error(message, node)
        items: list[Any] = []
        for item in self.iterate(value, node):
            if len(items) >= cap:
                raise ev.error(message, node)
            items.append(item)
        ev.check_python_value(items, node)
        return items

    def items(self, iterator: Iterator[Any], node: ast.expr) -> Iterator[Any]:
        while True:
            try:
                item = next(iterator)
            except StopIteration:
                return
            except Exception as exc:  # zip(a, b, strict=True) on lists of different lengths
                raise self.ev.located(ProgramRaised(f"Python says: {first_line(exc)}"), node) from None
            yield item

    def with_block(self, node: ast.With) -> None:
        with contextlib.ExitStack() as stack:
            for item in node.items:
                mode = self.grad_mode(item.context_expr)
                if isinstance(mode, SavedHooksEntry):  # saved_tensors_hooks(pack, unpack), save_on_cpu()
                    stack.enter_context(saved_hooks_context(self.ev, mode, item.context_expr))
                    continue
                if isinstance(mode, AutocastEntry):  # NOTE [mixed precision]
                    stack.enter_context(autocast_context(self.ev, mode, item.context_expr))
                    continue
                enabled = mode.enabled if mode.enabled is not None else self.grad_flag(item.context_expr)
                stack.enter_context(torch.enable_grad() if enabled else torch.no_grad())
            self.ev.block(node.body)

    def grad_flag(self, node: ast.expr) -> bool:
        """The True or False of ``with torch.set_grad_enabled(phase == "train"):``."""
        args = node.args if isinstance(node, ast.Call) else []
        flag = self.ev.eval(args[0]) if len(args) == 1 else None
        if not isinstance(flag, bool):
            raise self.ev.error("torch.set_grad_enabled(...) takes True or False", node)
        return flag

    def grad_mode(self, node: ast.expr) -> GradModeEntry:
        ev = self.ev
        func = node.func if isinstance(node, ast.Call) else node
        value: Any = None
        if isinstance(func, ast.Name):
            value = ev.expressions.lookup(func)
        elif isinstance(func, ast.Attribute):
            owner = ev.eval(func.value)
            value = ev.members.member(owner, func) if isinstance(owner, Namespace) else None
        if not isinstance(value, GradModeEntry):
            raise ev.error(WITH_REFUSAL, node)
        return value

    # -- binding and unbinding ----------------------------------------------
    def augassign(self, node: ast.AugAssign) -> None:
        """``a op= v`` in Python's order: read the target, update (in place for tensors), store back."""
        ev = self.ev
        target = node.target
        if isinstance(target, ast.Name):
            current = ev.expressions.lookup(target)
            self.assign(target, self.update(node, current), node)
        elif isinstance(target, ast.Subscript):
            owner, index = ev.eval(target.value), ev.expressions.index(target.slice)
            if isinstance(owner, ParamGroupProxy):  # group["lr"] *= 0.1
                current = ev.apply(owner.item, [index], {}, target)
            else:
                current = ev.apply(operator.getitem, [owner, index], {}, target)
            self.set_item(owner, index, self.update(node, current), target)
        elif isinstance(target, ast.Attribute):
            owner = ev.eval(target.value)
            current = ev.members.read(owner, target)
            result = self.update(node, current)
            # w -= ... on lin.weight: in place. p.data -= lr * p.grad (manual SGD) is in place on
            # .data too: Python then sets .data to the tensor it already is, which changes nothing.
            in_place = result is current and (
                isinstance(owner, Checked) or (isinstance(owner, torch.Tensor) and target.attr == "data")
            )
            if not in_place:
                ev.members.assign(owner, target, result)
        else:  # pragma: no cover - refused by the static checks
            raise ev.error("this cannot be updated with an operator like +=", node)

    def update(self, node: ast.AugAssign, current: Any) -> Any:
        value = self.ev.eval(node.value)
        if isinstance(current, torch.Tensor):  # in place, as in Python: the version counter moves
            return self.ev.apply(INPLACE[type(node.op)], [current, value], {}, node)
        return self.ev.expressions.python_binop(node.op, current, value, node)  # numbers, lists, text

    def assign(self, target: ast.expr, value: Any, statement: ast.AST) -> None:
        """Bind ``value`` to a name, an item, an attribute, or unpack it into several."""
        ev = self.ev
        if isinstance(target, (ast.Tuple, ast.List)):
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            if starred:
                self.assign_starred(target, starred[0], value, statement)
                return
            values = self.unpack(value, len(target.elts), target)
            for elt, item in zip(target.elts, values, strict=True):
                self.assign(elt, item, statement)
        elif isinstance(target, ast.Subscript):
            owner, index = ev.eval(target.value), ev.expressions.index(target.slice)
            self.set_item(owner, index, value, target)
        elif isinstance(target, ast.Attribute):
            ev.members.assign(ev.eval(target.value), target, value)
        elif isinstance(target, ast.Name):
            self.bind(target.id, value, target)
            if ev.on_value is not None and isinstance(value, torch.Tensor):
                ev.on_value(statement, value)
        else:  # pragma: no cover - refused by the static checks
            raise ev.error("this cannot be assigned", target)

    def assign_starred(self, target: ast.Tuple | ast.List, star: int, value: Any, statement: ast.AST) -> None:
        """``a, *rest = values``: the names around the star take one item each, the star the rest."""
        ev = self.ev
        items = self.all_items(value, target)
        after = len(target.elts) - star - 1
        if len(items) < star + after:
            text = f"not enough values to unpack (expected at least {star + after}, got {len(items)})"
            raise ev.located(raised_error(ValueError, text), target)
        rest = items[star : len(items) - after]
        values = [*items[:star], rest, *items[len(items) - after :]]
        for elt, item in zip(target.elts, values, strict=True):
            self.assign(elt.value if isinstance(elt, ast.Starred) else elt, item, statement)

    def bind(self, name: str, value: Any, node: ast.AST) -> None:
        """``name = value`` where Python would put it (NOTE [program scopes])."""
        ev = self.ev
        if name in FIXED_NAMES:  # NOTE [own names over built-in ones]
            raise ev.error(f"'{name}' is a built-in name and cannot be assigned", node)
        scope = ev.scope.owner_of(name) if ev.scope is not None else None
        if scope is None:
            ev.env[name] = value
        else:
            scope.values[name] = value

    def set_item(self, owner: Any, index: Any, value: Any, node: ast.AST) -> None:
        ev = self.ev
        if isinstance(owner, torch.Tensor):
            ev.apply(operator.setitem, [owner, index, value], {}, node)
        elif isinstance(owner, list):
            if not isinstance(index, int) or isinstance(index, bool):
                raise ev.error("list items are assigned one at a time: a[0] = value", node)
            removed = ev.apply(operator.getitem, [owner, index], {}, node)
            ev.refuse_growth(owner, value, removed, node)
            owner[index] = value
            ev.sizes.changed(owner, value, removed)
        elif isinstance(owner, (ParamGroupProxy, ContainerProxy)):  # NOTE [parameter groups]
            ev.apply(owner.set_item, [index, value], {}, node)
        elif isinstance(owner, dict):
            self.set_key(owner, index, value, node)
        elif isinstance(owner, (ProgramObject, ProgramModuleProxy)):
            ev.classes.special(owner, "__setitem__", [index, value], node)
        else:
            raise ev.error(f"items can be assigned in tensors, lists and dicts, not in {kind(owner)}", node)

    def set_key(self, owner: dict[Any, Any], key: Any, value: Any, node: ast.AST) -> None:
        """``d[key] = value``: a new key is counted like a list's new item (NOTE [python values])."""
        ev = self.ev
        try:
            new = key not in owner
        except TypeError:  # an unhashable key: Python's own error, raised at its place below
            new = False
        if new:
            if len(owner) >= MAX_SEQUENCE:
                raise ev.error(f"a dict holds at most {MAX_SEQUENCE:,} keys here", node)
            if not ev.budget.charge(1):
                raise ev.error(budget_message(ev.budget), node)
        ev.check_python_value([key, value], node)
        ev.apply(operator.setitem, [owner, key, value], {}, node)

    def delete(self, target: ast.expr) -> None:
        ev = self.ev
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.delete(element)
        elif isinstance(target, ast.Name):
            scope = ev.scope.owner_of(target.id) if ev.scope is not None else None
            if scope is not None and target.id in scope.values:
                del scope.values[target.id]
            elif scope is None and target.id in ev.env:
                del ev.env[target.id]
            elif target.id in ev.builtins:
                raise ev.error(f"'{target.id}' is a built-in name and cannot be deleted", target)
            else:
                raise ev.error(f"name '{target.id}' is not defined", target)
        elif isinstance(target, ast.Subscript):
            owner, index = ev.eval(target.value), ev.expressions.index(target.slice)
            if isinstance(owner, dict):
                ev.apply(operator.delitem, [owner, index], {}, target)
                return
            if not isinstance(owner, list):
                raise ev.error(
                    f"items can be deleted from lists and dicts only, not from {kind(owner)}", target
                )
            removed = ev.apply(operator.getitem, [owner, index], {}, target)
            ev.apply(operator.delitem, [owner, index], {}, target)
            ev.sizes.changed(owner, removed=removed)
        elif isinstance(target, ast.Attribute):
            ev.members.delete(ev.eval(target.value), target)
        else:  # pragma: no cover - refused by the static checks
            raise ev.error("this cannot be deleted", target)

    def unpack(self, value: Any, count: int, node: ast.AST) -> list[Any]:
        items: list[Any] | None = None
        if isinstance(value, torch.Tensor):
            if value.dim() > 0 and len(value) == count:
                items = list(self.ev.apply(torch.Tensor.unbind, [value, 0], {}, node))
        elif isinstance(value, (list, tuple, range)) and self.ev.sizes.length(value) == count:
            items = list(value)
        if items is None:
            raise self.ev.error(f"cannot unpack this value into {count} names", node)
        return items
