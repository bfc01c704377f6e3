"""Fixtures shared by the window, panel and session tests."""

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(scope="session")
def two_losses():
    """Read-only, as every fixture of a recording: one recording for the whole run."""
    from tests.support.recorded import builtin_recording

    return builtin_recording("two-losses")


@pytest.fixture(scope="session")
def forgot_retain():
    from tests.support.recorded import builtin_recording

    return builtin_recording("forgot-retain")


@pytest.fixture
def lens_reads(monkeypatch):
    """The size of each recording ``app.core.lensfile`` decodes and checks, as it reads them."""
    from app.core.lensfile import files

    reads = []
    real = files.read

    def counted(data, **how):
        reads.append(len(data))
        return real(data, **how)

    monkeypatch.setattr(files, "read", counted)
    return reads


@pytest.fixture
def session(qtbot):
    from app.ui.runtime.session import Session

    made = Session()
    yield made
    made.pause()
    made.worker.wait_idle()


@pytest.fixture(autouse=True)
def _collect_between_tests():
    """Once a window's session has taken over garbage collection (NOTE [collect on the GUI
    thread]), the tests' own thread collects what is due after each test, as the event loop
    would between events: tests that never spin the loop would otherwise never collect."""
    import sys

    yield
    collector_module = sys.modules.get("app.ui.runtime.collector")
    collector = collector_module.GuiCollector.installed() if collector_module else None
    if collector is not None:
        collector.check()


# Scripts and pasted snippets the tests record as a learner's own files: data, never collected
# or imported as tests.
collect_ignore_glob = ["support/scripts/*", "support/snippets/*"]


@pytest.fixture(autouse=True)
def _own_script_marks_stay_in_their_test():
    """What a test's window marked as the user's own script (the trusted-script button, "Apply to
    file") is process-wide, as in the window: it is undone after the test, so no later test opens
    another's recording as its own."""
    from app.child.proofs import RUN_RECORDING_ENV, SCRIPT_ENV

    saved = {name: os.environ.get(name) for name in (SCRIPT_ENV, RUN_RECORDING_ENV)}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_collection_modifyitems(items):
    """NOTE [held is reachable] in app/core/recorder/reach.py: ``lens.record()`` walks what its
    caller's globals reach, on every line. A doctest's globals hold pytest's ``getfixture``, a
    bound method of the item's fixture request, which reaches the whole session (every collected
    item, every cached fixture value): each doctest of ``app/lens.py`` walked all of it, seconds
    per line in a full run. Doctests that never ask for a fixture run without that name, as they
    run in a plain ``python -m doctest``."""
    from functools import partial

    from _pytest.doctest import DoctestItem

    for item in items:
        if not isinstance(item, DoctestItem) or item.dtest is None:
            continue
        if not any("getfixture" in example.source for example in item.dtest.examples):
            item.setup = partial(_setup_without_getfixture, item.setup, item.dtest.globs)


def _setup_without_getfixture(setup, globs):
    setup()
    globs.pop("getfixture", None)
