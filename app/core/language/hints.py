"""The words that point a learner from a refusal to recording the text as a trusted script.

# NOTE [own scripts]
What the checked language leaves out, a learner's own trusted script can still do: every
refusal of the language ends with how to record one (never that it will be run here), and the
window offers the same under a refusal (NOTE [trusted script offer] in ``app/ui/editor/trusted_script.py``).
The limits a program meets while it runs (sizes, loops, statements, time) are not refusals of
the language: they say what to make smaller, and the window offers nothing under them.
"""

from __future__ import annotations

from app.core.model.errors import ProgramError

__all__ = ["RUN_HINT", "refused", "with_run_hint"]

RUN_HINT = "to record a script of your own with full Python, run: python -m app run SCRIPT.py"


def with_run_hint(message: str) -> str:
    """``message`` ending with how to record the text as a trusted script.

    >>> with_run_hint("comprehensions are not allowed.").replace(RUN_HINT, "RUN_HINT")
    'comprehensions are not allowed; RUN_HINT'
    """
    if message.endswith(RUN_HINT):
        return message
    return f"{message.rstrip('. ')}; {RUN_HINT}"


def refused(message: str) -> ProgramError:
    """The refusal of something the checked language leaves out, ending with :data:`RUN_HINT`."""
    return ProgramError(with_run_hint(message))
