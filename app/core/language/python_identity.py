"""``a is b`` and ``a is not b`` on the program's values, answered as a plain run answers them.

A plain run compares the objects themselves. The program holds some objects through checked
stand-ins (a module's proxy, an optimizer's, a parameter group's, a ``grad_fn`` view), and the
evaluator may make a new stand-in each time one is read: ``model.fc is model.fc`` must still be
True. So identity is asked of what each stand-in stands for; everything else (tensors, None, the
program's own objects, numbers and text) is compared as it is. The answer is a bool, and nothing
of the real objects is handed to the program.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from app.core.language.graph_nodes import GradFnView
from app.core.language.module_proxies import ModuleProxy
from app.core.language.optimizer_proxies import OptimizerProxy, ParamGroupProxy

__all__ = ["IDENTITY", "is_not_same", "is_same"]


def _real(value: Any) -> Any:
    """What a stand-in stands for; any other value itself."""
    if isinstance(value, ModuleProxy):
        return value._module
    if isinstance(value, OptimizerProxy):
        return value._optimizer
    if isinstance(value, ParamGroupProxy):
        return value._group
    if isinstance(value, GradFnView):
        return value._node
    return value


def is_same(left: Any, right: Any) -> bool:
    """``left is right`` as the plain run answers it.

    >>> import torch
    >>> lin = torch.nn.Linear(1, 1)
    >>> is_same(ModuleProxy(lin), ModuleProxy(lin)), is_same(ModuleProxy(lin), None)
    (True, False)
    """
    return operator.is_(_real(left), _real(right))


def is_not_same(left: Any, right: Any) -> bool:
    """``left is not right`` as the plain run answers it."""
    return not is_same(left, right)


IDENTITY: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {ast.Is: is_same, ast.IsNot: is_not_same}
