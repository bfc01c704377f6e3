"""One plain sentence per step, written from what the recording observed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.core.model.graph import Graph, GraphNode
from app.core.model.program import Call, CallInfo
from app.core.model.text import VALUES_SHOWN, format_bytes, format_values
from app.core.model.timeline import SlotKey, SlotState, Step
from app.core.model.values import Values

__all__ = ["call_name", "format_bytes", "format_values", "node_title", "write_captions"]

EMPTY_PROGRAM = (
    "The program holds nothing autograd records: no tensor, no graph, no backward call. Type or "
    "paste PyTorch code that calls backward(), or pick a built-in such as two-losses."
)


def node_title(node: GraphNode) -> str:
    return f"{node.name} ({node.label})" if node.label else node.name


RECOMPUTED = ", recomputed"  # the end of a recomputed node's frame (NOTE [checkpoint frames])
LISTED = 3  # names a caption lists (leaves, nodes, gradients) before "and N more": one line, not a page
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def _checkpointed(node: GraphNode) -> bool:
    """Made by a checkpoint's forward (NOTE [checkpoint frames] in the language)."""
    module = node.module or ""
    return module.startswith(("checkpoint(", "checkpoint_sequential(")) and not _recomputed(node)


def _recomputed(node: GraphNode) -> bool:
    return node.module is not None and node.module.endswith(RECOMPUTED)


def call_name(index: int, call: Call, total: int = 2) -> str:
    """``the second backward`` or ``the first autograd.grad call``: how a teacher names a call.

    >>> call = Call("backward", 2, 1, 2, 19, "y.sum().backward()")
    >>> call_name(1, call)
    'the second backward'
    >>> call_name(0, Call("grad", 2, 1, 2, 30, "torch.autograd.grad(y.sum(), x)"), total=1)
    'the autograd.grad call'
    """
    what = "backward" if call.kind == "backward" else "autograd.grad call"
    if total == 1:
        return f"the {what}"
    if index < len(_ORDINALS):
        return f"the {_ORDINALS[index]} {what}"
    return f"{what} {index + 1}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _iteration(step: Step) -> str:
    """`` (iteration 2 of 5)`` inside a loop: the innermost loop's counter, from 1."""
    if not step.loops:
        return ""
    mark = step.loops[-1]
    total = f" of {mark.count}" if mark.count is not None else ""
    return f" (iteration {mark.index + 1}{total})"


def _retention(call: Call) -> str:
    return "create_graph=True" if call.retain_graph is None else "retain_graph=True"


