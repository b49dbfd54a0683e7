"""Spread hints in the picture view (issue 29): a wide window pairs the pages as the EPUB's
``page-spread-*`` properties say, and a page alone that belongs on one side of a spread is
drawn on that side (real key presses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.store.library import Library
from tests.core.books.test_comics_spreads import with_sides
from tests.desktop.reader.test_comics import _colour_at, _is, _key, _open, window  # noqa: F401
from tests.support.comics import make_fixed_layout_epub
from tests.support.shots import save_shot


def test_hinted_spreads_in_a_wide_window(
    window: Any,  # noqa: F811
    library: Library,
    tmp_path: Path,
    qtbot: Any,
) -> None:
    window.resize(1500, 800)
    QApplication.processEvents()
    sides = {
        1: "rendition:page-spread-right",  # the cover is a right-hand page
        2: "page-spread-left",
        3: "page-spread-right",
        4: "rendition:page-spread-center",  # a fold-out, alone in the middle
        5: "page-spread-left",
        6: "page-spread-right",
    }
    path = with_sides(make_fixed_layout_epub(tmp_path / "c.epub", 6), sides)
    view = _open(window, library, path, qtbot)
    qtbot.waitUntil(view.wide, timeout=3000)
    assert view.spread() == [1]
    [(_, cover)] = view.placed()
    assert cover.left() >= view.canvas.width() / 2, "the right-hand cover is on the right"
    assert _is(_colour_at(view, qtbot, 0.7), 1)
    for theme in ("light", "dark"):
        view.set_theme(theme)
        QApplication.processEvents()
        save_shot(view.canvas.grab(), f"spread-cover-right-{theme}.png")
    _key(view, Qt.Key.Key_Right)
    assert view.spread() == [2, 3]
    assert _is(_colour_at(view, qtbot, 0.3), 2) and _is(_colour_at(view, qtbot, 0.7), 3)
    _key(view, Qt.Key.Key_Right)
    assert view.spread() == [4]
    [(_, fold)] = view.placed()
    middle = view.canvas.width() / 2
    assert fold.left() < middle < fold.right(), "a centred page is in the middle"
    _key(view, Qt.Key.Key_Right)
    assert view.spread() == [5, 6] and window.reader.page == 5
    _key(view, Qt.Key.Key_Left)
    assert view.spread() == [4]


def test_a_blank_spread_page_is_shown_and_keeps_the_next_pair(
    window: Any,  # noqa: F811
    library: Library,
    tmp_path: Path,
    qtbot: Any,
) -> None:
    """Issue 45, item 8: the blank left page of a spread stands in its place (the page's
    background), and the spread after it pairs the printed pages."""
    import zipfile

    window.resize(1500, 800)
    QApplication.processEvents()
    src = with_sides(
        make_fixed_layout_epub(tmp_path / "c.epub", 5),
        {2: "page-spread-left", 3: "page-spread-right", 4: "page-spread-left"},
    )
    path = tmp_path / "blank.epub"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "OEBPS/p2.xhtml":
                data = b'<html xmlns="http://www.w3.org/1999/xhtml"><body></body></html>'
            zout.writestr(info, data)
    view = _open(window, library, path, qtbot)
    qtbot.waitUntil(view.wide, timeout=3000)
    _key(view, Qt.Key.Key_Right)
    assert view.spread() == [2, 3]
    assert _is(_colour_at(view, qtbot, 0.7), 3), "the right-hand page is page 3's picture"
    _key(view, Qt.Key.Key_Right)
    assert view.spread() == [4, 5]
    assert _is(_colour_at(view, qtbot, 0.3), 4) and _is(_colour_at(view, qtbot, 0.7), 5)
