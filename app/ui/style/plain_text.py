"""A recording's text shown as text: Qt never reads it as rich text (HTML).

A label, a tooltip or a message box takes its text for HTML when it looks like
some (``Qt.mightBeRichText``: a tag before its first line break), so a node, a
title or an error message from a ``.lens`` file written as ``<h1>...`` or
``<img src=...>`` would be laid out as a page, or load an image. Labels that
show a program's or a recording's text are ``Qt.TextFormat.PlainText``
(:func:`plain`); tooltips and message boxes, which have no such setting for
every way they are shown, take their text through :func:`plain_tip`.
"""

from __future__ import annotations

import html
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QLabel, QMessageBox

__all__ = ["plain", "plain_tip"]

_Shown = TypeVar("_Shown", QLabel, QMessageBox)


def plain(widget: _Shown) -> _Shown:
    """``widget`` (a label, a message box) showing its text as plain text, whatever it holds."""
    widget.setTextFormat(Qt.TextFormat.PlainText)
    return widget


def plain_tip(text: str) -> str:
    """``text`` for a tooltip: itself, or its HTML escape where Qt would take it for HTML.

    >>> plain_tip("x.grad = [1, 2]"), plain_tip("<b>n0</b> & x")
    ('x.grad = [1, 2]', '<p style="white-space:pre-wrap">&lt;b&gt;n0&lt;/b&gt; &amp; x</p>')
    """
    if not GuiQt.mightBeRichText(text):  # in QtGui (Qt::mightBeRichText), not QtCore
        return text
    return '<p style="white-space:pre-wrap">' + html.escape(text, quote=False).replace("\n", "<br>") + "</p>"
