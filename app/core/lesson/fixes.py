"""Fixes offered at an error: the recipes, each an edit of the program text made from what the
recording shows.

A :class:`Fix` is a title, a sentence saying why it works, and the whole new
program text, so the window can show its diff, record it and undo it. The
recipes read their facts from the recording (:mod:`app.core.lesson.failure`,
NOTE [fixes from the recording]) and make their edits at :mod:`ast` positions
(:mod:`app.core.lesson.edits`). What :func:`fixes_for` returns are
candidates: :func:`app.core.lesson.prove.proven_fixes` records each edited
program again and offers only those that remove the error, raise nothing else
and whose every stated result (a :class:`Claim`) holds in that recording.

# NOTE [the order of the recipes]
A PyTorch expert fixes the cause first: detach what an iteration carries into
the next, reset what accumulates, compute again what an optimizer step changed,
write out of place, order the steps after the backwards. ``retain_graph=True``
only hides most of these (it keeps every old graph alive, or trades the error for a
version error later): it comes last, labelled a band-aid (``Fix.band_aid``).
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from app.core.lesson.edits import (
    Source,
    assigned_names,
    carried_names,
    edit_text,
    insert_after,
    insert_before,
    line_ending,
    loop_at,
    names_bound,
    names_read,
    set_call_keyword,
    statement_lines,
    unwrap_block,
    wrap_in_block,
    wrapped,
)
from app.core.lesson.failure import Failure, failure_of, site
from app.core.model.program import CallInfo
from app.core.model.recording import Recording

__all__ = ["Claim", "Fix", "fixes_for"]

ClaimKind = Literal["same_grads_as", "keeps_no_graph"]


@dataclass(frozen=True)
class Claim:
    """A sentence of a fix's explanation that states a result, and what the proof compares.

    ``same_grads_as``: every leaf's ``.grad`` at the end of the edited program equals its value at
    the end of ``reference`` (another program text, recorded too). ``keeps_no_graph``: the edited
    program's recording keeps no earlier iteration's graph alive (NOTE [kept graphs]).
    """

    text: str
    kind: ClaimKind
    reference: str = ""
    mark: str = ""  # a few words for the mark of a proven fix ("same .grad as retaining the graph")


@dataclass(frozen=True)
class Fix:
    """One edit of the program: what it does, why it works, and the new program text.

    ``moved``: the statement the edit moves to another line (``opt.step()``), shown as a move.
    ``claims``: the sentences of ``explanation`` that state a result, each checked before the fix
    is offered. ``band_aid``: the edit hides the cause rather than removing it (NOTE [the order of
    the recipes]). ``alternatives``: the same edit for other shapes of the value (a tuple, a list,
    a dict where a tensor was assumed), tried in order when this one raises.
    """

    title: str
    explanation: str
    code: str
    moved: str = ""
    claims: tuple[Claim, ...] = ()
    band_aid: bool = False
    alternatives: tuple[Fix, ...] = field(default=(), compare=False)


def fixes_for(recording: Recording, deadline: float | None = None) -> list[Fix]:
    """The candidate edits for the error of ``recording``, best first (none if it passed).

    See NOTE [fixes from the recording]. A fix whose edit cannot be made on
    this text (the call moved, a line holds two statements) is left out.
    ``deadline`` (a ``time.monotonic()`` value): the fixes found by then, and no more.
    Candidates only: :func:`app.core.lesson.prove.proven_fixes` keeps those that hold.
    """
    failure = failure_of(recording)
    if failure is not None:
        makers: Sequence[Callable[[Failure], Fix | None]] = _MAKERS
        return _made(failure, makers, failure.source.code, deadline)
    return _program_error_fixes(recording)


def _made(
    failure: Failure, makers: Sequence[Callable[[Failure], Fix | None]], code: str, deadline: float | None
) -> list[Fix]:
    fixes: list[Fix] = []
    for make in makers:
        if deadline is not None and time.monotonic() > deadline:
            break
        try:
            fix = make(failure)
        except ValueError:
            continue
        if fix is not None and fix.code != code and all(f.code != fix.code for f in fixes):
            ast.parse(fix.code)  # every edit must leave a program that parses
            fixes.append(fix)
    return fixes


# -- carried state: detach what an iteration (or a call) carries into the next ----------------

# The shapes a carried value takes in real code, tried in this order: a tensor (h), an LSTM's
# (h, c) tuple, a list of per-layer states, a dict of them, a list of (h, c) tuples, and a value
# that starts as None (the first batch has no state yet). The proof tries the next one when an
# edit raises, starting from the shape its error names ("'tuple' object has no attribute").
_DETACH_FORMS: tuple[tuple[str, str], ...] = (
    ("tensor", "{v}.detach()"),
    ("each tensor of its tuple", "tuple(t.detach() for t in {v})"),
    ("each tensor of its list", "[t.detach() for t in {v}]"),
    ("each tensor of its dict", "{{k: t.detach() for k, t in {v}.items()}}"),
    ("each tensor of its list of tuples", "[tuple(t.detach() for t in s) for s in {v}]"),
)


def _what(shape: str) -> str:
    return "it" if shape == "tensor" else shape


def detach_forms(target: str) -> list[tuple[str, str]]:
    """``(shape, statement)`` that detaches ``target`` for each shape it may hold.

    >>> [s for _, s in detach_forms("hidden")][:2]
    ['hidden = hidden.detach()', 'hidden = tuple(t.detach() for t in hidden)']
    """
    return [(shape, f"{target} = {form.format(v=target)}") for shape, form in _DETACH_FORMS]


def _with_forms(make: Callable[[str, str], Fix], target: str, *, maybe_none: bool) -> Fix:
    """The fix for a tensor, with the other shapes as its alternatives (None-guarded when the value
    starts as None)."""
    fixes = []
    for shape, plain in detach_forms(target):
        value = plain.split(" = ", 1)[1]
        fixes.append(
            make(shape, f"{target} = None if {target} is None else {value}" if maybe_none else plain)
        )
    return Fix(**{**fixes[0].__dict__, "alternatives": tuple(fixes[1:])})


def _target_text(source: Source, node: ast.expr) -> str | None:
    """``h``, ``self.hidden``, ``state["h"]``: a target that names where a value is kept."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, (ast.Attribute, ast.Subscript)) and _target_text(source, node.value) is not None:
        return source.segment(node)
    return None


