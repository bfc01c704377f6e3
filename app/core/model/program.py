"""A program: the Python a learner writes, as checked data, and the autograd calls it made.

A :class:`Program` is text plus a few words about it; nothing here runs it
(that is ``app.core.recorder``). A :class:`Call` is one ``backward`` or
``torch.autograd.grad`` call the program made while it was recorded, with
where it stands in the text, so the window can mark its line and edit its
keywords.

>>> p = Program("x = torch.ones(2, requires_grad=True)\\nx.sum().backward()\\n", title="Ones")
>>> p.lines[1]
'x.sum().backward()'
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from app.core.model.graph import LoopMark

__all__ = ["Call", "CallInfo", "CallKind", "Program"]

CallKind = Literal["backward", "grad"]
_NO_KEYWORDS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Program:
    """The program text (``code``) with its title, summary and notes.

    >>> program = Program("import torch\\nx = torch.ones(2)\\n", name="demo")
    >>> program.lines
    ['import torch', 'x = torch.ones(2)']
    """

    code: str
    name: str = "program"
    title: str = ""
    summary: str = ""
    notes: str = ""
    twin: str = ""  # the built-in that shows the same situation fixed (or broken)
    path: Path | None = field(default=None, compare=False)

    @property
    def lines(self) -> list[str]:
        return self.code.splitlines()

    def line(self, number: int) -> str:
        """Line ``number`` (counted from 1) of the code, ``""`` past either end; the code is split
        once, not at every look (a script's recorder looks at a line per line it runs).

        >>> Program("a = 1\\nb = 2\\n").line(2), Program("a = 1\\n").line(5)
        ('b = 2', '')
        """
        split = self._split
        return split[number - 1] if 0 < number <= len(split) else ""

    @functools.cached_property
    def _split(self) -> tuple[str, ...]:
        return tuple(self.code.splitlines())

    def with_code(self, code: str) -> Program:
        return replace(self, code=code)


@dataclass(frozen=True)
class Call:
    """One autograd call as the program made it: kind, place in the text, keywords as written.

    ``retain_graph`` is the value the program passed (None when it passed
    none: PyTorch's default then follows ``create_graph``).

    >>> call = Call("backward", 3, 1, 3, 19, "y.sum().backward()")
    >>> call.retain_graph, call.effective_retain
    (None, False)
    """

    kind: CallKind
    line: int  # 1-based, the line where the call expression starts
    col: int  # 1-based, in characters
    end_line: int
    end_col: int  # 1-based column just after the closing parenthesis
    text: str  # the call expression as written, e.g. "y.sum().backward(retain_graph=True)"
    keywords: Mapping[str, str] = field(default_factory=lambda: _NO_KEYWORDS)  # keyword -> source text
    retain_graph: bool | None = None
    create_graph: bool = False
    loops: tuple[LoopMark, ...] = ()

    @property
    def effective_retain(self) -> bool:
        return self.create_graph if self.retain_graph is None else self.retain_graph


@dataclass(frozen=True)
class CallInfo:
    """A recorded call: the call, its first and last step, and how it ended.

    >>> call = Call("backward", 3, 1, 3, 19, "y.sum().backward()")
    >>> info = CallInfo(0, call, first_step=1, last_step=4)
    >>> info.call.text, info.error is None
    ('y.sum().backward()', True)
    """

    index: int
    call: Call
    first_step: int
    last_step: int
    error: str | None = None
    failed_node: str | None = None
