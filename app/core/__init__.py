"""The Qt-free heart of Autograd Lens: programs, the language, recording and the lesson.

The subpackages, in the one direction their imports go:

- ``model``: torch-free data: programs, recordings, steps, graphs (what ``.lens`` files hold);
- ``language``: the checked subset of Python, its evaluator, proxies and whitelist;
- ``sizing``: the size guard that prices every operation before it runs;
- ``recording``: graph capture and the recorder (a real PyTorch run, hooked);
- ``lesson``: captions and the fixes offered at an error.

Names are imported on first use, so importing ``app.core`` (or its torch-free
``model``, as the window does) does not load torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DeviceInfo": "app.core.devices",
    "list_devices": "app.core.devices",
    "resolve_device": "app.core.devices",
    "ProgramError": "app.core.model.errors",
    "ProgramRaised": "app.core.model.errors",
    "RecordingTimeout": "app.core.model.errors",
    "Limits": "app.core.sizing.limits",
    "Edge": "app.core.model.graph",
    "Graph": "app.core.model.graph",
    "GraphNode": "app.core.model.graph",
    "LoopMark": "app.core.model.graph",
    "SavedSlot": "app.core.model.graph",
    "Call": "app.core.model.program",
    "CallInfo": "app.core.model.program",
    "Program": "app.core.model.program",
    "Recording": "app.core.model.recording",
    "Step": "app.core.model.timeline",
    "StepState": "app.core.model.timeline",
    "Timeline": "app.core.model.timeline",
    "Values": "app.core.model.values",
    "trace": "app.core.recorder.capture",
    "probe_slot": "app.core.recorder.ledger",
    "record": "app.core.recorder.recorder",
    "builtin_names": "app.core.loading",
    "load_builtin": "app.core.loading",
    "load_program": "app.core.loading",
    "parse_program": "app.core.loading",
    "two_losses": "app.core.seed",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'app.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
