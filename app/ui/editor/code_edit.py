"""A plain-text box for Python: line numbers, syntax colours, Tab as spaces, one error mark.

The learner's edits and the program's own writes are told apart: :meth:`CodeEdit.write` puts a
program's text in without it counting as an edit, and only typing (pasting, undoing) emits
``text_edited``. A click in the line-number margin emits ``gutter_clicked`` and does not move the
text cursor, so a view can use the margin for navigation while the text stays the learner's.

The error mark is a wavy underline from the error's column to the end of its
line, a shaded line, a ``!`` before its number, and the message as the line's
tooltip. Its colour, like the syntax colours, comes from the palette (red at
the palette's lightness), so it follows the theme; a stylesheet may still set
``CodeEdit { qproperty-errorColor: ... }``.

# NOTE [code wraps between tokens]
Where lines wrap (the Code panel, unless View ▸ Wrap code lines is unchecked: code_panel.py's
NOTE [code wraps by default]), Qt finds the wrapping points with
Unicode's rules for prose: in code they are only the spaces, so ``F.layer_norm(h,`` is one word,
and a word wider than the room left was cut anywhere (``F.layer_nor`` / ``m(h, [8])``). Zero-width
spaces would give Qt the points (as :func:`~app.ui.style.breakable.breakable_code` does for labels), but
this text is the program: edited, copied and counted in columns, so nothing is added to it.
Instead the document's layout (:class:`_CodeLayout`) lays a block that wraps out again, each line
ending at the last of :func:`~app.ui.style.breakable.code_breaks` that fits; only a token wider than the
whole line is still cut anywhere.
"""

from __future__ import annotations

import math
from bisect import bisect_left

from PySide6.QtCore import Property, QEvent, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import QLabel, QPlainTextDocumentLayout, QPlainTextEdit, QTextEdit, QToolTip, QWidget

from app.ui.editor.python_highlighter import PythonHighlighter
from app.ui.style.breakable import code_breaks, keyword_breaks
from app.ui.style.plain_text import plain_tip
from app.ui.style.theme import hue_colour, mixed

__all__ = ["INDENT", "CodeEdit", "error_colour", "plain_text"]

INDENT = "    "


def plain_text(edit: QPlainTextEdit) -> str:
    """The exact text: unlike ``toPlainText`` this keeps non-breaking spaces."""
    return edit.document().toRawText().replace("\u2029", "\n")


def error_colour(palette: QPalette) -> QColor:
    """Red, as light as reads well on the palette's background."""
    return hue_colour(palette, 0.0)


class _CodeLayout(QPlainTextDocumentLayout):
    """Qt's plain-text layout, but a wrapped line ends between tokens (NOTE [code wraps between tokens]).

    Qt lays a block out when it is first asked for its rectangle (``blockBoundingRect``, which the
    editor, the cursor and the painting all go through), or at once when an edit changes it; either
    way the rectangle is asked for before the lines are used, and here a block Qt laid out over
    several lines is laid out again. The text option tells whose lines a block has: Qt sets the
    document's, and this layout measures with ``WrapAnywhere``.
    """

    def blockBoundingRect(self, block: QTextBlock) -> QRectF:
        rect = super().blockBoundingRect(block)
        layout = block.layout()
        if layout.lineCount() <= 1 or layout.textOption().wrapMode() == QTextOption.WrapMode.WrapAnywhere:
            return rect  # one line (nothing to choose), or laid out here already
        self._lay_out(block, layout)
        return super().blockBoundingRect(block)

    def _lay_out(self, block: QTextBlock, layout: QTextLayout) -> None:
        width = layout.lineAt(0).width()  # what Qt allowed: the view's width less the margins
        option = QTextOption(self.document().defaultTextOption())
        option.setWrapMode(QTextOption.WrapMode.WrapAnywhere)  # so a line takes all that fits
        layout.setTextOption(option)
        text, margin, top = block.text(), self.document().documentMargin(), 0.0
        breaks, second = code_breaks(text), keyword_breaks(text)
        layout.beginLayout()
        while (line := layout.createLine()).isValid():
            line.setLeadingIncluded(True)
            line.setLineWidth(width)
            start = line.textStart()
            end = start + line.textLength()
            if end < len(text) and not text[end - 1].isspace():
                cut = _last_between(breaks, start, end) or _last_between(second, start, end)
                if cut is not None:
                    line.setNumColumns(cut - start, width)
            line.setPosition(QPointF(margin, top))
            top += line.height() + min(math.ceil(line.leading()), 0)  # as Qt stacks its lines
        layout.endLayout()
        lines_before = self.document().lineCount()
        block.setLineCount(layout.lineCount())
        if self.document().lineCount() != lines_before:  # the scroll bar counts lines
            self.documentSizeChanged.emit(self.documentSize())


