"""Snippets in the shapes forum posts take (classes, functions, while, comprehensions), recorded in
the checked language and compared with PyTorch: the program's text run plainly (the oracle), and
the same file recorded as a trusted script, as ``python -m app run`` records it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from app.core import record
from app.core.loading import parse_python
from app.core.recorder.script import record_script
from tests.support.oracle import check_against_plain, same

SNIPPETS = sorted((Path(__file__).resolve().parents[2] / "support" / "snippets").glob("forms_*.py"))


def test_the_corpus_has_at_least_ten_snippets() -> None:
    assert len(SNIPPETS) >= 10


@pytest.mark.parametrize("path", SNIPPETS, ids=[p.stem for p in SNIPPETS])
def test_a_snippet_is_accepted_and_recorded_as_pytorch_runs_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    recording = record(parse_python(text, name=path.stem))  # accepted as written
    check_against_plain(recording)  # calls, errors, failing nodes, grads after each call, prints
    script = record_script(path, stdout=io.StringIO())
    assert script.exception is None
    ran = script.recording
    assert sorted(recording.leaves) == sorted(ran.leaves)  # parameters named by their paths
    assert (recording.error, recording.error_line) == (ran.error, ran.error_line)
    assert [(c.call.kind, c.call.line, c.error) for c in recording.calls] == [
        (c.call.kind, c.call.line, c.error) for c in ran.calls
    ]
    for call in recording.calls:
        ours, theirs = recording.grads_at_end(call.index), ran.grads_at_end(call.index)
        assert set(ours) == set(theirs)
        assert all(same(grad, theirs[name]) for name, grad in ours.items()), f"grads after call {call.index}"
