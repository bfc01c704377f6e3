"""The loops around each line of a trusted script, read from its line events.

# NOTE [script loops]
A program's evaluator knows each loop's iteration; a script's loops are read
from its line events. The parsed script gives every multi-line ``for`` /
``while`` by its header line, with the lines of its body, and for each line
the loops of its own function whose body holds it. CPython reports the header
line each time the loop asks for its next item (on entry, after each pass, and
once more when it ends; a header over several lines may report each of them, and a
decorator in the body runs before its ``def``), so the line event *after* a header
says what that was:
a line of the body starts an iteration (0 on entry, the next one after a pass),
anything else means the loop ended (or never ran). A frame's marks are its
enclosing loops that it entered while recorded, outermost first, after the
marks of the script frame that called it (a ``forward`` of the script's own
runs inside its caller's iteration). A loop entered before the recording began
(a ``lens.record()`` block inside a loop) is not marked: its iteration is not
known. Generator frames carry only their caller's marks: each ``yield``
returns from the frame. The number of iterations is not known beforehand
(``count`` is None).

"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from app.core.model.graph import LoopMark

__all__ = ["FrameLoops", "LoopLines"]


class LoopLines:
    """The script's multi-line loops by header line, and the loops around each line of its own
    frame (NOTE [script loops]).

    >>> code = "for a in x:\\n    while (b\\n           > 0):\\n        b -= 1\\n    c = 2\\nd = 3\\n"
    >>> lines = LoopLines(ast.parse(code))
    >>> lines.body, lines.header_of, lines.around[4], lines.around[5], lines.around[6]
    ({1: (2, 5), 2: (4, 4)}, {1: 1, 2: 2, 3: 2}, (1, 2), (1,), ())
    """

    def __init__(self, tree: ast.Module | None) -> None:
        self.body: dict[int, tuple[int, int]] = {}  # header line -> (first, last) line of its body
        self.header_of: dict[int, int] = {}  # a line of a loop's header (before its body) -> its first
        # line -> the headers of the loops around it, outermost first
        self.around: dict[int, tuple[int, ...]] = {}
        if tree is not None:
            self._statements(tree.body, ())

    def _statements(self, statements: list[ast.stmt], loops: tuple[int, ...]) -> None:
        for stmt in statements:
            for line in range(_first_line(stmt), (stmt.end_lineno or stmt.lineno) + 1):
                self.around[line] = loops  # its nested statements' lines are marked again below
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)) and stmt.body[0].lineno > stmt.lineno:
                first, last = _first_line(stmt.body[0]), stmt.body[-1]
                self.body[stmt.lineno] = (first, last.end_lineno or last.lineno)
                for line in range(stmt.lineno, first):  # a target or a condition over several lines
                    self.header_of[line] = stmt.lineno
                self._statements(stmt.body, (*loops, stmt.lineno))
                self._statements(stmt.orelse, loops)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._statements(stmt.body, ())  # runs in a frame of its own
            else:
                for field in ("body", "orelse", "finalbody"):
                    nested = getattr(stmt, field, [])
                    if isinstance(nested, list):
                        self._statements(nested, loops)
                for part in [*getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])]:
                    self._statements(part.body, loops)


def _first_line(stmt: ast.stmt) -> int:
    """The first line that runs of ``stmt``: a decorator's, before its ``def`` or ``class``."""
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)])


class FrameLoops:
    """One script frame's loop marks, line by line (NOTE [script loops])."""

    __slots__ = ("at_header", "index", "marks", "outer", "track")

    def __init__(self, outer: tuple[LoopMark, ...], *, track: bool) -> None:
        self.outer = outer  # the marks of the caller's line
        self.track = track
        self.index: dict[int, int] = {}  # header -> the iteration running, of loops entered while recorded
        self.at_header: tuple[int, bool] | None = None  # the header running, and whether it is an entry
        self.marks = outer  # the marks of the line running

    def advance(
        self, previous: int | None, line: int, lines: LoopLines
    ) -> tuple[tuple[LoopMark, ...], tuple[LoopMark, ...]]:
        """The marks of ``previous``, the line that has just finished, and of ``line``, which starts."""
        if not self.track:
            return self.outer, self.outer
        header_now = lines.header_of.get(line)
        if self.at_header is not None and header_now == self.at_header[0]:
            return self.marks, self.marks  # another line of the same header: it has not decided yet
        finished = self.marks
        if self.at_header is not None:  # the header asked for the next item: did an iteration start?
            header, entry = self.at_header
            self.at_header = None
            first, last = lines.body[header]
            if not first <= line <= last:
                self.index.pop(header, None)  # it ended, or never ran
            elif entry:
                self.index[header] = 0
            elif header in self.index:  # else entered before the recording began: not known
                self.index[header] += 1
            finished = self._marks((*lines.around.get(header, ()), header))
        around = lines.around.get(line, ())
        if header_now is not None:
            first, last = lines.body[header_now]
            back = previous is not None and first <= previous <= last
            self.at_header = (header_now, not back)
        for header in [h for h in self.index if h not in around and h != header_now]:
            del self.index[header]  # left: a break, a return, an exception
        self.marks = self._marks(around)
        return finished, self.marks

    def _marks(self, headers: Iterable[int]) -> tuple[LoopMark, ...]:
        index = self.index
        return self.outer + tuple(LoopMark(h, index[h], None) for h in headers if h in index)
