"""Fixes offered at an error: edits of the program text, chosen from what the recording shows.

A :class:`Fix` is a title, a sentence saying why it works, and the whole new
program text, so the window can show its diff, record it and undo it. Every
edit is made on the text at positions :mod:`ast` reports (the program is
parsed, never run), so the learner's layout, comments and other keywords stay
as they wrote them.

>>> from app.core.model.program import Call
>>> code = "y = x.square()\\ny.sum().backward()\\n"
>>> call = Call("backward", 2, 1, 2, 19, "y.sum().backward()")
>>> set_call_keyword(code, call, "retain_graph", "True")
'y = x.square()\\ny.sum().backward(retain_graph=True)\\n'

# NOTE [fixes from the recording]
Which fix applies is read from the recording, not guessed from the text:
the failing node and the call that freed its saved tensors
(``Recording.freed_by``), the loop iteration each node was created in
(``GraphNode.loops``), and the statement that changed a saved tensor in place
(the step whose ``version_changes`` name the slot). The text only says where
to make the edit. Each fix is tested by recording the edited program: the
error it targets is gone and, where it keeps the meaning, the gradients equal
a plain PyTorch run.
"""

from __future__ import annotations

import ast
import difflib
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.model.graph import GraphNode
from app.core.model.program import Call, CallInfo
from app.core.model.recording import Recording
from app.core.model.timeline import SlotKey

__all__ = ["Fix", "changed_lines", "find_call", "fixes_for", "new_line_numbers", "set_call_keyword"]

_Positioned = ast.expr | ast.stmt | ast.keyword


