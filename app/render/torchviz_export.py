"""torchviz's own picture of a program's graph before its first backward: ``make_dot``'s DOT and SVG.

The DOT is made where the program ran, in the recording child
(``app.core.recorder.first_backward``), so it is text from another process:
before ``dot`` reads it here, every statement must be one ``make_dot`` writes
(a node, an edge, the graph and node defaults) with only the attributes it uses.
An attribute such as ``image`` or ``shapefile`` would have ``dot`` read a file of
this machine into the SVG.

>>> check_make_dot_source('digraph {\\n\\t1 [label="x\\n (2)" fillcolor=lightblue]\\n\\t1 -> 2\\n}\\n')
>>> check_make_dot_source('digraph {\\n\\t1 [image="/etc/passwd"]\\n}\\n')
Traceback (most recent call last):
    ...
app.render.layout.LayoutError: this is not torchviz's DOT: 1 [image=Q]
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from app.render.dot_source import readable
from app.render.layout import INSTALL_HINT, LayoutError

__all__ = ["DOT_FILE", "SVG_FILE", "check_make_dot_source", "shared_source", "write_torchviz"]

DOT_FILE = "torchviz.dot"
SVG_FILE = "torchviz.svg"
TIMEOUT_S = 120.0  # make_dot draws long edges as they come: a training loop's graph takes seconds

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_ATTRIBUTES = "label|fillcolor|dir|style|size|align|fontname|fontsize|height|ranksep|shape"
_LIST = rf"\[(?:{_ATTRIBUTES})=(?:Q|[\w.,]+)(?: (?:{_ATTRIBUTES})=(?:Q|[\w.,]+))*\]"
_STATEMENT = re.compile(rf"(?:digraph \{{|\}}|(?:graph|node) {_LIST}|\d+ {_LIST}|\d+ -> \d+(?: {_LIST})?)")


def check_make_dot_source(source: str) -> None:
    """Raise :class:`LayoutError` unless every statement of ``source`` is one ``make_dot`` writes."""
    for line in _QUOTED.sub("Q", source).splitlines():
        if line.strip() and _STATEMENT.fullmatch(line.strip()) is None:
            raise LayoutError(f"this is not torchviz's DOT: {line.strip()[:80]}")


_NODE_ID = re.compile(r"(?m)(^\s*|-> )(\d+)\b")
_PLACE = re.compile(r"\x00(\d+)\x00")


def shared_source(source: str) -> str:
    """``make_dot``'s DOT with no address of the process that made it and nothing Graphviz cannot
    copy into its SVG: node ids (``str(id(fn))``, Python object addresses) numbered in order of
    first use, and each quoted name as :func:`app.render.dot_source.readable` gives Graphviz names.

    >>> shared_source('digraph {\\n\\t140211 [label="w\\x01"]\\n\\t93 -> 140211\\n}\\n')
    'digraph {\\n\\t0 [label="w\\\\\\\\x01"]\\n\\t1 -> 0\\n}\\n'
    """
    quoted: list[str] = []

    def hold(match: re.Match[str]) -> str:
        quoted.append(match.group())
        return f"\x00{len(quoted) - 1}\x00"

    numbers: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        return f"{match.group(1)}{numbers.setdefault(match.group(2), len(numbers))}"

    masked = _NODE_ID.sub(number, _QUOTED.sub(hold, source.replace("\x00", " ")))
    return _PLACE.sub(lambda m: _readable_quoted(quoted[int(m.group(1))]), masked)


def _readable_quoted(quoted: str) -> str:
    """A DOT string as written (its escapes kept), its unprintable characters as visible escapes."""
    return "".join(c if c.isprintable() or c in "\n\t" else "\\" + readable(c) for c in quoted)


def write_torchviz(source: str, folder: str | Path) -> list[Path]:
    """Write ``make_dot``'s DOT to ``folder``/torchviz.dot and Graphviz's SVG of it beside it."""
    check_make_dot_source(source)
    source = shared_source(source)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    dot_path, svg_path = out / DOT_FILE, out / SVG_FILE
    dot_path.write_text(source, encoding="utf-8")
    exe = shutil.which("dot")
    if exe is None:
        raise LayoutError(
            f"wrote {dot_path}, but Graphviz 'dot' was not found on PATH to draw it; {INSTALL_HINT}"
        )
    try:
        done = subprocess.run(
            [exe, "-Tsvg", "-o", str(svg_path), str(dot_path)],
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise LayoutError(f"wrote {dot_path}, but dot took longer than {TIMEOUT_S:g} s to draw it") from None
    except OSError as exc:
        raise LayoutError(
            f"wrote {dot_path}, but Graphviz 'dot' could not start ({exc.strerror or exc})"
        ) from None
    if done.returncode != 0 or not svg_path.exists():
        said = " ".join(done.stderr.decode("utf-8", "replace").split())[:300]
        raise LayoutError(f"wrote {dot_path}, but dot failed to draw it (status {done.returncode}): {said}")
    return [dot_path, svg_path]
