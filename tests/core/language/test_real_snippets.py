"""Real snippets nobody designed the language for, with PyTorch as the oracle.

``tests/support/snippets/real/`` holds code from public issues and forums, split by a hash of its
source address into ``dev/`` and ``heldout/``. Every snippet must still run plainly under PyTorch
(in a forked child, with the recorder's seed and no CUDA): the corpus does not rot. Every snippet
the checked language accepts must be recorded with the plain run's outcome: no error when it had
none, else the same message at a line its traceback passed through, and the same final ``.grad``
of every leaf both name (``torch.allclose``, computed from the plain run). Every refusal is one
line that names its line and points to ``python -m app run``.

The plain run and the comparison live in ``benchmarks/reach.py``, which prints the same
measurement as shares; they share no code with the language they judge.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import pytest
import torch

from benchmarks.reach import (
    HALVES,
    SNIPPETS,
    Grad,
    Outcome,
    differences,
    in_child,
    named_leaf_grads,
    refusal_cause,
    run_checked,
    run_plainly,
    warm_up,
    well_formed_refusal,
)

CORPUS = [(half, path) for half in HALVES for path in sorted((SNIPPETS / half).glob("*.py"))]
IDS = [f"{half}/{path.stem}" for half, path in CORPUS]
# Snippets whose recording takes seconds (a 40,000-statement positional table, a training loop of
# hundreds of printed steps): marked slow so ``-m "not slow"`` keeps the file quick.
SLOW = {
    "heldout/transformer_25_positional_encoder_loop",
    "dev/yuseungwoo_6_xor_backprop",
}
CHECKED = [
    pytest.param(half, path, id=name, marks=[pytest.mark.slow] if name in SLOW else [])
    for (half, path), name in zip(CORPUS, IDS, strict=True)
]

# Accepted today without PyTorch's outcome, or refused without the run hint: the language's open
# bugs, each a strict xfail so a fix shows up as an unexpected pass and the entry goes.
KNOWN_WRONG: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    from app.core.sizing.meta_without_dynamo import references_without_dynamo

    warm_up()  # each forked child then starts in milliseconds
    # Once per process, and cached: made here, no child walks every object of this process (the
    # walk touches each one's count, so the fork copies the whole heap) on its first recording.
    references_without_dynamo()


@functools.cache
def plain_outcome(path: Path) -> tuple[str, Outcome | str]:
    """The plain run, once per session for both tests of a snippet."""
    return in_child(run_plainly, path)


def test_the_corpus_is_split_by_the_hash_of_its_sources() -> None:
    assert len(CORPUS) >= 100
    sources = set()
    for half, path in CORPUS:
        first, second = path.read_text(encoding="utf-8").splitlines()[:2]
        assert first.startswith("# source: http"), path
        assert second.startswith("# edits: "), path
        url = first.removeprefix("# source: ").strip()
        sources.add(url)
        assert half == ("dev" if hashlib.sha256(url.encode()).digest()[0] % 2 == 0 else "heldout"), path
    assert len(sources) == len(CORPUS), "one snippet per source address"


@pytest.mark.parametrize(("half", "path"), CORPUS, ids=IDS)
def test_snippet_still_runs_plainly(half: str, path: Path) -> None:
    status, result = plain_outcome(path)
    assert status == "done", f"{half}/{path.name} no longer runs under PyTorch: {result}"


@pytest.mark.parametrize(("half", "path"), CHECKED)
def test_an_accepted_snippet_is_recorded_with_pytorchs_outcome(
    half: str, path: Path, request: pytest.FixtureRequest
) -> None:
    known = KNOWN_WRONG.get(f"{half}/{path.stem}")
    if known is not None:
        request.applymarker(pytest.mark.xfail(reason=known, strict=True))
    status, plain = plain_outcome(path)
    assert status == "done", plain
    status, answer = in_child(run_checked, path)
    assert status == "done", f"the checked run: {answer}"
    kind, result = answer
    assert kind != "internal", f"the language failed on its own: {result}"
    if kind == "refused":
        assert well_formed_refusal(result), f"a refusal must be one line naming its line and run: {result!r}"
        return
    assert isinstance(plain, Outcome) and isinstance(result, Outcome)
    wrong, _ = differences(plain, result)
    assert not wrong, "; ".join(wrong)


def test_refusal_causes_leave_out_place_hint_and_numbers() -> None:
    message = (
        "program, line 4, column 7: this would make a tensor of 25 elements; the limit is 10; "
        "to record a script of your own with full Python, run: python -m app run SCRIPT.py"
    )
    assert refusal_cause(message) == "this would make a tensor of N elements"
    assert well_formed_refusal(message)
    assert not well_formed_refusal("program, line 4: no\nsecond line; run: python -m app run X.py")
    assert not well_formed_refusal("torch.Generator is not available in programs")


def test_differences_name_each_way_a_recording_can_miss_the_plain_run() -> None:
    grad = Grad((2,), (1.0, float("nan")), "float32")
    other = Grad((2,), (1.5, float("nan")), "float32")
    plain = Outcome("RuntimeError: one of the variables needed", (7, 12), {"w": grad, "b": None})
    same = Outcome("PyTorch says: one of the variables needed", (12,), {"w": grad, "b": None, "x": other})
    assert differences(plain, same) == ([], 2)  # NaN equals NaN; a leaf only one run names is not compared
    assert differences(plain, Outcome(None, (), {"w": grad}))[0] == [
        "plain: RuntimeError: one of the variables needed; recorded: ok"
    ]
    assert differences(plain, Outcome("PyTorch says: one of the variables needed", (3,), {}))[0] == [
        "error at line [3], plain run at [7, 12]"
    ]
    assert differences(plain, Outcome("Python says: 'X' object is not iterable", (12,), {}))[0] == [
        "plain: RuntimeError: one of the variables needed; recorded: Python says: 'X' object is not iterable"
    ]
    assert differences(plain, Outcome(plain.error, (12,), {"w": other, "b": grad}))[0] == [
        "b.grad differs",
        "w.grad differs",
    ]


def test_plain_grads_are_named_through_the_programs_own_objects() -> None:
    class Agent:  # as a snippet's own class is, run as __main__
        pass

    Agent.__module__ = "__main__"
    agent, leaf = Agent(), torch.ones(2, requires_grad=True)
    agent.net = torch.nn.Linear(2, 1)  # type: ignore[attr-defined]
    agent.w = leaf  # type: ignore[attr-defined]
    agent.net(leaf).sum().backward()  # type: ignore[attr-defined]
    grads = named_leaf_grads({"agent": agent, "x": leaf, "n": 3, "__name__": "__main__"})
    assert sorted(grads) == ["agent.net.bias", "agent.net.weight", "agent.w", "x"]
    weight = agent.net.weight.detach().flatten()  # type: ignore[attr-defined]
    assert grads["x"] == grads["agent.w"] == Grad((2,), tuple(weight.tolist()), "float32")
