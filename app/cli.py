"""Command line: ``python -m app [programs | trace | export | run | gui]``.

One concept, kept in one file past 500 lines: the argument parser and the one function per
command it calls, so every option and its help read together.

A source is a built-in name, a ``.toml`` or ``.py`` program, or a ``.lens``
recording; a ``.lens`` file is read, never run, and reading it loads no torch.
Errors are one line on stderr and exit status 2 (1 for a bug in the program
itself, with a hint), never a traceback: see :func:`main`.

``run SCRIPT.py`` is the exception: it runs the user's own script as ordinary
Python (trusted, like any script they run) and ends as the script would, with
the script's own traceback and exit status 1 when the script raises.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from app.core.lesson.offered import Lesson
    from app.core.model.recording import Recording
    from app.render.export_budget import ExportTooLarge

__all__ = ["main"]

EXIT_USAGE = 2  # a bad program, file, device or command line
EXIT_BUG = 1  # something went wrong inside Autograd Lens
EXIT_INTERRUPTED = 130
DEBUG_ENV = "AUTOGRAD_LENS_DEBUG"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see: {self.prog} --help)")
        sys.exit(EXIT_USAGE)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="autograd-lens", description="Watch PyTorch autograd run, node by node.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.add_argument("program", nargs="?", help=SOURCE_HELP)
    _limit_options(gui)
    sub.add_parser("programs", help="list the built-in programs")
    trace = sub.add_parser("trace", help="record a program (or read a .lens file) and print its steps")
    trace.add_argument("program", help=SOURCE_HELP)
    trace.add_argument("--device", help="cpu (the default), cuda, cuda:N or mps")
    trace.add_argument("--json", action="store_true", help="print one JSON object")
    _json_limit_option(trace)
    trace.add_argument("--save", metavar="OUT.lens", help="also write the recording to this .lens file")
    _prove_option(trace)
    _limit_options(trace)
    trace.add_argument(
        "--in-process",
        action="store_true",
        help="record in this process instead of a child process with limits (for debugging)",
    )
    export = sub.add_parser("export", help="draw every step of a recording to files")
    export.add_argument("program", help=SOURCE_HELP)
    export.add_argument("--out", required=True, help="folder for the files (html: the page's file)")
    export.add_argument(
        "--format",
        choices=("svg", "png", "torchviz", "html"),
        default="svg",
        help="svg or png: a file per step; torchviz: make_dot's own DOT and SVG of the graph before "
        "the first backward (two files, so the --max-* budgets do not apply); html: one self-contained "
        "page that steps through the recording in any browser",
    )
    export.add_argument("--device", help="cpu (the default), cuda, cuda:N or mps")
    _prove_option(export)
    _export_limit_options(export)
    _limit_options(export)
    run = sub.add_parser(
        "run",
        help="run your own script as ordinary Python (only code you trust) and record its autograd calls",
        description="Run SCRIPT.py exactly as `python SCRIPT.py ARGS...` would, with full access to "
        "your machine, recording every backward and autograd.grad call it makes. Options go before "
        "the script; everything after it is the script's own arguments.",
    )
    run.add_argument("--out", metavar="FILE.lens", help="write the recording here (no window)")
    run.add_argument(
        "--torchviz",
        metavar="DIR",
        help="instead of recording: run the script up to its first backward and write torchviz's make_dot "
        "drawing there (torchviz.dot, torchviz.svg)",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print the recording as one JSON object (no window); the script's own output goes to stderr",
    )
    _json_limit_option(run)
    run.add_argument("--device", help="default device for the script's tensors: cpu (the default), cuda, ...")
    run.add_argument("--no-fixes", action="store_true", help=argparse.SUPPRESS)  # the window proves them
    run.add_argument("script", metavar="SCRIPT.py", help="your script")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return parser


def _limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--time-limit", type=_positive(float), metavar="SECONDS", help="stop a recording after this long (30)"
    )
    parser.add_argument(
        "--memory-limit",
        type=_positive(int),
        metavar="MB",
        help="address space a recording may use beyond what its process's imports mapped, on the CPU (4096)",
    )


def _prove_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prove-fixes",
        action="store_true",
        help="for a .lens file: find its error's fixes and prove each by recording the edited program "
        "in the limited child process (reading a .lens file otherwise runs nothing)",
    )


def _export_limit_options(parser: argparse.ArgumentParser) -> None:
    from app.render.export_budget import MAX_EXPORT_MB, MAX_EXPORT_STEPS

    parser.add_argument(
        "--max-steps",
        type=_positive(int),
        default=MAX_EXPORT_STEPS,
        metavar="N",
        help=f"refuse to export a recording of more steps, one file each ({MAX_EXPORT_STEPS})",
    )
    parser.add_argument(
        "--max-mb",
        type=_positive(float),
        default=MAX_EXPORT_MB,
        metavar="MB",
        help=f"refuse to export more megabytes of drawings in all ({MAX_EXPORT_MB})",
    )


def _json_limit_option(parser: argparse.ArgumentParser) -> None:
    from app.core.trace_json import MAX_JSON_MB

    parser.add_argument(
        "--max-json-mb",
        type=_positive(float),
        default=MAX_JSON_MB,
        metavar="MB",
        help=f"refuse to print --json past this many megabytes ({MAX_JSON_MB})",
    )


def _positive(kind: type[float] | type[int]) -> Callable[[str], float]:
    def convert(text: str) -> float:
        value = kind(text)
        if not value > 0:
            raise ValueError(text)
        return value

    convert.__name__ = f"positive {kind.__name__}"  # argparse names the type in its message
    return convert


def _child_limits(args: argparse.Namespace) -> None:
    """The limits a child recording gets from ``--time-limit`` and ``--memory-limit``."""
    from app.child.client import ChildLimits, set_default_limits

    time_limit, memory_limit = getattr(args, "time_limit", None), getattr(args, "memory_limit", None)
    given = {"time_limit_s": time_limit, "memory_mb": memory_limit}
    set_default_limits(ChildLimits(**{key: value for key, value in given.items() if value is not None}))


SOURCE_HELP = "built-in name, .toml or .py program, or .lens recording"


def _recording(source: str, device: str | None, *, in_process: bool = False) -> Recording:
    """Read ``source`` when it is a ``.lens`` file (no torch), otherwise record it in a child process."""
    return _recording_and_layout(source, device, in_process=in_process)[0]


def _recording_and_layout(
    source: str, device: str | None, *, in_process: bool = False
) -> tuple[Recording, Any]:
    """The recording, and the layout a ``.lens`` source kept (None for anything recorded here)."""
    from app.core.lensfile import LensError, is_lens, open_lens

    if is_lens(source):
        recording, stored = open_lens(source)
        if device is not None:
            raise LensError(
                f"{source} is already recorded (on {recording.device}); --device applies only when recording"
            )
        return recording, stored
    if in_process:
        from app.child.client import POOL
        from app.core.loading import load_program
        from app.core.recorder.recorder import record
        from app.core.sizing.limits import Limits

        made = record(load_program(source), device=device or "cpu", limits=Limits(POOL.limits.time_limit_s))
        return made, None
    from app.child.client import record_in_child

    return record_in_child(source, device or "cpu"), None


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    """Print ``message`` as exactly one printable line on stderr."""
    from app.core.terminal import terminal_text

    print(f"autograd-lens: {terminal_text(' '.join(message.split()))}", file=sys.stderr)
    return status


class _StderrLines(logging.Handler):
    """The package's warnings (a layout drawn simplified, a recording saved without one) as the
    command's own one-line messages on stderr, wherever ``sys.stderr`` points at the time."""

    def emit(self, record: logging.LogRecord) -> None:
        _fail(record.getMessage(), 0)


