"""The recording child finds the lesson's candidates when asked (NOTE [the lesson found in the
child] in ``app/core/lesson/candidates.py``): the same as found here from a recording made here."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator

import pytest

from app.child.client import ChildPool, record_in_child
from app.core import load_builtin, record
from app.core.lesson.candidates import candidates_of, found_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="child recording needs POSIX limits")


@pytest.fixture(scope="module")
def pool() -> Iterator[ChildPool]:
    made = ChildPool()
    yield made
    made.close()


@pytest.mark.parametrize("name", ["forgot-retain", "logged-loss"])
def test_the_child_finds_what_this_process_finds(pool, name):
    recording = record_in_child(load_builtin(name), pool=pool, lesson=True)
    found = found_for(recording)
    assert found is not None and (found.fixes or found.advices)
    assert dataclasses.astuple(found) == dataclasses.astuple(candidates_of(record(load_builtin(name))))
    assert recording.graph == record(load_builtin(name)).graph  # the recording's own bytes, unchanged


def test_nothing_is_found_unless_asked(pool):
    recording = record_in_child(load_builtin("logged-loss"), pool=pool)
    assert found_for(recording) is None
