"""Alive or gone, at every step, against PyTorch and CPython alone (``tests/support/alive_oracle.py``).

A tensor with a graph is kept somewhere, an unrelated backward runs, the keeper is let go: the
recording's alive nodes after each step are the plain run's, in ``trace`` and in ``run``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.model.program import Program
from app.core.recorder.recorder import record
from app.core.recorder.script import record_script
from tests.support.alive_oracle import alive_by_python, alive_by_recording

_START = "import torch\nx = torch.ones(3, requires_grad=True)\n"
_AFTER = "(x * 2).sum().backward()\nz = x.sin()\n"

_GENERATOR = "def gen():\n    t = x.exp()\n    yield 1\n    yield 2\n"
_GENERATOR_EXPRESSION = "g = (v.sum().item() for v in [x.exp(), x.exp()])\n"

# name -> (what keeps x.exp(), what lets it go); both are plain Python and the checked language
KEPT_IN: dict[str, tuple[str, str]] = {
    "name": ("held = x.exp()\n", "del held\n"),
    "dict": ("held = {'a': x.exp()}\n", "held.pop('a')\n"),
    "list in dict": ("held = {'a': [x.exp()]}\n", "held['a'].pop()\n"),
    "dict key": ("held = {x.exp(): 1}\n", "held.clear()\n"),
    "set": ("held = {x.exp()}\n", "held.clear()\n"),
    "object attribute": (
        "class Box:\n    pass\nbox = Box()\nbox.t = x.exp()\n",
        "box.t = None\n",
    ),
    "list on an object": (
        "class Box:\n    def __init__(self):\n        self.items = []\n"
        "box = Box()\nbox.items.append(x.exp())\n",
        "box.items.clear()\n",
    ),
    "class attribute": ("class Box:\n    kept = []\nBox.kept.append(x.exp())\n", "Box.kept.clear()\n"),
    "closure cell": (
        "def make():\n    t = x.exp()\n    def get():\n        return t\n    return get\nget = make()\n",
        "del get\n",
    ),
    "default argument": ("def f(t=x.exp()):\n    return t\n", "del f\n"),
    "method's self": (
        "class Keeper:\n    def __init__(self):\n        self.total = 0\n"
        "    def add(self, v):\n        self.total = self.total + v\nk = Keeper()\nk.add(x.exp())\n",
        "k.total = 0\n",
    ),
    "cycle held": (
        "class Box:\n    pass\nbox = Box()\nbox.me = box\nbox.t = x.exp()\n",
        "del box\n",
    ),
    "tuple in list": ("held = [(1, x.exp())]\n", "held[0] = None\n"),
    # calls that let go with no name re-bound (NOTE [calls that let go])
    "cut in place": ("held = x.exp()\n", "held.detach_()\n"),
    "replaced by update": ("held = {'a': x.exp()}\n", "held.update({'a': None})\n"),
    "dropped in a method": (
        "class Keeper:\n    def __init__(self):\n        self.t = x.exp()\n"
        "    def drop(self):\n        del self.t\nk = Keeper()\n",
        "k.drop()\n",
    ),
    "exception traceback": (
        "def fails():\n    t = x.exp()\n    raise ValueError('no')\ntry:\n    fails()\n"
        "except ValueError as e:\n    err = e\n",
        "del err\n",
    ),
    "exception caught, not kept": (
        "def fails():\n    t = x.exp()\n    raise ValueError('no')\ntry:\n    fails()\n"
        "except ValueError as e:\n    n = 1\n",
        "",
    ),
    "generator partly drawn, dropped": (_GENERATOR + "g = gen()\nfirst = next(g)\n", "del g\n"),
    "generator at its last item": (_GENERATOR + "g = gen()\nnext(g)\nnext(g)\n", "next(g, None)\n"),
    "generator drawn to its end": (_GENERATOR + "g = gen()\ntotal = 0\nfor v in g:\n    total += v\n", ""),
    "generator expression partly drawn": (_GENERATOR_EXPRESSION + "first = next(g)\n", "del g\n"),
    "generator expression drawn to its end": (
        "g = (v.sum().item() for v in [x.exp()])\ntotal = sum(g)\n",
        "",
    ),
}

# What the checked language has no such thing for: it refuses a list that holds itself,
# attributes of modules and __slots__.
SCRIPT_ONLY: dict[str, tuple[str, str]] = {
    "list cycle": ("a = []\nb = [a, x.exp()]\na.append(b)\n", "del a\ndel b\n"),
    "module attribute": ("import math\nmath.kept = x.exp()\n", "del math.kept\n"),
    "frame of a running function": (
        "def outer():\n    t = x.exp()\n    (x * 3).sum().backward()\n    return 1\nouter()\n",
        "",
    ),
    "instance __slots__": (
        "class Slot:\n    __slots__ = ('t',)\nslot = Slot()\nslot.t = x.exp()\n",
        "del slot\n",
    ),
}


def _program(keep: str, let_go: str) -> str:
    return _START + keep + _AFTER + let_go + "w = x.cos()\n"


@pytest.mark.parametrize("case", sorted(KEPT_IN))
def test_trace_agrees_with_python(case: str, tmp_path: Path) -> None:
    code = _program(*KEPT_IN[case])
    expected = alive_by_python(code, str(tmp_path / "kept.py"))
    assert any("ExpBackward0" in state for state in expected)  # the case keeps it
    assert alive_by_recording(record(Program(code))) == expected


@pytest.mark.parametrize("case", sorted({**KEPT_IN, **SCRIPT_ONLY}))
def test_run_agrees_with_python(case: str, tmp_path: Path) -> None:
    code = _program(*{**KEPT_IN, **SCRIPT_ONLY}[case])
    path = tmp_path / "kept.py"
    path.write_text(code)
    expected = alive_by_python(code, str(path))
    assert alive_by_recording(record_script(path).recording) == expected