def _warnings_to_stderr() -> None:
    package = logging.getLogger("app")
    if not any(isinstance(handler, _StderrLines) for handler in package.handlers):
        package.addHandler(_StderrLines(logging.WARNING))


def _safe_streams() -> None:
    """Never fail on a character the terminal cannot show (LANG=C, PYTHONIOENCODING=ascii)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed or unusual stream: leave it be
                reconfigure(errors="backslashreplace")


def _programs() -> int:
    """Names and titles, read from the files' heads: no language, so no ``import torch``."""
    from app.core.builtins import builtin_entries
    from app.core.terminal import terminal_text

    for entry in sorted(builtin_entries(), key=lambda entry: entry.name):
        print(terminal_text(f"{entry.name:<22} {entry.title}"))
    return 0


def _trace(args: argparse.Namespace) -> int:
    from app.core.report import to_table

    rec, stored = _recording_and_layout(args.program, args.device, in_process=args.in_process)
    if args.save:
        from app.render.layout_store import save_with_layout

        save_with_layout(rec, args.save, stored=stored)  # a .lens copied keeps its layout
    lesson = _lesson(rec, args, here=args.in_process)
    if args.json:
        return _print_json(rec, args.max_json_mb, "--save OUT.lens", lesson)
    print(to_table(rec))
    if lesson.fixes or lesson.advice:
        print("\n" + lesson.text())
    elif _unproven(rec, args):
        print(f"\n{NOT_PROVEN}")
    if args.save:
        print(f"\nsaved the recording to {args.save}")
    return 0


