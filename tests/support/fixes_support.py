"""Helpers for proving fixes of scripts in tests: record an edited script here, and run a script
plainly with PyTorch as the oracle."""

from __future__ import annotations

import contextlib
import io
import itertools
import runpy
from pathlib import Path

from app.core.lesson.prove import Outcome, Record
from app.core.model.errors import ProgramError
from app.core.recorder.script import record_script

_COUNT = itertools.count()


def script_recorder(folder: Path) -> Record:
    """Record each edited script in this process (the tests' scripts are their own, trusted)."""

    def run(code: str) -> Outcome:
        path = folder / f"edited_{next(_COUNT)}.py"
        path.write_text(code, encoding="utf-8")
        try:
            return record_script(path, stdout=io.StringIO()).recording
        except ProgramError as exc:
            return str(exc)

    return run


def run_plainly(folder: Path, code: str) -> BaseException | None:
    """Run ``code`` as ``python SCRIPT.py`` would, unhooked; the exception it raised, if any."""
    path = folder / f"plain_{next(_COUNT)}.py"
    path.write_text(code, encoding="utf-8")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(path), run_name="__main__")
    except Exception as exc:
        return exc
    return None


def recorded(folder: Path, code: str, name: str = "script.py") -> Outcome:
    path = folder / name
    path.write_text(code, encoding="utf-8")
    return record_script(path, stdout=io.StringIO()).recording
