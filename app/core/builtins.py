"""The built-in programs in the order a lesson takes them: the seed first, then its variations,
then the code shapes of real training code, each beside its twin (the broken one first).

Only each file's ``title`` and ``twin`` are read (``tomllib``, no language, no torch), so the
window can list the titles at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import tomllib

from app.core.resources import program_files

__all__ = ["LESSON_ORDER", "BuiltinEntry", "builtin_entries"]

# The seed and its variations, then each pair broken-first; a file not named here follows
# these, in name order, with its twin beside it.
LESSON_ORDER = (
    "two-losses",
    "forgot-retain",
    "no-saved-values",
    "square-needs-saved",
    "higher-derivative",
    "summed-loss",
    "separate-forwards",
    "weight-and-input",
    "rnn-no-detach",
    "rnn-detach",
    "retain-bandaid",
    "retain-fixed",
    "gan-no-detach",
    "gan-detach",
    "logged-loss",
    "logged-item",
    "computed-once",
    "computed-inside",
    "inplace-sigmoid",
    "inplace-clone",
    "data-hides",
    "detach-raises",
    "gradient-penalty",
    "penalty-no-graph",
    "accumulate-no-zero",
    "accumulate-zero-grad",
    "no-checkpoint",
    "checkpoint-saves-memory",
    "checkpoint-no-input-grad",
    "checkpoint-input-grad",
)


@dataclass(frozen=True)
class BuiltinEntry:
    name: str
    title: str  # the file's title, or its name when it has none
    twin: str | None  # the twin's name, when the file names one that ships too
    is_twin: bool  # listed right after its twin (the second of a pair)


def _head(path_text: str) -> tuple[str | None, str | None]:
    try:
        with open(path_text, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return None, None  # loading the program says what is wrong with it
    title, twin = data.get("title"), data.get("twin")
    return (title if isinstance(title, str) else None), (twin if isinstance(twin, str) else None)


def builtin_entries() -> list[BuiltinEntry]:
    """Every built-in, seed first, twins together.

    >>> entries = builtin_entries()
    >>> entries[0].name, entries[1].name
    ('two-losses', 'forgot-retain')
    >>> [(e.name, e.is_twin) for e in entries if e.name.startswith("rnn")]
    [('rnn-no-detach', False), ('rnn-detach', True)]
    """
    heads = {path.stem: _head(str(path)) for path in program_files()}
    rank = {name: i for i, name in enumerate(LESSON_ORDER)}
    ordered = sorted(heads, key=lambda name: (rank.get(name, len(rank)), name))
    entries: list[BuiltinEntry] = []
    placed: set[str] = set()
    for name in ordered:
        if name in placed:
            continue
        for member in (name, heads[name][1]):
            if member is None or member in placed or member not in heads:
                continue
            title, twin = heads[member]
            twin = twin if twin in heads else None
            entries.append(BuiltinEntry(member, title or member, twin, member != name))
            placed.add(member)
    return entries
