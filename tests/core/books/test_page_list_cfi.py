"""A page-list whose links are EPUB CFIs is used (issue 45, item 8): through the package
(``content.opf#epubcfi(/6/4!/4/4)``) or into a document, with or without id assertions."""

from __future__ import annotations

from pathlib import Path

from core.books.parse import parse_book
from tests.core.books.epubgen import make_epub
from tests.core.books.test_epub_w3c import XHTML

LONG = "".join(f"<p>{'Words of the printed page here. ' * 40}</p>" for _ in range(3))


def cfi_book(tmp_path: Path, links: list[str]) -> Path:
    one = f'<p id="p38">Page thirty-eight begins.</p>{LONG}<p>Page thirty-nine begins.</p>{LONG}'
    two = f"<p>Page forty begins.</p>{LONG}"
    items = "".join(f'<li><a href="{href}">{38 + i}</a></li>' for i, href in enumerate(links))
    nav = XHTML.format(
        '<nav epub:type="toc"><ol><li><a href="c0.xhtml">One</a></li><li><a href="c1.xhtml">Two</a></li></ol></nav>'
        f'<nav epub:type="page-list"><ol>{items}</ol></nav>'
    )
    return make_epub(
        tmp_path / "cfi.epub", [("One", one), ("Two", two)], extra_files={"OEBPS/nav.xhtml": nav}
    )


def test_page_list_cfi_links_label_the_pages(tmp_path: Path) -> None:
    links = [
        "content.opf#epubcfi(/6/2[c0ref]!/4/4[p38]/1:0)",  # an asserted id
        "c0.xhtml#epubcfi(/4/10/1:0)",  # the fifth element of the body: no id, no assertion
        "content.opf#epubcfi(/6/4!/4/4)",  # the second chapter's first paragraph
    ]
    pages = parse_book(cfi_book(tmp_path, links)).pages
    first = pages[0]
    forty = next(p for p in pages if "Page forty begins" in p.text)
    thirty_nine = next(p for p in pages if "Page thirty-nine begins" in p.text)
    assert first.label == "38"
    assert forty.label == "40"
    labels = [p.label for p in pages]
    assert labels == sorted(labels) and set(labels) == {"38", "39", "40"}
    # printed page 39 starts in the third long paragraph after "thirty-eight": after page 1
    assert labels.index("39") > 1 and thirty_nine.label == "39"


def test_a_cfi_that_leads_nowhere_is_left_out(tmp_path: Path) -> None:
    links = ["content.opf#epubcfi(/6/40!/4/2)", "content.opf#epubcfi(/6/4!/4/4)"]
    pages = parse_book(cfi_book(tmp_path, links)).pages
    labels = {p.label for p in pages}
    assert "38" not in labels  # the first entry's spine item does not exist
    assert "39" in labels  # the second entry (titled 39) still labels the second chapter
