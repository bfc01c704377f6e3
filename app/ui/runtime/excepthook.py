"""One handler for every exception that escapes a Qt slot or a worker thread.

PySide6 hands an exception raised inside a slot to :data:`sys.excepthook` and
carries on; by default that only prints to a console a classroom never sees.
:func:`install_exception_handler` logs the traceback and shows one plain
paragraph through ``show`` (a status line, a banner), always on the GUI
thread, and never raises: the program keeps running.

>>> from PySide6.QtCore import QCoreApplication
>>> app = QCoreApplication.instance() or QCoreApplication([])
>>> shown = []
>>> uninstall = install_exception_handler(shown.append)
>>> sys.excepthook(ValueError, ValueError("bad value"), None)
>>> uninstall()
>>> shown[0].startswith("Something went wrong: ValueError: bad value.")
True
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from types import TracebackType

from PySide6.QtCore import QObject, Signal, Slot

__all__ = ["describe_exception", "install_exception_handler"]

MAX_MESSAGE = 300
log = logging.getLogger(__name__)


def describe_exception(exc_type: type[BaseException], exc: BaseException | None) -> str:
    """One paragraph for a person: what failed and that the program still runs."""
    text = str(exc).strip().splitlines()[0] if exc is not None and str(exc).strip() else ""
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    what = f"{exc_type.__name__}: {text}" if text else exc_type.__name__
    return (
        f"Something went wrong: {what.rstrip('.')}. Autograd Lens is still running, but the action "
        "you took may not have finished; the full details are in the log."
    )


class _Relay(QObject):
    """Lives on the GUI thread, so ``show`` runs there even for a worker's exception."""

    message = Signal(str)

    def __init__(self, show: Callable[[str], None]) -> None:
        super().__init__()
        self._show = show
        self.message.connect(self._deliver)

    @Slot(str)
    def _deliver(self, text: str) -> None:
        try:
            self._show(text)
        except Exception:  # a broken display must not start a loop of errors
            log.exception("showing an error failed")


def _instance(exc_type: type[BaseException]) -> BaseException:
    try:
        return exc_type()
    except Exception:  # an exception type that needs arguments
        return RuntimeError(exc_type.__name__)


def install_exception_handler(show: Callable[[str], None]) -> Callable[[], None]:
    """Route unhandled exceptions to ``show`` and the log; returns a function that undoes it."""
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook
    relay = _Relay(show)

    def handle(exc_type: type[BaseException], exc: BaseException | None, tb: TracebackType | None) -> None:
        exc = exc if exc is not None else _instance(exc_type)
        if issubclass(exc_type, KeyboardInterrupt):
            previous_hook(exc_type, exc, tb)
            return
        log.error("unhandled exception", exc_info=(exc_type, exc, tb))
        relay.message.emit(describe_exception(exc_type, exc))

    def handle_thread(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        handle(args.exc_type, args.exc_value, args.exc_traceback)

    def uninstall() -> None:
        sys.excepthook = previous_hook
        threading.excepthook = previous_thread_hook
        relay.message.disconnect()

    sys.excepthook = handle
    threading.excepthook = handle_thread
    return uninstall
