"""Where the window goes on a screen, and how wide its side columns are: plain arithmetic.

No widget is touched here, so the rules are tested as functions of the screen's
available geometry and the text scale (the window calls them when it is placed
and when it is first shown).

# NOTE [the graph gets half]
On a 1280x720 projector the graph must get at least half of the window. Three
columns (code | graph | gradients) leave it ~56 % of the width and, under the
menu, toolbar, caption and timeline, ~77 % of the height: 43 %. So below
``TWO_COLUMNS_FROM`` every side panel shares one column on the left (code on
top, the others as tabs below it) and the graph keeps ~72 % of the width.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QRect, QSize

__all__ = [
    "MIN_WINDOW",
    "TIGHT_ERROR_SHARE",
    "TIGHT_HEIGHT",
    "DockPlan",
    "clamp_geometry",
    "dock_plan",
    "fills_screen",
    "fresh_geometry",
    "is_tight",
]

MIN_WINDOW = QSize(1280, 720)  # the smallest room we fit, and the most the window may ask for
ROOMY = QSize(1600, 1000)  # a screen bigger than this gets a window of this size, centred
TWO_COLUMNS_FROM = 1500  # window width (px) from which gradients and memory get a column of their own
LEFT_SHARE, RIGHT_SHARE, SINGLE_SHARE = 0.24, 0.20, 0.28
LEFT_MIN, RIGHT_MIN = 240, 200  # at text scale 1.0; they grow with the text
LEFT_MAX, RIGHT_MAX = 560, 480


class DockPlan(NamedTuple):
    """The side columns for a window width: ``right`` is 0 when every panel shares the left."""

    left: int
    right: int
    charts_on_top: bool = False  # gradients and memory as tabs beside the code, not in the short place

    @property
    def two_columns(self) -> bool:
        return self.right > 0


def fills_screen(available: QSize) -> bool:
    """Whether a fresh window should fill the screen (a laptop or a projector) rather than float."""
    return available.width() <= ROOMY.width() + 100 or available.height() <= ROOMY.height() + 100


def fresh_geometry(available: QRect) -> QRect:
    """The first window on a screen: all of a small one, a centred ``ROOMY`` window on a big one.

    >>> fresh_geometry(QRect(0, 0, 1280, 720))
    PySide6.QtCore.QRect(0, 0, 1280, 720)
    >>> fresh_geometry(QRect(0, 0, 2560, 1440))
    PySide6.QtCore.QRect(480, 220, 1600, 1000)
    """
    if fills_screen(available.size()):
        return QRect(available)
    rect = QRect(0, 0, ROOMY.width(), ROOMY.height())
    rect.moveCenter(available.center())
    return rect


def clamp_geometry(frame: QRect, available: QRect) -> QRect:
    """``frame`` made no larger than ``available`` and moved wholly onto it (a remembered
    geometry from a bigger screen, or one whose screen is gone).

    >>> clamp_geometry(QRect(100, 50, 1600, 1000), QRect(0, 0, 1280, 720))
    PySide6.QtCore.QRect(0, 0, 1280, 720)
    >>> clamp_geometry(QRect(1900, 900, 800, 600), QRect(0, 0, 1920, 1080))
    PySide6.QtCore.QRect(1120, 480, 800, 600)
    """
    width = min(frame.width(), available.width())
    height = min(frame.height(), available.height())
    left = min(max(frame.left(), available.left()), available.right() + 1 - width)
    top = min(max(frame.top(), available.top()), available.bottom() + 1 - height)
    return QRect(left, top, width, height)


def dock_plan(width: int, text_scale: float = 1.0, height: int | None = None) -> DockPlan:
    """Side column widths for a window ``width`` px wide (see NOTE [the graph gets half]); in one
    column of a window ``height`` px tall that :func:`is_tight` folds, the charts (gradients and
    memory) share the code's tall place as tabs: under the code, at 1280x720 and text 1.5, their
    ~125 px showed a gradient's value and half its first call's sum, and no bars.

    >>> dock_plan(1280)
    DockPlan(left=358, right=0, charts_on_top=False)
    >>> dock_plan(1280, 1.5, 720)
    DockPlan(left=360, right=0, charts_on_top=True)
    >>> dock_plan(1920, 1.5)
    DockPlan(left=461, right=384, charts_on_top=False)
    """
    scale = max(text_scale, 1.0)
    if width < TWO_COLUMNS_FROM:
        on_top = height is not None and is_tight(height, text_scale)
        return DockPlan(_between(width * SINGLE_SHARE, LEFT_MIN * scale, LEFT_MAX), 0, on_top)
    left = _between(width * LEFT_SHARE, LEFT_MIN * scale, LEFT_MAX)
    right = _between(width * RIGHT_SHARE, RIGHT_MIN * scale, RIGHT_MAX)
    return DockPlan(left, right)


def _between(value: float, low: float, high: float) -> int:
    return round(min(max(value, low), high))


TIGHT_HEIGHT = 560  # window pixels per unit of text scale: below, the code and the error fold up
TIGHT_ERROR_SHARE = 0.32  # of the stage's height, the error panel's least there (ERROR_SHARE else)


def is_tight(height: int, scale: float) -> bool:
    """Whether a window ``height`` pixels tall at text ``scale`` folds what repeats itself (the
    program's summary and title over the code, the error heading's call and node, which the
    caption says): at 1280x720 and text 1.5 the code kept four lines and the first fix was below
    the error panel's fold. 720 px at text 1.0 and 1080 px at 1.5 fold nothing.

    >>> is_tight(720, 1.5), is_tight(720, 1.0), is_tight(1080, 1.5)
    (True, False, False)
    """
    return height < TIGHT_HEIGHT * scale
