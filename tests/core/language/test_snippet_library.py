"""Pasted snippets that use the library (DataLoader, Variable, math, random, nn.init, more layers,
optimizers and schedulers) are recorded as written, with PyTorch's own outcome.

Each ``tests/support/snippets/lib_*.py`` is recorded by the checked language and run as plain Python
(``oracle.run_plainly``): every autograd call, its error and failing node, the grads of every
named leaf after it, the printed text, and the line the program stopped at must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from app.core import record
from app.core.model.program import Program
from tests.support.oracle import check_against_plain, run_plainly

SNIPPETS = Path(__file__).parents[2] / "support" / "snippets"
LIBRARY = sorted(SNIPPETS.glob("lib_*.py"))
# the snippets that stop at a backward, as they do in a plain run: (file, line of the failing call)
FAILING = {"lib_inplace_sigmoid_error.py": 13, "lib_lstm_loader_second_backward.py": 19}


def test_the_library_corpus_is_there() -> None:
    assert len(LIBRARY) >= 10
    assert set(FAILING) <= {path.name for path in LIBRARY}


@pytest.mark.parametrize("path", LIBRARY, ids=[path.stem for path in LIBRARY])
def test_snippet_is_recorded_as_a_plain_run_would_go(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = path.read_text(encoding="utf-8")
    rec = record(Program(code, name=path.stem))
    # recorded on the CPU: the plain run picks the CPU too ("cuda" if torch.cuda.is_available() ...)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    plain = run_plainly(code)
    assert plain.calls, "the snippet makes at least one autograd call"
    check_against_plain(rec, plain)
    failed = rec.failed
    if path.name in FAILING:
        assert failed is not None and plain.failed is not None
        assert failed.call.line == FAILING[path.name]
    else:
        assert failed is None and rec.error is None and plain.error is None
