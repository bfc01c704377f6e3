"""The words that point a learner from a refusal to recording the text as a trusted script.

# NOTE [own scripts]
What the checked language leaves out, a learner's own trusted script can still do: every
refusal of the language ends with how to record one (never that it will be run here), and the
window offers the same under a refusal (NOTE [trusted script offer] in ``app/ui/editor/trusted_script.py``).
The limits a program meets while it runs (sizes, loops, statements, time) are not refusals of
the language: they say what to make smaller, and the window offers nothing under them.
"""

from __future__ import annotations

from app.core.model.errors import RUN_HINT, ProgramError, with_run_hint  # NOTE [own scripts]

__all__ = ["RUN_HINT", "refused", "with_run_hint"]


def refused(message: str) -> ProgramError:
    """The refusal of something the checked language leaves out, ending with :data:`RUN_HINT`."""
    return ProgramError(with_run_hint(message))
