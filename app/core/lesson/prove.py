"""Proving a fix: the edited program is recorded again, and the fix is offered only if it holds.

A fix is a claim: "this edit removes the error". :func:`prove` checks it the
only way that settles it: the edited program is recorded (a checked program
in the warm child with the same limits, a script of the user's own, run with
``run``, in a fresh process of its own: :mod:`app.child.proofs`) and that recording is read:

* ``error_gone``: the error the fix targets is not raised any more;
* ``other_error``: no other exception appears instead (an edit that raises,
  ``.detach()`` on a tuple, is never offered);
* ``claims``: each sentence of the explanation that states a result
  (:class:`~app.core.lesson.recipes.Claim`) holds against the recording it names.

:func:`proven_fixes` proves each candidate of :func:`~app.core.lesson.recipes.fixes_for`
in order, trying a fix's ``alternatives`` (the same edit for a tuple, a list, a
dict) when it raises, and keeps those that hold: a fix that fails its proof is
never shown.

>>> from app.core.model.program import Program
>>> from app.core.recorder.recorder import record
>>> from app.child.proofs import in_process
>>> code = "import torch\\nx = torch.ones(2, requires_grad=True)\\ny = x * x\\n"
>>> broken = record(Program(code + "y.sum().backward()\\ny.sum().backward()\\n"))
>>> [(p.fix.title, p.checked.error_gone) for p in proven_fixes(broken, record=in_process(broken))]
[('retain_graph=True on line 4', True), ('add the losses, one backward', True)]
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from app.core.lesson.fix import Claim, Fix
from app.core.lesson.recipes import fixes_for
from app.core.model.recording import Recording
from app.core.model.values import Values

__all__ = [
    "Checked",
    "ClaimCheck",
    "Outcome",
    "ProvenFix",
    "Record",
    "ScriptSource",
    "final_grads",
    "prove",
    "proven_fixes",
]

Outcome = Recording | str  # the edited program's recording, or why it could not be recorded
Record = Callable[[str], Outcome]  # program text -> its recording

TOLERANCE = 1e-5  # gradients summed in another order differ in their last bits


@dataclass(frozen=True)
class ClaimCheck:
    """One stated result and whether the recording it names bears it out (``mark``: in a few words)."""

    text: str
    holds: bool
    mark: str = ""


@dataclass(frozen=True)
class Checked:
    """What the recording of the edited program showed."""

    error_gone: bool
    other_error: str | None
    claims: tuple[ClaimCheck, ...] = ()

    @property
    def holds(self) -> bool:
        """Whether the fix may be offered: the error gone, nothing else raised, every claim true."""
        return self.error_gone and self.other_error is None and all(c.holds for c in self.claims)

    def mark(self) -> str:
        """The quiet line the window shows under a proven fix."""
        said = "; ".join(c.mark or c.text.rstrip(".") for c in self.claims if c.holds)
        return "recorded: no error" + (f"; {said}" if said else "")


@dataclass(frozen=True)
class ProvenFix:
    """A fix (the alternative that held, when the first shape raised) and what its proof found."""

    fix: Fix
    checked: Checked


# -- what the recording of the edited program says ---------------------------------------------


def _error_of(outcome: Outcome) -> str | None:
    if isinstance(outcome, str):
        return outcome
    if outcome.failed is not None:
        return outcome.failed.error or "an autograd call failed"
    return outcome.error


def _kind(message: str) -> str:
    """What an error says, without the values it names (shapes, versions, addresses).

    >>> _kind("one of the variables ...: [torch.FloatTensor [2]] is at version 2")
    'one of the variables ...'
    """
    return re.sub(r"[\d\[\]]+", "", message.split(":", maxsplit=1)[0]).strip()[:80]


def _target_error(original: Recording) -> str | None:
    return _error_of(original)


def _check_claim(claim: Claim, outcome: Recording, record: Record, cache: dict[str, Outcome]) -> bool:
    if claim.kind == "keeps_no_graph":
        from app.core.lesson.advice import kept_graphs

        return kept_graphs(outcome) is None
    if claim.kind == "grads_not_carried":
        from app.core.lesson.advice_grads import grown_grads

        return grown_grads(outcome) is None
    if claim.kind == "grads_given":
        grads = final_grads(outcome)
        return all(grads.get(name) is not None for name in claim.reference.split())
    if claim.reference not in cache:
        cache[claim.reference] = record(claim.reference)
    reference = cache[claim.reference]
    if isinstance(reference, str) or _error_of(reference) is not None:
        return False
    return _same_grads(final_grads(outcome), final_grads(reference))


def final_grads(recording: Recording) -> dict[str, Values | None]:
    """Every leaf's ``.grad`` when the program ended."""
    if not len(recording.timeline):
        return {}
    return dict(recording.timeline.state(len(recording.timeline) - 1).grads)