# NOTE [a .lens runs nothing]: a recording is data. Its fixes are proven by recording the edited
# program (in the limited child), so reading a stranger's .lens proves none unless the person asks:
# ``--prove-fixes`` here, one button in the window's error panel.
def _lesson(rec: Recording, args: argparse.Namespace, *, here: bool = False) -> Lesson:
    """The proven lesson of ``rec``; for a ``.lens`` source, none without ``--prove-fixes``."""
    from app.child.proofs import proven_lesson
    from app.core.lensfile import is_lens

    if is_lens(args.program) and not args.prove_fixes:
        return proven_lesson(rec, skip=True)
    return proven_lesson(rec, here=here)


NOT_PROVEN = (
    "fixes not proven: reading a .lens file records nothing; add --prove-fixes to record each fix "
    "in the limited child"
)


def _unproven(rec: Recording, args: argparse.Namespace) -> bool:
    """Whether a ``.lens`` source's fixes or advice were left unproven (NOTE [a .lens runs nothing])."""
    from app.core.lensfile import is_lens

    if not is_lens(args.program) or args.prove_fixes:
        return False
    from app.core.lesson.advice import advice_for

    return rec.failed is not None or rec.error is not None or advice_for(rec) is not None


def _export(args: argparse.Namespace) -> int:
    if args.format == "torchviz":
        return _export_torchviz(args)
    if args.format == "html":
        from app.render.web.page import export_html

        recording, stored = _recording_and_layout(args.program, args.device)
        failed = recording.failed is not None or recording.error is not None  # a call's or the program's
        fixes = _lesson(recording, args).fixes if failed else ()
        if failed and _unproven(recording, args):
            print(f"autograd-lens: {NOT_PROVEN}", file=sys.stderr)
        print(f"wrote {export_html(recording, stored, args.out, fixes, name=_source_name(args.program))}")
        return 0
    recording = _recording(args.program, args.device)  # a bad source is told before Qt loads
    from app.render.export_budget import ExportTooLarge
    from app.render.qt.export import export_recording

    try:
        files = export_recording(
            recording, args.out, fmt=args.format, max_steps=args.max_steps, max_bytes=int(args.max_mb * 1e6)
        )
    except ExportTooLarge as exc:
        return _fail(_export_refusal(exc, args))
    print(f"wrote {len(files)} files to {args.out}")
    return 0


def _source_name(source: str) -> str:
    """The name a person gave a source (a file's stem, a built-in's name), for the files made of it."""
    from pathlib import Path

    return Path(source).stem


def _export_torchviz(args: argparse.Namespace) -> int:
    """make_dot needs live tensors: the program runs (in the child) up to its first backward call.
    A ``.lens`` file holds none, so the program text it keeps runs again."""
    from app.child.client import torchviz_in_child
    from app.core.lensfile import is_lens, open_lens
    from app.core.model.errors import ProgramError, UserError

    source: Any = args.program
    if is_lens(source):
        source = open_lens(source)[0].program
    try:
        drawn = torchviz_in_child(source, args.device or "cpu")
    except ProgramError as exc:
        if not is_lens(args.program):
            raise
        raise UserError(
            f"{args.program} holds no tensors for make_dot, and its program could not run again here "
            f"({exc}); export the program itself, or for a script: run --torchviz DIR SCRIPT.py"
        ) from None
    from app.render.torchviz_export import write_torchviz

    files = write_torchviz(drawn.source, args.out)
    if drawn.note:
        _fail(drawn.note, 0)
    print(f"wrote {len(files)} files to {args.out}: make_dot's graph before the first backward")
    return 0


def _export_refusal(exc: ExportTooLarge, args: argparse.Namespace) -> str:
    mb = f"{exc.needed / 1e6:,.1f} MB"
    if exc.what == "steps":
        return (
            f"the recording has {exc.needed:,} steps, one file each, more than --max-steps {exc.limit:,}; "
            f"nothing was written: raise it with --max-steps N"
        )
    if exc.what == "disk":
        free = f"{exc.limit / 1e6:,.1f} MB"
        return f"the drawings would take about {mb} and {exc.folder} has {free} free; nothing was written"
    done = f"stopped after {exc.written:,} files" if exc.written else "nothing was written"
    return (
        f"the drawings would take about {mb}, more than --max-mb {args.max_mb:g}; {done}: "
        f"raise it with --max-mb MB"
    )


