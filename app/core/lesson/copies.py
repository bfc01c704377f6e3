"""Names that hold a copy of a leaf: what their ``.grad`` is, as PyTorch says it.

``inputs.requires_grad = True`` then ``inputs = inputs.to(device)``: the leaf is shown as
``inputs (line 5)``, the line that named it (``LeafNames.rebound``), and the name ``inputs`` now
holds a copy that is not a leaf. PyTorch leaves that copy's ``.grad`` None, warning that the
``.grad`` of a non-leaf is not filled by ``backward()``. The recording says so by the leaf's name
alone: a leaf ``X (line N)`` whose ``X`` is no leaf of the recording.

>>> copied_names({"inputs (line 5)": "n1", "w": "n2"})
{'inputs': 'inputs (line 5)'}
>>> copy_grad_text("inputs", "inputs (line 5)").split(":")[0]
'inputs.grad = None'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["copied_names", "copy_grad_text"]

_LOST = re.compile(r"(?P<name>\S+) \(line \d+\)")


def copied_names(leaves: Iterable[str]) -> dict[str, str]:
    """Each name that now holds a non-leaf copy of a leaf -> the leaf's row (``inputs (line 5)``)."""
    names = set(leaves)
    copies: dict[str, str] = {}
    for leaf in names:
        lost = _LOST.fullmatch(leaf)
        if lost is not None and lost["name"] not in names:
            copies.setdefault(lost["name"], leaf)
    return dict(sorted(copies.items()))


def copy_grad_text(name: str, leaf: str) -> str:
    """``name.grad`` as PyTorch shows it (None), and why, in PyTorch's words and ours."""
    return (
        f"{name}.grad = None: {name} now holds a copy that is not a leaf (made from the leaf {leaf}), "
        "and PyTorch warns that the .grad of a tensor that is not a leaf is not filled by backward(). "
        f"The gradient went to {leaf}.grad; call .retain_grad() on the copy to keep its own, "
        "or set requires_grad after the copy is made."
    )