class _Captioner:
    """Writes the caption of each step in order, tracking the full slot state as it goes."""

    def __init__(
        self,
        graph: Graph,
        calls: Sequence[CallInfo],
        freed_by: Mapping[SlotKey, int],
        needed_by: Mapping[str, tuple[int, ...]],
        total: int,
    ) -> None:
        self.graph = graph
        self.total = total  # calls in the program, recorded or not
        self.infos = {info.index: info for info in calls}
        self.freed_by = freed_by
        self.needed_by = needed_by
        self.slots: dict[SlotKey, SlotState] = {}
        self.names: dict[int, str] = {}  # each call's name, made once
        self.leaves_ran: set[str] = set()  # labels of the AccumulateGrad nodes the call ran so far

    def caption(self, step: Step) -> str:
        self.slots.update(step.slot_changes)
        if step.kind == "forward":
            return self._forward(step)
        if step.call is None:  # the program's own code raised, outside any autograd call
            where = "The program" if step.line is None else f"Line {step.line}{_iteration(step)}"
            return f"{where} raised an error, and the program stopped there: {step.error}"
        info = self.infos[step.call]
        if step.kind == "node":
            node = self.graph.node(step.node) if step.node is not None else None
            if node is not None and node.is_leaf and node.label and not _recomputed(node):
                self.leaves_ran.add(node.label)
            return self._node(step, info)
        if step.kind == "recompute":
            return self._recompute(step, info)
        if step.kind == "call_end":
            return self._call_end(step, info)
        return self._error(step, info)

    def _recompute(self, step: Step, info: CallInfo) -> str:
        """A checkpointed block run again inside the call (NOTE [checkpoint frames])."""
        added = [self.graph.node(n) for n in step.added_nodes]
        frame = next((n.module for n in added if n.module), None)
        block = (frame or "the checkpointed block").removesuffix(RECOMPUTED)
        made = self._added([n for n in added if not n.is_leaf]) if added else "added nothing"
        return (
            f"{self._name(info.index).capitalize()} recomputed {block}'s forward, which kept only its "
            f"inputs: it {made.replace('saving', 'saving again', 1)} ({format_bytes(step.saved_bytes)} "
            "saved now)."
        )

    def _forward(self, step: Step) -> str:
        """What one statement did: nodes it added or let go of, tensors it changed, what it printed."""
        where = "The program" if step.line is None else f"Line {step.line}{_iteration(step)}"
        parts = []
        added = [self.graph.node(n) for n in step.added_nodes]
        frame = next((n.module for n in added if _checkpointed(n)), None)
        if frame is not None:
            parts.append(self._checkpointed(added, frame))
        elif added:
            parts.append(self._added(added))
        if step.gone_nodes:
            count = len(step.gone_nodes)
            what = "it" if count == 1 else "they"
            parts.append(
                f"let go of {_plural(count, 'node')} nothing in the program reaches any more, "
                f"freeing what {what} saved"
            )
        modified = [key for key, state in step.slot_changes.items() if state == "modified"]
        if modified:
            node_id, slot = modified[0]
            version = step.version_changes.get((node_id, slot))
            now = "" if version is None else f" (now at version {version})"
            parts.append(
                f"changed a saved tensor in place: {node_title(self.graph.node(node_id))}'s {slot}{now}; "
                "a backward through it will fail"
            )
        written = [
            key
            for key in step.version_changes
            if self.slots.get(key) == "freed" and self._needed_later(key[0], step.index)
        ]
        if written:  # NOTE [freed leaves written] in the recorder: a weight a freed slot had saved
            node_id = written[0][0]
            names = [slot for node, slot in written if node == node_id]
            more = [f"{len(names) - LISTED} more"] if len(names) > LISTED else []
            parts.append(
                f"changed in place what {node_title(self.graph.node(node_id))} had saved as "
                f"{_listed(names[:LISTED] + more)} (freed already), so even with retain_graph=True "
                "a second backward through it would fail"
            )
        grads = [f"{g}.grad" for g in step.grad_changes]
        if grads and not added:
            more = [f"{len(grads) - LISTED} more"] if len(grads) > LISTED else []
            parts.append(f"set {_listed(grads[:LISTED] + more)}")
        if not parts and step.line is None and not step.printed and len(self.graph) == 0 and not self.total:
            return EMPTY_PROGRAM
        if not parts:
            parts.append("ran" if not step.printed else "printed " + repr(step.printed[-1][:60]))
        elif step.printed:
            parts.append("printed " + repr(step.printed[-1][:60]))
        return f"{where} {_listed(parts)}."

    def _checkpointed(self, nodes: list[GraphNode], frame: str) -> str:
        """A checkpoint's forward: its nodes keep placeholders, the checkpoint the block's inputs."""
        inside = [n for n in nodes if n.module == frame and not n.is_leaf]
        kept = sum(s.nbytes or 0 for n in inside for s in n.tensor_slots)
        more = [f"{len(inside) - LISTED} more"] if len(inside) > LISTED else []
        names = _listed([n.name for n in inside[:LISTED]] + more) if inside else "its node"
        return (
            f"ran {frame}: it added {names}, which save nothing for backward; the checkpoint keeps "
            f"only the block's inputs ({format_bytes(kept)}) and the backward will run the block again"
        )

    def _needed_later(self, node_id: str, index: int) -> bool:
        """Whether a call that starts after step ``index`` reaches ``node_id`` (an ordinary training
        step writes weights its graph saved, but no later call walks that graph again)."""
        return any(self.infos[c].first_step > index for c in self.needed_by.get(node_id, ()))

    def _added(self, nodes: list[GraphNode]) -> str:
        tensors = sum(len(n.tensor_slots) for n in nodes)
        more = [f"{len(nodes) - LISTED} more"] if len(nodes) > LISTED else []
        names = _listed([n.name for n in nodes[:LISTED]] + more)
        if not tensors:
            return f"added {names}, saving no tensors for backward"
        return f"added {names}, saving {_plural(tensors, 'tensor')} for backward"

    def _node(self, step: Step, info: CallInfo) -> str:
        assert step.node is not None
        node = self.graph.node(step.node)
        if _recomputed(node):
            return f"Recomputed {self._recomputed_node(node, step)}"
        if node.is_leaf:
            grad = step.grad_changes.get(node.label or "")
            now = "" if grad is None else f", which is now {format_values(grad)}"
            return (
                f"{node_title(node)} added {self._name(info.index)}'s gradient into {node.label}.grad{now}."
            )
        slots = [s.name for s in node.tensor_slots]
        if not slots:
            return f"{node_title(node)} ran; it saved no tensors, so there was nothing to free."
        freed = [name for name in slots if self.slots.get((node.id, name)) == "freed"]
        later = [c for c in self.needed_by.get(node.id, ()) if c > info.index]
        pronoun = "it" if len(slots) == 1 else "them"
        if freed:
            text = f"{node_title(node)} ran and released its saved {_listed(freed)}"
            if later:
                text += f"; {self._name(later[0])} will need {pronoun}"
            return text + "."
        text = f"{node_title(node)} ran and kept its saved {_listed(slots)} ({_retention(info.call)})"
        if later:
            return text + f", so {self._name(later[0])} can reuse {pronoun}."
        return text + ", though no later call needs " + pronoun + "."

    def _recomputed_node(self, node: GraphNode, step: Step) -> str:
        """A node a checkpoint's recompute made, run by the checkpoint's own backward."""
        if node.is_leaf:  # a reentrant checkpoint's backward starts from detached inputs
            return f"{node_title(node)}: the checkpoint hands its gradient on to the block's input."
        slots = [s.name for s in node.tensor_slots]
        if not slots:
            return f"{node_title(node)} ran; it saved no tensors."
        freed = [name for name in slots if self.slots.get((node.id, name)) == "freed"]
        if freed:
            return f"{node_title(node)} ran and released its saved {_listed(freed)}."
        return f"{node_title(node)} ran."

    def _name(self, index: int) -> str:
        name = self.names.get(index)
        if name is None:
            name = self.names[index] = call_name(index, self.infos[index].call, self.total)
        return name

    def _call_end(self, step: Step, info: CallInfo) -> str:
        head = f"{self._name(info.index).capitalize()} finished"
        # a leaf the call did not reach adds nothing (a share of None, or of zeros when its .grad
        # held an earlier call's): only the leaves whose AccumulateGrad ran are named
        ran, self.leaves_ran = self.leaves_ran, set()
        added = [(leaf, v) for leaf, v in (step.contribution or {}).items() if v is not None and leaf in ran]
        returned = list((step.result or {}).items())
        if _a_models(added):
            parts = [_added_to_many(added)]
        else:
            parts = [f"adding {format_values(v)} to {k}.grad" for k, v in added[:LISTED]]
            if len(added) > LISTED:
                rest = len(added) - LISTED
                parts.append(f"adding to the .grad of {rest} more {'leaf' if rest == 1 else 'leaves'}")
        parts += [f"returning {k} = {format_values(v)}" for k, v in returned[:LISTED]]
        if len(returned) > LISTED:
            parts.append(f"returning {_plural(len(returned) - LISTED, 'more gradient')}")
        if not info.call.effective_retain:
            parts.append("freeing the saved tensors it used")
        elif info.index == self.total - 1:
            parts.append(f"keeping its graph ({_retention(info.call)}) though no later call needs it")
        else:
            parts.append(f"keeping its graph ({_retention(info.call)}) for the next call")
        return f"{head}, {_listed(parts)}."

    def _error(self, step: Step, info: CallInfo) -> str:
        head = f"{self._name(info.index).capitalize()} failed"
        if step.node is None:
            return f"{head} before any node ran: PyTorch refused the call itself."
        node = self.graph.node(step.node)
        for slot in node.tensor_slots:
            key = (node.id, slot.name)
            state = self.slots.get(key)
            if state == "freed" and key in self.freed_by:
                by = self.freed_by[key]
                line = self.infos[by].call.line if by in self.infos else None
                where = f" (line {line})" if line is not None else ""
                return (
                    f"{head} at {node_title(node)}: its saved {slot.name} was freed by "
                    f"{self._name(by)}{where}, which walked it first."
                )
            if state == "modified":
                return (
                    f"{head} at {node_title(node)}: its saved {slot.name} was changed in place after it "
                    "was saved, and PyTorch's version counter caught it."
                )
        return f"{head} at {node_title(node)}."


