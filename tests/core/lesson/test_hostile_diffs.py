"""The lesson's text lookups stay linear on a stranger's text.

The window tints the lines a fix or a toggle changed, on its GUI thread; the fixes look up the
statement at each line that touched a saved value. A recording's program comes from a stranger:
repeated lines (``z = 1`` twenty thousand times) made the diff quadratic, and one walk of the tree
per line made the lookup quadratic. Each is timed in a forked process killed past a generous
deadline; each answer is checked against a plain reading of the same text.
"""

from __future__ import annotations

import ast
import difflib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.lesson.edits import Source, new_line_numbers
from tests.support.deadline import finishes

FUZZ = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
LINES = 24_000  # a 96 KB program of four-character lines


# -- the tint of an edit's lines -------------------------------------------------------------------


def keeps_order(old: str, new: str, changed: list[int]) -> bool:
    """Whether the lines of ``new`` not reported as changed appear in ``old`` in the same order."""
    rest = iter(old.splitlines())
    kept = [line for number, line in enumerate(new.splitlines(), 1) if number not in changed]
    return all(any(line == candidate for candidate in rest) for line in kept)


def difflib_count(old: str, new: str) -> int:
    """How many lines of ``new`` difflib's matcher counts as added or changed."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return sum(j2 - j1 for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert"))


@settings(max_examples=300, deadline=None, database=None)
@given(old=st.lists(st.sampled_from("abz"), max_size=14), new=st.lists(st.sampled_from("abz"), max_size=14))
def test_the_tinted_lines_are_a_shortest_edit(old: list[str], new: list[str]) -> None:
    old_text, new_text = "\n".join(old), "\n".join(new)
    changed = new_line_numbers(old_text, new_text)
    assert changed == sorted(set(changed)) and all(1 <= n <= len(new) for n in changed)
    assert keeps_order(old_text, new_text, changed)
    assert len(changed) <= difflib_count(old_text, new_text)


def repeated(unit: list[str]) -> str:
    return "".join(unit * (LINES // len(unit)))


@FUZZ
@given(
    unit=st.lists(st.sampled_from(["z=1\n", "z=1\n", "y=2\n", "\n", "#\n"]), min_size=1, max_size=3),
    at=st.lists(st.integers(0, LINES - 1), min_size=1, max_size=4),
)
def test_tinting_an_edit_of_repeated_lines_finishes(unit: list[str], at: list[int]) -> None:
    """A fix's few added lines, anywhere in a long text of repeated lines (a minute before)."""
    old = repeated(unit)
    lines = old.splitlines(keepends=True)
    for place in sorted(at, reverse=True):
        lines.insert(place % (len(lines) + 1), "w = 3\n")
    new = "".join(lines)
    assert finishes(lambda: new_line_numbers(old, new))
    assert finishes(lambda: new_line_numbers(new, old))
    assert finishes(lambda: new_line_numbers(old, "".join(reversed(lines))))
    changed = new_line_numbers(old, new)
    assert [new.splitlines()[n - 1] for n in changed] == ["w = 3"] * len(at)


def test_texts_that_share_nothing_in_order_give_no_tint_in_time() -> None:
    numbered = [f"v{i} = {i}" for i in range(LINES)]
    old, new = "\n".join(numbered), "\n".join(reversed(numbered))
    assert finishes(lambda: new_line_numbers(old, new))
    assert finishes(lambda: new_line_numbers("z=1\n" * LINES, "y=2\nz=1\n" * (LINES // 2)))


# -- the statement at a line -----------------------------------------------------------------------


def innermost(tree: ast.AST, line: int) -> ast.stmt | None:
    """The statement spanning ``line`` that no other statement spanning it is inside of."""
    spanning = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    inner = [s for s in spanning if not any(o is not s and o in ast.walk(s) for o in spanning)]
    return inner[-1] if inner else None


NESTED = """import torch
x = (1,
     2); y = (3,
     4)
for i in range(3):
    if i: a = 1; b = 2
    while i:
        pass
    c = [
        1]

def f():
    return 1

class A:
    z = 1
"""


def test_the_statement_at_each_line_is_the_innermost() -> None:
    source = Source(NESTED)
    for line in range(0, len(NESTED.splitlines()) + 3):
        assert source.statement_at(line) is innermost(source.tree, line), line


def test_the_statement_at_every_line_of_a_long_program_finishes() -> None:
    """One lookup per line of a 20,000-line program, as the fixes do for a long recording."""
    code = "import torch\nx = torch.ones(2, requires_grad=True)\n" + "y = x * 2\nx.add_(1)\n" * 10_000
    block = "for i in range(2):\n" + "".join("    y = x * 2\n" for _ in range(10_000))

    def every_line(text: str) -> None:
        source = Source(text)
        for line in range(1, len(source.lines) + 1):
            source.statement_at(line)

    assert finishes(lambda: every_line(code))
    assert finishes(lambda: every_line(block))
    source = Source(block)
    assert source.statement_at(5000) is innermost(source.tree, 5000)
