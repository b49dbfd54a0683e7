"""The margin marks by keyboard and by ear (issue 43, item 4): once a mark is on the screen the
strip is one Tab stop, a button named by the mark the keys are on ("Thread beside “…”, p. 5
(1 of 2)"); Down and Up move between the marks, Enter opens one, as a click does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest

from desktop.accessibility import Notice
from desktop.highlights.margin_marks import NO_MARKS, MarginMark
from tests.desktop.conftest import open_alice


def test_marks_are_one_named_stop_opened_with_enter(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, books_dir, page=5)
    marks = window.threads.marks
    assert marks.focusPolicy() == Qt.FocusPolicy.NoFocus  # no mark: no stop
    text = window.reader.host.pages(5).text
    first, second = 0, text.index(". ", 400) + 2
    marks.set_marks(
        [
            MarginMark("thread", 7, 5, first, text[first : first + 30]),
            MarginMark("note", 9, 5, second, text[second : second + 30]),
        ]
    )
    qtbot.waitUntil(lambda: len(marks.placed_marks()) == 2, timeout=3000)
    assert marks.focusPolicy() & Qt.FocusPolicy.TabFocus
    marks.setFocus()
    iface = QAccessible.queryAccessibleInterface(marks)
    assert iface is not None and iface.role() == QAccessible.Role.Button
    name = iface.text(QAccessible.Text.Name)
    assert name.startswith(f"Thread beside “{text[:10]}") and name.endswith(", p. 5 (1 of 2)"), name
    opened: list[object] = []
    marks.requestThread.disconnect()  # (what opening does is the threads' tests')
    marks.requestNote.disconnect()
    marks.requestThread.connect(opened.append)
    marks.requestNote.connect(lambda mark: opened.append(mark.key))
    QTest.keyClick(marks, Qt.Key.Key_Down)
    assert iface.text(QAccessible.Text.Name).startswith("Note beside “")
    notices = window.findChildren(Notice)  # said, too: Orca 43 skips a button's new name
    assert notices and notices[-1].text().startswith("Note beside “")
    QTest.keyClick(marks, Qt.Key.Key_Return)
    QTest.keyClick(marks, Qt.Key.Key_Up)
    QTest.keyClick(marks, Qt.Key.Key_Space)
    assert opened == [9, 7]
    marks.set_marks([])
    assert iface.text(QAccessible.Text.Name) == NO_MARKS
