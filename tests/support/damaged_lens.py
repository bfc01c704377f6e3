"""A ``.lens`` file written as the writer writes it, then one of its steps changed by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.lensfile import lens_bytes
from app.core.lensfile.container import GZIP_MAGIC, inflate, split
from app.core.model.recording import Recording


def lens_with_step(
    recording: Recording, path: Path, index: int, change: Callable[[dict[str, Any]], None]
) -> Path:
    """``recording`` saved to ``path`` as plain JSON, its step ``index`` passed through ``change``."""
    body = split(lens_bytes(recording))[1]
    text = inflate(body) if body.startswith(GZIP_MAGIC) else body
    data = json.loads(text)
    change(data["steps"][index])
    path.write_text(json.dumps(data))
    return path


def unknown_slot_node(step: dict[str, Any]) -> None:
    """A step that frees a slot of a node the graph has not: only the whole step's check sees it."""
    step["slot_changes"] = {"no-such-node": {"self": "freed"}}
