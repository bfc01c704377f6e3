"""Advice for a recording that ran without an error: the first that the recording bears out, of
graphs kept for nothing (:mod:`app.core.lesson.advice`), gradients never cleared between steps
(:mod:`app.core.lesson.advice_grads`), a loss made a leaf by hand (:mod:`app.core.lesson.advice_cut`),
a reentrant checkpoint that starves its block (:mod:`app.core.lesson.advice_checkpoint`)."""

from __future__ import annotations

from app.core.lesson.advice import Advice, advice_for
from app.core.lesson.advice_checkpoint import reentrant_checkpoint_advice
from app.core.lesson.advice_cut import leaf_loss_advice
from app.core.lesson.advice_grads import zero_grad_advice
from app.core.model.recording import Recording

__all__ = ["advices_of"]


def advices_of(recording: Recording) -> list[Advice]:
    """Every advice the recording bears out, in that order: the first whose edit is proven is
    the one offered (an advice whose edits all fail their proof is never shown)."""
    found = (
        advice_for(recording),
        zero_grad_advice(recording),
        leaf_loss_advice(recording),
        reentrant_checkpoint_advice(recording),
    )
    return [advice for advice in found if advice is not None]
