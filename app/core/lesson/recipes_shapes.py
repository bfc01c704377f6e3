"""Recipes for a call whose values have the wrong shape for autograd: a ``backward()`` (or
``autograd.grad``) of a tensor with more than one value, and a custom ``Function.backward`` that
returns a different number of gradients than its ``forward`` took inputs.

PyTorch names both in its message: "grad can be implicitly created only for scalar outputs" (the
call's receiver is not one number), "function XBackward returned an incorrect number of gradients
(expected N, got M)" (the class ``X``). The edit is made where the cause is: the loss reduced (or
its ``gradient=`` given) at the failing call, and the ``return`` of ``X.backward`` given one value
per input of ``X.forward``: the gradient it computed for that input, or ``None``.
"""

from __future__ import annotations

import ast
import re

from app.core.lesson.edits import Source, call_node, edit_text, wrapped
from app.core.lesson.failure import Failure
from app.core.lesson.fix import Fix

__all__ = ["gradient_count_fix", "reduce_output_fix", "reduce_output_other_fix"]

_COUNT = re.compile(
    r"function (\w+?)Backward returned an incorrect number of gradients \(expected (\d+), got (\d+)\)"
)


def _function_class(source: Source, name: str) -> ast.ClassDef | None:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    found = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return found[0] if found else None


def _inputs(forward: ast.FunctionDef) -> list[str]:
    """The names of ``forward``'s inputs after ``ctx``, as autograd counts them."""
    return [a.arg for a in [*forward.args.posonlyargs, *forward.args.args][1:]]


def _returns(backward: ast.FunctionDef) -> list[ast.Return]:
    return [n for n in ast.walk(backward) if isinstance(n, ast.Return)]


def _computed(backward: ast.FunctionDef) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(backward):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _gradient_for(name: str, computed: set[str]) -> str | None:
    """The name ``backward`` gave the gradient of input ``name`` (``grad_x``, ``x_grad``, ``d_x``)."""
    for candidate in (f"grad_{name}", f"{name}_grad", f"d_{name}", f"grad{name}"):
        if candidate in computed:
            return candidate
    return None


def _values(ret: ast.Return) -> list[ast.expr]:
    if ret.value is None:
        return []
    return list(ret.value.elts) if isinstance(ret.value, ast.Tuple) else [ret.value]


def _fixed_return(source: Source, ret: ast.Return, inputs: list[str], computed: set[str]) -> str:
    """``return`` with one value per input: what it returned, then ``None`` for the rest (a
    gradient ``backward`` computed under the input's name, when it returned nothing)."""
    values = [source.segment(v) for v in _values(ret)]
    if not values:
        values = [_gradient_for(name, computed) or "None" for name in inputs]
    if len(values) > len(inputs):
        extra = values[len(inputs) :]
        if any(v != "None" for v in extra):
            raise ValueError("the extra gradients are not None")
        values = values[: len(inputs)]
    values += ["None"] * (len(inputs) - len(values))
    return "return " + ", ".join(values)


def gradient_count_fix(failure: Failure) -> Fix | None:
    """One value per input of ``forward`` in each ``return`` of the custom Function's ``backward``:
    ``None`` for an input that is not a tensor (a flag, a size, a group) or needs no gradient."""
    found = _COUNT.search(failure.info.error or "")
    if found is None:
        return None
    source = failure.source
    cls = _function_class(source, found.group(1))
    forward = _method(cls, "forward") if cls is not None else None
    backward = _method(cls, "backward") if cls is not None else None
    if cls is None or forward is None or backward is None:
        return None
    inputs = _inputs(forward)
    if len(inputs) != int(found.group(2)):
        return None  # *args or a ctx-less forward: the count is not the parameter list's
    computed = _computed(backward)
    returns = _returns(backward)
    code = source.code
    if returns:
        for ret in sorted(returns, key=source.start, reverse=True):
            code = edit_text(
                code, source.start(ret), source.end(ret), _fixed_return(source, ret, inputs, computed)
            )
    else:
        last = backward.body[-1]
        text = _fixed_return(source, ast.Return(value=None), inputs, computed)
        end = source.line_end(last.end_lineno or last.lineno)
        code = edit_text(code, end, end, source.indent(last.lineno) + text + "\n")
    expected, got = int(found.group(2)), int(found.group(3))
    shown = ", ".join(inputs)
    return Fix(
        f"{cls.name}.backward returns one gradient per input",
        f"{cls.name}.forward takes {expected} inputs after ctx ({shown}) and autograd wants one "
        f"value back from backward for each, in that order; it returned {got}. A gradient for each "
        "tensor input, None for an input that is not a tensor or needs no gradient.",
        code,
    )


def _receiver(failure: Failure) -> tuple[ast.Call, ast.expr] | None:
    """The failing call and the tensor it was asked to differentiate."""
    node = call_node(failure.source, failure.info.call)
    if failure.info.call.kind == "backward" and isinstance(node.func, ast.Attribute):
        return node, node.func.value
    outputs = (
        node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "outputs"), None)
    )
    return (node, outputs) if outputs is not None else None


def _reduced(failure: Failure, how: str) -> Fix | None:
    if "implicitly created only for scalar outputs" not in (failure.info.error or ""):
        return None
    found = _receiver(failure)
    if found is None:
        return None
    source, tensor = failure.source, found[1]
    shown = source.segment(tensor)
    why = {
        "sum": "Summing them differentiates their total: each element's gradient once, as "
        f"gradient=torch.ones_like({shown}) would.",
        "mean": "Their mean is the usual loss of a batch: the same gradients, divided by their count.",
    }[how]
    return Fix(
        f"{shown}.{how}() on line {failure.info.call.line}",
        f"{shown} holds many values, and autograd starts a backward from one number (or from a "
        f"gradient= of the same shape). {why}",
        edit_text(
            source.code, source.start(tensor), source.end(tensor), f"{wrapped(source, tensor)}.{how}()"
        ),
    )


def _first_reduction(failure: Failure) -> str:
    """``mean`` for a loss (a batch's loss is its mean), ``sum`` for any other output."""
    found = _receiver(failure)
    text = failure.source.segment(found[1]) if found is not None else ""
    return "mean" if "loss" in text.lower() else "sum"


def reduce_output_fix(failure: Failure) -> Fix | None:
    """``loss.mean().backward()`` (``out.sum()`` for an output that is not a loss) where backward
    was called on a tensor of many values."""
    return _reduced(failure, _first_reduction(failure))


def reduce_output_other_fix(failure: Failure) -> Fix | None:
    """The other reduction of :func:`reduce_output_fix`, second."""
    return _reduced(failure, "sum" if _first_reduction(failure) == "mean" else "mean")