def write_captions(
    steps: Sequence[Step],
    graph: Graph,
    calls: Sequence[CallInfo],
    freed_by: Mapping[SlotKey, int],
    needed_by: Mapping[str, tuple[int, ...]],
    *,
    total_calls: int | None = None,
) -> list[Step]:
    """Give each step one plain sentence saying what happened at it; returns the steps.

    The steps must be new ones nobody else holds yet (the recorder's, before it builds the
    :class:`~app.core.model.timeline.Timeline`): the caption is set on them, as a frozen
    dataclass's own ``__init__`` sets its fields, which spares building every step a second time
    (a tenth of a long recording's cost). ``total_calls`` is the number of calls the program made
    (default: those recorded).
    """
    total = len(calls) if total_calls is None else total_calls
    captioner = _Captioner(graph, calls, freed_by, needed_by, total)
    for step in steps:
        object.__setattr__(step, "caption", captioner.caption(step))
    return list(steps)


def _a_models(added: Sequence[tuple[str, Values | None]]) -> bool:
    """More leaves than a caption lists, or several with one too long to show whole: a model's
    weights (the GAN's eight small ones listed their values in a caption of five lines)."""
    if len(added) > LISTED:
        return True
    return len(added) > 1 and any(v is not None and len(v.flat) > VALUES_SHOWN for _, v in added)


