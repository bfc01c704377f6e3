"""Predict first: the questions to ask the room before an autograd call, answered by the recording.

Before a call runs, the window asks: does it succeed? If not, at which node
does it stop? What is a leaf's ``.grad`` after it? Every answer is read from
the recording (the call's error and failing node, the gradients at its last
step), so it is what PyTorch did, never what a script expects. The wrong
choices are the mistakes people make: the value without accumulation (this
call's share alone), the value before the call, the value after the call
before it.

>>> from app.core import load_builtin, record
>>> for q in questions(record(load_builtin("forgot-retain")), 1):
...     print(q.text, "->", q.answer)
Does this call succeed? -> fails
If it fails, at which node does it stop? -> PowBackward0 (made by line 4)
What is x.grad after it? -> x.grad = [2, 4]
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.lesson.lines import node_origin
from app.core.model.program import CallInfo
from app.core.model.recording import Recording
from app.core.model.text import format_values
from app.core.model.values import Values

__all__ = ["FAILS", "NO_FAILURE", "SUCCEEDS", "Question", "call_nodes", "question_leaf", "questions"]

SUCCEEDS, FAILS = "succeeds", "fails"
NO_FAILURE = "nowhere: it succeeds"


@dataclass(frozen=True)
class Question:
    """One question about a call: its text, the choices offered (in a fixed order), and the answer.

    ``answer`` is always one of ``choices``.
    """

    text: str
    choices: tuple[str, ...]
    answer: str

    def __post_init__(self) -> None:
        if self.answer not in self.choices:
            raise ValueError(f"the answer {self.answer!r} is not among the choices {self.choices}")


def questions(recording: Recording, call: int) -> list[Question]:
    """What to ask before call ``call`` (0-based) of ``recording``, with the answers it holds."""
    info = recording.calls[call]
    asked = [_succeeds(info), _where_it_fails(recording, info)]
    leaf = question_leaf(recording, call)
    grad = None if leaf is None else _grad_after(recording, info, leaf)
    return asked if grad is None else [*asked, grad]


def _succeeds(info: CallInfo) -> Question:
    answer = SUCCEEDS if info.error is None else FAILS
    # the call's text is the panel's heading: in the question, a long call left "Does" on a line
    return Question("Does this call succeed?", (SUCCEEDS, FAILS), answer)


def node_choice(recording: Recording, node_id: str) -> str:
    """How a node is offered as a choice: ``PowBackward0 (made by line 4)``."""
    node = recording.graph.node(node_id)
    return f"{node.name} ({node_origin(node)})"


def call_nodes(recording: Recording, info: CallInfo) -> list[str]:
    """The nodes the call can reach, breadth first from its root (the node its first step ran).

    The failing node is among them: the graph holds every node the call could
    reach, not only those it ran before it stopped.
    """
    steps = recording.timeline.steps[info.first_step : info.last_step + 1]
    roots = [s.node for s in steps if s.kind == "node" and s.node is not None][:1]
    if not roots and info.failed_node is not None:
        roots = [info.failed_node]
    seen = dict.fromkeys(recording.graph.reached_from(roots))
    if info.failed_node is not None:
        seen.setdefault(info.failed_node)
    return [n for n in seen if n in recording.graph]


def _where_it_fails(recording: Recording, info: CallInfo) -> Question:
    choices = list(dict.fromkeys(node_choice(recording, n) for n in call_nodes(recording, info)))
    failed = None if info.failed_node is None else node_choice(recording, info.failed_node)
    return Question(
        "If it fails, at which node does it stop?",
        (NO_FAILURE, *choices),
        failed if failed is not None and info.error is not None else NO_FAILURE,
    )


def question_leaf(recording: Recording, call: int) -> str | None:
    """The leaf to ask about: the first whose ``.grad`` this call changes, else the first one named."""
    info = recording.calls[call]
    before, after = _grads_before(recording, info), recording.grads_at_end(call)
    changed = [leaf for leaf in recording.leaves if after.get(leaf) != before.get(leaf)]
    return next(iter(changed or list(recording.leaves)), None)


def _grads_before(recording: Recording, info: CallInfo) -> dict[str, Values | None]:
    if info.first_step == 0:
        return {}
    return dict(recording.timeline.state(info.first_step - 1).grads)


def _grad_after(recording: Recording, info: CallInfo, leaf: str) -> Question | None:
    """The true ``.grad`` and the values people expect instead, each shown once, in text order.

    None when there is nothing to choose (every candidate is ``None``).
    """
    truth = recording.grads_at_end(info.index).get(leaf)
    before = _grads_before(recording, info).get(leaf)
    end = recording.timeline[info.last_step]
    share = None if end.contribution is None else end.contribution.get(leaf)
    earlier = recording.grads_at_end(info.index - 1).get(leaf) if info.index > 0 else None
    candidates = [truth, share, before, earlier, _doubled(share), None]
    texts = list(dict.fromkeys(f"{leaf}.grad = {format_values(v)}" for v in candidates))
    answer = f"{leaf}.grad = {format_values(truth)}"
    if len(texts) < 2:
        return None
    return Question(f"What is {leaf}.grad after it?", tuple(sorted(texts)), answer)


def _doubled(values: Values | None) -> Values | None:
    """Counted twice: what someone expects who thinks the call adds its share to itself."""
    if values is None:
        return None
    return Values(values.shape, tuple(v * 2 for v in values.flat), values.dtype)
