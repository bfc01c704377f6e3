"""The lesson's candidates that came after a recording's ``.lens`` bytes (NOTE [the lesson found in
the child] in ``app/core/lesson/candidates.py``): read, checked and kept beside the recording."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.model.recording import Recording

__all__ = ["split_lesson"]

log = logging.getLogger(__name__)


def split_lesson(answer: dict[str, Any], payload: bytes) -> tuple[bytes, Callable[[Recording], Recording]]:
    """The recording's own bytes, and what keeps the lesson's candidates beside the recording read
    from them (nothing, when the child sent none or sent what is not candidates)."""
    size = answer.get("lesson_bytes")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= len(payload):
        return payload, _as_is
    lesson = payload[len(payload) - size :]
    return payload[: len(payload) - size], lambda recording: _kept(recording, lesson)


def _as_is(recording: Recording) -> Recording:
    return recording


def _kept(recording: Recording, lesson: bytes) -> Recording:
    from app.core.lesson.candidates import candidates_from_json, keep_found

    try:
        keep_found(recording, candidates_from_json(json.loads(lesson)))
    except ValueError:  # JSONDecodeError and UnicodeDecodeError too: the window finds them itself
        log.warning("the recording child sent a lesson that is not one; it is found here instead")
    return recording
