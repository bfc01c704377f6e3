"""Advice without an error: a reentrant checkpoint whose inputs need no gradient, so the weights
inside its block never get one.

``checkpoint(block, x, use_reentrant=True)`` (PyTorch's default when ``use_reentrant`` is not
given) runs the block under ``torch.no_grad()`` and wraps it in one ``autograd.Function``. When no
input of that function requires grad (``x`` is data), its output has no graph: the backward
never reaches the block, and PyTorch only warns ("None of the inputs have requires_grad=True.
Gradients will be None"). The recording shows it: the block's parameters end with ``.grad`` None
while others learned. ``use_reentrant=False`` records the block's own nodes (saving nothing, as
the checkpoint means to), so the backward reaches its weights whatever the input; the edit is
recorded and its claim checked before it is offered.
"""

from __future__ import annotations

import ast

from app.core.lesson.advice import Advice
from app.core.lesson.edits import Source, edit_text, parsed
from app.core.lesson.fix import Claim, Fix
from app.core.model.recording import Recording

__all__ = ["reentrant_checkpoint_advice"]


def _checkpoint_calls(source: Source) -> list[ast.Call]:
    """``checkpoint(...)`` or ``torch.utils.checkpoint.checkpoint(...)`` calls that are reentrant."""
    found = []
    for node in ast.walk(source.tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        flag = next((k.value for k in node.keywords if k.arg == "use_reentrant"), None)
        if name == "checkpoint" and (flag is None or (isinstance(flag, ast.Constant) and flag.value is True)):
            found.append(node)
    return found


def _not_reentrant(source: Source, node: ast.Call) -> str:
    flag = next((k.value for k in node.keywords if k.arg == "use_reentrant"), None)
    if flag is not None:
        return edit_text(source.code, source.start(flag), source.end(flag), "False")
    close = source.end(node) - 1  # the call's ")"
    return edit_text(source.code, close, close, ", use_reentrant=False")


def reentrant_checkpoint_advice(recording: Recording) -> Advice | None:
    """``use_reentrant=False`` for a reentrant checkpoint whose block's weights got no gradient."""
    if recording.failed is not None or recording.error is not None or not recording.calls:
        return None
    try:
        source = parsed(recording.program.code)
    except SyntaxError:
        return None
    grads = recording.timeline.state(len(recording.timeline) - 1).grads
    for node in _checkpoint_calls(source):
        block = node.args[0]
        if not isinstance(block, ast.Name):
            continue
        starved = [n for n in recording.leaves if n.startswith(f"{block.id}.") and grads.get(n) is None]
        learned = [n for n in recording.leaves if grads.get(n) is not None]
        if starved and learned:
            return _advice(source, node, block.id, starved)
    return None


def _advice(source: Source, node: ast.Call, block: str, starved: list[str]) -> Advice:
    shown = " ".join(source.segment(node).split())
    names = ", ".join(f"{n}.grad" for n in starved[:3]) + (" …" if len(starved) > 3 else "")
    claim = (
        f"Every weight of {block} then gets its gradient ({', '.join(starved[:3])}"
        f"{' …' if len(starved) > 3 else ''})."
    )
    fix = Fix(
        f"use_reentrant=False on line {node.lineno}",
        "The non-reentrant checkpoint records the block's own nodes, saving nothing for them, and "
        "runs the block again inside the backward; the backward reaches the weights inside it "
        f"whether or not the block's input requires grad. {claim}",
        _not_reentrant(source, node),
        claims=(Claim(claim, "grads_given", " ".join(starved), "every weight of the block learns"),),
    )
    return Advice(
        f"No error, but {block} learns nothing: the reentrant checkpoint on line {node.lineno} "
        "has no input that requires grad",
        f"{shown} ran {block} under no_grad as one autograd.Function; none of its inputs required "
        "grad, so its output had no graph and the backward never reached the block: "
        f"{names} stayed None. PyTorch only warned: None of the inputs have requires_grad=True. "
        "Gradients will be None.",
        (fix,),
    )
