"""Stand-ins for ``os`` and ``sys``: ``os.path`` as functions of text, everything else refused.

# NOTE [stand-in modules: os]
Training scripts ``import os`` out of habit and build paths with ``os.path.join(save_dir,
"model.pt")``. A path is text until something opens it, so ``os.path`` is a closed list of
functions of text alone (``posixpath``'s: ``join``, ``basename``, ``dirname``, ``split``,
``splitext``, ``normpath``, ``isabs``), each taking text only. What would read the file
system, the process or its environment (``exists``, ``abspath``, ``expanduser``, ``getcwd``,
``environ``, ``makedirs``, ``system``) is not listed and is refused at its own line with the
reason; what a path is used for (``torch.save``, ``open``) is refused where it is used. ``sys``
binds a stand-in with no members, as ``numpy`` does (NOTE [stand-in modules]): an unused
``import sys`` costs nothing, and any use is refused.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any

import torch

from app.core.language.hints import refused

__all__ = ["NO_SYSTEM", "os_members", "os_path_members"]

NO_SYSTEM = "programs reach no files, processes or environment outside them"


def _text_only(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a function of ``posixpath``) named as ``os.path.<name>``. A number, None or a tensor
    gets Python's own TypeError from it, as in a plain run; anything else (the language's objects,
    which a plain run names by the program's class) is refused here, never handed to ``fspath``."""

    def call(*parts: Any) -> Any:
        for part in parts:
            if not isinstance(part, (str, int, float, type(None), torch.Tensor)):
                raise refused(f"os.path.{name} takes text here")
        return fn(*parts)

    call.__name__ = call.__qualname__ = name
    call.__module__ = "posixpath"  # its errors are Python's, as a plain run's would be
    return call


def os_path_members() -> dict[str, Any]:
    """``os.path``: functions of text only.

    >>> members = os_path_members()
    >>> members["join"]("runs", "model.pt"), members["splitext"]("a/b.txt")
    ('runs/model.pt', ('a/b', '.txt'))
    >>> "exists" in members or "abspath" in members or "os" in members
    False
    """
    names = ("join", "basename", "dirname", "split", "splitext", "normpath", "isabs")
    members: dict[str, Any] = {name: _text_only(name, getattr(posixpath, name)) for name in names}
    members["sep"] = "/"
    return members


def os_members() -> dict[str, Any]:
    """``os``: its separator; ``os.path`` is added by the caller as a namespace."""
    return {"sep": "/"}
