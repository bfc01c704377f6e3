"""Editing program text at :mod:`ast` positions: the one toolkit of the fixes, the advice and the
call toggles. One concept, kept in one file past 500 lines: text edits at syntax-tree positions,
and the diffs that show them.

The program is parsed, never run. :class:`Source` holds the text with the absolute offsets of the
positions :mod:`ast` reports; every edit replaces a character range of the text, so the learner's
layout, comments and other keywords stay as they wrote them. :func:`changed_lines` and
:func:`unified_diff` show an edit; :func:`set_call_keyword` is the toggles' edit.

>>> from app.core.model.program import Call
>>> code = "y = x.square()\\ny.sum().backward()\\n"
>>> call = Call("backward", 2, 1, 2, 19, "y.sum().backward()")
>>> set_call_keyword(code, call, "retain_graph", "True")
'y = x.square()\\ny.sum().backward(retain_graph=True)\\n'
"""

from __future__ import annotations

import ast
import difflib
import io
from collections.abc import Sequence
from functools import lru_cache

from app.core.model.program import Call

__all__ = [
    "Positioned",
    "Source",
    "assigned_names",
    "call_node",
    "carried_names",
    "changed_lines",
    "edit_text",
    "end_line",
    "find_call",
    "insert_after",
    "insert_before",
    "line_ending",
    "loop_at",
    "names_bound",
    "names_read",
    "new_line_numbers",
    "parsed",
    "set_call_keyword",
    "statement_lines",
    "unified_diff",
    "unwrap_block",
    "wrap_in_block",
    "wrapped",
]

Positioned = ast.expr | ast.stmt | ast.keyword


def changed_lines(old: str, new: str, moved: str = "") -> list[str]:
    """The lines a fix removes (``- ``) and adds (``+ ``), without diff headers.

    >>> changed_lines("a\\nb\\n", "a\\nc\\n")
    ['- b', '+ c']

    A statement the fix moves (``moved``) is marked so, or its ``-`` and ``+`` would read as a
    change that changes nothing; a text diff alone may as well name a neighbour as the one moved:

    >>> changed_lines("step()\\na\\nb\\n", "a\\nb\\nstep()\\n", moved="step()")
    ['- step()  # moves', '+ step()  # to here']
    """
    old_lines, new_lines, marks = old.splitlines(), new.splitlines(), []
    if moved:  # from its first place in the old text to its last in the new (after the backward)
        was = next((i for i, line in enumerate(old_lines) if line.strip() == moved), None)
        now = next((i for i in reversed(range(len(new_lines))) if new_lines[i].strip() == moved), None)
        if was is not None and now is not None:
            marks = [f"- {old_lines[was]}  # moves", f"+ {new_lines[now]}  # to here"]
            old_lines = old_lines[:was] + old_lines[was + 1 :]
            new_lines = new_lines[:now] + new_lines[now + 1 :]
    return [line.rstrip() for line in _line_diff(old_lines, new_lines)] + marks


def new_line_numbers(old: str, new: str) -> list[int]:
    """The 1-based lines of ``new`` that an edit of ``old`` added or changed (a moved line counts
    wherever a line diff places it; a removed one has no line left to show). Past a budget of work
    (two texts that share little, in long repeated lines), none: the edit is then shown untinted.

    >>> new_line_numbers("a\\nb\\nc\\n", "a\\nB\\nc\\nd\\n")
    [2, 4]
    """
    old_lines, new_lines = old.splitlines(), new.splitlines()
    first = 0
    while first < min(len(old_lines), len(new_lines)) and old_lines[first] == new_lines[first]:
        first += 1
    last = 0
    while last < min(len(old_lines), len(new_lines)) - first and old_lines[-1 - last] == new_lines[-1 - last]:
        last += 1
    kept = _kept_lines(old_lines[first : len(old_lines) - last], new_lines[first : len(new_lines) - last])
    if kept is None:
        return []
    return [first + j + 1 for j in range(len(new_lines) - first - last) if j not in kept]


