"""Recipes for two backwards that share a graph: compute again after an optimizer step (a GAN's
``D(fake)``), detach the shared input in the earlier loss, move a step after both backwards, add
the losses, or retain the graph (a band-aid where the same line frees it in a loop)."""

from __future__ import annotations

import ast

from app.core.lesson.edits import (
    Source,
    assigned_names,
    edit_text,
    insert_after,
    names_bound,
    names_read,
    set_call_keyword,
    statement_lines,
    wrapped,
)
from app.core.lesson.failure import Failure, site
from app.core.lesson.fix import Claim, Fix
from app.core.lesson.statement_shapes import (
    backward_receiver,
    calls_backward,
    is_step,
    step_receiver,
)

__all__ = [
    "BAND_AID",
    "detach_shared_fix",
    "loss_statement",
    "recompute_after_step_fix",
    "retain_fix",
    "retain_same_site_fix",
    "step_after_fix",
    "summed_fix",
]


def recompute_after_step_fix(failure: Failure) -> Fix | None:
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
    steps = [s for s in between if is_step(s)]
    if not steps or not any(calls_backward(s) for s in between):
        return None
    name = assigned_names(made)[0]
    if name in set().union(*(names_bound(s) for s in between)):
        return None
    text = source.segment(made)
    if "\n" in text or _draws_random(made):
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


# Computing a statement again draws new numbers from these: another input, not the same graph again.
_RANDOM = ("rand", "normal", "bernoulli", "multinomial", "dropout", "shuffle", "sample")


def _draws_random(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` calls something that draws random numbers (``torch.randn``, a dropout)."""
    return any(
        isinstance(n, ast.Call) and any(word in ast.unparse(n.func).lower() for word in _RANDOM)
        for n in ast.walk(stmt)
    )


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


def retain_fix(failure: Failure) -> Fix | None:
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


BAND_AID = "A band-aid: it hides why the graph is walked twice and keeps every retained graph's memory alive."


def retain_same_site_fix(failure: Failure) -> Fix | None:
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
        f"retain_graph=True nothing is freed. {BAND_AID}",
        set_call_keyword(failure.code, call, "retain_graph", "True"),
        band_aid=True,
    )


_GRAD_EFFECTS = {"backward", "grad", "step", "zero_grad"}


def _touches_grads(stmt: ast.stmt) -> bool:
    """Whether a statement reads or changes gradients, so it must see each backward's effect."""
    return any(isinstance(node, ast.Attribute) and node.attr in _GRAD_EFFECTS for node in ast.walk(stmt))


def summed_fix(failure: Failure) -> Fix | None:
    """One backward of the two losses added: ``(A + B).backward()`` in place of the two calls."""
    earlier = failure.freeing_calls()
    if len(earlier) != 1 or failure.info.call.kind != "backward" or earlier[0].call.kind != "backward":
        return None
    source = failure.source
    first, second = failure.call_statement(earlier[0]), failure.call_statement(failure.info)
    owner, block = source.block_of(first)
    if not isinstance(owner, ast.Module) or source.block_of(second)[1] is not block:
        return None  # only top-level statements: in a loop, each call runs more than once
    a, b = backward_receiver(source, first), backward_receiver(source, second)
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
    retained = retain_fix(failure)
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


def detach_shared_fix(failure: Failure) -> Fix | None:
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
    if not any(is_step(s) for s in block[block.index(first) + 1 : block.index(second)]):
        return None
    if failure.written_lines():  # that step updated the shared part's own weights: the first
        return None  # loss trains it too, and a detach would stop that
    made = source.statement_at(node.line)
    names = assigned_names(made) if made is not None else []
    if len(names) != 1:
        return None
    shared, loss = names[0], loss_statement(source, first, block)
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


def loss_statement(source: Source, call_statement: ast.stmt, block: list[ast.stmt]) -> ast.stmt:
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


def _is_step_line(source: Source, line: int) -> bool:
    stmt = source.statement_at(line)
    return stmt is not None and is_step(stmt)


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
    steps = [s for s in steps if s is not None and is_step(s)]
    if len(steps) != 1 or len({step_receiver(s) for s in block if is_step(s)}) > 1:
        return None
    step = steps[0]
    if step not in block or block.index(step) > block.index(second):
        return None
    if not any(calls_backward(s) for s in block[: block.index(step)]):
        return None
    text = source.segment(step)
    later = block[block.index(second) + 1 :]
    taken_after = any(is_step(s) and source.segment(s) == text for s in later)
    # the same step after the second backward already: only the early one goes
    code = source.code if taken_after else insert_after(source, second, text, source.indent(second.lineno))
    start, end = statement_lines(source, step)  # before the insertion: its offsets hold
    return edit_text(code, start, end, ""), text, taken_after


def step_after_fix(failure: Failure) -> Fix | None:
    """Move ``opt.step()`` after the failing backward: both backwards, then one update. Not when an
    earlier call freed what the failing one needs: ``retain_fix`` moves it too, then."""
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
