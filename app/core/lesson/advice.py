"""Advice without an error: edits for a program that runs, but keeps old graphs alive.

Logging the loss tensor (``total_loss += loss``, ``losses.append(loss)``) raises
nothing; each iteration's graph simply stays reachable from a value the program
holds, so the nodes alive rise with every pass (and, for a graph no backward has
walked, its saved tensors too). :func:`kept_graphs` finds that in the recording;
:func:`advice_for` offers the edits, as :class:`~app.core.lesson.fix.Fix`
objects the window shows and undoes like the fixes at an error.

>>> code = "total = 0.0\\nfor i in range(2):\\n    loss = f(i)\\n    loss.backward()\\n    total += loss\\n"
>>> print(_held_edit(Source(code), holder_of(Source(code), 2, {"loss"}), "item"), end="")
total = 0.0
for i in range(2):
    loss = f(i)
    loss.backward()
    total += loss.item()

# NOTE [kept graphs]
A node made in iteration ``i`` of a loop should be gone by the end of iteration
``i + 1``: the names bound in the loop body are re-bound then, and nothing else
should reach it. A non-leaf node still alive after that, which no later call
needs (a loss summed over the loop and backpropagated once after it is fine),
is kept for nothing. The recording says which nodes those are
(``GraphNode.loops``, ``GraphNode.gone_at_step``, ``Recording.needed_by``);
the program text only says where the holding statement is: an ``acc += v``,
``acc = acc + v`` or ``acc.append(v)`` in that loop's body, where ``v`` was
bound by a statement that made one of the kept nodes; ``acc`` may be a name,
an item (``history["loss"]``) or an attribute (``self.total``), and the
statement may be in a function or method the loop calls with ``v``
(``holders.py``). What "alive" means is Python's own reachability (NOTE
[held is reachable] in ``app/core/recorder/reach.py``), so a graph kept in
a dict, an object or a closure is found like one kept in a list.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass

from app.core.lesson.edits import Source, assigned_names, parsed, wrapped
from app.core.lesson.fix import Claim, Fix
from app.core.lesson.holders import Holder, holder_of
from app.core.model.graph import GraphNode, LoopMark
from app.core.model.recording import Recording

__all__ = ["Advice", "KeptGraphs", "advice_for", "kept_graphs"]

_Key = tuple[tuple[int, int], ...]  # (for line, iteration) of the enclosing loops, outermost first


@dataclass(frozen=True)
class KeptGraphs:
    """Nodes of earlier iterations of one loop that outlive the next iteration for nothing."""

    loop_line: int  # the ``for`` line
    nodes: tuple[str, ...]  # the kept nodes, in graph order
    alive_at_ends: tuple[int, ...]  # nodes alive at the last step of each iteration, in order


def _key(loops: tuple[LoopMark, ...], loop_line: int) -> _Key | None:
    """The iteration of loop ``loop_line`` (with its outer loops' iterations) that ``loops`` name."""
    key: list[tuple[int, int]] = []
    for mark in loops:
        key.append((mark.line, mark.index))
        if mark.line == loop_line:
            return tuple(key)
    return None


def _iteration_ends(recording: Recording, loop_line: int) -> dict[_Key, int]:
    """The last step of each iteration of loop ``loop_line``, in the order they ran."""
    ends: dict[_Key, int] = {}
    for step in recording.timeline.steps:
        key = _key(step.loops, loop_line)
        if key is not None:
            ends[key] = step.index
    return ends


def _next_ends(ends: dict[_Key, int]) -> dict[_Key, int]:
    """For each iteration, the last step of the one after it in the same run of the loop."""
    keys = list(ends)
    return {key: ends[after] for key, after in itertools.pairwise(keys) if after[:-1] == key[:-1]}


def _kept(recording: Recording, node: GraphNode, loop_line: int, next_ends: dict[_Key, int]) -> bool:
    key = _key(node.loops, loop_line)
    end = None if key is None else next_ends.get(key)
    if node.is_leaf or end is None:
        return False
    if node.gone_at_step is not None and node.gone_at_step <= end:
        return False
    later_calls = [c for c in recording.needed_by.get(node.id, ()) if recording.calls[c].first_step > end]
    return not later_calls  # held for a backward still to come: kept on purpose


def kept_graphs(recording: Recording) -> KeptGraphs | None:
    """The loop whose earlier iterations' nodes stay alive for nothing (NOTE [kept graphs]), if any.

    The innermost such loop when loops nest; None for a program that lets each graph go.
    """
    lines = sorted({mark.line for node in recording.graph.nodes for mark in node.loops}, reverse=True)
    for loop_line in lines:
        ends = _iteration_ends(recording, loop_line)
        next_ends = _next_ends(ends)
        nodes = tuple(n.id for n in recording.graph.nodes if _kept(recording, n, loop_line, next_ends))
        if nodes:
            steps = recording.timeline.steps
            return KeptGraphs(loop_line, nodes, tuple(steps[e].alive_nodes for e in ends.values()))
    return None


# -- the statement that holds them, and the edits ----------------------------------------


def _made_names(source: Source, recording: Recording, nodes: tuple[str, ...]) -> set[str]:
    """Names bound by the statements that made the kept nodes."""
    names: set[str] = set()
    for node_id in nodes:
        line = recording.graph.node(node_id).line
        stmt = source.statement_at(line) if line is not None else None
        if stmt is not None:
            names.update(assigned_names(stmt))
    return names


def _is_scalar_loss(source: Source, held: ast.expr) -> bool:
    """Whether ``held`` is a name the program calls ``.backward()`` on without a gradient: one value."""
    if not isinstance(held, ast.Name):
        return False
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "backward"
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == held.id
        and not n.args
        and not any(k.arg == "gradient" for k in n.keywords)
        for n in ast.walk(source.tree)
    )


