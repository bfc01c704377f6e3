"""The lesson's candidates as the recording child sends them (NOTE [the lesson found in the child]
in ``app/core/lesson/candidates.py``): read back whole, anything else refused, kept beside the one
recording object they were found for."""

from __future__ import annotations

import dataclasses
import gc
import json

import pytest

from app.core import load_builtin, record
from app.core.lesson.advised import advices_of
from app.core.lesson.candidates import (
    Candidates,
    candidates_from_json,
    candidates_json,
    candidates_of,
    found_for,
    keep_found,
)
from app.core.lesson.recipes import fixes_for


@pytest.fixture(scope="module")
def recordings():
    return {name: record(load_builtin(name)) for name in ("forgot-retain", "logged-loss", "two-losses")}


def _whole(candidates: Candidates) -> tuple:
    """Every field, alternatives included (a Fix compares without them)."""
    return dataclasses.astuple(candidates)


def test_a_failed_recording_has_its_fixes_and_one_that_ran_its_advices(recordings):
    failed, logged = candidates_of(recordings["forgot-retain"]), candidates_of(recordings["logged-loss"])
    assert _whole(failed) == _whole(Candidates(fixes=tuple(fixes_for(recordings["forgot-retain"]))))
    assert failed.fixes and not failed.advices
    assert _whole(logged) == _whole(Candidates(advices=tuple(advices_of(recordings["logged-loss"]))))
    assert logged.advices and not logged.fixes


@pytest.mark.parametrize("name", ["forgot-retain", "logged-loss", "two-losses"])
def test_candidates_read_back_whole_through_json_text(recordings, name):
    found = candidates_of(recordings[name])
    text = json.dumps(candidates_json(found))
    assert _whole(candidates_from_json(json.loads(text))) == _whole(found)


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"fixes": []},
        {"fixes": [], "advices": [], "more": 1},
        {"fixes": [{"title": "t"}], "advices": []},
        {"fixes": "x", "advices": []},
        {"fixes": [], "advices": [{"headline": 1, "evidence": "", "fixes": []}]},
    ],
)
def test_what_is_not_candidates_is_refused(data):
    with pytest.raises(ValueError):
        candidates_from_json(data)


def test_a_bad_claim_or_band_aid_is_refused(recordings):
    fix = candidates_json(candidates_of(recordings["forgot-retain"]))["fixes"][0]
    for bad in ({**fix, "band_aid": "yes"}, {**fix, "claims": [["text", "a kind of our own", "", ""]]}):
        with pytest.raises(ValueError):
            candidates_from_json({"fixes": [bad], "advices": []})


def test_candidates_are_kept_for_their_recording_object_only_while_it_lives():
    recording = record(load_builtin("two-losses"))
    twin = dataclasses.replace(recording)
    kept = Candidates()
    keep_found(recording, kept)
    assert found_for(recording) is kept and found_for(twin) is None
    del recording
    gc.collect()
    assert found_for(twin) is None