@dataclass(frozen=True)
class Fix:
    """One edit of the program: what it does, why it works, and the new program text.

    ``moved``: the statement the edit moves to another line (``opt.step()``), shown as a move.
    """

    title: str
    explanation: str
    code: str
    moved: str = ""


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
    wherever a line diff places it; a removed one has no line left to show).

    >>> new_line_numbers("a\\nb\\nc\\n", "a\\nB\\nc\\nd\\n")
    [2, 4]
    """
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [
        j + 1
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for j in range(j1, j2)
    ]


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


class _Source:
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
        self._innermost: dict[int, ast.stmt | None] = {}

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def offset(self, line: int, byte_col: int) -> int:
        text = self.line_text(line)
        return self.starts[line - 1] + len(text.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

    def start(self, node: _Positioned) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: _Positioned) -> int:
        return self.offset(_end_line(node), node.end_col_offset or 0)

    def segment(self, node: _Positioned) -> str:
        return self.code[self.start(node) : self.end(node)]

    def char_position(self, node: _Positioned) -> tuple[int, int, int, int]:
        """1-based (line, col, end_line, end_col) in characters, as a :class:`Call` holds them."""
        start, end = self.start(node), self.end(node)
        line, end_line = node.lineno, _end_line(node)
        return line, start - self.starts[line - 1] + 1, end_line, end - self.starts[end_line - 1] + 1

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        """Just after the newline ending ``line`` (the text's end for a last line without one)."""
        return self.starts[min(line, len(self.lines))]

    def indent(self, line: int) -> str:
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip(" \t"))]

    def starts_line(self, node: _Positioned) -> bool:
        return self.code[self.line_start(node.lineno) : self.start(node)].strip() == ""

    def block_of(self, stmt: ast.stmt) -> tuple[ast.AST, list[ast.stmt]]:
        return self.parents[id(stmt)]

    def statement_at(self, line: int) -> ast.stmt | None:
        """The innermost statement spanning ``line``."""
        if line not in self._innermost:  # asked once per node of a recording: one walk per line
            best: ast.stmt | None = None
            for node in ast.walk(self.tree):
                if not isinstance(node, ast.stmt) or not node.lineno <= line <= _end_line(node):
                    continue
                if best is None or (node.lineno >= best.lineno and _span(node) <= _span(best)):
                    best = node
            self._innermost[line] = best
        return self._innermost[line]

    def enclosing_statement(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding ``node`` (``node`` itself when it is one)."""
        holders = [
            s
            for s in ast.walk(self.tree)
            if isinstance(s, ast.stmt) and any(child is node for child in ast.walk(s))
        ]
        return min(holders, key=_span, default=None)


def _end_line(node: _Positioned) -> int:
    return node.end_lineno or node.lineno


def _span(node: _Positioned) -> int:
    return _end_line(node) - node.lineno


def _edit(code: str, start: int, end: int, text: str) -> str:
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
    source = _Source(code)
    node = _call_node(source, call)
    return source.start(node), source.end(node)


def _call_node(source: _Source, call: Call) -> ast.Call:
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
    source = _Source(code)
    node = _call_node(source, call)
    existing = next((k for k in node.keywords if k.arg == name), None)
    if existing is not None:
        if value is None:
            return _remove_argument(source, node, existing)
        return _edit(code, source.start(existing.value), source.end(existing.value), value)
    if value is None:
        return code
    return _add_keyword(source, node, f"{name}={value}")


def _arguments(node: ast.Call) -> list[ast.expr | ast.keyword]:
    return sorted([*node.args, *node.keywords], key=lambda a: (a.lineno, a.col_offset))


def _open_paren(source: _Source, node: ast.Call) -> int:
    i = _skip_blank(source.code, source.end(node.func))
    if source.code[i : i + 1] != "(":
        raise ValueError(f"cannot find the opening parenthesis of {source.segment(node)!r}")
    return i


def _close_paren(source: _Source, node: ast.Call) -> int:
    close = source.end(node) - 1
    if source.code[close] != ")":
        raise ValueError(f"cannot find the closing parenthesis of {source.segment(node)!r}")
    return close


def _add_keyword(source: _Source, node: ast.Call, keyword: str) -> str:
    code, close = source.code, _close_paren(source, node)
    arguments = _arguments(node)
    if not arguments:
        opening = _open_paren(source, node)
        if code[opening + 1 : close].strip() == "":
            return _edit(code, opening + 1, close, keyword)
        return _edit(code, opening + 1, opening + 1, keyword)  # only a comment inside
    last = arguments[-1]
    last_end = source.end(last)
    after = _skip_blank(code, last_end)
    comma = after if after < close and code[after] == "," else None
    if last.lineno > node.lineno and source.starts_line(last):  # one argument per line
        indent = source.indent(last.lineno)
        if comma is not None:
            return _edit(code, comma + 1, comma + 1, f"\n{indent}{keyword},")
        return _edit(code, last_end, last_end, f",\n{indent}{keyword}")
    return _edit(code, last_end, last_end, f", {keyword}")


def _remove_argument(source: _Source, node: ast.Call, argument: ast.keyword) -> str:
    code = source.code
    arguments = _arguments(node)
    i = arguments.index(argument)
    start, end = source.start(argument), source.end(argument)
    if _alone_on_lines(source, node, argument):
        return _edit(code, source.line_start(argument.lineno), source.line_end(_end_line(argument)), "")
    if i > 0:
        return _edit(code, source.end(arguments[i - 1]), end, "")
    if len(arguments) > 1:
        return _edit(code, start, source.start(arguments[1]), "")
    return _edit(code, _open_paren(source, node) + 1, _close_paren(source, node), "")


def _alone_on_lines(source: _Source, node: ast.Call, argument: ast.keyword) -> bool:
    """Whether ``argument`` fills its own lines: only a comma (and a comment) follow it there."""
    end_line = _end_line(argument)
    if not source.starts_line(argument) or end_line >= _end_line(node):
        return False
    return _blank_after(source.code[source.end(argument) : source.line_end(end_line)], comma=True)


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


def _alone(source: _Source, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` fills its lines (no ``;`` neighbour), so whole lines can move."""
    rest = source.code[source.end(stmt) : source.line_end(stmt.end_lineno or stmt.lineno)]
    return source.starts_line(stmt) and _blank_after(rest, comma=False)


def _lines_of(source: _Source, stmt: ast.stmt) -> tuple[int, int]:
    if not _alone(source, stmt):
        raise ValueError(f"line {stmt.lineno} holds more than one statement")
    return source.line_start(stmt.lineno), source.line_end(stmt.end_lineno or stmt.lineno)


def _line_ending(source: _Source) -> str:
    first = source.lines[0] if source.lines else "\n"
    return "\r\n" if first.endswith("\r\n") else "\n"


def _insert_before(source: _Source, stmt: ast.stmt, text: str) -> str:
    start, _ = _lines_of(source, stmt)
    return _edit(source.code, start, start, source.indent(stmt.lineno) + text + _line_ending(source))


def _insert_after(source: _Source, stmt: ast.stmt, text: str, indent: str) -> str:
    _, end = _lines_of(source, stmt)
    code = source.code
    newline = _line_ending(source)
    lead = "" if code[:end].endswith(("\n", "\r")) else newline
    return _edit(code, end, end, lead + indent + text + newline)


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_bound(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _assigned_names(stmt: ast.stmt) -> list[str]:
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


def _carried_names(body: Sequence[ast.stmt]) -> list[str]:
    """Names a loop body reads before it binds them in the same iteration: values carried over."""
    bound_here: set[str] = set()
    carried: list[str] = []
    bound_anywhere = set().union(*(_names_bound(s) for s in body)) if body else set()
    for stmt in body:
        for name in sorted(_names_read(stmt) - _loop_variables(stmt)):
            if name in bound_anywhere and name not in bound_here and name not in carried:
                carried.append(name)
        bound_here |= _names_bound(stmt)
    return carried


def _loop_variables(stmt: ast.stmt) -> set[str]:
    """Names ``stmt``'s own loops and comprehensions bind before anything in them reads them."""
    targets = [n.target for n in ast.walk(stmt) if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension))]
    return set().union(*(_names_bound(t) for t in targets)) if targets else set()


