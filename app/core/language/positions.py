"""Where in a field's text something is: 1-based lines and columns in characters.

:mod:`ast` counts columns in UTF-8 bytes; learners count characters, so every
position the language reports goes through here.
"""

from __future__ import annotations

import ast
import io
import re

from app.core.model.errors import ProgramError

__all__ = ["SourceText", "error_at", "index_position", "node_position", "source_lines"]


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


class SourceText:
    """A field's text split into lines once, for many lookups.

    :func:`ast.get_source_segment` splits the whole text again on every call,
    which made labelling a long forward block quadratic in its length.

    >>> text = SourceText("y = x.square()\\nz = y * 3")
    >>> tree = ast.parse("y = x.square()\\nz = y * 3")
    >>> text.segment(tree.body[1].value), text.segment(tree.body[0])
    ('y * 3', 'y = x.square()')
    """

    def __init__(self, source: str) -> None:
        # Splits at \r\n, \r and \n only, as the parser counts lines (str.splitlines
        # also splits at \f, \x1c ... and would shift every line after one).
        self._lines = io.StringIO(source, newline="").readlines()
        self._encoded: dict[int, bytes] = {}

    def _line(self, index: int) -> bytes:
        encoded = self._encoded.get(index)
        if encoded is None:
            encoded = self._encoded[index] = self._lines[index].encode("utf-8")
        return encoded

    def segment(self, node: ast.AST) -> str | None:
        """The text of ``node``, as :func:`ast.get_source_segment` gives it."""
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if first is None or last is None or start is None or end is None:
            return None
        if not 0 < first <= last <= len(self._lines):
            return None
        if first == last:
            return self._line(first - 1)[start:end].decode("utf-8", "replace")
        head = self._line(first - 1)[start:].decode("utf-8", "replace")
        tail = self._line(last - 1)[:end].decode("utf-8", "replace")
        return head + "".join(self._lines[first : last - 1]) + tail


def index_position(source: str, index: int) -> tuple[int, int]:
    """1-based line and column of the character at ``index``."""
    before = source[:index]
    line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
    return len(source_lines(before)), index - line_start + 1


def error_at(message: str, field: str, node: ast.AST, source: str | None) -> ProgramError:
    """A :class:`ProgramError` placed at ``node`` in ``source``."""
    line, col = node_position(source, node)
    return ProgramError(message, field=field, line=line, col=col)
