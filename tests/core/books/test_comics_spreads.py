"""EPUB spread hints for picture books (issue 29): ``page-spread-left/right/center`` on the
spine items pair the pages of a two-page spread as the printed book does."""

from __future__ import annotations

import zipfile
from pathlib import Path

from core.books.comics import pair_pages, side_of, spread_side
from core.books.parse import parse_book
from tests.support.comics import make_fixed_layout_epub


def with_sides(path: Path, sides: dict[int, str]) -> Path:
    """``path`` (a fixed-layout EPUB) with spine properties: page number → properties."""
    out = path.with_name("sided-" + path.name)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".opf"):
                for page, props in sides.items():
                    data = data.replace(
                        f'<itemref idref="p{page}"/>'.encode(),
                        f'<itemref idref="p{page}" properties="{props}"/>'.encode(),
                    )
            dst.writestr(info, data)
    return out


def test_spine_properties_name_a_side() -> None:
    assert spread_side("page-spread-left") == "left"
    assert spread_side("rendition:page-spread-right") == "right"
    assert spread_side("rendition:page-spread-center") == "center"
    assert spread_side("rendition:spread-none") == "center"
    assert spread_side("rendition:layout-pre-paginated") == ""
    assert spread_side("") == ""


def test_pairs_follow_the_hints_or_the_cover_alone() -> None:
    assert pair_pages([""] * 6, rtl=False) == [(1,), (2, 3), (4, 5), (6,)]
    # a cover on the right, then left/right pairs; a centred fold-out alone
    sides = ["right", "left", "right", "center", "left", "right"]
    assert pair_pages(sides, rtl=False) == [(1,), (2, 3), (4,), (5, 6)]
    # page 1 asked to open a spread: paired with page 2 (no "cover alone")
    assert pair_pages(["left", "right", "left"], rtl=False) == [(1, 2), (3,)]
    # two right-hand pages in a row: the second starts no pair, it is alone
    assert pair_pages(["", "left", "right", "right", "left", ""], rtl=False) == [
        (1,),
        (2, 3),
        (4,),
        (5, 6),
    ]
    # right to left: a spread opens on the right
    assert pair_pages(["left", "right", "left", "right"], rtl=True) == [(1,), (2, 3), (4,)]


def test_a_pre_paginated_epub_keeps_its_spread_sides(tmp_path: Path) -> None:
    path = with_sides(
        make_fixed_layout_epub(tmp_path / "c.epub", 4),
        {1: "page-spread-right", 2: "page-spread-left", 3: "rendition:page-spread-right"},
    )
    book = parse_book(path)
    assert [side_of(p.html or "") for p in book.pages] == ["right", "left", "right", ""]


def test_a_blank_page_keeps_the_spreads_after_it_paired(tmp_path: Path) -> None:
    """Issue 45, item 8: a blank page (no picture, no words) that the book places on the left
    of a spread was dropped, so every later spread paired the wrong pages."""
    src = with_sides(
        make_fixed_layout_epub(tmp_path / "c.epub", 6),
        {2: "page-spread-left", 3: "page-spread-right", 4: "page-spread-left"},
    )
    out = tmp_path / "blank.epub"
    blank = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        "<head><title>Blank</title></head><body></body></html>"
    )
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = blank.encode() if info.filename == "OEBPS/p3.xhtml" else zin.read(info)
            zout.writestr(info, data)
    book = parse_book(out)
    assert len(book.pages) == 6
    sides = [side_of(p.html or "") for p in book.pages]
    assert sides[:4] == ["", "left", "right", "left"]
    assert pair_pages(sides, rtl=False) == [(1,), (2, 3), (4, 5), (6,)]
    assert 'src="book:/"' in (book.pages[2].html or "")  # the blank page: no picture


def test_a_book_of_blank_pages_is_no_picture_book(tmp_path: Path) -> None:
    from core.books.comics import image_epub
    from core.books.epubzip import EpubArchive

    src = make_fixed_layout_epub(tmp_path / "c.epub", 2)
    out = tmp_path / "empty.epub"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith(".xhtml"):
                data = b'<html xmlns="http://www.w3.org/1999/xhtml"><body></body></html>'
            zout.writestr(info, data)
    arc = EpubArchive(out)
    try:
        assert image_epub(arc) is None
    finally:
        arc.close()
