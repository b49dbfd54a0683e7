"""The transcript as a screen reader gets it (issue 32's leftovers): no frame markers in its
text, a document a screen reader moves through (not a label), and its citations and actions
reachable as links: Tab goes from link to link, each announced as a link, Enter or a click
opens it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAccessible, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book


def ask_twice(window: Any, books_dir: Path, qtbot: Any) -> Any:
    book = import_book(window.library, books_dir / "alice_in_wonderland.epub").book
    window.library.set_position(book.id, 30)
    window.books.refresh_library()
    window.open_book(book.id, 10)
    chat = window.chat
    for asked, question in enumerate(("Who is the White Rabbit?", "Where does Alice fall?"), 1):
        chat.input.setFocus()
        qtbot.keyClicks(chat.input, question)
        qtbot.keyClick(chat.input, Qt.Key.Key_Return)
        # the run ends, then its live frames become the stored answer (with the stored
        # answer's keys in its links): a link taken before that names a key already gone
        qtbot.waitUntil(
            lambda n=asked: (
                not chat.live and sum(s.answer is not None for s in chat.messages.shown) == n
            ),
            timeout=15000,
        )
    return chat


def test_the_transcript_text_is_clean_and_not_a_label(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    chat = ask_twice(window, books_dir, qtbot)
    iface = QAccessible.queryAccessibleInterface(chat.transcript)
    assert iface.role() != QAccessible.Role.StaticText, "read as a document, not a label"
    assert iface.state().readOnly and iface.state().focusable
    assert iface.text(QAccessible.Text.Name) == "Conversation"
    text = iface.textInterface()
    content = text.text(0, text.characterCount())
    assert "White Rabbit" in content and "Passages, no model" in content
    assert "\ufdd0" not in content and "\ufdd1" not in content
    assert "\ufffc" not in content


def test_tab_goes_from_link_to_link_and_each_is_announced(
    window: Any, books_dir: Path, qtbot: Any, heard: Any
) -> None:
    chat = ask_twice(window, books_dir, qtbot)
    transcript = chat.transcript
    hrefs = [h for _, _, h in transcript.links()]
    assert any(h.startswith("margin-cite:") for h in hrefs), hrefs
    assert any(h.startswith("margin-action:copy/") for h in hrefs)
    transcript.setFocus(Qt.FocusReason.TabFocusReason)
    focused = []
    for _ in range(len(hrefs)):
        qtbot.keyClick(transcript, Qt.Key.Key_Tab)
        assert transcript.hasFocus()
        focused.append(transcript.focused_link())
    assert focused == hrefs, "every link once, in order"
    links = [t for t, _ in heard if t.startswith("Link: ")]
    assert "Link: Copy" in links and any(t.startswith("Link: p.") for t in links)
    # Shift+Tab goes back through them; past the first, focus leaves the transcript
    qtbot.keyClick(transcript, Qt.Key.Key_Backtab)
    assert transcript.focused_link() == hrefs[-2]
    qtbot.keyClick(transcript, Qt.Key.Key_Tab)
    qtbot.keyClick(transcript, Qt.Key.Key_Tab)
    assert not transcript.hasFocus(), "after the last link Tab moves on (no trap)"


def test_enter_and_a_click_open_a_link(window: Any, books_dir: Path, qtbot: Any) -> None:
    chat = ask_twice(window, books_dir, qtbot)
    transcript = chat.transcript
    start, end, href = next(link for link in transcript.links() if "copy/" in link[2])
    key = href.partition("copy/")[2]
    assert key in chat.messages.views, (key, list(chat.messages.views))
    cursor = QTextCursor(transcript.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    transcript.setTextCursor(cursor)
    transcript.setFocus()
    QApplication.clipboard().clear()
    with qtbot.waitSignal(transcript.anchorClicked, timeout=10000) as opened:
        qtbot.keyClick(transcript, Qt.Key.Key_Return)
    assert opened.args[0].toString() == href
    # Copy put the answer on the clipboard
    qtbot.waitUntil(lambda: bool(QApplication.clipboard().text().strip()), timeout=5000)
    assert QApplication.clipboard().text() == chat.messages.views[key].text
    assert chat.status.text() == "Answer copied."
    # a click on a page citation opens the page
    start, _end, cite = next(
        link for link in transcript.links() if link[2].startswith("margin-cite:")
    )
    at = QTextCursor(transcript.document())
    at.setPosition(start + 1)
    transcript.setTextCursor(at)
    transcript.ensureCursorVisible()
    QApplication.processEvents()
    rect = transcript.cursorRect(at)
    point = QPoint(rect.x() + 2, rect.center().y())
    assert transcript.anchorAt(point) == cite
    with qtbot.waitSignal(chat.requestOpenPage, timeout=10000):
        QTest.mouseClick(transcript.viewport(), Qt.MouseButton.LeftButton, pos=point)
    first, _, last = cite.split("/")[1].split("?")[0].partition("-")
    assert int(first) <= window.reader.page <= int(last or first), (cite, window.reader.page)