def _simple(node: ast.expr) -> bool:
    """Whether an expression binds tighter than ``+`` and ``.attr`` without parentheses."""
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))


def _wrapped(source: _Source, node: ast.expr) -> str:
    text = source.segment(node)
    return text if _simple(node) else f"({text})"


# -- reading the recording -----------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    """What the recording says about the failed call, with the parsed text to edit."""

    recording: Recording
    source: _Source
    info: CallInfo
    node: GraphNode | None

    @property
    def code(self) -> str:
        return self.source.code

    def freeing_calls(self) -> list[CallInfo]:
        """The earlier calls that freed a saved tensor of the failing node."""
        if self.node is None:
            return []
        keys: list[SlotKey] = [(self.node.id, s.name) for s in self.node.tensor_slots]
        indices = sorted({self.recording.freed_by[k] for k in keys if k in self.recording.freed_by})
        return [self.recording.calls[i] for i in indices if i < self.info.index]

    def modifying_lines(self) -> list[int]:
        """Lines of the statements that changed a saved tensor of the failing node in place while
        the node still held it (the node's own line, which saved it, among them)."""
        if self.node is None:
            return []
        return self._writes({self.node.id}, freed=False)

    def written_lines(self) -> list[int]:
        """Lines of the statements that wrote in place, after a backward had freed them, the
        weights that the failing node or a node below it had saved (NOTE [freed leaves written] in
        the recorder): retaining the graph would not bring back their old values."""
        if self.node is None:
            return []
        return self._writes(set(self.recording.graph.reached_from([self.node.id])), freed=True)

    def _writes(self, nodes: set[str], *, freed: bool) -> list[int]:
        saved = {
            (n.id, s.name): s.saved_version
            for n in self.recording.graph.nodes
            if n.id in nodes
            for s in n.tensor_slots
        }
        states: dict[SlotKey, str] = {}
        lines: list[int] = []
        for step in self.recording.timeline.steps[: self.info.last_step]:
            for key, state in step.slot_changes.items():
                if key in saved:
                    states[key] = state
            for key, version in step.version_changes.items():
                if key not in saved or (states.get(key) == "freed") != freed:
                    continue
                if freed and version == saved[key]:
                    continue
                if step.line is not None and step.line not in lines:
                    lines.append(step.line)
        return lines

    def call_statement(self, info: CallInfo) -> ast.stmt:
        node = _call_node(self.source, info.call)
        stmt = self.source.enclosing_statement(node)
        if stmt is None:
            raise ValueError(f"no statement holds the call on line {info.call.line}")
        return stmt


