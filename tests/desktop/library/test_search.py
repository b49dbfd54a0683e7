"""The library-wide search window (desktop/library/search.py): results grouped by book,
within where the reader has read each book unless the box is ticked; a passage opens its
page in the window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.books.importer import import_book
from core.store.library import Library
from desktop.library.search import LibrarySearch, quote_of
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window


@pytest.fixture
def window(app: Any, library: Library, qtbot: Any, real_font: str, books_dir: Path) -> Any:
    alice = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_read_to(alice.id, 20)
    gregor = import_book(library, books_dir / "metamorphosis.epub").book
    library.set_finished(gregor.id, True)
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    qtbot.waitExposed(win)
    yield win
    close_window(qtbot, win)


def _search(qtbot: Any, dialog: LibrarySearch, text: str) -> None:
    dialog.status.setText("")
    dialog.query.setText(text)
    dialog.search()
    qtbot.waitUntil(lambda: dialog.status.text() not in ("", "Searching…"), timeout=20000)


def test_results_by_book_and_a_click_opens_the_page(window: Any, qtbot: Any) -> None:
    window.panels.open_library_search()
    dialog = window.panels.library_search
    assert isinstance(dialog, LibrarySearch) and dialog.isVisible()
    _search(qtbot, dialog, "sister")
    books = [dialog.results.topLevelItem(i) for i in range(dialog.results.topLevelItemCount())]
    titles = [b.text(0) for b in books]
    assert "Metamorphosis" in titles and any(t.startswith("Alice") for t in titles)
    alice = next(b for b in books if b.text(0).startswith("Alice"))
    pages = [alice.child(i).data(0, 256).end_page for i in range(alice.childCount())]
    assert pages and max(pages) <= 20, "Alice is read to page 20"
    dialog.beyond.setChecked(True)
    qtbot.waitUntil(lambda: dialog.status.text() not in ("", "Searching…"), timeout=20000)
    gregor = next(
        dialog.results.topLevelItem(i)
        for i in range(dialog.results.topLevelItemCount())
        if dialog.results.topLevelItem(i).text(0) == "Metamorphosis"
    )
    passage = gregor.child(0)
    hit = passage.data(0, 256)
    dialog.results.itemActivated.emit(passage, 0)
    qtbot.waitUntil(lambda: window.reader.book is not None, timeout=10000)
    assert window.reader.book.id == hit.book_id
    assert window.reader.page == hit.start_page
    assert quote_of(hit) and quote_of(hit) in hit.text


def test_nothing_found_says_so(window: Any, qtbot: Any) -> None:
    window.panels.open_library_search()
    dialog = window.panels.library_search
    _search(qtbot, dialog, "zzzqqqx")
    assert "No passages" in dialog.status.text() and dialog.results.topLevelItemCount() == 0


def test_books_without_vectors_get_them_with_progress(
    window: Any, library: Library, qtbot: Any
) -> None:
    from core.search.vector_indexer import indexer_for
    from core.search.vectors import BookVectors

    indexer_for(library.db).wait(60)
    library.db.execute_sql("DELETE FROM chunk_vectors")  # as a library from before them
    seen: list[tuple[int, int]] = []
    indexer_for(library.db).listeners.append(lambda done, total: seen.append((done, total)))
    window.panels.open_library_search()  # opening the window asks for them
    dialog = window.panels.library_search
    qtbot.waitUntil(lambda: (2, 2) in seen, timeout=90000)  # two books encoded on a loaded machine
    qtbot.waitUntil(lambda: "2 of 2" in dialog.preparing.text(), timeout=5000)
    assert BookVectors(library.db).missing() == []
    assert not dialog.preparing.isVisible()
    assert "Preparing search by meaning" in dialog.preparing.text()


def test_books_not_read_that_far_are_counted_and_one_click_includes_them(
    window: Any, qtbot: Any, library: Library, books_dir: Path
) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    import_book(library, books_dir / "pride_and_prejudice.epub")  # not started
    window.panels.open_library_search()
    dialog = window.panels.library_search
    _search(qtbot, dialog, "Bennet")
    titles = [
        dialog.results.topLevelItem(i).text(0) for i in range(dialog.results.topLevelItemCount())
    ]
    assert "Pride and Prejudice" not in titles
    assert "1 book you have not read that far also matches" in dialog.status.text(), (
        f"▶ {dialog.status.text()!r}"
    )
    assert dialog.include.isVisible()
    dialog.status.setText("")
    QTest.mouseClick(dialog.include, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.status.text() not in ("", "Searching…"), timeout=20000)
    titles = [
        dialog.results.topLevelItem(i).text(0) for i in range(dialog.results.topLevelItemCount())
    ]
    assert "Pride and Prejudice" in titles and dialog.beyond.isChecked()
    assert not dialog.include.isVisible()