# NOTE [diff budget]: the window tints an edit's lines on the GUI thread after every fix or toggle,
# and a recording's text comes from a stranger. difflib's matcher is quadratic on repeated lines
# (a program of 20,000 ``z = 1`` lines took a minute); Myers' diff takes (N + M) * D steps for D
# differing lines, and a fix differs in a few. Past DIFF_STEPS steps the tint is given up.
DIFF_STEPS = 2_000_000


def _kept_lines(old: list[str], new: list[str]) -> set[int] | None:
    """The indices of ``new`` that a shortest edit script from ``old`` keeps (Myers' greedy
    algorithm), or None past ``DIFF_STEPS`` steps."""
    ids: dict[str, int] = {}
    a = [ids.setdefault(line, len(ids)) for line in old]
    b = [ids.setdefault(line, len(ids)) for line in new]
    n, m = len(a), len(b)
    frontier: dict[int, int] = {1: 0}  # the furthest x reached on each diagonal k = x - y
    trace: list[dict[int, int]] = []
    steps = 0
    for d in range(n + m + 1):
        trace.append(dict(frontier))
        steps += len(frontier)
        for k in range(-d, d + 1, 2):
            x = frontier[k + 1] if _goes_down(frontier, k, d) else frontier[k - 1] + 1
            start = x
            while x < n and x - k < m and a[x] == b[x - k]:
                x += 1
            steps += 1 + x - start
            frontier[k] = x
            if x >= n and x - k >= m:
                return _walk_back(trace, n, m)
        if steps > DIFF_STEPS:
            return None
    return set()  # not reached: d = n + m always ends


def _goes_down(frontier: dict[int, int], k: int, d: int) -> bool:
    """Whether diagonal ``k`` is reached at ``d`` by an insertion (from k + 1), not a deletion."""
    return k == -d or (k != d and frontier[k - 1] < frontier[k + 1])


def _walk_back(trace: list[dict[int, int]], n: int, m: int) -> set[int]:
    """The lines of ``new`` on the snakes of the path that ``trace`` recorded, from its end back."""
    kept: set[int] = set()
    x, y = n, m
    for d in reversed(range(len(trace))):
        frontier, k = trace[d], x - y
        down = _goes_down(frontier, k, d)
        before = frontier[k + 1] if down else frontier[k - 1]
        start = before if down else before + 1
        kept.update(range(start - k, y))  # the snake: equal lines from (start, start - k) to (x, y)
        x, y = before, before - (k + 1 if down else k - 1)
    return kept


# ndiff pairs similar lines of a changed block, comparing every pair character by character and
# recursing once per pair: quadratic in the block's lines and characters, and a RecursionError
# past ~1,000 lines. A fix changes a few short lines: ndiff then; whole lines past DIFF_CHARS, and
# the whole block past DIFF_LINES.
DIFF_LINES = 100
DIFF_CHARS = 10_000


def _line_diff(old: list[str], new: list[str]) -> list[str]:
    """``- `` and ``+ `` lines from ``old`` to ``new``, on what differs between their common first
    and last lines: linear in the text, apart from a small block's diff."""
    first = 0
    while first < min(len(old), len(new)) and old[first] == new[first]:
        first += 1
    last = 0
    while last < min(len(old), len(new)) - first and old[-1 - last] == new[-1 - last]:
        last += 1
    old, new = old[first : len(old) - last], new[first : len(new) - last]
    if len(old) > DIFF_LINES or len(new) > DIFF_LINES:
        return [f"- {line}" for line in old] + [f"+ {line}" for line in new]
    if sum(map(len, old)) + sum(map(len, new)) > DIFF_CHARS:
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)  # whole lines, no characters
        return [
            line
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"
            for line in [f"- {text}" for text in old[i1:i2]] + [f"+ {text}" for text in new[j1:j2]]
        ]
    return [line for line in difflib.ndiff(old, new) if line[:2] in ("- ", "+ ")]


