"""Recording an edited program to prove a fix: in the warm child, or a script in a fresh process.

:func:`app.core.lesson.prove.prove` takes a ``record`` function, program text to
its recording; this module makes the two the window and the command line use.

# NOTE [proving a script]
A ``run`` recording is of the user's own trusted script, already run once. Its
fix is an edit of that file, written to a new temporary folder and run by a
fresh ``python -m app.child.proofs`` process (NOTE [recording in a child]
for why not in this one): its working directory is this one's, the script's
own folder is first on its ``sys.path`` as it was for the script, its printed
output is dropped, and it is stopped past the recording time limit (plus the
start of a fresh interpreter, which imports torch). It writes the recording
as ``.lens`` bytes, read back by the checked reader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.child.own_recording import RUN_RECORDING_ENV, is_own_recording, own_recording
from app.core.lesson.offered import Lesson, lesson_of
from app.core.lesson.prove import Outcome, Record, ScriptSource
from app.core.model.errors import ProgramError

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = [
    "RUN_RECORDING_ENV",
    "SCRIPT_ENV",
    "ScriptSource",
    "in_child",
    "in_process",
    "in_script_child",
    "is_own_recording",
    "own_recording",
    "proven_lesson",
    "recorder_for",
    "script_of",
    "trust_script",
    "window_recorder",
]

START_S = 60.0  # a fresh interpreter importing torch on a busy machine, before the script runs


def in_process(original: Recording, device: str = "cpu") -> Record:
    """Record a checked program here (tests, and ``trace --in-process``)."""
    from app.core.recorder.recorder import record

    def run(code: str) -> Outcome:
        try:
            return record(original.program.with_code(code), device=device)
        except ProgramError as exc:
            return str(exc) or type(exc).__name__

    return run


def in_child(original: Recording, device: str = "cpu") -> Record:
    """Record a checked program in the warm child, with the limits of every recording."""
    from app.child.client import record_in_child

    def run(code: str) -> Outcome:
        try:
            return record_in_child(original.program.with_code(code), device)
        except ProgramError as exc:
            return str(exc) or type(exc).__name__

    return run


def in_script_child(script: ScriptSource, time_limit_s: float | None = None) -> Record:
    """Run an edited script in a fresh process and read its recording (NOTE [proving a script])."""
    from app.child.client import POOL, child_env

    limit = (time_limit_s or POOL.limits.time_limit_s) + START_S

    def run(code: str) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="autograd-lens-fix-") as folder:
            edited = Path(folder) / script.path.name
            edited.write_text(code, encoding="utf-8")
            out = Path(folder) / "recording.lens"
            env = child_env()
            own = str(script.path.resolve().parent)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (own, env.get("PYTHONPATH", "")) if p)
            command = [sys.executable, "-m", "app.child.proofs", str(edited), str(out), script.device]
            try:
                done = subprocess.run(
                    [*command, *script.args],
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    timeout=limit,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return f"the edited script ran past {limit:g} s"
            if not out.exists():
                last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no recording"]
                return last[0]
            from app.core.lensfile import recording_from_bytes

            try:
                return recording_from_bytes(out.read_bytes())
            except ProgramError as exc:
                return str(exc)

    return run


def recorder_for(original: Recording, script: ScriptSource | None = None, *, device: str = "cpu") -> Record:
    """How to record an edit of ``original``: its script in a fresh process, else in the child."""
    return in_script_child(script) if script is not None else in_child(original, device)


def proven_lesson(
    recording: Recording, *, script: ScriptSource | None = None, here: bool = False, skip: bool = False
) -> Lesson:
    """The proven fixes or advice of ``recording``, for the command line: a script's edits run as
    scripts, two at once (each in a process of its own); a checked program's in the warm child
    (or in this process: ``here``). ``skip``: none (the window proves its own)."""
    if skip:
        return Lesson(recording)
    if script is not None:
        return lesson_of(recording, in_script_child(script), parallel=2, path=str(script.path))
    record = in_process(recording) if here else in_child(recording)
    return lesson_of(recording, record)


SCRIPT_ENV = "AUTOGRAD_LENS_RUN_SCRIPT"  # set by ``run`` for its window: [script path, its args...]


def trust_script(path: Path, recording: Path) -> None:
    """The window recorded ``path`` as the user's own trusted script ("Record as my own trusted
    script") into ``recording``: that recording's fixes are edits of that file, proven as ``run``
    proves them."""
    os.environ[SCRIPT_ENV] = json.dumps([str(path.resolve())])
    own_recording(recording)


def script_of(recording: Recording) -> ScriptSource | None:
    """The user's own script ``recording`` was made from, when it is one: a ``.py`` file whose text
    on disk is the recorded text, recorded as a script (its nodes know their lines in it) or one
    the checked language refuses, either the program's own path or
    the script ``run`` opened the window on or the window recorded as trusted (:data:`SCRIPT_ENV`,
    :func:`trust_script`). Never a ``.lens`` file's program alone: a stranger's recording is data,
    and only the user's own file is run as Python. A recording read from a ``.lens`` file (its
    ``program.path``) is a script's only when it is the one ``run`` wrote and opened
    (:data:`RUN_RECORDING_ENV`)."""
    opened = recording.program.path
    if opened is not None and opened.suffix == ".lens" and not is_own_recording(opened):
        return None  # a recording read from a file: data, whatever text it holds
    for path, args in _script_candidates(recording):
        if path.suffix != ".py" or not path.is_file():
            continue
        try:
            if path.read_text(encoding="utf-8") != recording.program.code:
                continue
        except (OSError, UnicodeError):
            continue
        device = recording.device if recording.device.startswith("cuda") else "cpu"
        if any(node.source is not None for node in recording.graph.nodes):
            return ScriptSource(path, args, device)  # recorded as a script (``run``): its lines are its own
        from app.core.loading import check_program  # imports torch: only for a .py file's own text

        try:
            check_program(recording.program)
        except ProgramError:
            return ScriptSource(path, args, device)
        return None
    return None


def _script_candidates(recording: Recording) -> list[tuple[Path, tuple[str, ...]]]:
    no_args: tuple[str, ...] = ()
    found = [] if recording.program.path is None else [(recording.program.path, no_args)]
    try:
        named = json.loads(os.environ.get(SCRIPT_ENV, "[]"))
    except ValueError:
        named = []
    if isinstance(named, list) and named and all(isinstance(n, str) for n in named):
        found.append((Path(named[0]), tuple(named[1:])))
    return found


def window_recorder(recording: Recording) -> Record:
    """How the window proves an edit of ``recording``: its script in a fresh process, a checked
    program in the warm child."""
    script = script_of(recording)
    return in_script_child(script) if script is not None else in_child(recording)


def _main(argv: Sequence[str]) -> int:
    """``python -m app.child.proofs EDITED.py OUT.lens DEVICE ARGS...``: record, write, exit."""
    from app.core.lensfile import lens_bytes
    from app.core.recorder.script import record_script

    edited, out, device, *args = argv
    run = record_script(edited, args, device=device, stdout=sys.stderr)
    Path(out).write_bytes(lens_bytes(run.recording, compress=False))
    return 0


if __name__ == "__main__":  # pragma: no cover - run by in_script_child
    sys.exit(_main(sys.argv[1:]))
