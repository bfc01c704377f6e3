"""Parsing scenario text, and everything that can be refused without running it.

:func:`parse` reads text with :mod:`ast` (never ``eval``/``exec``) and walks
the tree once against the tables in ``grammar.py``: refused syntax, private
or denied names and attributes, members that ``torch`` and ``F`` do not list,
oversized text, trees nested too deeply.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from typing import Any, Literal

from app.core.language.grammar import (
    ALLOWED_NODES,
    FORBIDDEN_NAMES,
    REFUSALS,
    attribute_refusal,
    missing_member,
)
from app.core.language.limits import MAX_DEPTH, MAX_SOURCE_CHARS, MAX_TEXT
from app.core.language.positions import error_at, index_position, source_lines
from app.core.language.whitelist import Namespace, build_namespaces
from app.core.model.errors import ScenarioError
from app.core.pacing import pace

__all__ = ["SOURCE_ATTR", "Mode", "assigned_names", "free_names", "parse"]

Mode = Literal["eval", "exec"]
PARSE_PIECE_CHARS = 16_000  # longer programs are parsed in pieces of about this size
SOURCE_ATTR = "lens_source"  # parse() leaves the text on the tree, for columns in characters


def parse(source: str, *, field: str, mode: Mode) -> ast.AST:
    """Parse and statically check scenario text; raise :class:`ScenarioError`.

    >>> try:
    ...     parse("x.__class__", field="calls[0].loss", mode="eval")
    ... except ScenarioError as exc:
    ...     print(exc.where(), "|", exc.message)
    calls[0].loss, line 1, column 1 | attribute '__class__' is private: names starting with _ are refused
    """
    _check_text(source, field, mode)
    tree = _parse_python(source, field, mode)
    _StaticChecker(source, field).check(tree)
    setattr(tree, SOURCE_ATTR, source)
    return tree


def _check_text(source: str, field: str, mode: Mode) -> None:
    """Refuse what is not text, too long, or (for an expression) empty."""
    if not isinstance(source, str):
        raise ScenarioError(f"expected text, got {type(source).__name__}", field=field)
    if len(source) > MAX_SOURCE_CHARS:
        line, col = index_position(source, MAX_SOURCE_CHARS)
        raise ScenarioError(
            f"this text is {len(source):,} characters long; the limit is {MAX_SOURCE_CHARS:,}",
            field=field,
            line=line,
            col=col,
        )
    if mode == "eval" and not source.strip():
        raise ScenarioError("this is empty: write an expression, e.g. y.sum()", field=field, line=1, col=1)


def _parse_python(source: str, field: str, mode: Mode) -> ast.AST:
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not for learners
            warnings.simplefilter("ignore")
            long = mode == "exec" and len(source) > PARSE_PIECE_CHARS and "\r" not in source
            tree = _parse_in_pieces(source) if long else None
            return tree if tree is not None else ast.parse(source, mode=mode)
    except SyntaxError as exc:
        line, col = exc.lineno, exc.offset
        if line is None and "\x00" in source:
            line, col = index_position(source, source.index("\x00"))
        line, col = (None if n is None else max(n, 1) for n in (line, col))  # Python says 0 at the very end
        message = _syntax_message(exc.msg)
        raise ScenarioError(message, field=field, line=line, col=col) from None
    except (RecursionError, MemoryError):
        line, col = _deep_line(source)
        message = f"this is nested too deeply to read (the limit is {MAX_DEPTH} levels)"
        raise ScenarioError(message, field=field, line=line, col=col) from None
    except ValueError as exc:  # NUL bytes on older Pythons, integers over 4300 digits
        raise ScenarioError(f"this is not valid Python: {exc}", field=field) from None


def _parse_in_pieces(source: str) -> ast.Module | None:
    """The module parsed ~PARSE_PIECE_CHARS at a time, or None when a piece does not parse alone.

    One ``ast.parse`` of a 5,000-node scenario holds the GIL ~50 ms (NOTE [pacing]). Pieces are
    cut only before a line that starts in column 0; if each piece parses on its own, the tokenizer
    was in its starting state at every cut (no open bracket, string, continuation or block
    header), so the pieces' statements are exactly the whole text's. Any piece that fails sends
    the caller back to one parse of the whole text, which gives Python's own error. Each piece
    is preceded by blank lines so its line numbers are the whole text's. Lines are split at
    ``\n`` only, as the tokenizer does (``str.splitlines`` also splits at form feeds, and a
    comment holding one would be cut in two); the caller keeps text with ``\r`` whole.
    """
    lines = [line + "\n" for line in source.split("\n")]
    lines[-1] = lines[-1][:-1]
    body: list[ast.stmt] = []
    start, size = 0, 0
    for number, line in enumerate(lines):
        if size >= PARSE_PIECE_CHARS and line[:1] not in ("", " ", "\t", "\n", "\r", "\f"):
            if not _parse_piece(lines, start, number, body):
                return None
            start, size = number, 0
        size += len(line)
    if not _parse_piece(lines, start, len(lines), body):
        return None
    return ast.Module(body=body, type_ignores=[])


def _parse_piece(lines: list[str], start: int, end: int, body: list[ast.stmt]) -> bool:
    pace()  # NOTE [pacing]: between pieces, the GUI thread may take its turn
    try:
        piece = ast.parse("\n" * start + "".join(lines[start:end]), mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    body.extend(piece.body)
    return True


def _syntax_message(msg: str) -> str:
    if "null bytes" in msg:
        return "this text contains a NUL character (\\0), which is not allowed"
    return f"this is not valid Python: {msg}"


def _deep_line(source: str) -> tuple[int | None, int | None]:
    """The first line that is too deep on its own (Python's parser gives no position)."""
    for number, text in enumerate(source_lines(source), start=1):
        stripped = text.strip()
        try:
            ast.parse(stripped)
        except (RecursionError, MemoryError):
            return number, len(text) - len(text.lstrip()) + 1
        except Exception:  # an incomplete line on its own: expected, skip it
            continue
    return None, None


class _StaticChecker:
    """Everything that can be refused without running anything."""

    def __init__(self, source: str, field: str) -> None:
        self.source = source
        self.field = field
        self.builtins = build_namespaces()

    def error(self, message: str, node: ast.AST) -> ScenarioError:
        return error_at(message, self.field, node, self.source)

    def check(self, tree: ast.AST) -> None:
        # Iterative, so a deep tree cannot overflow our own stack. Operators and
        # contexts carry no position: they are reported at their expression.
        stack: list[tuple[ast.AST, int, ast.AST]] = [(tree, 0, tree)]
        while stack:
            pace()  # NOTE [pacing]
            node, depth, anchor = stack.pop()
            anchor = node if hasattr(node, "lineno") else anchor
            if depth > MAX_DEPTH and node is anchor:  # operators and contexts are leaves: not counted
                raise self.error(f"this is nested more than {MAX_DEPTH} levels deep: split it up", anchor)
            self.check_node(node, anchor)
            children = list(ast.iter_child_nodes(node))
            stack.extend((child, depth + 1, anchor) for child in reversed(children))

    def check_node(self, node: ast.AST, anchor: ast.AST) -> None:
        kind = type(node)
        if kind in REFUSALS:
            raise self.error(REFUSALS[kind], anchor)
        if not isinstance(node, ALLOWED_NODES):
            raise self.error(f"{kind.__name__} is not part of the scenario language", anchor)
        if isinstance(node, ast.Name):
            self.check_name(node)
        elif isinstance(node, ast.Attribute):
            self.check_attribute(node)
        elif isinstance(node, ast.keyword) and node.arg is None:
            raise self.error("**keyword unpacking is not allowed: pass each keyword on its own", node)
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.Assign):
            self.check_targets(node.targets)
        elif isinstance(node, ast.AugAssign) and not isinstance(node.target, ast.Name):
            raise self.error("only a plain name can be updated with an operator like +=", node)
        elif isinstance(node, ast.Call) and not isinstance(node.func, (ast.Name, ast.Attribute)):
            raise self.error("only named functions and methods can be called", node.func)

    def check_name(self, node: ast.Name) -> None:
        if node.id.startswith("_"):
            raise self.error(f"name '{node.id}' is private: names starting with _ are refused", node)
        if node.id in FORBIDDEN_NAMES:
            raise self.error(f"'{node.id}' is not available in scenarios: {FORBIDDEN_NAMES[node.id]}", node)
        if isinstance(node.ctx, ast.Store) and node.id in self.builtins:
            raise self.error(f"'{node.id}' is a built-in name and cannot be assigned", node)

    def check_attribute(self, node: ast.Attribute) -> None:
        refusal = attribute_refusal(node.attr)
        if refusal is not None:
            raise self.error(refusal, node)
        owner = _static_namespace(node.value, self.builtins)
        if owner is not None and node.attr not in owner.members:
            raise self.error(missing_member(owner, node.attr), node)

    def check_constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes):
            raise self.error("bytes literals are not allowed", node)
        if isinstance(node.value, str) and len(node.value) > MAX_TEXT:
            raise self.error(f"text constants are limited to {MAX_TEXT:,} characters", node)

    def check_targets(self, targets: list[ast.expr]) -> None:
        for target in targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            for name in names:
                if not isinstance(name, ast.Name):
                    message = "only plain names can be assigned (y = ..., or a, b = ...)"
                    raise self.error(message, name)


def _static_namespace(node: ast.expr, builtins: dict[str, Any]) -> Namespace | None:
    """The module ``node`` names, when that is known without running anything."""
    if isinstance(node, ast.Name):
        value = builtins.get(node.id)
        return value if isinstance(value, Namespace) else None
    if isinstance(node, ast.Attribute):
        owner = _static_namespace(node.value, builtins)
        member = owner.members.get(node.attr) if owner is not None else None
        return member if isinstance(member, Namespace) else None
    return None


def free_names(tree: ast.AST) -> Iterator[ast.Name]:
    """Names read by ``tree`` (in source order)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield node


def assigned_names(statement: ast.stmt) -> list[str]:
    """Names a statement binds."""
    if isinstance(statement, ast.Assign):
        out: list[str] = []
        for target in statement.targets:
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            out.extend(e.id for e in elts if isinstance(e, ast.Name))
        return out
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []
