"""Reading settings: the font, spacing and column of reflowable books, applied live while the
reader changes them (a small window beside the book, not modal)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.accessibility import announce
from desktop.reader.typography import Typography, installed_families, serif_family

DEFAULT_FAMILY = "Book serif (default)"


class ReadingSettings(QDialog):
    """Emits ``changed(typography, this_book_only)`` on every change."""

    changed = Signal(object, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reading settings")
        self.setModal(False)
        self._loading = False
        self.family = QComboBox()
        self.family.setAccessibleName("Font")
        self.family.addItem(f"{DEFAULT_FAMILY} — {serif_family()}", "")
        for name in installed_families():
            self.family.addItem(name, name)
        self.size_box = QSpinBox(minimum=6, maximum=48, suffix=" pt")
        self.size_box.setAccessibleName("Font size")
        self.line_spacing = QDoubleSpinBox(minimum=1.0, maximum=3.0, singleStep=0.1, decimals=2)
        self.line_spacing.setAccessibleName("Line spacing")
        self.paragraph_spacing = QDoubleSpinBox(
            minimum=0.0, maximum=3.0, singleStep=0.1, decimals=2, suffix=" em"
        )
        self.paragraph_spacing.setAccessibleName("Space between paragraphs")
        self.paragraph_indent = QDoubleSpinBox(
            minimum=0.0, maximum=5.0, singleStep=0.5, decimals=1, suffix=" em"
        )
        self.paragraph_indent.setAccessibleName("First-line indent")
        self.measure = QSpinBox(minimum=30, maximum=200, singleStep=2, suffix=" characters")
        self.measure.setAccessibleName("Line length")
        self.measure.setToolTip(
            "The longest line, in characters; 60 to 75 reads most easily. "
            "Two columns take lines half as long again."
        )
        self.margin = QSpinBox(minimum=0, maximum=400, singleStep=4, suffix=" px")
        self.margin.setAccessibleName("Smallest side margin")
        self.layout_box = QComboBox()
        self.layout_box.setAccessibleName("Layout")
        self.layout_box.addItem("Pages (turn a screen at a time)", "paged")
        self.layout_box.addItem("Scroll (one continuous flow)", "scroll")
        self.columns = QComboBox()
        self.columns.setAccessibleName("Columns")
        self.columns.addItem("By window width (two from 860 px)", 0)
        self.columns.addItem("One", 1)
        self.columns.addItem("Two", 2)
        self.ruby = QComboBox()  # ruby (furigana) readings of Japanese and Chinese books
        self.ruby.setAccessibleName("Ruby readings")
        self.ruby.addItem("Above the word", "above")
        self.ruby.addItem("After the word, in parentheses", "parentheses")
        self.ruby.addItem("Hidden", "off")
        self.ruby.setToolTip("Small readings (furigana) printed over words in Japanese books.")
        self.justify = QCheckBox("Justify lines (straight right edge)")
        self.book_styles = QCheckBox(
            "Use the book's styles (indents, centred and right-aligned text, small caps, breaks)"
        )
        self.caret = QCheckBox("Caret browsing (F7): the arrow keys move a caret, Shift selects")
        self.this_book = QCheckBox("Only for this book")
        self.this_book.setToolTip("Keep these settings for the open book; others keep theirs.")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Reading settings note")
        form = QFormLayout()
        form.addRow("Layout", self.layout_box)
        form.addRow("Columns", self.columns)
        form.addRow("Font", self.family)
        form.addRow("Size", self.size_box)
        form.addRow("Line spacing", self.line_spacing)
        form.addRow("Paragraph spacing", self.paragraph_spacing)
        form.addRow("First-line indent", self.paragraph_indent)
        form.addRow("Line length", self.measure)
        form.addRow("Side margin", self.margin)
        form.addRow("Ruby readings", self.ruby)
        self.reset_button = QPushButton("Defaults")
        self.reset_button.setAccessibleName("Back to the default look")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.reset_button, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.rejected.connect(self.close)
        self.reset_button.clicked.connect(self.reset)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        for w in (self.justify, self.book_styles, self.caret, self.this_book, self.note):
            layout.addWidget(w)
        layout.addWidget(buttons)
        for combo in (self.family, self.layout_box, self.columns, self.ruby):
            combo.currentIndexChanged.connect(self._emit)
            combo.currentIndexChanged.connect(partial(self._say_choice, combo))
        for spin in (self.size_box, self.measure, self.margin):
            spin.valueChanged.connect(self._emit)
        for dspin in (self.line_spacing, self.paragraph_spacing, self.paragraph_indent):
            dspin.valueChanged.connect(self._emit)
        for box in (self.justify, self.book_styles, self.caret, self.this_book):
            box.toggled.connect(self._emit)

    def _say_choice(self, combo: QComboBox, *_: object) -> None:
        """A choice changed with the arrow keys (its list closed) is said: Orca 43 does not
        speak a closed combo box's new value."""
        if combo.hasFocus() and not self._loading:
            announce(combo, combo.currentText())

    def present(self) -> None:
        """Show it and give it the keyboard (a window of its own, not a tool window that
        never takes the focus): its first control has it, or the one last used."""
        self.show()
        self.raise_()
        self.activateWindow()
        if not self.isAncestorOf(self.focusWidget() or self):
            self.layout_box.setFocus(Qt.FocusReason.ActiveWindowFocusReason)

    def set_values(self, typography: Typography, *, this_book: bool, has_book: bool) -> None:
        self._loading = True
        try:
            index = self.family.findData(typography.font_family)
            self.family.setCurrentIndex(max(0, index))
            self.size_box.setValue(typography.font_size)
            self.line_spacing.setValue(typography.line_spacing)
            self.paragraph_spacing.setValue(typography.paragraph_spacing)
            self.paragraph_indent.setValue(typography.paragraph_indent)
            self.measure.setValue(typography.measure)
            self.margin.setValue(typography.margin)
            self.justify.setChecked(typography.justify)
            self.book_styles.setChecked(typography.book_styles)
            self.layout_box.setCurrentIndex(max(0, self.layout_box.findData(typography.layout)))
            self.columns.setCurrentIndex(max(0, self.columns.findData(typography.columns)))
            self.caret.setChecked(typography.caret_browsing)
            self.ruby.setCurrentIndex(max(0, self.ruby.findData(typography.ruby)))
            self.this_book.setChecked(this_book and has_book)
            self.this_book.setEnabled(has_book)
        finally:
            self._loading = False

    def values(self) -> Typography:
        return replace(
            Typography(),
            font_family=str(self.family.currentData() or ""),
            font_size=self.size_box.value(),
            line_spacing=round(self.line_spacing.value(), 2),
            paragraph_spacing=round(self.paragraph_spacing.value(), 2),
            paragraph_indent=round(self.paragraph_indent.value(), 1),
            measure=self.measure.value(),
            margin=self.margin.value(),
            justify=self.justify.isChecked(),
            book_styles=self.book_styles.isChecked(),
            layout=str(self.layout_box.currentData() or "paged"),
            columns=int(self.columns.currentData() or 0),
            caret_browsing=self.caret.isChecked(),
            ruby=str(self.ruby.currentData() or "above"),
        )

    def reset(self) -> None:
        self.set_values(
            Typography(), this_book=self.this_book.isChecked(), has_book=self.this_book.isEnabled()
        )
        self._emit()

    def _emit(self, *_: object) -> None:
        if not self._loading:
            self.changed.emit(self.values(), self.this_book.isChecked())
