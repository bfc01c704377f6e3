"""Command line: ``python -m app [scenarios | trace | export | gui]``.

Errors are one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["main"]

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="autograd-lens", description="Watch PyTorch autograd run, node by node.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.add_argument("scenario", nargs="?", help="built-in name or .toml path")
    sub.add_parser("scenarios", help="list the built-in scenarios")
    trace = sub.add_parser("trace", help="record a scenario and print its steps")
    trace.add_argument("scenario", help="built-in name or .toml path")
    trace.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps")
    trace.add_argument("--json", action="store_true", help="print one JSON object")
    export = sub.add_parser("export", help="draw every step of a scenario to files")
    export.add_argument("scenario", help="built-in name or .toml path")
    export.add_argument("--out", required=True, help="folder for the files")
    export.add_argument("--format", choices=("svg", "png"), default="svg")
    export.add_argument("--device", default="cpu")
    return parser


def _fail(message: str) -> int:
    print(f"autograd-lens: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


def _scenarios() -> int:
    from app.core.scenario import builtin_names, load_builtin

    for name in builtin_names():
        print(f"{name:<22} {load_builtin(name).title}")
    return 0


def _trace(args: argparse.Namespace) -> int:
    from app.core.recorder import record
    from app.core.report import to_json, to_table
    from app.core.scenario import load_scenario

    rec = record(load_scenario(args.scenario), device=args.device)
    print(json.dumps(to_json(rec)) if args.json else to_table(rec))
    return 0


def _export(args: argparse.Namespace) -> int:
    from app.render.export import export_steps

    files = export_steps(args.scenario, args.out, fmt=args.format, device=args.device)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


def _gui(args: argparse.Namespace) -> int:
    from app.ui.main import run_gui

    return run_gui(getattr(args, "scenario", None))


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    from app.core.errors import ScenarioError
    from app.render.layout import LayoutError

    commands = {"scenarios": _scenarios, "trace": _trace, "export": _export}
    try:
        if args.command in commands:
            return commands[args.command](*([] if args.command == "scenarios" else [args]))
        return _gui(args)
    except (ScenarioError, LayoutError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{exc.strerror or exc}: {exc.filename or ''}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
