"""Contents entries and chapters follow the book: every entry names the page its heading is on.

Real fixture books, and generated EPUBs shaped like Project Gutenberg's (one file holding
several chapters, contents pointing at ``#ids``, nested entries, a boilerplate first entry).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.books.chunking import make_chunks
from core.books.epub import parse_epub
from core.books.model import ParsedBook
from core.books.parse import parse_book
from tests.core.books.epubgen import gutenberg_like_epub, make_anchored_epub, paragraphs


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").split()).casefold()


def assert_entries_on_their_pages(
    book: ParsedBook, heading_of: dict[str, str] | None = None
) -> None:
    """Each entry's heading text (or the text ``heading_of`` names for it) is on its page,
    and pages never go backwards through the contents."""
    assert book.toc, "the book has contents"
    last = 0
    for item in book.toc:
        page = book.pages[item.page - 1]
        wanted = (heading_of or {}).get(item.title, item.title)
        assert _norm(wanted) in _norm(page.text), f"{item.title!r} is not on page {item.page}"
        assert item.page >= last, f"{item.title!r} goes back to page {item.page}"
        last = item.page


def test_alice_epub_entries_and_chapters(books_dir: Path) -> None:
    book = parse_book(books_dir / "alice_in_wonderland.epub")
    assert_entries_on_their_pages(book)
    chapters = [t for t in book.toc if t.title.startswith("CHAPTER")]
    assert len(chapters) == 12
    for item in chapters:
        page = book.pages[item.page - 1]
        assert page.text.startswith(item.title.split(".")[0]), "a chapter starts its page"
        assert item.page == 1 or book.pages[item.page - 2].chapter != page.chapter
    # the front matter entries inside the first file are on their own pages, not page 1..2
    contents = next(t for t in book.toc if t.title == "Contents")
    assert "Down the Rabbit-Hole" in book.pages[contents.page - 1].text


def test_metamorphosis_epub_parts(books_dir: Path) -> None:
    book = parse_book(books_dir / "metamorphosis.epub")
    assert_entries_on_their_pages(book)
    parts = {t.title: t for t in book.toc if t.title in ("I", "II", "III")}
    assert book.pages[parts["II"].page - 1].text.startswith("II\n\nIt was not until")
    assert "Translated by David Wyllie" in book.pages[book.toc[1].page - 1].text


@pytest.mark.parametrize("use_ncx", [True, False], ids=["ncx", "nav"])
def test_gutenberg_like_epub(tmp_path: Path, use_ncx: bool) -> None:
    path = gutenberg_like_epub(tmp_path / "holmes.epub", use_ncx=use_ncx)
    book = parse_book(path)
    titles = [t.title for t in book.toc]
    assert not any("Project Gutenberg" in t for t in titles), "boilerplate entry is dropped"
    assert titles[:3] == ["The Adventures of Testing Holmes", "I. A Scandal in Bohemia", "I."]
    assert titles[-2:] == ["More 1", "More 2"], "titles are one clean line"
    assert [t.level for t in book.toc].count(2) == 9, "nested I./II./III. keep their level"
    heading_of = {
        "I. A Scandal in Bohemia": "I. A SCANDAL IN BOHEMIA",
        "II. The Red-Headed League": "II. THE RED-HEADED LEAGUE",
        "III. A Case of Identity": "III. A CASE OF IDENTITY",
    }
    assert_entries_on_their_pages(book, heading_of)
    # each part's own words are on the entry's page: not the file's first page
    parts = [t for t in book.toc if t.level == 2]
    for n, item in enumerate(parts):
        s, p = n // 3 + 1, n % 3 + 1
        assert f"s{s}p{p}w0x0" in book.pages[item.page - 1].text
    assert len({t.page for t in parts}) == 9, "every part has its own page"
    # II. of the first story starts a chapter, and no chunk crosses it
    second = parts[1]
    first_page = book.pages[second.page - 1]
    assert book.pages[second.page - 2].chapter != first_page.chapter
    chunks = make_chunks(book.pages)
    starts = [c for c in chunks if c.start_page == second.page and c.chapter == first_page.chapter]
    assert starts and starts[0].text.startswith("II.")
    for chunk in chunks:
        assert {book.pages[n - 1].chapter for n in range(chunk.start_page, chunk.end_page + 1)} == {
            chunk.chapter
        }


def test_gutenberg_like_epub_is_deterministic(tmp_path: Path) -> None:
    path = gutenberg_like_epub(tmp_path / "holmes.epub")
    assert parse_book(path) == parse_book(path)


def test_long_heading_title_is_shortened_and_missing_anchor_falls_back(tmp_path: Path) -> None:
    long_title = "A Very Long Heading " + "that goes on and on " * 10
    docs = [
        (
            "a.xhtml",
            f'<h2 id="one">{long_title}</h2>{paragraphs(10, seed="one")}'
            f'<h2 id="two">Second</h2>{paragraphs(10, seed="two")}',
        )
    ]
    toc = [
        (long_title, 1, "a.xhtml#one"),
        ("Second", 1, "a.xhtml#two"),
        ("Gone", 1, "a.xhtml#nope"),
    ]
    book = parse_book(make_anchored_epub(tmp_path / "long.epub", docs, toc))
    first, second, gone = book.toc
    assert len(first.title) <= 121 and first.title.endswith("…")
    assert first.title.startswith("A Very Long Heading that goes on")
    assert "\n" not in first.title
    assert book.pages[second.page - 1].text.startswith("Second")
    assert gone.page == 1, "an anchor that is not in the file goes to the file's first page"


def test_anchor_inside_paragraph_and_out_of_order_entries(tmp_path: Path) -> None:
    body = (
        f"<h1>Start</h1>{paragraphs(8, seed='a')}"
        f'<p>Here <span id="mid">the middle</span> begins.</p>{paragraphs(8, seed="b")}'
        f'<h2 id="end">The End Part</h2>{paragraphs(3, seed="c")}'
    )
    toc = [("Start", 1, "x.xhtml"), ("End", 1, "x.xhtml#end"), ("Middle", 2, "x.xhtml#mid")]
    book = parse_epub(make_anchored_epub(tmp_path / "mid.epub", [("x.xhtml", body)], toc))
    assert len(book.chapters) == 3
    assert book.chapters[1].blocks[0].text == "Here the middle begins."
    parsed = parse_book(tmp_path / "mid.epub")
    pages = {t.title: t.page for t in parsed.toc}
    assert parsed.pages[pages["Middle"] - 1].text.startswith("Here the middle begins.")
    assert parsed.pages[pages["End"] - 1].text.startswith("The End Part")


def test_entries_without_anchors_keep_file_pages(tmp_path: Path) -> None:
    docs = [(f"c{i}.xhtml", f"<h1>Chapter {i}</h1>{paragraphs(6, seed=f'c{i}')}") for i in range(3)]
    toc = [(f"Chapter {i}", 1, f"c{i}.xhtml") for i in range(3)]
    book = parse_book(make_anchored_epub(tmp_path / "plain.epub", docs, toc))
    assert len(book.chapters) == 3
    assert_entries_on_their_pages(book)


def test_chapter_texts_are_whole(tmp_path: Path) -> None:
    """Cutting files at anchors loses and duplicates nothing."""
    path = gutenberg_like_epub(tmp_path / "holmes.epub", paragraphs_per_part=3)
    book = parse_book(path)
    words = re.findall(r"\bs\dp\dw\d+x\d+\b", "\n".join(p.text for p in book.pages))
    assert len(words) == len(set(words)) == 3 * 3 * 3 * 60