def _gui(args: argparse.Namespace) -> int:
    source = getattr(args, "program", None)
    from app.child.client import prestart_for

    prestart_for(source)  # before Qt and the window's modules load: torch imports beside them
    from app.core.lensfile import is_lens, preread_lens

    if is_lens(source):
        preread_lens(source)  # a damaged file is one line on stderr here, before any window opens
    from app.ui.main import run_gui

    return run_gui(source)


def _run_script(args: argparse.Namespace) -> int:
    """Record the user's own script; without --out or --json, open the window on it."""
    if args.torchviz:
        return _script_torchviz(args)
    if not (args.out or args.json):
        return _run_script_then_show(args)
    from pathlib import Path

    if args.out and not Path(args.out).resolve().parent.is_dir():  # before a long run, not after it
        return _fail(f"cannot write {args.out}: its folder does not exist")
    from app.core.recorder.script import record_script, script_traceback

    run = record_script(
        args.script, args.args, device=args.device or "cpu", stdout=sys.stderr if args.json else None
    )
    if run.exception is not None:
        sys.stderr.write(script_traceback(run.exception, args.script))
    recording = run.recording
    failed = recording.failed
    if failed is not None:  # the script ends there, as it would have raised it: say so
        sentence = (failed.error or "").strip().split(". ")[0].rstrip(".")
        shown = sentence if len(sentence) <= 200 else sentence[:199] + "…"
        _fail(
            f"the script stopped at line {failed.call.line}: call {failed.index + 1} "
            f"({failed.call.text[:80]}) raised PyTorch's error, recorded as the last step: {shown}.",
            0,
        )
    from app.child.proofs import ScriptSource, proven_lesson

    script = ScriptSource(Path(args.script), tuple(args.args), args.device or "cpu")
    lesson = proven_lesson(recording, script=script, skip=args.no_fixes)
    if (lesson.fixes or lesson.advice is not None) and not args.json:  # as diffs of the user's file
        print(lesson.text(), file=sys.stderr)
    if args.out:
        from app.render.layout_store import save_with_layout

        save_with_layout(recording, args.out)
        print(f"autograd-lens: saved the recording to {args.out}", file=sys.stderr)
    if args.json:
        status = _print_json(recording, args.max_json_mb, "--out FILE.lens", lesson)
        return status or run.exit_code
    return run.exit_code


def _print_json(recording: Recording, max_mb: float, keep: str, lesson: Any = None) -> int:
    """Print the recording's JSON, or nothing and one line when it would pass ``max_mb``."""
    from app.core.trace_json import JsonTooLarge, json_pieces

    try:
        pieces = json_pieces(recording, max_bytes=int(max_mb * 1_000_000))
    except JsonTooLarge as exc:
        return _fail(
            f"the JSON would pass {max_mb:g} MB (at step {exc.step}, of steps 0-{exc.steps - 1}); raise "
            f"the limit with --max-json-mb MB, or keep the recording with {keep} (gradients packed: smaller)"
        )
    if lesson is not None:  # the proven fixes and advice, the window's own objects
        pieces[-1] = pieces[-1][:-1] + "," + lesson.json_fields() + "}"
    sys.stdout.writelines(pieces)
    sys.stdout.write("\n")
    return 0


def _script_torchviz(args: argparse.Namespace) -> int:
    """``run --torchviz DIR``: make_dot at the script's first backward, run here (the script is trusted)."""
    if args.out or args.json:
        return _fail(
            "--torchviz draws the graph before the first backward and records nothing: drop --out/--json"
        )
    from app.core.recorder.first_backward import script_first_backward_dot
    from app.core.recorder.script import script_traceback

    try:
        drawn = script_first_backward_dot(args.script, args.args, device=args.device or "cpu")
    except Exception as exc:
        from app.core.model.errors import UserError

        if isinstance(exc, UserError):
            raise
        sys.stderr.write(script_traceback(exc, args.script))  # the script's own error, as Python shows it
        return EXIT_BUG
    from app.render.torchviz_export import write_torchviz

    files = write_torchviz(drawn.source, args.torchviz)
    if drawn.note:
        _fail(drawn.note, 0)
    print(f"wrote {len(files)} files to {args.torchviz}: make_dot's graph before the first backward")
    return 0


