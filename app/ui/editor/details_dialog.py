"""The words around a program (name, title, summary, notes), edited in a small dialog.

They used to sit under the code as a form; the code is what a learner edits,
so these moved out of its way. The dialog checks them with the same loader
that reads files (:func:`app.core.loading.program_from_dict`) and stays open,
with the message at the field, until they would load.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.ui.editor.code_edit import error_colour, plain_text
from app.ui.style.plain_text import plain

__all__ = ["DetailsDialog", "ProgramDetails", "check_details"]


class ProgramDetails(NamedTuple):
    name: str
    title: str
    summary: str
    notes: str

    @classmethod
    def of(cls, program: Program) -> ProgramDetails:
        return cls(program.name, program.title, program.summary, program.notes)


def check_details(details: ProgramDetails) -> ProgramError | None:
    """Why these details would not load (the field is named in the error), or None."""
    try:
        from app.core.loading import program_from_dict  # the language's checks need torch: not at start

        program_from_dict({**details._asdict(), "program": {"code": ""}})
    except ProgramError as err:
        return err
    return None


class DetailsDialog(QDialog):
    """Edit a program's details; :meth:`details` holds them once accepted."""

    def __init__(self, details: ProgramDetails, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Program details")
        self.name_edit = QLineEdit(details.name)
        self.title_edit = QLineEdit(details.title)
        self.summary_edit = QPlainTextEdit(details.summary)
        self.notes_edit = QPlainTextEdit(details.notes)
        self.error_label = plain(QLabel())
        self.error_label.setObjectName("detailsError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Title", self.title_edit)
        form.addRow("Summary", self.summary_edit)
        form.addRow("Notes", self.notes_edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

    def details(self) -> ProgramDetails:
        return ProgramDetails(
            self.name_edit.text(),
            self.title_edit.text(),
            plain_text(self.summary_edit),
            plain_text(self.notes_edit),
        )

    def accept(self) -> None:
        """Close only with details that load; otherwise say why, at the field."""
        err = check_details(self.details())
        if err is None:
            super().accept()
            return
        fields: dict[str, QWidget] = {
            "name": self.name_edit,
            "title": self.title_edit,
            "summary": self.summary_edit,
            "notes": self.notes_edit,
        }
        field = fields.get(err.field or "", self.name_edit)
        field.setFocus()
        self.error_label.setText(f"{(err.field or 'details').capitalize()}: {err.message}")
        self.error_label.setStyleSheet(f"color: {error_colour(self.palette()).name()}; font-weight: bold;")
        self.error_label.show()

    @staticmethod
    def ask(details: ProgramDetails, parent: QWidget | None = None) -> ProgramDetails | None:
        """Show the dialog; the new details, or None when cancelled."""
        dialog = DetailsDialog(details, parent)
        return dialog.details() if dialog.exec() == QDialog.DialogCode.Accepted else None
