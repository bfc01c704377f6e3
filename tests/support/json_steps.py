"""The full state at each step of a ``trace --json`` object, from the changes its steps carry."""

from __future__ import annotations

from typing import Any


def full_states(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per step: ``saved_state`` and ``versions`` as ``{node: {slot: ...}}``, and ``grads`` (every
    leaf, None until its ``.grad`` is set), each the step's changes applied over the ones before."""
    slots: dict[str, dict[str, Any]] = {}
    versions: dict[str, dict[str, Any]] = {}
    grads: dict[str, Any] = dict.fromkeys(data["leaves"])
    out = []
    for step in data["steps"]:
        for node, changes in step["slot_changes"].items():
            slots.setdefault(node, {}).update(changes)
        for node, changes in step["version_changes"].items():
            versions.setdefault(node, {}).update(changes)
        grads.update(step["grad_changes"])
        out.append({
            "saved_state": {n: dict(s) for n, s in slots.items()},
            "versions": {n: dict(v) for n, v in versions.items()},
            "grads": dict(grads),
        })  # fmt: skip
    return out
