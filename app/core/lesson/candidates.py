"""What a recording's lesson will try: the candidate fixes of its error, or the advices of a program
that ran, found where the recording was made and carried back beside it.

# NOTE [the lesson found in the child]
Finding the candidates parses the program and walks its tree: for a 3,300-line program that
held the window's interpreter 0.1-0.25 s (2 s on the first parse of a process), even on a pool
thread, while the window drew the graph. The recording child has the recording in hand and
nothing else to do, so the window asks it to find them (``"lesson": true`` in a record request,
``app/child/server.py``); they come back as JSON after the recording's ``.lens`` bytes
(:func:`candidates_json` writes it, :func:`candidates_from_json` reads and checks it, as any data
from the child is checked) and are kept beside that recording object (:func:`keep_found`). The
panels take them from there (:func:`found_for`) and only prove them; a recording the child did
not find them for (a ``.lens`` file's, a test's, a child that failed at it) has them found where
it is, as before.

>>> from app.core.lesson.fix import Claim, Fix
>>> fix = Fix("t", "e", "x = 1\\n", claims=(Claim("c", "keeps_no_graph"),))
>>> candidates_from_json(candidates_json(Candidates(fixes=(fix,)))) == Candidates(fixes=(fix,))
True
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args

from app.core.lesson.fix import Claim, ClaimKind, Fix

if TYPE_CHECKING:  # the window reads what was found at start-up; finding them is imported later
    from app.core.lesson.advice import Advice
    from app.core.model.recording import Recording

__all__ = [
    "Candidates",
    "candidates_from_json",
    "candidates_json",
    "candidates_of",
    "found_for",
    "keep_found",
]

MAX_ALTERNATIVES_DEPTH = 4  # a fix's alternatives are one level deep; the reader refuses deeper nesting


@dataclass(frozen=True)
class Candidates:
    """The candidate fixes of a recording's error (best first), or, for one that ran, its advices."""

    fixes: tuple[Fix, ...] = ()
    advices: tuple[Advice, ...] = ()


def candidates_of(recording: Recording, deadline: float | None = None) -> Candidates:
    """What the lesson of ``recording`` will prove (``deadline``: ``fixes_for``'s)."""
    from app.core.lesson.advised import advices_of
    from app.core.lesson.recipes import fixes_for

    if recording.failed is not None or recording.error is not None:
        return Candidates(fixes=tuple(fixes_for(recording, deadline)))
    return Candidates(advices=tuple(advices_of(recording)))


# -- beside the recording ----------------------------------------------------------------------------

_FOUND: dict[int, Candidates] = {}
_LOCK = threading.Lock()


def keep_found(recording: Recording, candidates: Candidates) -> None:
    """Keep ``candidates`` for this recording object for as long as it lives."""
    key = id(recording)
    with _LOCK:
        _FOUND[key] = candidates
    weakref.finalize(recording, _forget, key)


def _forget(key: int) -> None:
    with _LOCK:
        _FOUND.pop(key, None)


def found_for(recording: Recording) -> Candidates | None:
    """The candidates found for this recording object where it was made, if any were."""
    with _LOCK:
        return _FOUND.get(id(recording))


# -- as JSON (the child writes it, the parent reads it) ----------------------------------------------


def candidates_json(candidates: Candidates) -> dict[str, Any]:
    return {
        "fixes": [_fix_json(f) for f in candidates.fixes],
        "advices": [
            {"headline": a.headline, "evidence": a.evidence, "fixes": [_fix_json(f) for f in a.fixes]}
            for a in candidates.advices
        ],
    }


def _fix_json(fix: Fix) -> dict[str, Any]:
    return {
        "title": fix.title,
        "explanation": fix.explanation,
        "code": fix.code,
        "moved": fix.moved,
        "claims": [[c.text, c.kind, c.reference, c.mark] for c in fix.claims],
        "band_aid": fix.band_aid,
        "alternatives": [_fix_json(a) for a in fix.alternatives],
    }


def candidates_from_json(data: Any) -> Candidates:
    """The candidates :func:`candidates_json` wrote; ``ValueError`` for anything else."""
    from app.core.lesson.advice import Advice

    data = _dict(data, ("fixes", "advices"))
    advices = []
    for item in _list(data["advices"]):
        advice = _dict(item, ("headline", "evidence", "fixes"))
        fixes = tuple(_fix(f) for f in _list(advice["fixes"]))
        advices.append(Advice(_str(advice["headline"]), _str(advice["evidence"]), fixes))
    return Candidates(tuple(_fix(f) for f in _list(data["fixes"])), tuple(advices))


def _fix(data: Any, depth: int = 0) -> Fix:
    if depth > MAX_ALTERNATIVES_DEPTH:
        raise ValueError("a fix's alternatives nest too deep")
    data = _dict(data, ("title", "explanation", "code", "moved", "claims", "band_aid", "alternatives"))
    if not isinstance(data["band_aid"], bool):
        raise ValueError("a fix's band_aid is not true or false")
    return Fix(
        _str(data["title"]),
        _str(data["explanation"]),
        _str(data["code"]),
        _str(data["moved"]),
        tuple(_claim(c) for c in _list(data["claims"])),
        data["band_aid"],
        tuple(_fix(a, depth + 1) for a in _list(data["alternatives"])),
    )


def _claim(data: Any) -> Claim:
    parts = _list(data)
    if len(parts) != 4 or parts[1] not in get_args(ClaimKind):
        raise ValueError("not a fix's claim")
    return Claim(_str(parts[0]), parts[1], _str(parts[2]), _str(parts[3]))


def _dict(data: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(data, dict) or set(data) != set(keys):
        raise ValueError(f"expected an object of {', '.join(keys)}")
    return data


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise ValueError("expected a list")
    return data


def _str(data: Any) -> str:
    if not isinstance(data, str):
        raise ValueError("expected a string")
    return data
