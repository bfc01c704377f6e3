"""Which ``.lens`` file is the user's own script's recording (NOTE [a .lens runs nothing] in ``cli.py``).

Apart from :mod:`app.child.proofs` because the window asks it for every file it opens, on the GUI
thread, while the worker reads the file: importing the proofs there brought in the whole lesson
package (20 modules, 130-200 ms) that the window otherwise imports with its first lesson.

>>> import os, pathlib, tempfile
>>> saved = os.environ.pop(RUN_RECORDING_ENV, None)
>>> path = pathlib.Path(tempfile.gettempdir(), "mine.lens")
>>> is_own_recording(path)
False
>>> own_recording(path); is_own_recording(path)
True
>>> _ = os.environ.pop(RUN_RECORDING_ENV) if saved is None else os.environ.update({RUN_RECORDING_ENV: saved})
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["RUN_RECORDING_ENV", "is_own_recording", "own_recording"]

# The .lens of the user's own script that this window shows: set by ``run`` for its window, and
# by the window when it records a script as trusted (``proofs.trust_script``).
RUN_RECORDING_ENV = "AUTOGRAD_LENS_RUN_RECORDING"


def is_own_recording(path: Path) -> bool:
    """Whether ``path`` is the recording of the user's own script that ``run`` wrote and opened the
    window on, or that the window recorded as trusted: not a stranger's file."""
    own = os.environ.get(RUN_RECORDING_ENV)
    try:
        return own is not None and Path(own).resolve() == path.resolve()
    except OSError:
        return False


def own_recording(recording: Path) -> None:
    """``recording`` is the user's own script's, made for this window (``run``, the trusted-script
    button, "Apply to file"): its fixes are proven as the script's, not on request."""
    os.environ[RUN_RECORDING_ENV] = str(recording.resolve())