def _held_edit(source: Source, holder: Holder | None, method: str) -> str:
    if holder is None:
        raise ValueError("no statement holds the value")
    held = holder.held
    return (
        source.code[: source.start(held)]
        + f"{wrapped(source, held)}.{method}()"
        + source.code[source.end(held) :]
    )


_LETS_GO = Claim(
    "Recorded again, no iteration's graph outlives the next iteration.",
    "keeps_no_graph",
    mark="no graph kept past its iteration",
)


def _rise(kept: KeptGraphs) -> str:
    return " → ".join(str(n) for n in kept.alive_at_ends)


@dataclass(frozen=True)
class Advice:
    """What the recording shows kept for nothing, in words, and the edits that let it go."""

    headline: str  # one line: what is wrong, though nothing failed
    evidence: str  # the numbers from the recording that show it
    fixes: tuple[Fix, ...]  # best first


def advice_for(recording: Recording) -> Advice | None:
    """The edits that let each iteration's graph go, when the recording shows them kept.

    None for a recording that failed (its fixes are offered at the error), that
    keeps nothing, or whose holding statement is not one the edits know. See
    NOTE [kept graphs].
    """
    if recording.failed is not None or recording.error is not None:
        return None
    kept = kept_graphs(recording)
    if kept is None:
        return None
    try:
        source = parsed(recording.program.code)
    except SyntaxError:
        return None
    holder = holder_of(source, kept.loop_line, _made_names(source, recording, kept.nodes))
    if holder is None:
        return None
    line, acc, held = holder.statement.lineno, source.segment(holder.place), source.segment(holder.held)
    why = f"Line {line} keeps {held} in {acc} with its graph, so no iteration's nodes are let go."
    fixes: list[Fix] = []
    if _is_scalar_loss(source, holder.origin):
        fixes.append(
            Fix(
                f"{held}.item() on line {line}: keep the number, not the graph",
                f"{why} {held}.item() is a plain Python number: nothing links one iteration's graph "
                f"to the next. {_LETS_GO.text}",
                _held_edit(source, holder, "item"),
                claims=(_LETS_GO,),
            )
        )
    fixes.append(
        Fix(
            f"{held}.detach() on line {line}: keep a tensor without its graph",
            f"{why} {held}.detach() holds the same values in a tensor that belongs to no graph. "
            f"{_LETS_GO.text}",
            _held_edit(source, holder, "detach"),
            claims=(_LETS_GO,),
        )
    )
    for fix in fixes:
        ast.parse(fix.code)  # every edit must leave a program that parses
    return Advice(
        f"No error, but line {line} keeps every iteration's graph alive in {acc}",
        f"Nodes alive at the end of each iteration of the loop on line {kept.loop_line}: {_rise(kept)}; "
        f"{len(kept.nodes)} of them belong to iterations that are over.",
        tuple(fixes),
    )
