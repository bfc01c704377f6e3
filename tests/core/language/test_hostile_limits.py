"""Every size limit of the language is checked before the work it bounds.

A ``%`` width hidden behind parentheses in a mapping key (``%(a(b)c)99999999s``: Python reads the
key ``a(b)c``) built a 100 MB text before anything looked; ``random.sample`` with ``counts`` made
ten million items (15 s) before the list's size was checked. Each is refused at its line, in
well under the deadline of a forked process.
"""

from __future__ import annotations

import pytest

from app.core import record
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from tests.support.deadline import finishes

HIDDEN_WIDTHS = [
    'd = {"a(b)c": 1}\ns = "%(a(b)c)99999999s" % d\n',
    'd = {"(x)": 1}\ns = "%((x))99999999d" % d\n',
    'd = {"a": 1}\ns = "%(a)s %(a)*s" % d\n',
]


def refused(code: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        record(Program("import torch\n" + code, name="limits"))
    return info.value


@pytest.mark.parametrize("code", HIDDEN_WIDTHS)
def test_a_percent_width_behind_nested_parentheses_is_refused_first(code: str) -> None:
    assert finishes(lambda: refused(code))
    error = refused(code)
    assert error.line == 3 and "widths and precisions" in error.message


def test_percent_formats_of_ordinary_width_give_pythons_text() -> None:
    code = 'd = {"a(b)c": 3.14159, "n": 7}\nprint("%(a(b)c)8.3f|%(n)-4d|%%" % d)\n'
    rec = record(Program("import torch\n" + code, name="limits"))
    assert rec.error is None, rec.error
    printed = [line for step in rec.timeline.steps for line in step.printed]
    assert printed == ["%(a(b)c)8.3f|%(n)-4d|%%" % {"a(b)c": 3.14159, "n": 7}]  # noqa: UP031 (the oracle is Python's own %)


def test_random_sample_with_counts_is_refused_before_it_builds_the_list() -> None:
    code = "import random\ns = random.sample([1], counts=[10**7], k=10**7)\n"
    assert finishes(lambda: refused(code))
    error = refused(code)
    assert error.line == 3 and "at most" in error.message
