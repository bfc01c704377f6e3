"""Leaf naming: which leaf tensors get a ``.grad`` row, and by what name.

A leaf is named by the name the program holds it by (``x``, a module parameter's path
``lin.weight``) when it is first bound or when a graph first reaches it; a leaf made inline gets
``leaf<k>``, clashing with no name in use. A name that comes to hold another leaf keeps both rows
apart (``w`` and ``w1``). A name that comes to hold a copy (``inputs = inputs.to(device)``) before
its leaf had a gradient leaves the leaf under ``inputs (line 17)``, the line that named it:
``inputs`` itself now holds a non-leaf whose ``.grad`` PyTorch leaves None. Who holds what is the
recorder's to say: ``name_of`` finds a tensor's name, ``in_use`` says whether a name is taken.

>>> import torch
>>> from app.core.recorder.capture import GraphCapture
>>> w = torch.ones(2, requires_grad=True)
>>> capture = GraphCapture()
>>> _ = capture.add_roots([(w * torch.ones(2, requires_grad=True)).grad_fn])
>>> leaves = LeafNames(capture, name_of=lambda t: "w" if t is w else None, in_use=lambda n: False)
>>> for node_id in capture.fns:
...     variable = capture.leaf_variable(node_id)
...     if variable is not None:
...         leaves.name_node(node_id, variable)
>>> leaves.nodes
{'w': 'n1', 'leaf1': 'n2'}
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from app.core.recorder.capture import GraphCapture

__all__ = ["LeafNames"]


class LeafNames:
    """The leaves of a recording: each name's tensor, and its latest ``AccumulateGrad`` node."""

    def __init__(
        self,
        capture: GraphCapture,
        *,
        name_of: Callable[[torch.Tensor], str | None],
        in_use: Callable[[str], bool],
    ) -> None:
        self.capture = capture
        self._name_of = name_of
        self._in_use = in_use
        self.nodes: dict[str, str] = {}  # leaf name -> its latest AccumulateGrad node id ("" before)
        self.tensors: dict[str, torch.Tensor] = {}  # leaf name -> the leaf itself
        self._names: dict[int, str] = {}  # id of a leaf in ``tensors`` -> its name there
        self.names: dict[str, str] = {}  # AccumulateGrad node id -> leaf name
        self.unread: dict[str, None] = {}  # leaves whose .grad no step has read yet
        self.lines: dict[str, int] = {}  # leaf name -> the line that named it, where known

    def name(self, tensor: torch.Tensor) -> str | None:
        """The name ``tensor`` is known by, if it is a known leaf."""
        return self._names.get(id(tensor))  # (``tensors`` holds the leaf: its id is its own)

    def known(self, tensor: torch.Tensor, name: str, line: int | None = None) -> str:
        """Know ``tensor`` as a leaf named ``name`` (or another name, when that one is taken), named
        on ``line`` when given."""
        known = self.name(tensor)
        if known is not None:
            return known
        if name in self.tensors:  # the name now holds another leaf: keep both rows apart
            name = self.unused_name(name)
        self.tensors[name] = tensor
        self._names[id(tensor)] = name
        self.nodes.setdefault(name, "")
        self.unread[name] = None
        if line is not None:
            self.lines[name] = line
        return name

    def rebound_to_leaf(self, name: str, leaf: torch.Tensor, line: int | None) -> None:
        """The program's ``name`` now holds another leaf: the row ``name`` follows the name, as
        ``name.grad`` does, and the leaf it held before is ``name (line N)`` from now on, the line
        that named it (``leaf<k>`` style when that line is not known)."""
        old = self.tensors.get(name)
        if old is None or old is leaf or self.name(leaf) is not None:
            return
        before = self.lines.pop(name, None)
        self._rename(name, f"{name} (line {before})" if before is not None else self.unused_name(name))
        self.known(leaf, name, line)

    def _rename(self, name: str, new: str) -> None:
        tensor = self.tensors[new] = self.tensors.pop(name)
        self._names[id(tensor)] = new
        node_id = self.nodes[new] = self.nodes.pop(name)
        if node_id:
            self.names[node_id] = new
            if self.capture.labels.get(node_id) == name:
                self.capture.labels[node_id] = new
        if self.unread.pop(name, 0) is None:
            self.unread[new] = None

    def rebound(self, name: str, now: object) -> None:
        """The program's ``name`` now holds ``now``: when that is a copy that is not a leaf and the
        leaf named ``name`` has no gradient yet, the leaf is ``name (line N)`` from now on (see
        above). Only a copy: a name shown so holds a non-leaf (``app.core.lesson.copies``)."""
        leaf = self.tensors.get(name)
        if leaf is None or now is leaf or leaf.grad is not None or name not in self.lines:
            return
        if not isinstance(now, torch.Tensor) or now.grad_fn is None:
            return
        new = f"{name} (line {self.lines.pop(name)})"
        self._rename(name, new)
        self.unread[new] = None

    def name_node(self, node_id: str, variable: torch.Tensor) -> None:
        """``node_id`` is the ``AccumulateGrad`` of ``variable``: the leaf's node from now on."""
        name = self.name(variable)
        if name is None:
            name = self.known(variable, self._name_of(variable) or self.unused_name())
        self.nodes[name] = node_id
        self.names[node_id] = name
        self.capture.labels.setdefault(node_id, name)

    def unused_name(self, base: str = "leaf") -> str:
        """``<base><k>`` for a leaf made inline (no name), clashing with no name in use."""
        k = len(self.tensors)
        while f"{base}{k}" in self.tensors or self._in_use(f"{base}{k}"):
            k += 1
        return f"{base}{k}"