def _site(call: Call) -> tuple[int, int]:
    return call.line, call.col


def fixes_for(recording: Recording, deadline: float | None = None) -> list[Fix]:
    """The edits that remove the error of ``recording``'s failed call, best first (none if it passed).

    See NOTE [fixes from the recording]. A fix whose edit cannot be made on
    this text (the call moved, a line holds two statements) is left out.
    ``deadline`` (a ``time.monotonic()`` value): the fixes found by then, and no more.
    """
    info = recording.failed
    if info is None:
        return []
    try:
        source = _Source(recording.program.code)
    except SyntaxError:
        return []
    failed = info.failed_node
    node = recording.graph.node(failed) if failed is not None and failed in recording.graph else None
    failure = _Failure(recording, source, info, node)
    fixes: list[Fix] = []
    for make in _MAKERS:
        if deadline is not None and time.monotonic() > deadline:
            break
        try:
            fix = make(failure)
        except ValueError:
            continue
        if fix is not None and fix.code != source.code and all(f.code != fix.code for f in fixes):
            ast.parse(fix.code)  # every edit must leave a program that parses
            fixes.append(fix)
    return fixes


def _freeing_sites(failure: _Failure) -> dict[tuple[int, int], Call]:
    """Where the earlier calls that freed what the failing call needs are, but the failing one's."""
    failing_site = _site(failure.info.call)
    sites: dict[tuple[int, int], Call] = {}
    for info in failure.freeing_calls():
        if _site(info.call) != failing_site:  # the same line again: the real problem is elsewhere
            sites.setdefault(_site(info.call), info.call)
    return sites


def _retain_fix(failure: _Failure) -> Fix | None:
    """``retain_graph=True`` on the earlier call(s) that freed what the failing call needs; with
    the ``opt.step()`` between them moved after both backwards when it wrote a weight the failing
    node saved (NOTE [freed leaves written] in the recorder): kept alone, the second backward would
    fail on the changed weight instead."""
    sites = _freeing_sites(failure)
    if not sites:
        return None
    code, moved = failure.code, None
    written = failure.written_lines()
    if written:
        if not all(_is_step_line(failure.source, line) for line in written):
            return None  # something else wrote the weights in place: retaining cannot help
        moved = _step_moved(failure, written)
        if moved is None:
            return None
        code = moved[0]  # the freeing calls come before the step: their positions hold
    for site in sorted(sites, reverse=True):  # later calls first: earlier positions stay valid
        code = set_call_keyword(code, sites[site], "retain_graph", "True")
    lines = ", ".join(str(line) for line, _ in sorted(sites))
    word = "line" if len(sites) == 1 else "lines"
    why = (
        f"The call on {word} {lines} freed the saved tensors this call needs. With retain_graph=True "
        "it keeps them, so the graph can be walked again (at the cost of holding its memory)."
    )
    if moved is None:
        return Fix(f"retain_graph=True on {word} {lines}", why, code)
    step, taken_after = moved[1], moved[2]
    return Fix(
        f"retain_graph=True on {word} {lines}, {step} after both backwards",
        f"{why} {step} also changed in place weights the graph saved, so it moves after the second "
        "backward: retaining alone would fail on the changed weights.",
        code,
        moved="" if taken_after else step.strip(),
    )


