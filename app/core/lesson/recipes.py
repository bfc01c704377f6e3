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
version error later): beside a fix of the cause it comes last, labelled a band-aid
(``Fix.band_aid``), never alone as the answer to a cause it hides.
"""

from __future__ import annotations

import ast
import dataclasses
import time
from collections.abc import Callable, Sequence

from app.core.lesson import recipes_calls as calls
from app.core.lesson import recipes_carried as carried
from app.core.lesson import recipes_cut as cut
from app.core.lesson import recipes_nets as nets
from app.core.lesson import recipes_shapes as shapes
from app.core.lesson import recipes_steps as steps
from app.core.lesson import recipes_writes as writes
from app.core.lesson.failure import Failure, failure_of
from app.core.lesson.fix import Fix
from app.core.model.recording import Recording

__all__ = ["fixes_for"]


def fixes_for(recording: Recording, deadline: float | None = None) -> list[Fix]:
    """The candidate edits for the error of ``recording``, best first (none if it passed).

    See NOTE [fixes from the recording]. A fix whose edit cannot be made on
    this text (the call moved, a line holds two statements) is left out.
    ``deadline`` (a ``time.monotonic()`` value): the fixes found by then, and no more.
    Candidates only: :func:`app.core.lesson.prove.proven_fixes` keeps those that hold.
    """
    failure = failure_of(recording)
    if failure is not None:
        return _made(failure, _makers(), failure.source.code, deadline)
    return calls.program_error_fixes(recording)


def _made(
    failure: Failure, makers: Sequence[Callable[[Failure], Fix | None]], code: str, deadline: float | None
) -> list[Fix]:
    fixes: list[tuple[Callable[[Failure], Fix | None], Fix]] = []
    for make in makers:
        if deadline is not None and time.monotonic() > deadline:
            break
        try:
            fix = make(failure)
        except ValueError:
            continue
        if fix is not None and fix.code != code and all(f.code != fix.code for _, f in fixes):
            ast.parse(fix.code)  # every edit must leave a program that parses
            fixes.append((make, fix))
    if not any(make not in _NOT_CAUSES and not fix.band_aid for make, fix in fixes):
        return [fix for _, fix in fixes]  # two losses of one graph: retaining is a remedy there
    causes = [fix for make, fix in fixes if make is not steps.retain_fix]
    return causes + [_as_band_aid(fix) for make, fix in fixes if make is steps.retain_fix]


# Fixes that remove the error without naming a cause: retaining, and adding two losses.
_NOT_CAUSES = (steps.retain_fix, steps.summed_fix)


def _as_band_aid(fix: Fix) -> Fix:
    """``retain_graph=True`` beside a fix of the cause: labelled a band-aid, and last (NOTE [the
    order of the recipes]); alone (two losses of one graph, read between) it is the remedy."""
    return dataclasses.replace(
        fix, title=f"{fix.title} (band-aid)", explanation=f"{fix.explanation} {steps.BAND_AID}", band_aid=True
    )


def _makers() -> tuple[Callable[[Failure], Fix | None], ...]:
    """The recipes, in NOTE [the order of the recipes]: causes first, band-aids last."""
    return (
        shapes.gradient_count_fix,
        shapes.reduce_output_fix,
        shapes.reduce_output_other_fix,
        carried.reset_accumulated_fix,
        carried.detach_carried_fix,
        carried.detach_kept_fix,
        carried.recompute_inside_fix,
        writes.out_of_place_fix,
        writes.clone_fix,
        nets.detach_other_net_fix,
        nets.step_after_loop_fix,
        steps.step_after_fix,
        steps.detach_shared_fix,
        steps.recompute_after_step_fix,
        calls.create_graph_fix,
        calls.outside_no_grad_fix,
        *cut.CUT_MAKERS,
        steps.retain_fix,
        steps.summed_fix,
        steps.retain_same_site_fix,
    )
