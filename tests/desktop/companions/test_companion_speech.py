"""The companion tabs by ear (issue 43, item 4): an X-Ray entry is a text named by its name and
description (not a label called "X-Ray entry"), its page links are one Tab stop (a Pages
button whose menu lists them), a flashcard is named by its words. ``test_orca.py`` hears
the same from Orca itself."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from core.companions import cards, xray
from core.store.library import Library
from desktop.accessibility import focusable

RABBIT = xray.Entry(
    key="rabbit",
    name="Rabbit",
    kind="person",
    aliases=("White Rabbit",),
    mentions=tuple((page, 1 + page % 2, "Rabbit") for page in range(2, 44)),
    description=((6, "The White Rabbit was still in sight, hurrying down it."),),
)


def spoken(widget: QWidget) -> tuple[QAccessible.Role, str]:
    iface = QAccessible.queryAccessibleInterface(widget)
    assert iface is not None
    return iface.role(), iface.text(QAccessible.Text.Name)


def test_an_xray_entry_is_read_with_its_text_and_its_pages_are_one_stop(
    library: Library, qtbot: Any
) -> None:
    from desktop.companions.xray_panel import XRayPanel

    panel = XRayPanel(library)
    qtbot.addWidget(panel)
    panel.show()
    panel.show_result(xray.XRay(book_id=1, read_to=44, entries=(RABBIT,)))
    role, name = spoken(panel.detail)
    assert role == QAccessible.Role.EditableText  # a text read line by line, not a label
    assert name.startswith("Rabbit: person, 63 mentions, first on p. 2.")
    assert "Also: White Rabbit." in name and "still in sight" in name
    item = panel.list.item(0)
    assert item.data(Qt.ItemDataRole.AccessibleTextRole) == "Rabbit, person, 63 mentions"
    # Tab: the list, the entry, ONE stop for its 42 pages, then the model's button
    stops = [w for w in focusable(panel) if w.isVisible()]
    assert stops.index(panel.pages) == stops.index(panel.detail) + 1
    assert (
        not panel.detail.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByKeyboard
    )
    assert panel.pages.accessibleName() == "42 pages with Rabbit"
    menu = panel.pages.menu()
    assert [a.text() for a in menu.actions()][:2] == ["p. 2", "p. 3 (2 times)"]
    went: list[tuple[int, str]] = []
    panel.feed.requestPlace.connect(lambda page, mark: went.append((page, mark)))
    menu.actions()[1].trigger()
    assert went == [(3, "Rabbit")]


def test_a_flashcard_is_named_by_its_words(library: Library, qtbot: Any) -> None:
    from desktop.companions.cards_panel import CardsPanel

    panel = CardsPanel(library)
    qtbot.addWidget(panel)
    panel.show()
    card = cards.Card(
        key="highlight:1",
        front="Alice was beginning to get very tired",
        back="Bored",
        quote="",
        page=3,
        source="highlight",
    )
    panel.feed.book_id = 1
    panel.show_result(([card], 1))
    role, name = spoken(panel.card)
    assert role == QAccessible.Role.EditableText
    assert name == "Flashcard: Alice was beginning to get very tired"
    assert spoken(panel.feed.status)[1] == "1 due of 1."  # the status line says its own text
    panel.show_button.setFocus()
    QTest.keyClick(panel.show_button, Qt.Key.Key_Space)
    assert spoken(panel.card)[1].endswith("Answer: Bored")
    assert panel.focusWidget() is panel.card, "the keys stay in the card, not lost"