def _carried_targets(source: Source, stmt: ast.stmt) -> list[str]:
    """Targets that ``stmt`` both reads and binds: ``self.hidden = self.rnn(x, self.hidden)``,
    ``out, state["h"] = cell(x, state["h"])``."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign)):
        return []
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    flat = [e for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
    read = {
        source.segment(n)
        for n in ast.walk(stmt.value)
        if isinstance(n, (ast.Attribute, ast.Subscript, ast.Name))
    }
    found = []
    for element in flat:
        text = _target_text(source, element)
        if (
            text is not None
            and not isinstance(element, ast.Name)
            and (text in read or isinstance(stmt, ast.AugAssign))
        ):
            found.append(text)
    return found


def _starts_as_none(source: Source, target: str) -> bool:
    """Whether the program anywhere sets ``target`` to None (a state made on the first call)."""
    return any(
        isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Constant)
        and n.value.value is None
        and any(
            source.segment(t) == target or (isinstance(t, ast.Attribute) and target.endswith("." + t.attr))
            for t in n.targets
        )
        for n in ast.walk(source.tree)
    )


def _detach_kept_fix(failure: Failure) -> Fix | None:
    """``self.hidden = self.hidden.detach()`` before the statement that carries a value kept on a
    module (or in a dict) from one call into the next, where the failing node was made."""
    node = failure.node
    if node is None or node.line is None or failure.earlier_iteration_loop() is None:
        return None
    source = failure.source
    made = source.statement_at(node.line)
    targets = _carried_targets(source, made) if made is not None else []
    if len(targets) != 1:
        return None
    target, stmt = targets[0], made
    assert stmt is not None

    def make(shape: str, statement: str) -> Fix:
        return Fix(
            f"{target}: detach it before line {stmt.lineno} uses it",
            f"{target} is kept from one iteration to the next and still points into the graph of the "
            f"one before, which its backward already freed. Detaching {_what(shape)} before line "
            f"{stmt.lineno} keeps its values and lets each backward walk only its own iteration.",
            insert_before(source, stmt, statement),
        )

    return _with_forms(make, target, maybe_none=_starts_as_none(source, target))


def _accumulated(loop: ast.For | ast.While, name: str) -> ast.stmt | None:
    """The statement of ``loop``'s body that adds to ``name`` from itself (``acc += x``,
    ``acc = acc + x``)."""
    for stmt in loop.body:
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return stmt
        if (
            isinstance(stmt, ast.Assign)
            and [getattr(t, "id", None) for t in stmt.targets] == [name]
            and isinstance(stmt.value, ast.BinOp)
            and name in names_read(stmt.value)
        ):
            return stmt
    return None


def _reset_accumulated_fix(failure: Failure) -> Fix | None:
    """``total = 0`` at the start of each iteration, when the failing backward is called on a loss
    the loop adds to across iterations: each backward then sees only its iteration's loss."""
    loop = failure.earlier_iteration_loop()
    if loop is None:
        return None
    source = failure.source
    stmt = failure.call_statement(failure.info)
    receiver = _backward_receiver(source, stmt)
    if not isinstance(receiver, ast.Name):
        return None
    name = receiver.id
    adding = _accumulated(loop, name)
    if adding is None:
        return None
    first = loop.body[0]
    start = _initial_value(source, loop, name)
    code = insert_before(source, first, f"{name} = {start}")
    return Fix(
        f"{name} = {start} at the start of each iteration",
        f"Line {adding.lineno} adds each iteration's loss to {name}, which is never reset, so "
        f"{name}.backward() walks every earlier iteration's graph again, and those were freed. "
        f"Resetting {name} at the start of each iteration backpropagates only this iteration's loss.",
        code,
    )


