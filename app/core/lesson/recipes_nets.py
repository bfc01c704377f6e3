"""Recipes for an optimizer step that changed weights a later backward still needed, read from
which optimizer stepped and where the backward's graph reaches:

* one network's step (the generator's) changed weights that the other network's loss reaches
  through the value the first one made (``discriminator(outputs)``), while that loss trains only
  the other network (its own optimizer steps after its backward): the value is detached there,
  ``discriminator(outputs.detach())``, so that loss stops at it;
* a loop steps after every backward over values made once before it (one rollout's log-probs, a
  forward computed outside the loop): the step (with its ``zero_grad()``) moves out of the loop,
  one update after all the backwards.

A step that changed the weights inside the graph the loss must train through (a GAN's generator
loss through the discriminator) is never detached: its fix is computing again after the step
(:func:`app.core.lesson.recipes_steps.recompute_after_step_fix`).
"""

from __future__ import annotations

import ast

from app.core.lesson.edits import Source, edit_text, insert_after, insert_before, loop_at, statement_lines
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix
from app.core.lesson.recipes_steps import loss_statement
from app.core.lesson.statement_shapes import is_step, step_receiver

__all__ = ["detach_other_net_fix", "step_after_loop_fix"]


def _steps_on(source: Source, lines: list[int]) -> list[ast.stmt]:
    found = [source.statement_at(line) for line in lines]
    return [s for s in found if s is not None and is_step(s)]


def detach_other_net_fix(failure: Failure) -> Fix | None:
    """``D(x.detach())`` in the failing loss, where ``x`` was made by the network whose optimizer
    stepped in between, and the failing loss's own optimizer is another one."""
    node, source = failure.node, failure.source
    if node is None or node.line is None:
        return None
    stepped = _steps_on(source, failure.modifying_lines())
    call = failure.call_statement(failure.info)
    _, block = source.block_of(call)
    later = [s for s in block[block.index(call) + 1 :] if is_step(s)]
    if len(stepped) != 1 or not later:
        return None
    other, own = step_receiver(stepped[0]), step_receiver(later[0])
    if other == own:
        return None
    made = source.statement_at(node.line)
    names = set(_bound(made)) if made is not None else set()
    loss = loss_statement(source, call, block)
    inputs = [
        arg
        for n in ast.walk(loss)
        if isinstance(n, ast.Call)
        for arg in n.args
        if isinstance(arg, ast.Name) and arg.id in names
    ]
    if not inputs:
        return None
    code = source.code
    for arg in sorted(inputs, key=source.start, reverse=True):
        code = edit_text(code, source.start(arg), source.end(arg), f"{arg.id}.detach()")
    name = inputs[0].id
    return Fix(
        f"{name}.detach() in the loss on line {loss.lineno}",
        f"{source.segment(stepped[0])} (line {stepped[0].lineno}) changed weights that the graph "
        f"behind {name} saved, and the loss on line {loss.lineno} reached back through {name} into "
        f"it. That loss trains what {own}.step() updates; with {name}.detach() its backward "
        f"stops at {name} and leaves the other network's graph alone.",
        code,
    )


def _bound(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def step_after_loop_fix(failure: Failure) -> Fix | None:
    """``opt.step()`` (and its ``opt.zero_grad()``) out of the loop whose every iteration steps
    after a backward through values made once before the loop: all backwards, then one step."""
    node, source = failure.node, failure.source
    if node is None or not failure.info.call.loops:
        return None
    loop = loop_at(source, failure.info.call.loops[-1].line)
    if loop is None or any(mark.line == loop.lineno for mark in node.loops):
        return None
    steps = [s for s in _steps_on(source, failure.modifying_lines()) if s in loop.body]
    if len(steps) != 1:
        return None
    step = steps[0]
    receiver = step_receiver(step)
    zero = [
        s
        for s in loop.body
        if isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr == "zero_grad"
        and ast.unparse(s.value.func.value) == receiver
    ]
    indent = source.indent(loop.lineno)
    code = insert_after(source, loop, source.segment(step), indent)
    for stmt in sorted([step, *zero], key=lambda s: s.lineno, reverse=True):
        start, end = statement_lines(source, stmt)
        code = edit_text(code, start, end, "")
    if zero:
        code = insert_before(
            Source(code), Source(code).statement_at(loop.lineno) or loop, source.segment(zero[0])
        )
    text = source.segment(step)
    return Fix(
        f"{text} after the loop on line {loop.lineno}",
        f"Each iteration of the loop on line {loop.lineno} backpropagates through values made once "
        f"before it, and {text} in it changed the weights their graph saved. Running every "
        f"backward first and stepping once after the loop updates the weights with all the "
        "gradients in" + (f" ({source.segment(zero[0])} moves before the loop)." if zero else "."),
        code,
        moved=text.strip(),
    )
