"""How much real code the checked language takes as written, measured on snippets nobody designed for.

Each snippet in ``tests/support/snippets/real/{dev,heldout}/`` (code from public issues and forums,
split by a hash of its source address) is run twice, each in a forked child with a time limit:

* plainly, as ``__main__`` under PyTorch with the recorder's seed (``torch.manual_seed(0)``,
  ``random.seed(0)``) and no CUDA: the truth. Its outcome is ``ok`` or the exception's type, first
  line and the snippet's lines it passed through; the final ``.grad`` of every leaf the snippet
  names (a module's parameters as ``model.fc.weight``).
* through the checked language (``record(load_program(path))``, what ``python -m app trace``
  runs in its child), classified as

  - ``agrees``: accepted, and it ends as the plain run did (no error, or the same message at one of
    the lines the plain run's traceback passed through), and every leaf both runs name holds the
    same final gradient (``torch.allclose``, NaN equal to NaN);
  - ``disagrees``: accepted, and anything above differs;
  - ``refused``: a ``ProgramError``; its cause is the message's first clause with the location,
    the ``run`` hint and numbers taken out. Each refusal must be one line that names its line and
    points to ``python -m app run``;
  - ``internal``: any other exception, or no answer in time.

Usage::

    python benchmarks/reach.py                 # both halves, a table
    python benchmarks/reach.py --half dev      # the development half only
    python benchmarks/reach.py --json          # one JSON object
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import random
import re
import runpy
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from unittest import mock

import torch

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "tests" / "support" / "snippets" / "real"
HALVES = ("dev", "heldout")
TIME_LIMIT_S = 60.0
SEED = 0  # what every recording starts from (app.core.recorder.recorder.SEED)
RUN_HINT = "python -m app run"

Grads = dict[str, "Grad | None"]


@dataclass(frozen=True)
class Grad:
    """A final ``.grad``, as plain data that crosses a pipe."""

    shape: tuple[int, ...]
    flat: tuple[float, ...]
    dtype: str

    def tensor(self) -> torch.Tensor:
        return torch.tensor(self.flat, dtype=getattr(torch, self.dtype)).reshape(self.shape)


@dataclass
class Outcome:
    """How one run ended: ``error`` is None when it ran to its end."""

    error: str | None = None  # "Type: first line of the message" (plain) or the recorded text
    lines: tuple[int, ...] = ()  # plain: the snippet's lines in the traceback; recorded: its line
    grads: Grads = field(default_factory=dict)


@dataclass
class Verdict:
    """One snippet's result."""

    half: str
    name: str
    kind: str  # agrees | disagrees | refused | internal | not-runnable
    detail: str = ""  # the refusal's cause, what differed, or the internal error
    refusal: str = ""  # a refusal's whole message
    well_formed: bool = True  # a refusal is one line naming its line and pointing to run
    compared_leaves: int = 0
    gathered: str = ""  # the snippet's "# gathered: DATE" header: the round that added it


# -- the plain run: PyTorch is the oracle ---------------------------------------------------------------


def _grad_of(tensor: torch.Tensor) -> Grad | None:
    grad = tensor.grad
    if grad is None:
        return None
    grad = grad.detach().cpu()
    return Grad(tuple(grad.shape), tuple(float(v) for v in grad.flatten().tolist()), str(grad.dtype)[6:])


def named_leaf_grads(names: dict[str, Any]) -> Grads:
    """The final ``.grad`` of every leaf tensor and module parameter the program names, also
    through the attributes of its own objects (``agent.model.fc.weight``)."""
    grads: Grads = {}
    for name, value in names.items():
        if not name.startswith("__"):
            _collect_grads(name, value, grads, depth=0)
    return grads