def _initial_value(source: Source, loop: ast.For | ast.While, name: str) -> str:
    """The value ``name`` was set to before ``loop`` (``0``, ``0.0``, ``torch.zeros(1)``), else ``0``."""
    _, block = source.block_of(loop)
    for stmt in reversed(block[: block.index(loop)] if loop in block else []):
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [name]:
            text = source.segment(stmt.value)
            if "\n" not in text and len(text) <= 60:
                return text
    return "0"


# -- in place: write a new value instead -------------------------------------------------------


def _out_of_place(source: Source, stmt: ast.stmt) -> tuple[str, str] | None:
    """(the new program, what was written in place) with ``stmt``'s in-place write made out of place:
    ``a[i] += b`` -> ``a[i] = a[i] + b``, ``x.add_(y)`` -> ``x = x.add(y)``, ``inplace=True`` ->
    ``inplace=False``."""
    if isinstance(stmt, ast.AugAssign) and _target_text(source, stmt.target) is not None:
        target = source.segment(stmt.target)
        op = _OPERATORS.get(type(stmt.op))
        if op is None:
            return None
        value = source.segment(stmt.value)
        value = value if wrapped(source, stmt.value) == value else f"({value})"
        return edit_text(
            source.code, source.start(stmt), source.end(stmt), f"{target} = {target} {op} {value}"
        ), target
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr.endswith("_")
            and not func.attr.startswith("_")
            and _target_text(source, func.value) is not None
        ):
            target = source.segment(func.value)
            call = source.segment(stmt.value)
            name_end = source.end(func) - source.start(stmt.value)
            new_call = call[: name_end - 1] + call[name_end:]  # the method without its trailing _
            return edit_text(
                source.code, source.start(stmt), source.end(stmt), f"{target} = {new_call}"
            ), target
    for node in ast.walk(stmt):
        if isinstance(node, ast.keyword) and node.arg == "inplace" and source.segment(node.value) == "True":
            return edit_text(
                source.code, source.start(node.value), source.end(node.value), "False"
            ), "inplace=True"
    return None


_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
}


def _out_of_place_fix(failure: Failure) -> Fix | None:
    """Write a new value where the statement that changed a saved tensor wrote into it in place:
    into a tensor held in a list, a dict or a module attribute, rebinding is all it takes."""
    source = failure.source
    for line in failure.modifying_lines():
        stmt = source.statement_at(line)
        if stmt is None or _is_step(stmt):
            continue
        site_stmt = _definition_site(source, stmt)
        made = _out_of_place(source, site_stmt)
        if made is None:
            continue
        code, written = made
        if written == "inplace=True":
            return Fix(
                f"inplace=False on line {site_stmt.lineno}",
                f"The layer made on line {site_stmt.lineno} with inplace=True wrote its result into its "
                f"input when line {stmt.lineno} ran it, and autograd had saved that input for the "
                "backward. With inplace=False it writes a new tensor and the saved one stays as it was.",
                code,
            )
        return Fix(
            f"out of place on line {stmt.lineno}",
            f"Line {stmt.lineno} wrote into {written} in place, whose memory autograd saved for the "
            "backward. Computing a new value instead leaves the saved values as they were.",
            code,
        )
    return None


def _definition_site(source: Source, stmt: ast.stmt) -> ast.stmt:
    """``stmt``, or the ``nn.ReLU(inplace=True)`` it calls through when it is defined elsewhere
    (the step's line is where the module ran, not where its inplace flag is written)."""
    if any(isinstance(n, ast.keyword) and n.arg == "inplace" for n in ast.walk(stmt)):
        return stmt
    for node in ast.walk(source.tree):
        if isinstance(node, ast.keyword) and node.arg == "inplace" and source.segment(node.value) == "True":
            holder = source.enclosing_statement(node)
            if holder is not None and holder is not stmt and _is_simple_stmt(holder):
                return holder
    return stmt


def _writes_in_place(stmt: ast.stmt) -> bool:
    """``w -= lr * w.grad``, ``w.grad.zero_()``, ``w.data.add_(...)``: a manual update's statement."""
    if isinstance(stmt, ast.AugAssign):
        return True
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr.endswith("_")
        and not stmt.value.func.attr.startswith("_")
    )


def _is_simple_stmt(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Assign, ast.Expr, ast.AugAssign, ast.AnnAssign))


# -- a step between two backwards: compute again after it -------------------------------------


