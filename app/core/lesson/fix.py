"""A fix: one edit of the program, why it works, and the results it claims (each checked by
:mod:`app.core.lesson.prove` before the fix is offered)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Claim", "ClaimKind", "Fix"]

ClaimKind = Literal["same_grads_as", "keeps_no_graph", "grads_not_carried", "grads_given"]


@dataclass(frozen=True)
class Claim:
    """A sentence of a fix's explanation that states a result, and what the proof compares.

    ``same_grads_as``: every leaf's ``.grad`` at the end of the edited program equals its value at
    the end of ``reference`` (another program text, recorded too). ``keeps_no_graph``: the edited
    program's recording keeps no earlier iteration's graph alive (NOTE [kept graphs]).
    ``grads_not_carried``: no backward of the edited program starts from the gradients an earlier
    run of it left (:mod:`app.core.lesson.advice_grads`). ``grads_given``: each leaf ``reference``
    names (separated by spaces) ends with a ``.grad`` (:mod:`app.core.lesson.advice_checkpoint`).
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