def _collect_grads(name: str, value: Any, grads: Grads, depth: int) -> None:
    if isinstance(value, torch.nn.Module):
        for path, parameter in value.named_parameters():
            grads[f"{name}.{path}"] = _grad_of(parameter)
    elif isinstance(value, torch.Tensor):
        if value.is_leaf and value.requires_grad:
            grads[name] = _grad_of(value)
    elif depth < 3 and type(value).__module__ == "__main__" and hasattr(value, "__dict__"):
        for attribute, inner in vars(value).items():  # an instance of one of the program's classes
            if not attribute.startswith("_"):
                _collect_grads(f"{name}.{attribute}", inner, grads, depth + 1)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def run_plainly(path: Path) -> Outcome:
    """Run the snippet as plain Python, the way the recorder seeds a program, on the CPU."""
    random.seed(SEED)
    torch.manual_seed(SEED)
    names: dict[str, Any] = {}
    outcome = Outcome()
    quiet = io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(quiet),
            contextlib.redirect_stderr(quiet),
            warnings.catch_warnings(),
            mock.patch.object(torch.cuda, "is_available", lambda: False),
        ):
            warnings.simplefilter("ignore")
            names = runpy.run_path(str(path), run_name="__main__")
    except BaseException as exc:  # the snippet's own exception, whatever it is, is the truth
        outcome.error = f"{type(exc).__name__}: {_first_line(str(exc))}"
        outcome.lines, names = _traceback_lines(exc, str(path))
    outcome.grads = named_leaf_grads(names)
    return outcome


def _traceback_lines(exc: BaseException, filename: str) -> tuple[tuple[int, ...], dict[str, Any]]:
    """The snippet's lines the exception passed through, and its module namespace at that point."""
    lines: list[int] = []
    names: dict[str, Any] = {}
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lines.append(tb.tb_lineno)
            if tb.tb_frame.f_code.co_name == "<module>":
                names = dict(tb.tb_frame.f_globals)
        tb = tb.tb_next
    return tuple(lines), names


# -- the checked language -------------------------------------------------------------------------------


def run_checked(path: Path) -> tuple[str, Outcome | str]:
    """``("accepted", outcome)``, ``("refused", message)`` or ``("internal", what went wrong)``."""
    from app.core import ProgramError, load_program, record

    try:
        recording = record(load_program(str(path)), device="cpu")
    except ProgramError as exc:
        return "refused", str(exc)
    except Exception as exc:  # the language's own failure, which must never happen
        return "internal", f"{type(exc).__name__}: {_first_line(str(exc))}"
    return "accepted", _recorded_outcome(recording)


def _recorded_outcome(recording: Any) -> Outcome:
    outcome = Outcome()
    failed = recording.failed
    if failed is not None:
        outcome.error, outcome.lines = failed.error, (failed.call.line,)
    elif recording.error is not None:
        outcome.error, outcome.lines = recording.error, (recording.error_line,)
    if len(recording.timeline):
        final = recording.timeline.state(len(recording.timeline) - 1).grads
        for name, values in final.items():
            outcome.grads[name] = None if values is None else _grad_of_values(values)
    return outcome


def _grad_of_values(values: Any) -> Grad:
    return Grad(tuple(values.shape), tuple(float(v) for v in values.flat), str(values.dtype))


# -- comparing ------------------------------------------------------------------------------------------

_SAYS = re.compile(r"^(PyTorch|Python) says:\s*")


def _message(text: str) -> str:
    """The error's words without the recorder's preamble or the plain run's type name."""
    first = _SAYS.sub("", _first_line(text))
    return " ".join(re.sub(r"^[A-Za-z_.]*(Error|Exception|Warning|Exit|Interrupt): ", "", first).split())