def _added_to_many(added: Sequence[tuple[str, Values | None]]) -> str:
    """A model's step adds to many weights: their shapes (values when short), the first few, so
    that the caption stays a sentence.

    >>> _added_to_many([("fc.weight", Values((3, 4), tuple(float(i) for i in range(12)))),
    ...                 ("fc.bias", Values((3,), (1.0, 2.0, 3.0)))])
    'adding to the .grad of 2 leaves (fc.weight: 3×4, fc.bias: [1, 2, 3])'
    """
    size = _size if len(added) > LISTED else _short  # so many: the sizes say enough
    shown = [f"{leaf}: {size(values)}" for leaf, values in added[:LISTED]]
    more = ", …" if len(added) > LISTED else ""
    return f"adding to the .grad of {len(added)} leaves ({', '.join(shown)}{more})"


def _size(values: Values | None) -> str:
    """The shape of ``values``: ``3×4``, ``64 values`` for a vector, ``1 value`` for a scalar."""
    if values is None:
        return format_values(values)
    if len(values.shape) <= 1:
        count = len(values.flat)
        return f"{count} value" if count == 1 else f"{count} values"
    return "×".join(str(n) for n in values.shape)


def _short(values: Values | None) -> str:
    """Short values whole, else the shape: ``3×4``, or ``64 values`` for a vector (a bare ``64``
    would read as a value).

    >>> _short(Values((64,), tuple(0.0 for _ in range(64))))
    '64 values'
    """
    if values is None or len(values.flat) <= VALUES_SHOWN:
        return format_values(values)
    return _size(values)