# -- the program text, with ast positions ----------------------------------------------------


class Source:
    """The program text parsed once: absolute offsets of ast positions, statements by line."""

    def __init__(self, code: str) -> None:
        self.code = code
        # ast counts lines at \r\n, \r and \n, as StringIO(newline="") splits them.
        self.lines = io.StringIO(code, newline="").readlines()
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.tree = ast.parse(code)
        self.parents: dict[int, tuple[ast.AST, list[ast.stmt]]] = {}
        for owner in ast.walk(self.tree):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(owner, field, None)
                if isinstance(block, list):
                    for stmt in block:
                        if isinstance(stmt, ast.stmt):
                            self.parents[id(stmt)] = (owner, block)
        self._innermost: list[ast.stmt | None] | None = None

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def offset(self, line: int, byte_col: int) -> int:
        text = self.line_text(line)
        return self.starts[line - 1] + len(text.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

    def start(self, node: Positioned) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: Positioned) -> int:
        return self.offset(end_line(node), node.end_col_offset or 0)

    def segment(self, node: Positioned) -> str:
        return self.code[self.start(node) : self.end(node)]

    def char_position(self, node: Positioned) -> tuple[int, int, int, int]:
        """1-based (line, col, end_line, end_col) in characters, as a :class:`Call` holds them."""
        start, end = self.start(node), self.end(node)
        line, last = node.lineno, end_line(node)
        return line, start - self.starts[line - 1] + 1, last, end - self.starts[last - 1] + 1

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        """Just after the newline ending ``line`` (the text's end for a last line without one)."""
        return self.starts[min(line, len(self.lines))]

    def indent(self, line: int) -> str:
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip(" \t"))]

    def starts_line(self, node: Positioned) -> bool:
        return self.code[self.line_start(node.lineno) : self.start(node)].strip() == ""

    def block_of(self, stmt: ast.stmt) -> tuple[ast.AST, list[ast.stmt]]:
        return self.parents[id(stmt)]

    def statement_at(self, line: int) -> ast.stmt | None:
        """The innermost statement spanning ``line``."""
        if self._innermost is None:  # asked once per node of a recording: one index, built once
            self._innermost = _innermost_by_line(self.tree, len(self.lines))
        return self._innermost[line] if 0 < line < len(self._innermost) else None

    def enclosing_statement(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding ``node`` (``node`` itself when it is one)."""
        holders = [
            s
            for s in ast.walk(self.tree)
            if isinstance(s, ast.stmt) and any(child is node for child in ast.walk(s))
        ]
        return min(holders, key=_span, default=None)


def end_line(node: Positioned) -> int:
    return node.end_lineno or node.lineno


def _span(node: Positioned) -> int:
    return end_line(node) - node.lineno


@lru_cache(maxsize=2)
def parsed(code: str) -> Source:
    """``code`` parsed once for all who read it unchanged: the lesson of one recording reads its
    program in every advice and fix, and parsing a 3,000-line program takes 0.1-0.5 s in one call
    that holds the interpreter (the window's GUI thread waits that long). Readers never change a
    :class:`Source` or its tree; the edits make new text. Raises ``SyntaxError`` as
    :class:`Source` does (a failed parse is not kept).

    >>> parsed("y = x\\n") is parsed("y = x\\n")
    True
    """
    return Source(code)


def _innermost_by_line(tree: ast.AST, lines: int) -> list[ast.stmt | None]:
    """For each line (index 1 to ``lines``), the innermost statement spanning it: one sweep down
    the lines with a stack of the statements open there, outer below inner (n log n, where one walk
    of the tree per line was quadratic)."""
    statements = sorted(
        (node for node in ast.walk(tree) if isinstance(node, ast.stmt)),
        key=lambda node: (node.lineno, -_span(node)),  # stable: of equal ones, the later walked wins
    )
    last = max((end_line(node) for node in statements), default=0)
    innermost: list[ast.stmt | None] = [None] * (max(lines, last) + 1)
    open_: list[ast.stmt] = []
    next_ = 0
    for line in range(1, len(innermost)):
        while next_ < len(statements) and statements[next_].lineno == line:
            open_.append(statements[next_])
            next_ += 1
        while open_ and end_line(open_[-1]) < line:
            open_.pop()
        innermost[line] = open_[-1] if open_ else None
    return innermost


def edit_text(code: str, start: int, end: int, text: str) -> str:
    return code[:start] + text + code[end:]


def _skip_blank(code: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is not space, newline or comment."""
    while i < len(code):
        if code[i] in " \t\r\n\f\\":
            i += 1
        elif code[i] == "#":
            while i < len(code) and code[i] not in "\r\n":
                i += 1
        else:
            break
    return i


# -- finding a call and editing its keywords -------------------------------------------------


def find_call(code: str, call: Call) -> tuple[int, int]:
    """The character range of ``call`` in ``code``: at its recorded place, else its unique text.

    Raises ``ValueError`` when the text no longer holds it (or holds it more than once).
    """
    source = Source(code)
    node = call_node(source, call)
    return source.start(node), source.end(node)


def call_node(source: Source, call: Call) -> ast.Call:
    calls = [n for n in ast.walk(source.tree) if isinstance(n, ast.Call)]
    place = (call.line, call.col, call.end_line, call.end_col)
    for node in calls:
        if source.char_position(node) == place:
            return node
    same_text = [n for n in calls if " ".join(source.segment(n).split()) == call.text]
    if len(same_text) == 1:
        return same_text[0]
    raise ValueError(f"the call {call.text!r} of line {call.line} is not in the program any more")


def set_call_keyword(code: str, call: Call, name: str, value: str | None) -> str:
    """``code`` with the keyword ``name=value`` added to or changed in ``call``; None removes it.

    The call is found at its recorded place (see :func:`find_call`); existing
    keywords, trailing commas and a call spread over several lines keep their shape.

    >>> code = "loss.backward(\\n    retain_graph=True,\\n)\\n"
    >>> call = Call("backward", 1, 1, 3, 2, "loss.backward( retain_graph=True, )")
    >>> print(set_call_keyword(code, call, "create_graph", "True"), end="")
    loss.backward(
        retain_graph=True,
        create_graph=True,
    )
    >>> print(set_call_keyword(code, call, "retain_graph", None), end="")
    loss.backward(
    )
    """
    source = Source(code)
    node = call_node(source, call)
    existing = next((k for k in node.keywords if k.arg == name), None)
    if existing is not None:
        if value is None:
            return _remove_argument(source, node, existing)
        return edit_text(code, source.start(existing.value), source.end(existing.value), value)
    if value is None:
        return code
    return _add_keyword(source, node, f"{name}={value}")


def _arguments(node: ast.Call) -> list[ast.expr | ast.keyword]:
    return sorted([*node.args, *node.keywords], key=lambda a: (a.lineno, a.col_offset))


def _open_paren(source: Source, node: ast.Call) -> int:
    i = _skip_blank(source.code, source.end(node.func))
    if source.code[i : i + 1] != "(":
        raise ValueError(f"cannot find the opening parenthesis of {source.segment(node)!r}")
    return i


def _close_paren(source: Source, node: ast.Call) -> int:
    close = source.end(node) - 1
    if source.code[close] != ")":
        raise ValueError(f"cannot find the closing parenthesis of {source.segment(node)!r}")
    return close


def _add_keyword(source: Source, node: ast.Call, keyword: str) -> str:
    code, close = source.code, _close_paren(source, node)
    arguments = _arguments(node)
    if not arguments:
        opening = _open_paren(source, node)
        if code[opening + 1 : close].strip() == "":
            return edit_text(code, opening + 1, close, keyword)
        return edit_text(code, opening + 1, opening + 1, keyword)  # only a comment inside
    last = arguments[-1]
    last_end = source.end(last)
    after = _skip_blank(code, last_end)
    comma = after if after < close and code[after] == "," else None
    if last.lineno > node.lineno and source.starts_line(last):  # one argument per line
        indent = source.indent(last.lineno)
        if comma is not None:
            return edit_text(code, comma + 1, comma + 1, f"\n{indent}{keyword},")
        return edit_text(code, last_end, last_end, f",\n{indent}{keyword}")
    return edit_text(code, last_end, last_end, f", {keyword}")


def _remove_argument(source: Source, node: ast.Call, argument: ast.keyword) -> str:
    code = source.code
    arguments = _arguments(node)
    i = arguments.index(argument)
    start, end = source.start(argument), source.end(argument)
    if _alone_on_lines(source, node, argument):
        return edit_text(code, source.line_start(argument.lineno), source.line_end(end_line(argument)), "")
    if i > 0:
        return edit_text(code, source.end(arguments[i - 1]), end, "")
    if len(arguments) > 1:
        return edit_text(code, start, source.start(arguments[1]), "")
    return edit_text(code, _open_paren(source, node) + 1, _close_paren(source, node), "")


def _alone_on_lines(source: Source, node: ast.Call, argument: ast.keyword) -> bool:
    """Whether ``argument`` fills its own lines: only a comma (and a comment) follow it there."""
    last = end_line(argument)
    if not source.starts_line(argument) or last >= end_line(node):
        return False
    return _blank_after(source.code[source.end(argument) : source.line_end(last)], comma=True)


def _blank_after(rest: str, *, comma: bool) -> bool:
    """Whether the rest of a line holds only spaces, a comment and (``comma``) one comma first.

    Scanned in one pass: the regular expression this replaces backtracked over runs of spaces,
    cubically (20,000 spaces before a second argument took hours).

    >>> _blank_after("  ,  # why\\n", comma=True), _blank_after(" , x=1\\n", comma=True)
    (True, False)
    """
    text = rest.strip()  # ``rest`` ends at the line's end: a comment runs to it
    if comma and text.startswith(","):
        text = text[1:].lstrip()
    return text == "" or text.startswith("#")


# -- statements ----------------------------------------------------------------------------


def _alone(source: Source, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` fills its lines (no ``;`` neighbour), so whole lines can move."""
    rest = source.code[source.end(stmt) : source.line_end(stmt.end_lineno or stmt.lineno)]
    return source.starts_line(stmt) and _blank_after(rest, comma=False)


def statement_lines(source: Source, stmt: ast.stmt) -> tuple[int, int]:
    if not _alone(source, stmt):
        raise ValueError(f"line {stmt.lineno} holds more than one statement")
    return source.line_start(stmt.lineno), source.line_end(stmt.end_lineno or stmt.lineno)


def line_ending(source: Source) -> str:
    first = source.lines[0] if source.lines else "\n"
    return "\r\n" if first.endswith("\r\n") else "\n"


def insert_before(source: Source, stmt: ast.stmt, text: str) -> str:
    start, _ = statement_lines(source, stmt)
    return edit_text(source.code, start, start, source.indent(stmt.lineno) + text + line_ending(source))


def insert_after(source: Source, stmt: ast.stmt, text: str, indent: str) -> str:
    _, end = statement_lines(source, stmt)
    code = source.code
    newline = line_ending(source)
    lead = "" if code[:end].endswith(("\n", "\r")) else newline
    return edit_text(code, end, end, lead + indent + text + newline)


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_bound(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def assigned_names(stmt: ast.stmt) -> list[str]:
    """Plain names a statement binds (``h = ...``, ``h, c = ...``, ``t += ...``)."""
    if isinstance(stmt, ast.Assign):
        targets: list[ast.expr] = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    else:
        return []
    names: list[str] = []
    for target in targets:
        elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        names += [e.id for e in elements if isinstance(e, ast.Name)]
    return names


def carried_names(body: Sequence[ast.stmt]) -> list[str]:
    """Names a loop body reads before it binds them in the same iteration: values carried over."""
    bound_here: set[str] = set()
    carried: list[str] = []
    bound_anywhere = set().union(*(names_bound(s) for s in body)) if body else set()
    for stmt in body:
        for name in sorted(names_read(stmt) - _loop_variables(stmt)):
            if name in bound_anywhere and name not in bound_here and name not in carried:
                carried.append(name)
        bound_here |= names_bound(stmt)
    return carried


def _loop_variables(stmt: ast.stmt) -> set[str]:
    """Names ``stmt``'s own loops and comprehensions bind before anything in them reads them."""
    targets = [n.target for n in ast.walk(stmt) if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension))]
    return set().union(*(names_bound(t) for t in targets)) if targets else set()


def _simple(node: ast.expr) -> bool:
    """Whether an expression binds tighter than ``+`` and ``.attr`` without parentheses."""
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))


def wrapped(source: Source, node: ast.expr) -> str:
    text = source.segment(node)
    return text if _simple(node) else f"({text})"


def loop_at(source: Source, line: int) -> ast.For | ast.While | None:
    """The ``for`` or ``while`` statement whose header starts on ``line``."""
    stmt = source.statement_at(line)
    return stmt if isinstance(stmt, (ast.For, ast.While)) and stmt.lineno == line else None


def unified_diff(old: str, new: str, path: str = "program.py") -> str:
    """``new`` against ``old`` as a unified diff (``patch -p0`` applies it to ``path``).

    >>> print(unified_diff("a\\nb\\n", "a\\nc\\n", "t.py"), end="")
    --- t.py
    +++ t.py
    @@ -1,2 +1,2 @@
     a
    -b
    +c
    """
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), path, path, lineterm="\n"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def wrap_in_block(source: Source, stmt: ast.stmt, header: str, last: ast.stmt | None = None) -> str:
    """The lines of ``stmt`` (through ``last``, a later statement of the same block) indented
    under a new ``header:`` line (``with torch.no_grad()``).

    >>> code = "w -= 0.1 * g\\nb -= 0.1 * h\\n"
    >>> first, second = Source(code).tree.body
    >>> print(wrap_in_block(Source(code), first, "with torch.no_grad()", second), end="")
    with torch.no_grad():
        w -= 0.1 * g
        b -= 0.1 * h
    """
    start, _ = statement_lines(source, stmt)
    _, end = statement_lines(source, last or stmt)
    indent, newline = source.indent(stmt.lineno), line_ending(source)
    body = source.code[start:end]
    if not body.endswith(("\n", "\r")):
        body += newline
    inner = "".join(f"    {line}" if line.strip() else line for line in io.StringIO(body, newline=""))
    return edit_text(source.code, start, end, f"{indent}{header}:{newline}{inner}")


def unwrap_block(source: Source, block: ast.With) -> str:
    """The ``with`` statement replaced by its body, moved out one indentation level.

    >>> code = "with torch.no_grad():\\n    y = f(x)\\ny.backward()\\n"
    >>> print(unwrap_block(Source(code), Source(code).tree.body[0]), end="")  # type: ignore[arg-type]
    y = f(x)
    y.backward()
    """
    start, end = statement_lines(source, block)
    outer, inner = source.indent(block.lineno), source.indent(block.body[0].lineno)
    if not inner.startswith(outer) or inner == outer or block.body[0].lineno == block.lineno:
        raise ValueError(f"the block on line {block.lineno} is not indented below its header")
    body_start = source.line_start(block.body[0].lineno)
    cut = len(inner) - len(outer)
    lines = io.StringIO(source.code[body_start:end], newline="").readlines()
    out = [line[cut:] if line[:cut].strip() == "" else line.lstrip(" \t") for line in lines]
    return edit_text(source.code, start, end, "".join(out))
