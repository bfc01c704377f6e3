"""Fixtures the window's tests share."""

import pytest

from app.ui.window import dialogs


@pytest.fixture
def no_modal_dialogs(monkeypatch) -> list[str]:
    """No question is asked: each would wait for a click no test gives. Every question is answered
    "Discard", and the titles of what the window asked or told are returned, in order."""
    asked: list[str] = []

    def ask(parent, title, text, choices, default):
        asked.append(title)
        return "Discard"

    monkeypatch.setattr(dialogs, "ask", ask)
    monkeypatch.setattr(dialogs, "inform", lambda parent, title, text: asked.append(title))
    return asked