def _backward_receiver(source: _Source, stmt: ast.stmt) -> ast.expr | None:
    """``A`` of a statement that is exactly ``A.backward()`` (retain_graph alone allowed)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "backward" or call.args:
        return None
    if any(k.arg != "retain_graph" for k in call.keywords):
        return None
    return call.func.value


_GRAD_EFFECTS = {"backward", "grad", "step", "zero_grad"}


def _touches_grads(stmt: ast.stmt) -> bool:
    """Whether a statement reads or changes gradients, so it must see each backward's effect."""
    return any(isinstance(node, ast.Attribute) and node.attr in _GRAD_EFFECTS for node in ast.walk(stmt))


def _summed_fix(failure: _Failure) -> Fix | None:
    """One backward of the two losses added: ``(A + B).backward()`` in place of the two calls."""
    earlier = failure.freeing_calls()
    if len(earlier) != 1 or failure.info.call.kind != "backward" or earlier[0].call.kind != "backward":
        return None
    source = failure.source
    first, second = failure.call_statement(earlier[0]), failure.call_statement(failure.info)
    owner, block = source.block_of(first)
    if not isinstance(owner, ast.Module) or source.block_of(second)[1] is not block:
        return None  # only top-level statements: in a loop, each call runs more than once
    a, b = _backward_receiver(source, first), _backward_receiver(source, second)
    if a is None or b is None or first.lineno >= second.lineno:
        return None
    between = block[block.index(first) + 1 : block.index(second)]
    rebound = set().union(*(_names_bound(s) for s in between)) if between else set()
    if rebound & (_names_read(a) | _names_read(b)) or any(_touches_grads(s) for s in between):
        return None
    summed = f"({_wrapped(source, a)} + {_wrapped(source, b)}).backward()"
    start, end = _lines_of(source, second)
    code = _edit(source.code, start, end, "")
    code = _edit(code, source.start(first), source.end(first), summed)
    return Fix(
        "add the losses, one backward",
        "Adding the two losses and calling backward once walks the shared graph a single time and "
        "gives the same gradients, with nothing retained.",
        code,
    )


def _detach_shared_fix(failure: _Failure) -> Fix | None:
    """``fake.detach()`` in the earlier loss, when an optimizer step between the two calls shows that
    each loss trains its own part (a GAN's discriminator step must not walk the generator)."""
    freeing, node = failure.freeing_calls(), failure.node
    if len(freeing) != 1 or node is None or node.line is None:
        return None
    if _site(freeing[0].call) == _site(failure.info.call):
        return None
    source = failure.source
    first, second = failure.call_statement(freeing[0]), failure.call_statement(failure.info)
    _, block = source.block_of(first)
    if second not in block or block.index(first) > block.index(second):
        return None
    if not any(_is_step(s) for s in block[block.index(first) + 1 : block.index(second)]):
        return None
    if failure.written_lines():  # that step updated the shared part's own weights: the first
        return None  # loss trains it too, and a detach would stop that
    made = source.statement_at(node.line)
    names = _assigned_names(made) if made is not None else []
    if len(names) != 1:
        return None
    shared, loss = names[0], _loss_statement(source, first, block)
    uses = [
        n
        for n in ast.walk(loss)
        if isinstance(n, ast.Name) and n.id == shared and isinstance(n.ctx, ast.Load)
    ]
    if not uses:
        return None
    code = source.code
    for use in sorted(uses, key=source.start, reverse=True):
        code = _edit(code, source.start(use), source.end(use), f"{shared}.detach()")
    return Fix(
        f"{shared}.detach() in the loss on line {loss.lineno}",
        f"The loss on line {loss.lineno} reaches back through {shared} into the graph that made it, so "
        f"its backward freed that graph before the later loss could use it. With {shared}.detach() "
        f"there, that loss trains only its own part and leaves the graph behind {shared} alone.",
        code,
    )


def _loss_statement(source: _Source, call_statement: ast.stmt, block: list[ast.stmt]) -> ast.stmt:
    """Where the loss of ``loss.backward()`` was computed: the last assignment to ``loss`` before it
    in the same block, else the call's statement itself."""
    if isinstance(call_statement, ast.Expr) and isinstance(call_statement.value, ast.Call):
        func = call_statement.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = func.value.id
            earlier = block[: block.index(call_statement)]
            assigned = [s for s in earlier if name in _assigned_names(s)]
            if assigned:
                return assigned[-1]
    return call_statement


