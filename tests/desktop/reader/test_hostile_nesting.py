"""Issue 46 item 8: a small book nested thousands of elements deep opens within 2 s (an EPUB
of 1.7 KB with 10,000 nested spans took 45 s to open, every time)."""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

import pytest

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader

DEPTH = 10_000


def _epub(path: Path, body: str) -> Path:
    opf = (
        '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        'version="2.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/'
        '1.1/"><dc:identifier id="id">nest</dc:identifier><dc:title>Nest</dc:title>'
        "<dc:language>en</dc:language></metadata><manifest>"
        '<item id="s0" href="s0.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="s0"/></spine></package>'
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        'xmlns:container"><rootfiles><rootfile full-path="content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", container)
        z.writestr("content.opf", opf)
        z.writestr(
            "s0.xhtml",
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>'
            f"<p>Start.</p>{body}<p>End.</p></body></html>",
        )
    return path


@pytest.mark.parametrize(
    "body",
    [
        "<p>" + "<span>" * DEPTH + "deep words" + "</span>" * DEPTH + "</p>",
        "<p>" + "".join(f"<span>w{i} " for i in range(DEPTH)) + "</span>" * DEPTH + "</p>",
        "<div>" * DEPTH + "deep words" + "</div>" * DEPTH,
        "<blockquote>" * 3000 + "deep words" + "</blockquote>" * 3000,
        "<p>" + "<em>" * DEPTH + "deep words" + "</em>" * DEPTH + "</p>",
        "<p>" + '<span style="font-weight:bold">' * DEPTH + "deep" + "</span>" * DEPTH + "</p>",
        "<p>" + "<sup>" * DEPTH + "2" + "</sup>" * DEPTH + "</p>",
    ],
    ids=["spans", "spans with words", "divs", "quotes", "emphasis", "styled spans", "sups"],
)
def test_a_book_nested_thousands_deep_opens_quickly(
    reader: Reader, library: Library, tmp_path: Path, body: str
) -> None:
    path = _epub(tmp_path / "nest.epub", body)
    assert path.stat().st_size < 200_000
    book = import_book(library, path).book
    started = time.perf_counter()
    reader.open_book(book, 1)
    assert time.perf_counter() - started < 2.0  # it opens (45 s before, every time)
    for page in range(2, book.page_count + 1):  # and every page shows (a shared machine:
        reader.go_to_page(page)  # a loose bound that still catches a freeze)
    assert time.perf_counter() - started < 10.0
    assert any("End." in text for _, text in reader.page_texts())
