"""What ``t.grad_fn`` gives a program: a view of one node of PyTorch's graph, read-only.

# NOTE [grad_fn views]
Snippets print ``y.grad_fn`` to show the graph exists, test ``x.grad_fn is None`` to tell a leaf,
and walk ``grad_fn.next_functions`` to draw it. The node itself also answers ``register_hook``,
``register_prehook`` and its saved tensors (``_saved_self``), which would run Python of the
program's inside backward or read what the recording must track, so a program never holds it:
``t.grad_fn`` is a :class:`GradFnView` that lists ``name()``, ``next_functions`` (views, and
the input numbers) and an AccumulateGrad node's ``variable`` (the leaf), prints as PyTorch
prints the node, and is None where PyTorch's is None. The view holds the node, as a plain
program holding ``y.grad_fn`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.language.objects import Checked

__all__ = ["GradFnView", "grad_fn_view"]


class GradFnView(Checked):
    """One node of the graph, as ``t.grad_fn`` or ``next_functions`` gives it (NOTE [grad_fn views])."""

    kind = "a grad_fn node"

    def __init__(self, node: Any) -> None:
        self._node = node

    def get_attribute(self, name: str) -> Any:
        if name == "next_functions":
            return tuple((grad_fn_view(fn), index) for fn, index in self._node.next_functions)
        if name == "variable" and hasattr(self._node, "variable"):  # AccumulateGrad: its leaf
            return self._node.variable
        raise KeyError(name)

    def method(self, name: str) -> Callable[..., Any]:
        if name != "name":
            raise KeyError(name)
        node = self._node
        return lambda: str(node.name())

    def members(self) -> list[str]:
        found = ["name", "next_functions"]
        return [*found, "variable"] if hasattr(self._node, "variable") else found

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradFnView) and other._node is self._node

    def __hash__(self) -> int:
        return id(self._node)

    def __repr__(self) -> str:
        return repr(self._node)  # <MulBackward0 object at 0x...>, as PyTorch prints it


def grad_fn_view(node: Any) -> GradFnView | None:
    """The view of ``node`` (a tensor's ``grad_fn``), or None where there is none."""
    return None if node is None else GradFnView(node)