def _loop_at(source: _Source, line: int) -> ast.For | None:
    stmt = source.statement_at(line)
    return stmt if isinstance(stmt, ast.For) and stmt.lineno == line else None


def _earlier_iteration_loop(failure: _Failure) -> ast.For | None:
    """The loop whose earlier iteration made the failing node, while the call runs in a later one."""
    if failure.node is None:
        return None
    made = {mark.line: mark.index for mark in failure.node.loops}
    for mark in reversed(failure.info.call.loops):
        if mark.line in made and made[mark.line] < mark.index:
            return _loop_at(failure.source, mark.line)
    return None


def _detach_carried_fix(failure: _Failure) -> Fix | None:
    """``h = h.detach()`` at the end of the loop whose carried value reaches an old graph."""
    loop = _earlier_iteration_loop(failure)
    if loop is None or failure.node is None or failure.node.line is None:
        return None
    source = failure.source
    carried = _carried_names(loop.body)
    made_there = source.statement_at(failure.node.line)
    names = [n for n in (_assigned_names(made_there) if made_there else []) if n in carried]
    if not names and len(carried) == 1:
        names = carried
    if not names:
        return None
    indent = source.indent(loop.body[0].lineno)
    newline = _line_ending(source)
    lines = (newline + indent).join(f"{name} = {name}.detach()" for name in names)
    detached = _insert_after(source, loop.body[-1], lines, indent)
    code = _drop_band_aids(detached, failure.recording.calls, loop)
    shown = ", ".join(names)
    return Fix(
        f"{names[0]}.detach() at the end of each iteration"
        if len(names) == 1
        else f"detach {shown} at the end of each iteration",
        f"{shown} is carried into the next iteration and still points into the graph of the one "
        "before, which its backward already used. Detaching keeps the values and drops that old "
        "graph, so each iteration's backward walks only its own."
        + (" The retain_graph=True that hid this is no longer needed." if code != detached else ""),
        code,
    )


def _drop_band_aids(code: str, calls: Sequence[CallInfo], loop: ast.For) -> str:
    """Remove ``retain_graph=True`` from the calls inside ``loop`` (sites once, later ones first)."""
    end = loop.end_lineno or loop.lineno
    sites = {
        _site(i.call): i.call
        for i in calls
        if loop.lineno < i.call.line <= end and i.call.keywords.get("retain_graph") == "True"
    }
    for site in sorted(sites, reverse=True):
        code = set_call_keyword(code, sites[site], "retain_graph", None)
    return code


def _recompute_inside_fix(failure: _Failure) -> Fix | None:
    """Compute, inside the loop, a value made once before it whose graph each iteration walks."""
    node = failure.node
    if node is None or node.line is None or not failure.info.call.loops:
        return None
    loop = _loop_at(failure.source, failure.info.call.loops[-1].line)
    if loop is None or any(mark.line == loop.lineno for mark in node.loops):
        return None
    if not any(_site(i.call) == _site(failure.info.call) for i in failure.freeing_calls()):
        return None  # freed by this same line in an earlier iteration
    source = failure.source
    made = source.statement_at(node.line)
    if not isinstance(made, ast.Assign) or made.end_lineno != made.lineno:
        return None
    names = _assigned_names(made)
    _, block = source.block_of(made)
    if len(names) != 1 or loop not in block or block.index(made) > block.index(loop):
        return None
    name = names[0]
    if name in _names_bound(loop) or name not in _names_read(loop):
        return None
    text = source.segment(made)
    between = block[block.index(made) + 1 : block.index(loop)]
    code = _insert_before(source, loop.body[0], text)
    if not any(name in _names_read(s) for s in between):
        start, end = _lines_of(source, made)  # the loop's edit is later in the text: offsets hold
        code = _edit(code, start, end, "")
    return Fix(
        f"compute {name} inside the loop",
        f"{name} was computed once, before the loop, so every iteration's backward walks the same "
        "graph, which the first backward freed. Computed inside the loop, each iteration has its own.",
        code,
    )


