"""Positions and text of nodes, checked against :mod:`ast`'s own helpers as the oracle."""

from __future__ import annotations

import ast

import pytest

from app.core.language.positions import SourceText

SOURCES = [
    "y = x.square()\nz = (y * 3).sum()",
    "a = x\r\nb = (a +\r\n     2)\rc = b.exp()",
    "π = x * 2  # ünïcode before the columns\nσ = (π\n     .sum())\n",
    "w = x\f+ 1\nv = w",  # \f is whitespace to the parser, not a line break
    "s = 'é\x1c' \nt = x[0]",  # \x1c: str.splitlines would break here; the parser does not
    "for é in range(2):\n    if é:\n        with torch.no_grad():\n"
    "            ö = f'{é:>3}' + x\n    else:\n        del ö\n",
    "",
]


@pytest.mark.parametrize("source", SOURCES)
def test_segments_equal_ast_get_source_segment(source: str) -> None:
    text = SourceText(source)
    nodes = list(ast.walk(ast.parse(source)))
    assert nodes
    for node in nodes:
        assert text.segment(node) == ast.get_source_segment(source, node), ast.dump(node)


def test_node_outside_the_text_has_no_segment() -> None:
    node = ast.parse("x + 1").body[0]
    assert SourceText("").segment(node) is None