def _recompute_after_step_fix(failure: Failure) -> Fix | None:
    """Compute the failing node's statement (``out = D(fake)``) again after the optimizer step that
    changed what it saved, before the later loss uses it: the later backward then walks a graph made
    with the updated weights (DCGAN's ``output = netD(fake)`` after ``optimizerD.step()``)."""
    node = failure.node
    if node is None or node.line is None:
        return None
    source = failure.source
    made = source.statement_at(node.line)
    second = failure.call_statement(failure.info)
    if made is None or not isinstance(made, ast.Assign) or len(assigned_names(made)) != 1:
        return None
    _, block = source.block_of(second)
    if made not in block or block.index(made) > block.index(second):
        return None
    between = block[block.index(made) + 1 : block.index(second)]
    steps = [s for s in between if _is_step(s)]
    if not steps or not any(_calls_backward(s) for s in between):
        return None
    name = assigned_names(made)[0]
    if name in set().union(*(names_bound(s) for s in between)):
        return None
    text = source.segment(made)
    if "\n" in text:
        return None
    step = source.segment(steps[-1])
    indent = source.indent(steps[-1].lineno)
    graphs = _graph_names(failure, made, block, steps[-1])
    fixes = [
        Fix(
            f"compute {name} again after {step}",
            f"{name} (line {made.lineno}) saved tensors that {step} then changed in place, or that the "
            f"backward before it freed. Computing {name} again after {step} gives the later loss a "
            "graph of its own, made with the updated weights.",
            insert_after(source, steps[-1], text, indent),
        )
    ]
    if graphs:  # the inputs' own graph was freed too: the later loss trains only what comes after
        detached = _detach_names(source, made, graphs)
        shown = ", ".join(f"{g}.detach()" for g in sorted(graphs))
        fixes.append(
            Fix(
                f"compute {name} again after {step}, from {shown}",
                f"The backward before {step} freed the graph behind {name} (line {made.lineno}), and "
                f"{step} changed weights it saved. Computing {name} again after the step from "
                f"{shown} gives the later loss a graph of its own that stops at "
                f"{', '.join(sorted(graphs))}: that loss trains only what comes after them.",
                insert_after(source, steps[-1], detached, indent),
            )
        )
    shared = _shared_before_step(failure, made, block, steps[-1])
    if shared is not None:
        fixes.append(shared)
    return Fix(**{**fixes[0].__dict__, "alternatives": tuple(fixes[1:])})


