"""The side panel's tabs in as many rows as its width needs: every name whole and in sight
(a tab bar scrolled its seven tabs behind arrows at 200 px, issue 39 item 8).

``TabRows`` shows one checkable button per tab of a ``QTabWidget`` (whose own bar is
hidden), kept in step with it: a click or Space on a button shows that tab, and a tab shown
any other way checks its button. ``FlowLayout`` lays the buttons out left to right, wrapping.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QTabWidget,
    QToolButton,
    QWidget,
)

GAP = 2  # pixels between buttons, and between rows


class FlowLayout(QLayout):
    """Items left to right, in a new row when the next does not fit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setContentsMargins(2, 2, 2, 2)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _place(self, rect: QRect, *, move: bool) -> int:
        """Lay the items out in ``rect`` (only measure without ``move``): the height used."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, row = area.x(), area.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > area.right() + 1 and x > area.x():
                x, y, row = area.x(), y + row + GAP, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + GAP
            row = max(row, hint.height())
        return y + row - rect.y() + margins.bottom()


MIN_TARGET = 24


class TabRows(QWidget):
    """The buttons of ``tabs``' tabs, in rows."""

    def __init__(self, tabs: QTabWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabs = tabs
        self.setAccessibleName("Side panels")
        self.flow = FlowLayout(self)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.buttons: list[QToolButton] = []
        tabs.currentChanged.connect(self._check)

    def rebuild(self) -> None:
        """One button per tab, in the tabs' order (after a tab is added or removed)."""
        for button in self.buttons:
            self.group.removeButton(button)
            self.flow.removeWidget(button)
            button.hide()  # now: deleteLater waits for the event loop
            button.deleteLater()
        self.buttons = []
        for index in range(self.tabs.count()):
            name = self.tabs.tabText(index)
            button = QToolButton(self)
            button.setText(name)
            button.setAccessibleName(name)
            button.setToolTip(self.tabs.tabToolTip(index) or name)
            button.setCheckable(True)
            button.setAutoRaise(True)
            button.setMinimumHeight(MIN_TARGET)  # WCAG 2.5.8: a target 24 x 24 px or more
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            button.clicked.connect(lambda _=False, i=index: self.tabs.setCurrentIndex(i))
            self.group.addButton(button)
            self.flow.addWidget(button)
            self.buttons.append(button)
        self._order()
        self._check(self.tabs.currentIndex())
        self.updateGeometry()

    def _order(self) -> None:
        """Tab reaches the rows just before the panel's first control (they were made
        after it, and the window moved things since)."""
        before = self._before_panel()
        for button in self.buttons:
            QWidget.setTabOrder(before, button)
            before = button

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._order()

    def _before_panel(self) -> QWidget:
        """The widget before the panels' first control in the window's focus chain."""
        panels = [w for i in range(self.tabs.count()) if (w := self.tabs.widget(i)) is not None]
        start = widget = self.window()
        for _ in range(5000):
            following = widget.nextInFocusChain()
            if following is None or following is start:
                break
            inside = any(p is following or p.isAncestorOf(following) for p in panels)
            if inside and following.focusPolicy() & Qt.FocusPolicy.TabFocus:
                return widget
            widget = following
        return self.tabs.previousInFocusChain() or self.tabs

    def _check(self, index: int) -> None:
        if 0 <= index < len(self.buttons):
            self.buttons[index].setChecked(True)

    def button(self, name: str) -> QToolButton | None:
        return next((b for b in self.buttons if b.text() == name), None)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self.flow.heightForWidth(width)

    def sizeHint(self) -> QSize:
        width = max(self.width(), self.flow.minimumSize().width())
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        width = self.flow.minimumSize().width()
        return QSize(width, self.heightForWidth(max(width, self.width())))

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        if self.height() != self.heightForWidth(self.width()):
            self.updateGeometry()  # fewer or more rows: the column gives the tabs their height