def _run_script_then_show(args: argparse.Namespace) -> int:
    """Run the script in a child process (``run --out``), then open the window on its recording.

    A script that crashes its interpreter (a native operator, a signal) ends only that child;
    this process, which will show the window, never runs the script or imports torch.
    """
    import subprocess
    from pathlib import Path

    from app.child.client import child_env, signal_name

    stem = re.sub(r"[^A-Za-z0-9_.-]", "-", Path(args.script).stem)[:100].lstrip("-_.") or "program"
    path = Path(_shown_lens_path(stem))
    path.unlink(missing_ok=True)
    device = ["--device", args.device] if args.device else []
    command = [sys.executable, "-m", "app", "run", "--no-fixes", "--out", str(path), *device, args.script]
    command += args.args
    code = subprocess.run(command, check=False, env=child_env()).returncode
    if code < 0:
        return _fail(f"the script's process was ended by {signal_name(-code)}; nothing was recorded to show")
    if not path.exists():
        return code or _fail("the script's process wrote no recording")
    print(f"autograd-lens: opening the window on {path}", file=sys.stderr)
    import json

    from app.child.proofs import SCRIPT_ENV, own_recording
    from app.ui.main import run_gui

    os.environ[SCRIPT_ENV] = json.dumps([str(Path(args.script).resolve()), *args.args])  # its fixes' proofs
    own_recording(path)  # only this recording is the script's

    status = run_gui(str(path))
    return code or status


def _shown_lens_path(name: str) -> str:
    """Where ``run`` keeps a recording it only shows (the window remembers the file it opened)."""
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.gettempdir()) / "autograd-lens"
    folder.mkdir(exist_ok=True)
    from app.core.lensfile import SUFFIX

    return str(folder / f"{name}{SUFFIX}")


def _run(args: argparse.Namespace) -> int:
    if args.command == "programs":
        return _programs()
    if args.command != "run":
        _child_limits(args)
    commands = {"trace": _trace, "export": _export, "run": _run_script}
    return commands.get(args.command, _gui)(args)


def _explain(exc: Exception) -> int:
    """The last resort: one line for every failure, exit 2 for bad input, 1 for our own bugs."""
    from app.core.model.errors import UserError

    if isinstance(exc, UserError) or _is_layout_error(exc):
        return _fail(str(exc) or f"{type(exc).__name__}, with no message")
    if isinstance(exc, UnicodeError):
        return _fail(f"cannot read this text: {exc}")
    if isinstance(exc, OSError):
        return _fail(_os_error_text(exc))
    if isinstance(exc, MemoryError):
        return _fail("ran out of memory; try a smaller program")
    kind = getattr(exc, "kind", type(exc).__name__)  # a RecordingBug names the child's exception
    detail = f"{kind}: {exc}" if str(exc) else kind
    hint = f"set {DEBUG_ENV}=1 to see the traceback, and please report it"
    return _fail(f"internal error ({detail}); this is a bug in Autograd Lens: {hint}", EXIT_BUG)


def _os_error_text(exc: OSError) -> str:
    """Why a system call failed and on which file; never empty (``OSError(28)`` has no strerror)."""
    named = os.strerror(exc.errno) if isinstance(exc.errno, int) and exc.errno > 0 else ""
    why = exc.strerror or named or str(exc) or f"{type(exc).__name__}, with no message"
    where = f": {exc.filename}" if exc.filename else ""
    return f"{why}{where}"


def _is_layout_error(exc: Exception) -> bool:
    try:
        from app.render.layout import LayoutError
    except Exception:  # the drawing layer itself failed to import: not a layout error
        return False
    return isinstance(exc, LayoutError)


def _quiet_stdout() -> None:
    """After a broken pipe (``trace ... | head``), let the exit flush go nowhere."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


# Programs were once called scenarios: the old command name still runs, kept out of --help, for
# the notes and scripts written then.
OLD_COMMANDS = {"scenarios": "programs"}


def _old_names(argv: Sequence[str]) -> list[str]:
    """``argv`` with an old command name at its head read as today's.

    >>> _old_names(["scenarios"]), _old_names(["trace", "scenarios"])
    (['programs'], ['trace', 'scenarios'])
    """
    args = list(argv)
    if args and args[0] in OLD_COMMANDS:
        args[0] = OLD_COMMANDS[args[0]]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr: exit 2 for a bad program,
    file or usage, 1 for a bug in Autograd Lens; never a traceback (unless asked for)."""
    _safe_streams()
    args = _build_parser().parse_args(_old_names(sys.argv[1:] if argv is None else argv))
    if args.command in ("trace", "export", "run"):  # the window logs its own way (app.ui.main)
        _warnings_to_stderr()
    try:
        return _run(args)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_USAGE
    except Exception as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        return _explain(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