def _same_grads(a: dict[str, Values | None], b: dict[str, Values | None]) -> bool:
    if set(a) != set(b) or not a:
        return False
    for name, x in a.items():
        y = b[name]
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if x.shape != y.shape:
            return False
        for p, q in zip(x.flat, y.flat, strict=True):
            if abs(float(p) - float(q)) > TOLERANCE * (1 + abs(float(q))):
                return False
    return True


def prove(original: Recording, fix: Fix, record: Record, cache: dict[str, Outcome] | None = None) -> Checked:
    """Record ``fix.code`` with ``record`` and check it against ``original``'s error and the fix's claims.

    ``cache``: recordings of the claims' reference programs, shared between the fixes of one error.
    """
    outcome = record(fix.code)
    target = _target_error(original)
    now = _error_of(outcome)
    gone = now is None or target is None or _kind(now) != _kind(target)
    other = now if now is not None and gone else None
    if isinstance(outcome, str) or not gone or other is not None:
        return Checked(gone, other, tuple(ClaimCheck(c.text, False, c.mark) for c in fix.claims))
    cache = {} if cache is None else cache
    claims = tuple(ClaimCheck(c.text, _check_claim(c, outcome, record, cache), c.mark) for c in fix.claims)
    return Checked(gone, other, claims)


_SHAPE_NAMED = re.compile(r"'(tuple|list|dict|NoneType)' object")


def _prove_with_alternatives(
    original: Recording, fix: Fix, record: Record, cache: dict[str, Outcome]
) -> ProvenFix | None:
    """The first of ``fix`` and its alternatives that holds; an error naming the value's type
    ("'tuple' object has no attribute 'detach'") skips to the alternatives for that type."""
    tries = [fix, *fix.alternatives]
    while tries:
        candidate = tries.pop(0)
        checked = prove(original, candidate, record, cache)
        if checked.holds:
            return ProvenFix(dataclasses.replace(candidate, alternatives=()), checked)
        named = _SHAPE_NAMED.search(checked.other_error or "")
        if named is not None:
            shape = {"NoneType": "None"}.get(named.group(1), named.group(1))
            matching = [t for t in tries if shape in t.explanation + t.code]
            tries = matching + [t for t in tries if t not in matching]
    return None


def proven_fixes(
    original: Recording,
    fixes: Sequence[Fix] | None = None,
    *,
    record: Record,
    deadline: float | None = None,
    parallel: int = 1,
) -> list[ProvenFix]:
    """The fixes (of ``original``'s error when not given) that hold when recorded, in their order.

    ``deadline`` (``time.monotonic()``): no proof starts after it. ``parallel``: proofs run at once
    (scripts in processes of their own; a checked program's child is one warm process: 1).
    """
    candidates = list(fixes_for(original) if fixes is None else fixes)
    cache: dict[str, Outcome] = {}

    def one(fix: Fix) -> ProvenFix | None:
        if deadline is not None and time.monotonic() > deadline:
            return None
        return _prove_with_alternatives(original, fix, record, cache)

    if parallel > 1 and len(candidates) > 1:
        with ThreadPoolExecutor(parallel) as pool:
            results = list(pool.map(one, candidates))
    else:
        results = [one(fix) for fix in candidates]
    return [r for r in results if r is not None]


# -- recording the edited program ---------------------------------------------------------------


@dataclass(frozen=True)
class ScriptSource:
    """A script of the user's own, as ``run`` ran it: its file, arguments and device."""

    path: Path
    args: tuple[str, ...] = ()
    device: str = "cpu"