def _shared_before_step(
    failure: Failure, made: ast.Assign, block: list[ast.stmt], step: ast.stmt
) -> Fix | None:
    """DCGAN's order: the loss before ``step`` reads ``made``'s value computed from inputs that
    carry another part's graph (``d_fake = D(fake)``): it reads ``D(fake.detach())`` instead, so its
    backward trains only its own part, and ``made`` is computed again after the step for the later
    loss, whose backward then trains the other part through it."""
    source = failure.source
    name = assigned_names(made)[0]
    carrying = _carrying_names(failure, made, block)
    if not carrying:
        return None
    before = block[block.index(made) + 1 : block.index(step)]
    uses = [
        n
        for s in before
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    if not uses:
        return None
    value = _detach_names(source, made.value, carrying)
    value = value if isinstance(made.value, ast.Call) else f"({value})"
    code = insert_after(source, step, source.segment(made), source.indent(step.lineno))
    for use in sorted(uses, key=source.start, reverse=True):  # all before the insertion: offsets hold
        code = edit_text(code, source.start(use), source.end(use), value)
    shown = ", ".join(f"{c}.detach()" for c in sorted(carrying))
    stepped = source.segment(step)
    return Fix(
        f"{value} before {stepped}, {name} again after it",
        f"The loss before {stepped} reached through {name} back into the graph behind "
        f"{', '.join(sorted(carrying))} and freed it, and {stepped} changed weights {name} saved. "
        f"With {shown} there that loss trains only its own part; {name}, computed again after "
        f"{stepped}, gives the later loss a graph of its own through the updated weights.",
        code,
    )


def _carrying_names(failure: Failure, stmt: ast.stmt, block: list[ast.stmt]) -> set[str]:
    """Names ``stmt`` reads that an earlier statement of its block bound on a line that made graph
    nodes in the recording: values that carry a graph into ``stmt``."""
    lines = {n.line for n in failure.recording.graph.nodes if n.line is not None and not n.is_leaf}
    return _bound_on(stmt, block, lines)


def _graph_names(failure: Failure, stmt: ast.stmt, block: list[ast.stmt], step: ast.stmt) -> set[str]:
    """Names ``stmt`` reads whose graph ``step`` has already trained: an earlier statement of the
    block bound them, and the recording shows ``step`` writing weights saved by nodes made there
    (a generator's output after the generator's own step). Detached, the later loss stops there
    and trains only what comes after, as it should; a name whose graph another optimizer trains
    is never detached (that would stop its training quietly)."""
    written = {
        key[0]
        for s in failure.recording.timeline.steps[: failure.info.last_step]
        if s.line is not None and step.lineno <= s.line <= (step.end_lineno or step.lineno)
        for key in s.version_changes
    }
    lines = {n.line for n in failure.recording.graph.nodes if n.id in written and n.line is not None}
    return _bound_on(stmt, block, lines)


def _bound_on(stmt: ast.stmt, block: list[ast.stmt], lines: set[int]) -> set[str]:
    """Names ``stmt`` reads whose last binding before it in ``block`` spans one of ``lines``."""
    earlier = block[: block.index(stmt)]
    found: set[str] = set()
    for name in names_read(stmt):
        binders = [s for s in earlier if name in assigned_names(s)]
        if binders and any(binders[-1].lineno <= line <= (binders[-1].end_lineno or 0) for line in lines):
            found.add(name)
    return found


def _detach_names(source: Source, stmt: ast.stmt | ast.expr, names: set[str]) -> str:
    """``stmt``'s text with each read of ``names`` detached."""
    text, base = source.segment(stmt), source.start(stmt)
    uses = [
        n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
    ]
    for use in sorted(uses, key=source.start, reverse=True):
        start, end = source.start(use) - base, source.end(use) - base
        text = text[:start] + f"{use.id}.detach()" + text[end:]
    return text


# -- autograd.grad, no_grad and leaves ---------------------------------------------------------


def _create_graph_fix(failure: Failure) -> Fix | None:
    """``create_graph=True`` on an earlier ``autograd.grad`` whose result a later backward needs."""
    error = failure.info.error or ""
    if "does not require grad" not in error and "does not have a grad_fn" not in error:
        return None
    earlier = [
        i
        for i in failure.recording.calls[: failure.info.index]
        if i.call.kind == "grad" and not i.call.create_graph
    ]
    if not earlier:
        return None
    call = earlier[-1].call
    return Fix(
        f"create_graph=True on line {call.line}",
        f"autograd.grad on line {call.line} returned gradients without a graph of their own, so the "
        "later backward has nothing to walk through them. With create_graph=True the gradients are "
        "differentiable.",
        set_call_keyword(failure.source.code, call, "create_graph", "True"),
    )


def _is_no_grad(item: ast.withitem) -> bool:
    expr = item.context_expr
    func = expr.func if isinstance(expr, ast.Call) else expr
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
        return isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False
    return name in ("no_grad", "inference_mode")


def _outside_no_grad_fix(failure: Failure) -> Fix | None:
    """The ``with torch.no_grad():`` that computed the loss (or holds the backward) taken away."""
    error = failure.info.error or ""
    if "does not require grad" not in error and "does not have a grad_fn" not in error:
        return None
    source = failure.source
    stmt = failure.call_statement(failure.info)
    wanted = names_read(stmt)
    for block in ast.walk(source.tree):
        if not isinstance(block, ast.With) or len(block.items) != 1 or not _is_no_grad(block.items[0]):
            continue
        holds_call = any(child is stmt for child in ast.walk(block))
        computes = any(set(assigned_names(s)) & wanted for s in ast.walk(block) if isinstance(s, ast.stmt))
        if holds_call or computes:
            header = source.segment(block.items[0].context_expr)
            return Fix(
                f"compute the loss outside {header}",
                f"Line {block.lineno} runs its block under {header}, so nothing in it records a graph "
                "and the loss has no grad_fn to backpropagate through. Without that block the "
                "graph is recorded.",
                unwrap_block(source, block),
            )
    return None


def _program_error_fixes(recording: Recording) -> list[Fix]:
    """Fixes for an error raised outside any autograd call (a leaf written in place)."""
    message, line = recording.error or "", recording.error_line
    if line is None or "leaf Variable that requires grad" not in message:
        return []
    try:
        source = Source(recording.program.code)
    except SyntaxError:
        return []
    stmt = source.statement_at(line)
    if stmt is None or not _writes_in_place(stmt):
        return []
    _, block = source.block_of(stmt)
    first = last = block.index(stmt)
    while first > 0 and _writes_in_place(block[first - 1]):  # the whole manual update, not one line
        first -= 1
    while last + 1 < len(block) and _writes_in_place(block[last + 1]):
        last += 1
    try:
        code = wrap_in_block(source, block[first], "with torch.no_grad()", block[last])
    except ValueError:
        return []
    return [
        Fix(
            f"with torch.no_grad(): around line {line}"
            if first == last
            else f"with torch.no_grad(): around lines {block[first].lineno}-{block[last].lineno}",
            f"Line {line} writes into a leaf that requires grad; autograd cannot record a change made "
            "to its own input. A manual update is not part of the graph: under torch.no_grad() it "
            "changes the values and records nothing.",
            code,
        )
    ]


def _retain_fix(failure: Failure) -> Fix | None:
    """``retain_graph=True`` on the earlier call(s) that freed what the failing call needs; with
    the ``opt.step()`` between them moved after both backwards when it wrote a weight the failing
    node saved (NOTE [freed leaves written] in the recorder): kept alone, the second backward would
    fail on the changed weight instead."""
    sites = failure.freeing_sites()
    if not sites:
        return None
    code, moved = failure.code, None
    written = failure.written_lines()
    if written:
        if not all(_is_step_line(failure.source, line) for line in written):
            return None  # something else wrote the weights in place: retaining cannot help
        moved = _step_moved(failure, written)
        if moved is None:
            return None
        code = moved[0]  # the freeing calls come before the step: their positions hold
    for place in sorted(sites, reverse=True):  # later calls first: earlier positions stay valid
        code = set_call_keyword(code, sites[place], "retain_graph", "True")
    lines = ", ".join(str(line) for line, _ in sorted(sites))
    word = "line" if len(sites) == 1 else "lines"
    why = (
        f"The call on {word} {lines} freed the saved tensors this call needs. With retain_graph=True "
        "it keeps them, so the graph can be walked again (at the cost of holding its memory)."
    )
    if moved is None:
        return Fix(f"retain_graph=True on {word} {lines}", why, code)
    step, taken_after = moved[1], moved[2]
    return Fix(
        f"retain_graph=True on {word} {lines}, {step} after both backwards",
        f"{why} {step} also changed in place weights the graph saved, so it moves after the second "
        "backward: retaining alone would fail on the changed weights.",
        code,
        moved="" if taken_after else step.strip(),
    )


_BAND_AID = (
    "A band-aid: it hides why the graph is walked twice and keeps every retained graph's memory alive."
)


def _retain_same_site_fix(failure: Failure) -> Fix | None:
    """``retain_graph=True`` on the failing call itself, when its own earlier run freed the graph (a
    loop): the band-aid that hides a carried value, last (NOTE [the order of the recipes])."""
    if failure.info.call.kind != "backward" or failure.freeing_sites():
        return None
    if not any(site(i.call) == site(failure.info.call) for i in failure.freeing_calls()):
        return None
    call = failure.info.call
    return Fix(
        f"retain_graph=True on line {call.line} (band-aid)",
        f"The call on line {call.line} freed, in an earlier iteration, what it needs again now. With "
        f"retain_graph=True nothing is freed. {_BAND_AID}",
        set_call_keyword(failure.code, call, "retain_graph", "True"),
        band_aid=True,
    )


def _backward_receiver(source: Source, stmt: ast.stmt) -> ast.expr | None:
    """``A`` of a statement that is exactly ``A.backward()`` (retain_graph alone allowed)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "backward" or call.args:
        return None
    if any(k.arg != "retain_graph" for k in call.keywords):
        return None
    return call.func.value


_GRAD_EFFECTS = {"backward", "grad", "step", "zero_grad"}


def _touches_grads(stmt: ast.stmt) -> bool:
    """Whether a statement reads or changes gradients, so it must see each backward's effect."""
    return any(isinstance(node, ast.Attribute) and node.attr in _GRAD_EFFECTS for node in ast.walk(stmt))


def _summed_fix(failure: Failure) -> Fix | None:
    """One backward of the two losses added: ``(A + B).backward()`` in place of the two calls."""
    earlier = failure.freeing_calls()
    if len(earlier) != 1 or failure.info.call.kind != "backward" or earlier[0].call.kind != "backward":
        return None
    source = failure.source
    first, second = failure.call_statement(earlier[0]), failure.call_statement(failure.info)
    owner, block = source.block_of(first)
    if not isinstance(owner, ast.Module) or source.block_of(second)[1] is not block:
        return None  # only top-level statements: in a loop, each call runs more than once
    a, b = _backward_receiver(source, first), _backward_receiver(source, second)
    if a is None or b is None or first.lineno >= second.lineno:
        return None
    between = block[block.index(first) + 1 : block.index(second)]
    rebound = set().union(*(names_bound(s) for s in between)) if between else set()
    if rebound & (names_read(a) | names_read(b)) or any(_touches_grads(s) for s in between):
        return None
    summed = f"({wrapped(source, a)} + {wrapped(source, b)}).backward()"
    start, end = statement_lines(source, second)
    code = edit_text(source.code, start, end, "")
    code = edit_text(code, source.start(first), source.end(first), summed)
    retained = _retain_fix(failure)
    claims: tuple[Claim, ...] = ()
    if retained is not None:
        claims = (
            Claim(
                "It gives the same gradients as retaining the graph.",
                "same_grads_as",
                retained.code,
                "same .grad as retaining the graph",
            ),
        )
    return Fix(
        "add the losses, one backward",
        "Adding the two losses and calling backward once walks the shared graph a single time, with "
        "nothing retained." + "".join(f" {c.text}" for c in claims),
        code,
        claims=claims,
    )


def _detach_shared_fix(failure: Failure) -> Fix | None:
    """``fake.detach()`` in the earlier loss, when an optimizer step between the two calls shows that
    each loss trains its own part (a GAN's discriminator step must not walk the generator)."""
    freeing, node = failure.freeing_calls(), failure.node
    if len(freeing) != 1 or node is None or node.line is None:
        return None
    if site(freeing[0].call) == site(failure.info.call):
        return None
    source = failure.source
    first, second = failure.call_statement(freeing[0]), failure.call_statement(failure.info)
    _, block = source.block_of(first)
    if second not in block or block.index(first) > block.index(second):
        return None
    if not any(_is_step(s) for s in block[block.index(first) + 1 : block.index(second)]):
        return None
    if failure.written_lines():  # that step updated the shared part's own weights: the first
        return None  # loss trains it too, and a detach would stop that
    made = source.statement_at(node.line)
    names = assigned_names(made) if made is not None else []
    if len(names) != 1:
        return None
    shared, loss = names[0], _loss_statement(source, first, block)
    uses = [
        n
        for n in ast.walk(loss)
        if isinstance(n, ast.Name) and n.id == shared and isinstance(n.ctx, ast.Load)
    ]
    if not uses:
        return None
    code = source.code
    for use in sorted(uses, key=source.start, reverse=True):
        code = edit_text(code, source.start(use), source.end(use), f"{shared}.detach()")
    return Fix(
        f"{shared}.detach() in the loss on line {loss.lineno}",
        f"The loss on line {loss.lineno} reaches back through {shared} into the graph that made it, so "
        f"its backward freed that graph before the later loss could use it. With {shared}.detach() "
        f"there, that loss trains only its own part and leaves the graph behind {shared} alone.",
        code,
    )


def _loss_statement(source: Source, call_statement: ast.stmt, block: list[ast.stmt]) -> ast.stmt:
    """Where the loss of ``loss.backward()`` was computed: the last assignment to ``loss`` before it
    in the same block, else the call's statement itself."""
    if isinstance(call_statement, ast.Expr) and isinstance(call_statement.value, ast.Call):
        func = call_statement.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = func.value.id
            earlier = block[: block.index(call_statement)]
            assigned = [s for s in earlier if name in assigned_names(s)]
            if assigned:
                return assigned[-1]
    return call_statement


def _detach_carried_fix(failure: Failure) -> Fix | None:
    """``h = h.detach()`` at the end of the loop whose carried value reaches an old graph (for a
    tuple, list or dict of tensors, its alternatives detach each one)."""
    loop = failure.earlier_iteration_loop()
    if loop is None or failure.node is None or failure.node.line is None:
        return None
    source = failure.source
    carried = carried_names(loop.body)
    made_there = source.statement_at(failure.node.line)
    names = [n for n in (assigned_names(made_there) if made_there else []) if n in carried]
    if not names and len(carried) == 1:
        names = carried
    if not names:
        return None
    indent = source.indent(loop.body[0].lineno)
    newline = line_ending(source)
    shown = ", ".join(names)
    maybe_none = any(_starts_as_none(source, name) for name in names)

    def make(shape: str, statement: str) -> Fix:
        lines = (newline + indent).join(statement.replace(names[0], name) for name in names)
        detached = insert_after(source, loop.body[-1], lines, indent)
        code = _drop_band_aids(detached, failure.recording.calls, loop)
        return Fix(
            f"{shown}.detach() at the end of each iteration"
            if len(names) == 1 and shape == "tensor"
            else f"detach {shown} at the end of each iteration",
            f"{shown} is carried into the next iteration and still points into the graph of the one "
            f"before, which its backward already freed. Detaching {_what(shape)} keeps the values and "
            "drops that old graph, so each iteration's backward walks only its own."
            + (" The retain_graph=True that hid this is no longer needed." if code != detached else ""),
            code,
        )

    return _with_forms(make, names[0], maybe_none=maybe_none)


def _drop_band_aids(code: str, calls: Sequence[CallInfo], loop: ast.For | ast.While) -> str:
    """Remove ``retain_graph=True`` from the calls inside ``loop`` (sites once, later ones first)."""
    end = loop.end_lineno or loop.lineno
    sites = {
        site(i.call): i.call
        for i in calls
        if loop.lineno < i.call.line <= end and i.call.keywords.get("retain_graph") == "True"
    }
    for place in sorted(sites, reverse=True):
        code = set_call_keyword(code, sites[place], "retain_graph", None)
    return code


def _recompute_inside_fix(failure: Failure) -> Fix | None:
    """Compute, inside the loop, a value made once before it whose graph each iteration walks."""
    node = failure.node
    if node is None or node.line is None or not failure.info.call.loops:
        return None
    loop = loop_at(failure.source, failure.info.call.loops[-1].line)
    if loop is None or any(mark.line == loop.lineno for mark in node.loops):
        return None
    if not any(site(i.call) == site(failure.info.call) for i in failure.freeing_calls()):
        return None  # freed by this same line in an earlier iteration
    source = failure.source
    made = source.statement_at(node.line)
    if not isinstance(made, ast.Assign) or made.end_lineno != made.lineno:
        return None
    names = assigned_names(made)
    _, block = source.block_of(made)
    if len(names) != 1 or loop not in block or block.index(made) > block.index(loop):
        return None
    name = names[0]
    if name in names_bound(loop) or name not in names_read(loop):
        return None
    text = source.segment(made)
    between = block[block.index(made) + 1 : block.index(loop)]
    code = insert_before(source, loop.body[0], text)
    if not any(name in names_read(s) for s in between):
        start, end = statement_lines(source, made)  # the loop's edit is later in the text: offsets hold
        code = edit_text(code, start, end, "")
    return Fix(
        f"compute {name} inside the loop",
        f"{name} was computed once, before the loop, so every iteration's backward walks the same "
        "graph, which the first backward freed. Computed inside the loop, each iteration has its own.",
        code,
    )


def _in_place_target(stmt: ast.stmt) -> str | None:
    """``b`` of ``b[1] = 2.0``, ``b += 1``, ``b[0] += 1`` or ``b.zero_()``: a tensor written in place."""
    target: ast.expr | None = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0].value
    elif isinstance(stmt, ast.AugAssign):
        target = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
            target = func.value
    return target.id if isinstance(target, ast.Name) else None


