"""Links on a book page, clicked with the mouse (issue 29, item 2): a footnote reference
opens a pop-up with its note, a cross-document link jumps (Back returns; the jump is not
reading), a web link asks first and says so when nothing can open it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QPainter, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from core.store.library import Library
from desktop.reader import links
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import open_reader
from tests.support.shots import save_shot, shots_wanted

FILLER = "".join(
    f"<p>{'A sentence of the chapter that fills the page. ' * 30}</p>" for _ in range(5)
)


def _book(tmp_path: Path) -> Path:
    return make_epub(
        tmp_path / "links.epub",
        [
            (
                "One",
                '<p>The claim<a href="#n1" epub:type="noteref">1</a> is bold. Read '
                '<a href="c1.xhtml#later">the later part</a> or '
                '<a href="https://example.org/source">the source</a>.</p>'
                f"{FILLER}"
                '<aside epub:type="footnote" id="n1"><p>The note says where the claim comes from.</p></aside>',
            ),
            ("Two", f'{FILLER}<p id="later">The later part begins here.</p>{FILLER}'),
        ],
    )


def _click_link(view: TextView, href_start: str) -> None:
    """Click, with the mouse, the middle of the first link whose address starts so."""
    doc = view.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            fmt = frag.charFormat()
            if fmt.isAnchor() and fmt.anchorHref().startswith(href_start):
                cursor = QTextCursor(doc)
                cursor.setPosition(frag.position())
                view.setTextCursor(cursor)
                if not view.pager.paged:  # a paged screen shows the link where it is
                    view.ensureCursorVisible()
                QApplication.processEvents()
                start = view.cursorRect(cursor)
                cursor.setPosition(frag.position() + frag.length())
                end = view.cursorRect(cursor)
                point = QPoint((start.center().x() + end.center().x()) // 2, start.center().y())
                QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
                QApplication.processEvents()
                return
            it += 1
        block = block.next()
    raise AssertionError(f"no link to {href_start} on screen")


def _shot(view: TextView, name: str, reader: Reader) -> None:
    """With MARGIN_SHOTS set: the page with its note pop-up drawn where it stands, in the light
    and dark themes."""
    if not shots_wanted():
        return
    for theme in ("light", "dark"):
        reader.set_theme(theme)
        QApplication.processEvents()
        _click_link(view, "page:")
        popup = view.findChild(links.NotePopup)
        assert popup is not None
        image = reader.grab()
        painter = QPainter(image)
        painter.drawPixmap(reader.mapFromGlobal(popup.mapToGlobal(QPoint(0, 0))), popup.grab())
        painter.end()
        save_shot(image, f"{name}-{theme}.png")
        popup.close()
    reader.set_theme("light")


def test_a_footnote_reference_opens_its_note_in_a_pop_up(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    reader, view = open_reader(library, qtbot, _book(tmp_path))
    read_to = reader.session.read_to if reader.session else 0
    _click_link(view, "page:")
    popup = view.findChild(links.NotePopup)
    assert popup is not None
    qtbot.waitUntil(popup.isVisible)
    assert "where the claim comes from" in popup.text.text()
    assert reader.page == 1  # the pop-up does not move the page
    _shot(view, "note-popup", reader)
    popup = view.findChild(links.NotePopup)
    assert popup is not None
    popup.show()
    # its own link goes to the note (a jump: Back returns, reading is not raised)
    popup.go.click()
    note_page = popup.page
    qtbot.waitUntil(lambda: reader.page == note_page)
    assert reader.session is not None and reader.session.read_to == read_to
    line = view.textCursor().block().text()  # the caret on the note: a screen reader reads it
    assert "where the claim comes from" in line, line
    reader.go_back()
    qtbot.waitUntil(lambda: reader.page == 1)


def test_the_note_pop_up_is_used_with_keys_alone(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    """The note takes the focus on its button (Orca reads it); Tab, Shift+Tab and Esc leave
    it for the page; Enter goes to the note."""
    reader, view = open_reader(library, qtbot, _book(tmp_path))
    reader.window().activateWindow()
    for leave in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab, Qt.Key.Key_Escape):
        _click_link(view, "page:")
        popup = view.findChild(links.NotePopup)
        assert popup is not None
        qtbot.waitUntil(popup.isVisible)
        assert popup.go.hasFocus()
        assert "where the claim comes from" in popup.text.accessibleName()
        qtbot.keyClick(popup.go, leave)
        assert not popup.isVisible(), leave
        assert view.hasFocus() and reader.page == 1
    _click_link(view, "page:")
    popup = view.findChild(links.NotePopup)
    assert popup is not None
    qtbot.waitUntil(popup.isVisible)
    note_page = popup.page
    qtbot.keyClick(popup.go, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: reader.page == note_page)
    assert not popup.isVisible()


def test_a_cross_document_link_jumps_and_back_returns(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    reader, view = open_reader(library, qtbot, _book(tmp_path))
    assert reader.session is not None
    read_to = reader.session.read_to
    later = next(
        p.number
        for p in library.pages(reader.book.id, 1, reader.book.page_count)  # type: ignore[union-attr]
        if "later part begins" in p.text
    )
    assert later > 2
    _click_link(view, f"page:{later}")
    qtbot.waitUntil(lambda: reader.page == later)
    assert reader.session.read_to == read_to  # a jump is not reading
    reader.go_back()
    qtbot.waitUntil(lambda: reader.page == 1)


class _Browser(QObject):
    """Qt's own hook for a URL scheme: what the system browser would receive."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


def test_a_web_link_asks_first_and_then_opens(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    _reader, view = open_reader(library, qtbot, _book(tmp_path))
    browser = _Browser()
    QDesktopServices.setUrlHandler("https", browser, "open")
    try:
        _click_link(view, "https:")
        box = view.findChild(QMessageBox)
        assert box is not None and box.isVisible()
        assert "https://example.org/source" in box.text()
        save_shot(box.grab(), "link-consent.png")
        QTest.mouseClick(box.button(QMessageBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
        assert browser.opened == []
        _click_link(view, "https:")
        box = next(b for b in view.findChildren(QMessageBox) if b.isVisible())
        QTest.mouseClick(box.button(QMessageBox.StandardButton.Open), Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: browser.opened == ["https://example.org/source"])
    finally:
        QDesktopServices.unsetUrlHandler("https")


def test_a_web_link_nothing_can_open_is_reported(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reader, view = open_reader(library, qtbot, _book(tmp_path))
    # a machine with no browser: the system call fails (never reach a real one in tests)
    monkeypatch.setattr(links.QDesktopServices, "openUrl", staticmethod(lambda url: False))
    _click_link(view, "https:")
    box = next(b for b in view.findChildren(QMessageBox) if b.isVisible())
    QTest.mouseClick(box.button(QMessageBox.StandardButton.Open), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: any(
            "No program" in b.text() for b in view.findChildren(QMessageBox) if b.isVisible()
        )
    )
