"""What a screen reader or a keyboard-only reader needs from the window: spoken
announcements (an answer is ready, a sentence was held back, an import finished), a tab order
that follows the window, and the colour contrast every theme must keep.

Announcements are ``QAccessibleAnnouncementEvent``s (Qt ≥ 6.8): AT-SPI on Linux, UI
Automation notifications on Windows, NSAccessibility announcements on macOS. Orca 43 (Debian
12) ignores AT-SPI announcements, so each is also shown in the window's ``Notice``: an
invisible label whose accessible role is Notification, shown again with the new words, which
every Orca speaks (``tests/desktop/test_orca.py`` checks what it says). Focus never moves for
them: the reader keeps reading or typing where they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QPaintEvent
from PySide6.QtWidgets import QLabel, QTabWidget, QWidget

if TYPE_CHECKING:
    # imported where used: QAccessible's enums took time at every start before the window
    # was painted, and nothing is announced before then
    from PySide6.QtGui import QAccessibleAnnouncementEvent
    from PySide6.QtWidgets import QAccessibleWidget

    from desktop.window.main_window import MainWindow

# every announcement also goes to these (tests observe them; PySide6 has no update handler)
listeners: list[Callable[[QAccessibleAnnouncementEvent], None]] = []

# a finished answer is announced whole (the View menu's "Speak whole answers")
whole_answers = False

_SENTENCE = re.compile(r"(.+?[.!?…])(\s|$)", re.S)
LEAD_CHARS = 200


def plain_text(text: str) -> str:
    """An answer's Markdown as plain words: marks and held-back markers dropped."""
    plain = re.sub(r"⟪hidden:\d+⟫", " ", text)
    plain = re.sub(r"[*_`#>\[\]]+", "", plain)
    return " ".join(plain.split())


def first_sentence(text: str, limit: int = LEAD_CHARS) -> str:
    """The first sentence of ``text`` as plain words, at most ``limit`` characters."""
    plain = plain_text(text)
    match = _SENTENCE.match(plain)
    sentence = match.group(1) if match else plain
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def announce(widget: QWidget, text: str, *, assertive: bool = False) -> None:
    """Have assistive technology say ``text`` (politely: after what it is saying now, unless
    ``assertive``)."""
    if not text or not shiboken6.isValid(widget):
        return
    from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent

    event = QAccessibleAnnouncementEvent(widget, text)
    event.setPoliteness(
        QAccessible.AnnouncementPoliteness.Assertive
        if assertive
        else QAccessible.AnnouncementPoliteness.Polite
    )
    QAccessible.updateAccessibility(event)
    notice(widget, text)
    for listener in list(listeners):
        listener(event)


class Notice(QLabel):
    """What the window announced, for screen readers that ignore announcements: a 1 × 1
    label that paints nothing, exposed as a notification (Orca speaks a notification when it
    is shown)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("spokenNotice")
        self.setGeometry(0, 0, 1, 1)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:  # seen by nobody: only heard
        pass

    def say(self, text: str) -> None:
        self.setText(text)
        self.setAccessibleName(text)
        self.show()
        self.raise_()


_interfaces: dict[int, QAccessibleWidget] = {}  # kept while their notice lives


def _factory(key: str, obj: QObject) -> QAccessibleWidget | None:
    if key != "Notice" or not isinstance(obj, Notice):
        return None
    made = _interfaces.get(id(obj))
    if made is None:
        from PySide6.QtGui import QAccessible
        from PySide6.QtWidgets import QAccessibleWidget

        # a notification: Orca speaks one when it is shown
        made = QAccessibleWidget(obj, QAccessible.Role.Notification)
        _interfaces[id(obj)] = made
        key_id = id(obj)
        obj.destroyed.connect(lambda *_: _interfaces.pop(key_id, None))
    return made


_factory_installed = False


def notice(widget: QWidget, text: str) -> None:
    """Show ``text`` in the notice of ``widget``'s window (made on first use)."""
    global _factory_installed
    if not _factory_installed:
        from PySide6.QtGui import QAccessible

        QAccessible.installFactory(_factory)
        _factory_installed = True
    window = widget.window()
    # a new notice each time: Orca drops an event when another of the same kind follows from
    # the same object ("answer arriving" then "answer ready"); the older ones are let go
    old = window.findChildren(Notice, "spokenNotice", Qt.FindChildOption.FindDirectChildrenOnly)
    for gone in old[:-2]:
        gone.setParent(None)
        gone.deleteLater()
    Notice(window).say(text)


class StatusLabel(QLabel):
    """A status line (WCAG 4.1.3): each new message is announced, wherever focus is."""

    def setText(self, text: str) -> None:
        changed = text != self.text()
        super().setText(text)
        if text and changed:
            announce(self, text)


# tab order ------------------------------------------------------------------------------------


def focusable(root: QWidget) -> list[QWidget]:
    """The widgets under ``root`` that Tab can reach, in their present focus-chain order (a
    widget with a focus proxy is left to its proxy: ``setTabOrder`` puts the proxy there)."""
    out: list[QWidget] = []
    widget: QWidget | None = root
    seen: set[int] = set()
    while widget is not None and id(widget) not in seen:
        seen.add(id(widget))
        if (widget is root or root.isAncestorOf(widget)) and takes_tab(widget):
            out.append(widget)
        widget = widget.nextInFocusChain()
    return out


def takes_tab(widget: QWidget) -> bool:
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus) and widget.focusProxy() is None


def _tabs_take_focus(root: QWidget) -> None:
    """A tab widget's tab bar takes the focus, not the tab widget: ``setTabOrder`` cannot
    move a widget with a focus proxy, and left at its old place in the chain the tab widget
    would pull Tab to its tab bar from wherever that place is."""
    tab_widgets = root.findChildren(QTabWidget)
    if isinstance(root, QTabWidget):
        tab_widgets.append(root)
    for tabs in tab_widgets:
        tabs.setFocusProxy(None)  # type: ignore[arg-type]  # (Qt takes None: no proxy)
        tabs.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        tabs.tabBar().setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def chain(groups: Iterable[QWidget | None]) -> list[QWidget]:
    """Make Tab visit ``groups`` in the order given (each group's own widgets in their own
    order), and return the chain. Hidden widgets stay in it: Tab skips them while hidden."""
    order: list[QWidget] = []
    seen: set[int] = set()
    for group in groups:
        if group is None or not shiboken6.isValid(group):
            continue
        _tabs_take_focus(group)
        for widget in focusable(group):
            if id(widget) not in seen:
                seen.add(id(widget))
                order.append(widget)
    for first, second in pairwise(order):
        QWidget.setTabOrder(first, second)
    return order


# contrast -------------------------------------------------------------------------------------


def luminance(colour: str | QColor) -> float:
    """WCAG 2 relative luminance of an opaque colour."""
    c = QColor(colour)

    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())


def contrast(a: str | QColor, b: str | QColor) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def order_tabs(window: MainWindow) -> list[QWidget]:
    """The window's tab order, as it is laid out: the toolbar left to right, the side panel,
    the page, the chat (its conversations, the transcript, the question, Send), then the
    library's page. Called again when a book's view is made (a new page widget)."""
    reader = window.reader
    return chain(
        [
            getattr(window, "library_button", None),
            getattr(window, "side_button", None),
            reader.toolbar,
            reader.side,
            reader.page_area,
            reader.footer,
            window.chat,
            window.library_view,
        ]
    )