def _clone_fix(failure: Failure) -> Fix | None:
    """``b = b.clone()`` before the statement that wrote into a saved tensor in place."""
    source = failure.source
    for line in failure.modifying_lines():
        stmt = source.statement_at(line)
        name = _in_place_target(stmt) if stmt is not None else None
        if stmt is None or name is None:
            continue
        return Fix(
            f"{name}.clone() before the in-place write on line {line}",
            f"Line {line} writes into {name}, whose memory autograd saved for the backward. "
            f"Writing into a copy (clone) leaves the saved values as they were.",
            insert_before(source, stmt, f"{name} = {name}.clone()"),
        )
    return None


def _is_step_line(source: Source, line: int) -> bool:
    stmt = source.statement_at(line)
    return stmt is not None and _is_step(stmt)


def _is_step(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "step"
    )


def _step_receiver(stmt: ast.stmt) -> str:
    assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
    assert isinstance(stmt.value.func, ast.Attribute)
    return ast.unparse(stmt.value.func.value)


def _step_moved(failure: Failure, lines: list[int]) -> tuple[str, str, bool] | None:
    """The program with the ``opt.step()`` on ``lines`` moved after the failing backward, the step's
    text, and whether the program already took that step after it (then the early one only goes).

    None when that is not one step of the failing call's block between two backwards, or when the
    block steps more than one optimizer: moving D's step after G's backward would train D on G's
    loss too (a GAN), which no fix may do quietly.
    """
    source = failure.source
    second = failure.call_statement(failure.info)
    _, block = source.block_of(second)
    steps = [source.statement_at(line) for line in lines]
    steps = [s for s in steps if s is not None and _is_step(s)]
    if len(steps) != 1 or len({_step_receiver(s) for s in block if _is_step(s)}) > 1:
        return None
    step = steps[0]
    if step not in block or block.index(step) > block.index(second):
        return None
    if not any(_calls_backward(s) for s in block[: block.index(step)]):
        return None
    text = source.segment(step)
    later = block[block.index(second) + 1 :]
    taken_after = any(_is_step(s) and source.segment(s) == text for s in later)
    # the same step after the second backward already: only the early one goes
    code = source.code if taken_after else insert_after(source, second, text, source.indent(second.lineno))
    start, end = statement_lines(source, step)  # before the insertion: its offsets hold
    return edit_text(code, start, end, ""), text, taken_after


