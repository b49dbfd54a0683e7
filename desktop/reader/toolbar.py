"""The reader's toolbar: Back/Forward, previous/next page, the page box, zoom, theme, "Read to
here" and "Finished". It only shows and forwards: the reader connects its buttons."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QToolButton,
    QWidget,
)

from core.store.library import BookInfo
from desktop.widgets import tool_button


class ReaderToolbar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.back_button = tool_button("←")
        self.back_button.setToolTip("Back to where you were before the jump (Alt+Left)")
        self.back_button.setAccessibleName("Back")
        self.forward_button = tool_button("→")
        self.forward_button.setToolTip("Forward again (Alt+Right)")
        self.forward_button.setAccessibleName("Forward")
        self.prev_button = tool_button("◀")
        self.prev_button.setAccessibleName("Previous page")
        self.next_button = tool_button("▶")
        self.next_button.setAccessibleName("Next page")
        self.rtl = False  # the open book's pages turn right to left
        self.page_box = QSpinBox()
        self.page_box.setAccessibleName("Page number")
        self.page_box.setMinimum(1)
        self.page_box.setKeyboardTracking(False)
        self.page_total = QLabel("")
        self.zoom_out_button = tool_button("−")
        self.zoom_out_button.setAccessibleName("Zoom out")
        self.zoom_in_button = tool_button("+")
        self.zoom_in_button.setAccessibleName("Zoom in")
        self.fit_button = tool_button("Fit width")
        self.fit_button.setAccessibleName("Fit width")
        self.read_to_button = tool_button("Read to here")
        self.read_to_button.setToolTip(
            "I have read up to this page: the assistant may read up to here, not further "
            "(Ctrl+Shift+R)."
        )
        self.read_to_button.setAccessibleName("I have read up to here")
        self.theme_box = QComboBox()
        self.theme_box.addItems(["light", "sepia", "dark", "contrast"])
        self.theme_box.setAccessibleName("Reading theme")
        self.finished_box = QCheckBox("Finished")
        self.finished_box.setToolTip(
            "Mark the book finished: the assistant may then read all of it (spoilers)."
        )
        self.finished_box.setAccessibleName("Finished this book")
        bar = QHBoxLayout(self)
        bar.setContentsMargins(4, 2, 4, 2)
        for left in (
            self.back_button,
            self.forward_button,
            self.prev_button,
            self.page_box,
            self.page_total,
            self.next_button,
        ):
            bar.addWidget(left)
        bar.addStretch(1)
        for right in (
            self.zoom_out_button,
            self.zoom_in_button,
            self.fit_button,
            self.theme_box,
            self.read_to_button,
            self.finished_box,
        ):
            bar.addWidget(right)
        self._say_turns()

    def set_right_to_left(self, rtl: bool) -> None:
        """A book whose pages turn right to left (``rtl``): the left-pointing button, on the
        left, turns forward — as the Left arrow key and the page's left edge do — and the
        right-pointing one goes back. Tab still goes through them from left to right."""
        if rtl == self.rtl:
            return
        self.rtl = rtl
        bar = self.layout()
        assert isinstance(bar, QHBoxLayout)
        left, right = self.turn_buttons()
        bar.removeWidget(left)
        bar.removeWidget(right)
        bar.insertWidget(bar.indexOf(self.page_box), left)
        bar.insertWidget(bar.indexOf(self.page_total) + 1, right)
        QWidget.setTabOrder(self.forward_button, left)
        QWidget.setTabOrder(left, self.page_box)
        QWidget.setTabOrder(self.page_box, right)
        self._say_turns()

    def turn_buttons(self) -> tuple[QToolButton, QToolButton]:
        """The page-turn buttons as they stand, (left, right)."""
        if self.rtl:
            return self.next_button, self.prev_button
        return self.prev_button, self.next_button

    def _say_turns(self) -> None:
        """Arrows by position, words by what each does."""
        left, right = self.turn_buttons()
        left.setText("◀")
        right.setText("▶")
        if self.rtl:
            self.next_button.setToolTip(
                "Next page (Page Down or Left arrow): this book's pages turn right to left"
            )
            self.prev_button.setToolTip("Previous page (Page Up or Right arrow)")
        else:
            self.next_button.setToolTip("Next page (Page Down)")
            self.prev_button.setToolTip("Previous page (Page Up)")
        direction = "Pages turn right to left" if self.rtl else ""
        for button in (left, right):
            button.setAccessibleDescription(direction)

    def set_enabled(self, enabled: bool) -> None:
        """Everything but Back/Forward (the reading session says when those work)."""
        for w in (
            self.prev_button,
            self.next_button,
            self.page_box,
            self.zoom_in_button,
            self.zoom_out_button,
            self.fit_button,
            self.theme_box,
            self.finished_box,
            self.read_to_button,
        ):
            w.setEnabled(enabled)

    def set_history(self, can_back: bool, can_forward: bool) -> None:
        self.back_button.setEnabled(can_back)
        self.forward_button.setEnabled(can_forward)

    def set_book(self, book: BookInfo, *, pdf: bool) -> None:
        self.page_box.blockSignals(True)
        self.page_box.setMaximum(max(1, book.page_count))
        self.page_box.blockSignals(False)
        self.page_total.setText(f"of {book.page_count}")
        self.finished_box.blockSignals(True)
        self.finished_box.setChecked(book.finished)
        self.finished_box.blockSignals(False)
        if pdf:
            self.zoom_in_button.setVisible(True)
            self.zoom_out_button.setVisible(True)
        self.fit_button.setVisible(pdf)

    def show_page(self, page: int, page_count: int, label: str) -> None:
        """The page box and the arrows for ``page`` (``label``: its printed number)."""
        self.page_box.blockSignals(True)
        self.page_box.setValue(page)
        self.page_box.blockSignals(False)
        self.page_box.setToolTip(f"Printed page {label}" if label and label != str(page) else "")
        self.prev_button.setEnabled(page > 1)
        self.next_button.setEnabled(page < page_count)