def same_grad(a: Grad | None, b: Grad | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    x, y = a.tensor(), b.tensor()
    return x.shape == y.shape and torch.allclose(x.double(), y.double(), rtol=1e-4, atol=1e-6, equal_nan=True)


def differences(plain: Outcome, recorded: Outcome) -> tuple[list[str], int]:
    """What the recording got wrong about the plain run, and how many leaves were compared."""
    wrong: list[str] = []
    if (plain.error is None) != (recorded.error is None):
        wrong.append(f"plain: {plain.error or 'ok'}; recorded: {recorded.error or 'ok'}")
    elif plain.error is not None and recorded.error is not None:
        a, b = _message(plain.error), _message(recorded.error)
        if not (a.startswith(b) or b.startswith(a)):
            wrong.append(f"plain: {plain.error}; recorded: {recorded.error}")
        if not set(recorded.lines) & set(plain.lines):
            wrong.append(f"error at line {list(recorded.lines)}, plain run at {list(plain.lines)}")
    shared = sorted(set(plain.grads) & set(recorded.grads))
    wrong += [
        f"{name}.grad differs" for name in shared if not same_grad(plain.grads[name], recorded.grads[name])
    ]
    return wrong, len(shared)


_WHERE = re.compile(r"^.*?line \d+(, column \d+)?:\s*")


def refusal_cause(message: str) -> str:
    """The refusal's cause: its first line's first clause, without location, hint or numbers."""
    cause = _WHERE.sub("", _first_line(message)).split(";")[0]
    return re.sub(r"\d+(\.\d+)?", "N", cause).strip()


def well_formed_refusal(message: str) -> bool:
    """One line that names the line it stopped at and points to ``python -m app run``."""
    return (
        "\n" not in message.strip() and re.search(r"\bline \d+", message) is not None and RUN_HINT in message
    )


# -- running each in a child ----------------------------------------------------------------------------


def _child(work: Callable[[Path], Any], path: Path, pipe: Connection) -> None:
    torch.set_num_threads(1)
    try:
        pipe.send(("done", work(path)))
    except BaseException as exc:
        pipe.send(("crashed", f"{type(exc).__name__}: {_first_line(str(exc))}"))


def in_child(work: Callable[[Path], Any], path: Path, timeout_s: float = TIME_LIMIT_S) -> tuple[str, Any]:
    """``work(path)`` in a forked child: ``("done", result)``, or ``("crashed" / "timeout", why)``."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(work, path, send), daemon=True)
    child.start()
    send.close()
    answer: tuple[str, Any] = ("timeout", f"no answer in {timeout_s:g} s")
    if receive.poll(timeout_s):
        with contextlib.suppress(EOFError):
            answer = receive.recv()
    if answer[0] == "timeout" and not child.is_alive():
        answer = ("crashed", f"the child ended with status {child.exitcode}")
    child.kill()
    child.join()
    return answer


def warm_up() -> None:
    """Load what torch loads on first use (optimizers, distributions, RNNs), and the language, once
    in the parent: each forked child then starts in milliseconds instead of seconds."""
    from app.core import load_program, record  # noqa: F401

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.LSTM(2, 2))
    for optimizer in (torch.optim.Adam(model.parameters()), torch.optim.SGD(model.parameters(), lr=0.1)):
        out, _ = model(torch.randn(1, 1, 2))
        categorical = torch.distributions.Categorical(logits=out.flatten())
        categorical.log_prob(torch.tensor(0)).backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    leaf = torch.randn(2, requires_grad=True)
    torch.autograd.grad(leaf.sin().sum(), leaf)


_GATHERED = re.compile(r"^# gathered:\s*(\S+)", re.MULTILINE)


def gathered(path: Path) -> str:
    """The date in a snippet's ``# gathered: DATE`` header ("" for the first rounds' snippets)."""
    match = _GATHERED.search(path.read_text(encoding="utf-8")[:2000])
    return match.group(1) if match else ""


def judge(half: str, path: Path, timeout_s: float = TIME_LIMIT_S) -> Verdict:
    """One snippet, run plainly and through the checked language."""
    verdict = Verdict(half, path.stem, "internal", gathered=gathered(path))
    status, plain = in_child(run_plainly, path, timeout_s)
    if status != "done":
        verdict.kind, verdict.detail = "not-runnable", f"the plain run: {plain}"
        return verdict
    status, answer = in_child(run_checked, path, timeout_s)
    if status != "done":
        verdict.detail = f"the checked run: {answer}"
        return verdict
    kind, result = answer
    if kind == "refused":
        verdict.kind, verdict.refusal = "refused", result
        verdict.detail, verdict.well_formed = refusal_cause(result), well_formed_refusal(result)
    elif kind == "internal":
        verdict.detail = result
    else:
        wrong, verdict.compared_leaves = differences(plain, result)
        verdict.kind = "disagrees" if wrong else "agrees"
        verdict.detail = "; ".join(wrong)
    return verdict


def snippets(half: str) -> list[Path]:
    return sorted((SNIPPETS / half).glob("*.py"))


# -- the report -----------------------------------------------------------------------------------------


@dataclass
class HalfSummary:
    half: str
    snippets: int
    counts: dict[str, int]
    accepted_share: float  # accepted as written and recorded with PyTorch's outcome (agrees)
    taken_share: float  # accepted at all (agrees or disagrees)
    causes: list[tuple[str, int]]
    malformed_refusals: list[str]


def summarise(half: str, verdicts: list[Verdict]) -> HalfSummary:
    counts = Counter(v.kind for v in verdicts)
    total = max(len(verdicts), 1)
    causes = Counter(v.detail for v in verdicts if v.kind == "refused")
    return HalfSummary(
        half,
        len(verdicts),
        {
            kind: counts.get(kind, 0)
            for kind in ("agrees", "disagrees", "refused", "internal", "not-runnable")
        },
        counts["agrees"] / total,
        (counts["agrees"] + counts["disagrees"]) / total,
        causes.most_common(),
        [v.name for v in verdicts if v.kind == "refused" and not v.well_formed],
    )


def gathered_shares(verdicts: list[Verdict]) -> list[tuple[str, float, int]]:
    """The accepted share of each half's snippets by the round that gathered them: a round's new
    held-out snippets measure the rules on code nobody had read when they were written."""
    rounds = sorted({(v.half, v.gathered) for v in verdicts if v.gathered})
    shares = []
    for half, date in rounds:
        group = [v for v in verdicts if v.half == half and v.gathered == date]
        agrees = sum(v.kind == "agrees" for v in group)
        shares.append((f"{half}, gathered {date}", agrees / len(group), len(group)))
    return shares


def print_report(summaries: list[HalfSummary], verdicts: list[Verdict]) -> None:
    print(
        f"{'half':<8} {'snippets':>8} {'agrees':>7} {'disagrees':>9} {'refused':>7} {'internal':>8}  accepted"
    )
    for s in summaries:
        c = s.counts
        print(
            f"{s.half:<8} {s.snippets:>8} {c['agrees']:>7} {c['disagrees']:>9} {c['refused']:>7} "
            f"{c['internal']:>8}  {s.accepted_share:6.1%} (taken at all {s.taken_share:.1%})"
        )
    for label, share, count in gathered_shares(verdicts):
        print(f"{label:<28} {count:>4} snippets, accepted {share:6.1%}")
    for s in summaries:
        print(f"\nrefusal causes, {s.half}:")
        for cause, count in s.causes:
            print(f"  {count:>3}  {cause}")
        if s.malformed_refusals:
            print(
                "  refusals that are not one line naming their line and run: "
                + ", ".join(s.malformed_refusals)
            )
    wrong = [v for v in verdicts if v.kind in ("disagrees", "internal", "not-runnable")]
    if wrong:
        print("\naccepted but not PyTorch's outcome, internal errors, snippets that no longer run:")
        for v in wrong:
            print(f"  {v.half}/{v.name}: {v.kind}: {v.detail}")


def measure(
    halves: Iterable[str], timeout_s: float = TIME_LIMIT_S
) -> tuple[list[HalfSummary], list[Verdict]]:
    warm_up()
    summaries, everything = [], []
    for half in halves:
        verdicts = [judge(half, path, timeout_s) for path in snippets(half)]
        summaries.append(summarise(half, verdicts))
        everything += verdicts
    return summaries, everything


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--half", choices=HALVES, help="measure one half only (default: both)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--timeout", type=float, default=TIME_LIMIT_S, help="seconds per run")
    args = parser.parse_args(argv)
    summaries, verdicts = measure([args.half] if args.half else HALVES, args.timeout)
    if args.json:
        print(
            json.dumps({"halves": [asdict(s) for s in summaries], "snippets": [asdict(v) for v in verdicts]})
        )
    else:
        print_report(summaries, verdicts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