def _in_place_target(stmt: ast.stmt) -> str | None:
    """``b`` of ``b[1] = 2.0``, ``b += 1``, ``b[0] += 1`` or ``b.zero_()``: a tensor written in place."""
    target: ast.expr | None = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0].value
    elif isinstance(stmt, ast.AugAssign):
        target = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
            target = func.value
    return target.id if isinstance(target, ast.Name) else None


def _clone_fix(failure: _Failure) -> Fix | None:
    """``b = b.clone()`` before the statement that wrote into a saved tensor in place."""
    source = failure.source
    for line in failure.modifying_lines():
        stmt = source.statement_at(line)
        name = _in_place_target(stmt) if stmt is not None else None
        if stmt is None or name is None:
            continue
        return Fix(
            f"{name}.clone() before the in-place write on line {line}",
            f"Line {line} writes into {name}, whose memory autograd saved for the backward. "
            f"Writing into a copy (clone) leaves the saved values as they were.",
            _insert_before(source, stmt, f"{name} = {name}.clone()"),
        )
    return None


def _is_step_line(source: _Source, line: int) -> bool:
    stmt = source.statement_at(line)
    return stmt is not None and _is_step(stmt)


def _is_step(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "step"
    )


def _step_receiver(stmt: ast.stmt) -> str:
    assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
    assert isinstance(stmt.value.func, ast.Attribute)
    return ast.unparse(stmt.value.func.value)


def _step_moved(failure: _Failure, lines: list[int]) -> tuple[str, str, bool] | None:
    """The program with the ``opt.step()`` on ``lines`` moved after the failing backward, the step's
    text, and whether the program already took that step after it (then the early one only goes).

    None when that is not one step of the failing call's block between two backwards, or when the
    block steps more than one optimizer: moving D's step after G's backward would train D on G's
    loss too (a GAN), which no fix may do quietly.
    """
    source = failure.source
    second = failure.call_statement(failure.info)
    _, block = source.block_of(second)
    steps = [source.statement_at(line) for line in lines]
    steps = [s for s in steps if s is not None and _is_step(s)]
    if len(steps) != 1 or len({_step_receiver(s) for s in block if _is_step(s)}) > 1:
        return None
    step = steps[0]
    if step not in block or block.index(step) > block.index(second):
        return None
    if not any(_calls_backward(s) for s in block[: block.index(step)]):
        return None
    text = source.segment(step)
    later = block[block.index(second) + 1 :]
    taken_after = any(_is_step(s) and source.segment(s) == text for s in later)
    # the same step after the second backward already: only the early one goes
    code = source.code if taken_after else _insert_after(source, second, text, source.indent(second.lineno))
    start, end = _lines_of(source, step)  # before the insertion: its offsets hold
    return _edit(code, start, end, ""), text, taken_after


def _step_after_fix(failure: _Failure) -> Fix | None:
    """Move ``opt.step()`` after the failing backward: both backwards, then one update. Not when an
    earlier call freed what the failing one needs: ``_retain_fix`` moves it too, then."""
    if _freeing_sites(failure):
        return None
    moved = _step_moved(failure, failure.modifying_lines())
    if moved is None:
        return None
    code, text, taken_after = moved
    return Fix(
        f"{text} after both backwards",
        f"{text} changed a weight in place that the graph saved for the second backward. "
        "Taking the step after every backward has run updates the weights once, with all gradients in."
        + (
            f" The program takes {text} after the second backward already: the early one goes."
            if taken_after
            else ""
        ),
        code,
        moved="" if taken_after else text.strip(),
    )


def _calls_backward(stmt: ast.stmt) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "grad")
        for n in ast.walk(stmt)
    )


_MAKERS: tuple[Callable[[_Failure], Fix | None], ...] = (
    _detach_carried_fix,
    _recompute_inside_fix,
    _clone_fix,
    _step_after_fix,
    _detach_shared_fix,
    _retain_fix,
    _summed_fix,
)