def _step_after_fix(failure: Failure) -> Fix | None:
    """Move ``opt.step()`` after the failing backward: both backwards, then one update. Not when an
    earlier call freed what the failing one needs: ``_retain_fix`` moves it too, then."""
    if failure.freeing_sites():
        return None
    moved = _step_moved(failure, failure.modifying_lines())
    if moved is None:
        return None
    code, text, taken_after = moved
    return Fix(
        f"{text} after both backwards",
        f"{text} changed a weight in place that the graph saved for the second backward. "
        "Taking the step after every backward has run updates the weights once, with all gradients in."
        + (
            f" The program takes {text} after the second backward already: the early one goes."
            if taken_after
            else ""
        ),
        code,
        moved="" if taken_after else text.strip(),
    )


def _calls_backward(stmt: ast.stmt) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "grad")
        for n in ast.walk(stmt)
    )


# NOTE [the order of the recipes]: causes first, band-aids last.
_MAKERS: tuple[Callable[[Failure], Fix | None], ...] = (
    _reset_accumulated_fix,
    _detach_carried_fix,
    _detach_kept_fix,
    _recompute_inside_fix,
    _out_of_place_fix,
    _clone_fix,
    _step_after_fix,
    _detach_shared_fix,
    _recompute_after_step_fix,
    _create_graph_fix,
    _outside_no_grad_fix,
    _retain_fix,
    _summed_fix,
    _retain_same_site_fix,
)