def _last_between(breaks: list[int], start: int, end: int) -> int | None:
    """The last of the sorted ``breaks`` after ``start`` and at or before ``end``, if any."""
    last = bisect_left(breaks, end + 1) - 1
    return breaks[last] if last >= 0 and start < breaks[last] < end else None


class _LineNumbers(QWidget):
    def __init__(self, editor: CodeEdit) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.line_number_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_line_numbers(self, event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._editor.gutter_clicked.emit(self._editor.line_at_y(event.position().y()))
        event.accept()  # the margin is not text: the cursor stays where the learner left it


class CodeEdit(QPlainTextEdit):
    """Monospace, no wrapping, line numbers, Python colours, and :meth:`mark_error`."""

    text_edited = Signal()  # the learner changed the text (not :meth:`write`)
    text_written = Signal()  # :meth:`write` replaced the text
    gutter_clicked = Signal(int)  # the 1-based line whose number was clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Made first: the highlighter holds the document. Qt owns both (the editor its document, the
        # document its layout), yet both are kept here too: with no Python reference to it the
        # document's wrapper was taken by the garbage collector, which deleted the document of a live
        # editor (a crash a few windows later), and the layout's wrapper carries the method Qt calls.
        self._document = QTextDocument(self)
        self._layout = _CodeLayout(self._document)
        self._document.setDocumentLayout(self._layout)
        self.setDocument(self._document)
        self._writing = False
        self._text = ""  # the text as last seen: a highlighter's repaint changes no character
        self._layers: dict[str, list[QTextEdit.ExtraSelection]] = {}
        self.highlighter = PythonHighlighter(self.document(), self.palette())
        self._numbers = _LineNumbers(self)
        self._error_line: int | None = None
        self._error_col = 1
        self._error_message = ""
        self._error_colour: QColor | None = None  # None: from the palette
        self._note = QLabel(self)  # a line under the code (set_note), e.g. why the marks are off
        self._note.setObjectName("codeNote")
        self._note.setWordWrap(True)
        self._note.setTextFormat(Qt.TextFormat.PlainText)
        self._note.hide()
        self._note_texts = ("", "")  # the long text and the short one (set_note)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))  # after: changeEvent
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.textChanged.connect(self._on_text_changed)
        self.blockCountChanged.connect(self._update_margin)
        self.updateRequest.connect(self._update_numbers)
        self._update_margin()

    # A stylesheet may set it: CodeEdit { qproperty-errorColor: ... }
    def _get_error_colour(self) -> QColor:
        return QColor(self._error_colour) if self._error_colour else error_colour(self.palette())

    def _set_error_colour(self, colour: QColor) -> None:
        self._error_colour = QColor(colour)
        self._redraw_error()

    errorColor = Property(QColor, _get_error_colour, _set_error_colour)

    def error_colour(self) -> QColor:
        """The colour errors are drawn in now (the stylesheet's, else the palette's red)."""
        return self._get_error_colour()

    @property
    def error_line(self) -> int | None:
        return self._error_line

    @property
    def error_message(self) -> str:
        return self._error_message

    def text(self) -> str:
        return plain_text(self)

    def known_text(self) -> str:
        """The text as of the last change (no copy out of the document: cheap to compare)."""
        return self._text

    def write(self, text: str) -> None:
        """Put ``text`` in as the program's own (not an edit); nothing is written when it is there."""
        if text == self._text:
            return
        self._writing = True
        try:
            self.setPlainText(text)
        finally:
            self._writing = False
        self._text = self.text()
        self.text_written.emit()

    def _on_text_changed(self) -> None:
        # Colouring a line (QSyntaxHighlighter) signals a change too: only new characters are an edit.
        if self._writing:
            return
        text = self.text()
        if text != self._text:
            self._text = text
            self.text_edited.emit()

    def set_selections(self, layer: str, selections: list[QTextEdit.ExtraSelection]) -> None:
        """Show ``selections`` as ``layer``; layers are drawn in the order first set, errors last."""
        self._layers[layer] = selections
        errors = self._layers.get("error", [])
        others = [
            s for name, layer_selections in self._layers.items() if name != "error" for s in layer_selections
        ]
        self.setExtraSelections([*others, *errors])

    def mark_error(self, line: int, col: int, message: str = "") -> None:
        """Shade ``line`` and underline from ``col`` to the end of that line (1-based)."""
        block = self.document().findBlockByNumber(max(0, min(line, self.blockCount()) - 1))
        self._error_line, self._error_col = block.blockNumber() + 1, col
        self._error_message = message
        self._redraw_error()

    def clear_error(self) -> None:
        self._error_line, self._error_message = None, ""
        self.set_selections("error", [])
        self._numbers.update()

    def _redraw_error(self) -> None:
        if self._error_line is None:
            return
        block = self.document().findBlockByNumber(self._error_line - 1)
        colour = self._get_error_colour()
        length = len(block.text())
        start = min(max(self._error_col - 1, 0), max(length - 1, 0))
        shade = QTextEdit.ExtraSelection()
        shade_format = QTextCharFormat()
        shade_format.setBackground(QColor(colour.red(), colour.green(), colour.blue(), 50))
        shade_format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        shade.format = shade_format
        shade.cursor = QTextCursor(block)
        underline = QTextEdit.ExtraSelection()
        underline_format = QTextCharFormat()
        underline_format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        underline_format.setUnderlineColor(colour)
        underline.format = underline_format
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + start)
        cursor.setPosition(block.position() + max(length, start + 1), QTextCursor.MoveMode.KeepAnchor)
        underline.cursor = cursor
        self.set_selections("error", [shade, underline])
        self._numbers.update()

    # -- events

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Program code is Python: Tab inserts spaces, never a tab character; Return keeps the
        # line's indent (one more after a ``:``), so a line typed into a loop's body stays in it;
        # Backspace in an indent takes one level back.
        plain = event.modifiers() in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        if plain and event.key() == Qt.Key.Key_Tab:
            self.insertPlainText(INDENT)
        elif plain and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.insertPlainText("\n" + _next_indent(self._text_before_cursor()))
        elif plain and event.key() == Qt.Key.Key_Backspace and self._dedent():
            pass
        else:
            super().keyPressEvent(event)

    def _text_before_cursor(self) -> str:
        cursor = self.textCursor()
        return cursor.block().text()[: cursor.positionInBlock()]

    def _dedent(self) -> bool:
        """Backspace in a line's leading spaces, with nothing selected: back to the level before."""
        cursor = self.textCursor()
        before = self._text_before_cursor()
        if cursor.hasSelection() or not before or before.strip(" "):
            return False
        cursor.movePosition(
            QTextCursor.MoveOperation.Left,
            QTextCursor.MoveMode.KeepAnchor,
            (len(before) - 1) % len(INDENT) + 1,
        )
        cursor.removeSelectedText()
        return True

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self.highlighter.follow_palette(self.palette())  # the theme changed
            self._redraw_error()
        if event.type() == QEvent.Type.FontChange:  # the margin is measured in the font's digits
            self._update_margin()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            line = self.cursorForPosition(event.pos()).blockNumber() + 1
            if self._error_message and line == self._error_line:
                QToolTip.showText(event.globalPos(), plain_tip(self._error_message), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    # -- line numbers

    def line_numbers(self) -> QWidget:
        """The margin the line numbers are drawn in (a click there emits ``gutter_clicked``)."""
        return self._numbers

    def line_at_y(self, y: float) -> int:
        """The 1-based line at height ``y`` of the viewport (or of the margin beside it)."""
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        while block.isValid():
            if (
                self.blockBoundingGeometry(block).translated(offset).bottom() >= y
                or not block.next().isValid()
            ):
                return block.blockNumber() + 1
            block = block.next()
        return 1

    def line_marker(self, number: int) -> tuple[str, QColor] | None:
        """A glyph drawn before line ``number``'s number, and its colour (none here: a view's hook)."""
        return None

    def line_number_width(self) -> int:
        digits = len(str(max(1, self.blockCount()))) + 1  # one more for the error marker
        return 8 + self.fontMetrics().horizontalAdvance("9") * (digits + 1) + self._marker_width()

    def _marker_width(self) -> int:
        return self.fontMetrics().horizontalAdvance("▶ ")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._note_height() != self.viewportMargins().bottom():
            self._update_margin()  # the note wraps anew at this width
        self._place_numbers()

    # -- a note under the code -------------------------------------------------------------------
    def set_note(self, text: str, short: str = "") -> None:
        """Show ``text`` in a strip under the code, above any scroll bar ("" hides it).

        Where ``text`` would take more than two lines or a third of the box (a narrow
        dock, a large text scale), ``short`` is shown instead: the code keeps its room.
        """
        if (text, short) == self._note_texts:
            return
        self._note_texts = (text, short)
        self._note.setText(text)
        self._note.setVisible(bool(text))
        self._update_margin()

    def note(self) -> str:
        """The note shown under the code ("" when none)."""
        return "" if self._note.isHidden() else self._note.text()

    def _note_height(self) -> int:
        """The strip's height at this width, choosing the long or the short text to fit."""
        text, short = self._note_texts
        if not text:
            return 0
        width = self.contentsRect().width()
        room = max(self.contentsRect().height() // 3, 1)
        lines = self._note.fontMetrics().lineSpacing()
        self._note.setText(text)
        height = self._note.heightForWidth(width)
        if short and (height > room or height > 2 * lines + self._note.contentsMargins().top() * 2 + 8):
            self._note.setText(short)
            height = self._note.heightForWidth(width)
        return max(min(height, room), lines) if width > 0 else self._note.sizeHint().height()

    def _place_numbers(self) -> None:
        rect, view = self.contentsRect(), self.viewport().geometry()
        self._numbers.setGeometry(QRect(rect.left(), view.top(), self.line_number_width(), view.height()))
        if not self._note.isHidden():
            self._note.setGeometry(QRect(rect.left(), view.bottom() + 1, rect.width(), self._note_height()))

    def paint_line_numbers(self, area: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(area)
        # NOTE [palette colours]: from the text's own background and colour, which every theme sets
        # (alternateBase and placeholderText are not: a light gutter in the dark theme)
        base, ink = self.palette().base().color(), self.palette().text().color()
        painter.fillRect(event.rect(), mixed(base, ink, 0.07))
        number_colour = mixed(ink, base, 0.4)
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        error = self._get_error_colour()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            is_error = number == self._error_line
            # The "!" makes the error line findable without colour.
            text = f"!{number}" if is_error else str(number)
            painter.setPen(error if is_error else number_colour)
            painter.drawText(0, top, area.width() - 4, height, Qt.AlignmentFlag.AlignRight, text)
            marker = self.line_marker(number)
            if marker is not None:
                painter.setPen(marker[1])
                painter.drawText(2, top, self._marker_width(), height, Qt.AlignmentFlag.AlignLeft, marker[0])
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    def _update_margin(self) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, self._note_height())
        self._place_numbers()

    def _update_numbers(self, rect: QRect, dy: int) -> None:
        if dy:
            self._numbers.scroll(0, dy)
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())


def _next_indent(line: str) -> str:
    """The indent of the line after ``line`` (the text before the cursor): the same, or one level
    more when it opens a block (ends with ``:``, a comment after it aside).

    >>> _next_indent("    for i in range(3):  # loop"), _next_indent("        h = h.detach()")
    ('        ', '        ')
    """
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    code = line.split("#", 1)[0].rstrip()  # a "#" inside a string only costs the extra level
    return indent + INDENT if code.endswith(":") else indent
