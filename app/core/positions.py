"""Where in a field's text something is: 1-based lines and columns in characters.

:mod:`ast` counts columns in UTF-8 bytes; learners count characters, so every
position the language reports goes through here.
"""

from __future__ import annotations

import ast
import re

from .errors import ScenarioError

__all__ = ["error_at", "index_position", "node_position", "source_lines"]


def source_lines(source: str) -> list[str]:
    """The lines of ``source``, split at any of ``\\r\\n``, ``\\r`` and ``\\n``."""
    return re.split(r"\r\n|\r|\n", source)


def node_position(source: str | None, node: ast.AST) -> tuple[int | None, int | None]:
    """1-based line and column (in characters, not UTF-8 bytes) of ``node``."""
    line = getattr(node, "lineno", None)
    byte_col = getattr(node, "col_offset", None)
    if line is None or byte_col is None:
        return line, None
    lines = source_lines(source) if source else []
    if 0 < line <= len(lines):
        return line, len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore")) + 1
    return line, byte_col + 1


def index_position(source: str, index: int) -> tuple[int, int]:
    """1-based line and column of the character at ``index``."""
    before = source[:index]
    line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
    return len(source_lines(before)), index - line_start + 1


def error_at(message: str, field: str, node: ast.AST, source: str | None) -> ScenarioError:
    """A :class:`ScenarioError` placed at ``node`` in ``source``."""
    line, col = node_position(source, node)
    return ScenarioError(message, field=field, line=line, col=col)
