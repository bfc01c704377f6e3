"""Real snippets from public issues, each recorded as ``run`` records it: every error of the
kinds the fixes know gets a proven fix of its cause first, and the script with that fix applied
runs plainly under PyTorch; every silent loop that never clears .grad gets proven advice, and a
loop that accumulates on purpose gets none. Both halves of the corpus (split by a hash of the
source address) are checked; ``benchmarks/fixes.py --corpus`` prints the same table."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.fixes import CORPUS, kind_of, snippet_outcome

STRUCTURAL = {
    "backward-twice",
    "version-counter",
    "leaf-inplace",
    "view-inplace",
    "non-scalar",
    "wrong-grad-count",
    "missing-zero-grad",
    "silent-no-grad-fn",
}
SNIPPETS = sorted(p for half in ("dev", "heldout") for p in (CORPUS / half).glob("*.py"))


def test_the_corpus_is_split_by_the_hash_of_its_source() -> None:
    import hashlib

    for path in SNIPPETS:
        lines = path.read_text(encoding="utf-8").splitlines()
        source = next(line.split(": ", 1)[1] for line in lines if line.startswith("# source: "))
        assert any(line.startswith("# edits: ") for line in lines), path.name
        half = "dev" if hashlib.sha256(source.encode()).digest()[0] % 2 == 0 else "heldout"
        assert path.parent.name == half, path.name
    assert len(SNIPPETS) >= 40


@pytest.mark.parametrize("path", [p for p in SNIPPETS if kind_of(p) in STRUCTURAL], ids=lambda p: p.stem)
def test_the_first_proven_fix_removes_the_cause_and_the_script_runs_plainly(path: Path) -> None:
    outcome = snippet_outcome(path)
    assert outcome["failed"] == (kind_of(path) not in ("missing-zero-grad", "silent-no-grad-fn"))
    assert outcome["proven"] and outcome["structural"] and outcome["runs"], outcome
    assert outcome["every_runs"], outcome  # no offered edit fails when applied


@pytest.mark.parametrize("path", [p for p in SNIPPETS if kind_of(p) == "no-advice"], ids=lambda p: p.stem)
def test_gradients_accumulated_on_purpose_get_no_advice(path: Path) -> None:
    outcome = snippet_outcome(path)
    assert not outcome["failed"] and not outcome["offered"] and not outcome["proven"]
