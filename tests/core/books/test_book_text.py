"""The plain text of a page is the book's text (issue 33): note references apart from their
word, endnotes numbered and linked both ways, verse lines, alt text, image-only documents,
stage directions and block quotes, and pages that respect the text. Small EPUBs written
here in Standard Ebooks' markup (short CC0 excerpts)."""

from __future__ import annotations

import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.books.htmlblocks import html_document, html_to_blocks
from core.books.importer import import_book, reimport_book
from core.books.model import Block, Chapter
from core.books.pagecuts import split_long_text
from core.books.pages import paginate_blocks
from core.books.parse import parse_book
from core.paths import resolve_paths
from core.search.fts import BookSearch
from core.store.library import Library
from tests.core.books.epubgen import CONTAINER, make_epub

XHTML = (
    '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
    'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>{title}</title></head>'
    "<body>{body}</body></html>"
)
INTRO = (
    "<h2>Editor’s Introduction</h2>"
    "<p>The first edition of the Wealth of Nations was published on the 9th of "
    'March,<a href="c1.xhtml#note-1" id="noteref-1" epub:type="noteref">1</a> 1776, in two '
    "volumes quarto.</p>"
    "<p>The second edition appeared early in 1778, priced at two guineas,"
    '<a href="c1.xhtml#note-2" id="noteref-2" epub:type="noteref">2</a> but differing little '
    "in appearance from its predecessor.</p>"
)
NOTES = (
    '<section id="endnotes" epub:type="endnotes"><h2>Endnotes</h2><ol>'
    '<li id="note-1"><p>John Rae, <i>Life of Adam Smith</i>, 1895, p. 284. '
    '<a href="c0.xhtml#noteref-1" epub:type="backlink">↩</a></p></li>'
    '<li id="note-2"><p>John Rae, <i>Life of Adam Smith</i>, 1895, p. 285.</p>'
    '<p><a href="c0.xhtml#noteref-2" epub:type="backlink">↩</a></p></li>'
    "</ol></section>"
)


def _se_epub(
    path: Path,
    docs: list[tuple[str, str]],
    images: tuple[str, ...] = ("f.png", "r.png", "cover.png"),
    unlisted: int = 0,
) -> Path:
    """An EPUB 3 of whole documents (title, body), each with its contents entry."""
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(docs))
    )
    refs = "".join(f'<itemref idref="c{i}"/>' for i in range(len(docs)))
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title>'
        "<dc:language>en</dc:language></metadata>"
        f'<manifest>{items}<item id="nav" href="nav.xhtml" '
        'media-type="application/xhtml+xml" properties="nav"/></manifest>'
        f"<spine>{refs}</spine></package>"
    )
    links = "".join(
        f'<li><a href="c{i}.xhtml">Nav {t}</a></li>'
        for i, (t, _) in enumerate(docs)
        if i >= unlisted
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", opf)
        z.writestr(
            "OEBPS/nav.xhtml",
            XHTML.format(title="Contents", body=f'<nav epub:type="toc"><ol>{links}</ol></nav>'),
        )
        for i, (title, body) in enumerate(docs):
            z.writestr(f"OEBPS/c{i}.xhtml", XHTML.format(title=title, body=body))
        for name in images:
            z.writestr(f"OEBPS/{name}", b"\x89PNG\r\n\x1a\n")
    return path


@pytest.fixture
def library() -> Iterator[Library]:
    lib = Library.open(resolve_paths())
    yield lib
    lib.close()


def _all_text(lib: Library, book_id: int, count: int) -> str:
    return "\n\n".join(p.text for p in lib.pages(book_id, 1, count))


def test_note_reference_is_kept_apart_and_the_word_is_found(
    library: Library, tmp_path: Path
) -> None:
    path = _se_epub(tmp_path / "smith.epub", [("Introduction", INTRO), ("Endnotes", NOTES)])
    book = import_book(library, path).book
    text = _all_text(library, book.id, book.page_count)
    assert "March,[1] 1776" in text and "March,1" not in text
    assert "guineas,[2] but" in text
    hits = BookSearch(library.db).search_book(book.id, "March")
    assert hits and "March" in hits[0].text
    page = library.page(book.id, 1)
    assert page.html is not None
    # the window shows the number as a superscript link to the page of its note
    assert re.search(r'<sup><a class="noteref" href="page:\d+#[^"]+">1</a></sup>', page.html)


def test_endnotes_are_numbered_and_linked_both_ways(tmp_path: Path) -> None:
    path = _se_epub(tmp_path / "smith.epub", [("Introduction", INTRO), ("Endnotes", NOTES)])
    book = parse_book(path)
    text = "\n\n".join(p.text for p in book.pages)
    assert "[1] John Rae, Life of Adam Smith, 1895, p. 284." in text
    assert "[2] John Rae, Life of Adam Smith, 1895, p. 285." in text
    assert "↩" not in text
    notes_page = next(p for p in book.pages if "[1] John Rae" in p.text)
    ref_page = next(p for p in book.pages if "March,[1]" in p.text)
    assert notes_page.html and ref_page.html
    # reference → note, and note → reference (also from a back link in its own paragraph)
    assert f'<sup><a class="noteref" href="page:{notes_page.number}#' in ref_page.html
    assert notes_page.html.count(f'<a href="page:{ref_page.number}">↩</a>') == 2
    assert "margin:" not in notes_page.html + ref_page.html


def test_notes_numbered_by_their_reference_when_the_list_does_not_say() -> None:
    labels = {"x.xhtml#n7": "7"}
    _, blocks, _ = html_document(
        '<body><ol><li id="n7"><p>Seventh.</p></li></ol></body>', doc="x.xhtml", ref_labels=labels
    )
    assert blocks[0].text == "[7] Seventh."


def test_footnote_in_a_superscript_link_is_a_reference() -> None:
    _, blocks = html_to_blocks('<p>A word<sup><a href="#fn3">3</a></sup> here.</p>')
    assert blocks[0].text == "A word[3] here."


def test_verse_keeps_lines_and_stanzas() -> None:
    _, blocks = html_to_blocks(
        '<article epub:type="z3998:poem"><p><span>Now Morning from her orient chamber came,</span>'
        '\n<br/>\n<span class="i1">And her first footsteps touch’d a verdant hill;</span></p>'
        "<p><span>There the kingfisher saw his plumage bright,</span><br/>"
        "<span>Vying with fish of brilliant dye below;</span></p></article>"
    )
    assert [b.text for b in blocks] == [
        "Now Morning from her orient chamber came,\nAnd her first footsteps touch’d a verdant hill;",
        "There the kingfisher saw his plumage bright,\nVying with fish of brilliant dye below;",
    ]
    page = paginate_blocks([Chapter("Poem", tuple(blocks))]).pages[0]
    assert "came,\nAnd her" in page.text and "hill;\n\nThere" in page.text
    assert "<br>" in (page.html or "")


def test_verse_in_a_play_table_keeps_its_lines() -> None:
    _, blocks = html_to_blocks(
        '<table><tr><td epub:type="z3998:persona">Francisco</td><td epub:type="z3998:verse">'
        "<p><span>For this relief much thanks: ’tis bitter cold,</span><br/>"
        "<span>And I am sick at heart.</span></p></td></tr></table>"
    )
    assert blocks[0].text == (
        "Francisco · For this relief much thanks: ’tis bitter cold,\nAnd I am sick at heart."
    )


def test_alt_text_in_place_and_image_only_document_kept(tmp_path: Path) -> None:
    rabbit = "A white rabbit wearing a waistcoat consults a pocket-watch."
    frontis = "Alice holds the bottle marked “Drink me.”"
    path = _se_epub(
        tmp_path / "alice.epub",
        [
            ("Frontispiece", f'<figure><img alt="{frontis}" src="f.png"/></figure>'),
            (
                "Chapter I",
                "<h2>Down the Rabbit-Hole</h2><p>Alice was beginning to get very tired.</p>"
                f'<figure><img alt="{rabbit}" src="r.png"/></figure><p>In another moment down '
                "went Alice after it.</p>",
            ),
        ],
    )
    book = parse_book(path)
    assert book.pages[0].text == f"[Illustration: {frontis}]"
    assert f"tired.\n\n[Illustration: {rabbit}]\n\nIn another" in book.pages[1].text
    # the contents entry of the image-only document points at its own page
    assert [(t.title, t.page) for t in book.toc] == [("Nav Frontispiece", 1), ("Nav Chapter I", 2)]


def test_cover_image_document_is_still_not_a_page(tmp_path: Path) -> None:
    path = _se_epub(
        tmp_path / "c.epub",
        [("Cover", '<img alt="Cover" src="cover.png"/>'), ("One", "<p>Text of the book.</p>")],
        unlisted=1,  # the contents do not list the cover
    )
    book = parse_book(path)
    assert [p.text for p in book.pages] == ["Text of the book."]


def test_stage_directions_and_block_quotes_are_marked() -> None:
    _, blocks = html_to_blocks(
        '<table><tr><td epub:type="z3998:persona">Jack</td><td>'
        '<i epub:type="z3998:stage-direction">Rising, and following Algernon.</i> '
        "It is very thoughtful of you.</td></tr></table>"
        '<p epub:type="z3998:stage-direction">Lane goes out.</p>'
        "<blockquote><p>The first Edition was printed in the end of the year 1775.</p>"
        "</blockquote>"
    )
    assert (
        blocks[0].text == "Jack · (Rising, and following Algernon.) It is very thoughtful of you."
    )
    assert blocks[1].text == "(Lane goes out.)"
    assert blocks[2].kind == "quote"
    assert blocks[2].text == "> The first Edition was printed in the end of the year 1775."


def test_deeply_nested_document_imports(tmp_path: Path) -> None:
    depth = 5000
    assert depth > sys.getrecursionlimit()
    body = "<div>" * depth + "<p>Deep inside.</p>" + "</div>" * depth
    _, blocks = html_to_blocks(f"<html><body>{body}</body></html>")
    assert [b.text for b in blocks] == ["Deep inside."]
    path = make_epub(tmp_path / "deep.epub", [("Deep", "<span>" * depth + "word" * 3)])
    book = parse_book(path)
    assert "wordwordword" in book.pages[0].text


def test_long_paragraph_is_cut_at_sentence_ends_into_even_pieces() -> None:
    sentence = "The quick brown fox jumps over the lazy dog again and again. "
    text = (sentence * 70).strip()  # about 4,300 characters: cut into pieces
    pieces = split_long_text(text, 2000)
    assert all(p.endswith(".") for p in pieces), "every cut is at a sentence end"
    assert min(map(len, pieces)) > 1000, "no remainder piece of a few words"
    # a long sentence without a near end: cut at spaces, but never a tiny tail
    words = ("word " * 820).strip()
    pieces = split_long_text(words, 2000)
    assert min(map(len, pieces)) > 600


def test_heading_stays_with_the_text_that_follows() -> None:
    long = " ".join(["A sentence of the chapter that goes on for a while."] * 70)
    blocks = (
        Block("p", "x" * 1500, ""),
        Block("h2", "XXIII", "XXIII"),
        Block("p", long, ""),
    )
    pages = paginate_blocks([Chapter("Book", blocks)]).pages
    assert all(p.text.strip() != "XXIII" for p in pages)
    assert any(p.text.startswith("XXIII\n\nA sentence") for p in pages)
    assert all(len(p.text) >= 30 for p in pages)


def test_long_paragraph_keeps_formatting_and_note_links_across_pages() -> None:
    sentence = "It was <i>very</i> remarkable."
    html = " ".join([sentence] * 200) + '<sup><a href="margin:n#x">4</a></sup> End.'
    text = " ".join(["It was very remarkable."] * 200) + "[4] End."
    pages = paginate_blocks([Chapter("c", (Block("p", text, html),))]).pages
    assert len(pages) > 1
    assert all(p.html and p.html.count("<i>") == p.html.count("</i>") > 0 for p in pages)
    assert '<sup><a href="page:0">4</a></sup>' in (pages[-1].html or "")


def test_reimport_gives_an_older_import_the_new_text(library: Library, tmp_path: Path) -> None:
    path = _se_epub(tmp_path / "smith.epub", [("Introduction", INTRO), ("Endnotes", NOTES)])
    book = import_book(library, path).book
    # as an older Margin left it: an older parser version, the number glued to the word
    library.db.execute_sql("UPDATE book SET parser_version = 2 WHERE id = ?", (book.id,))
    assert library.get_book(book.id).outdated
    reimport_book(library, book.id)
    again = library.get_book(book.id)
    assert not again.outdated
    assert "March,[1] 1776" in _all_text(library, again.id, again.page_count)


def test_a_passage_with_note_references_comes_with_its_notes(
    library: Library, tmp_path: Path
) -> None:
    path = _se_epub(tmp_path / "smith.epub", [("Introduction", INTRO), ("Endnotes", NOTES)])
    book = import_book(library, path).book
    hits = BookSearch(library.db).search_book(book.id, "March quarto")
    notes_page = next(
        p.number
        for p in library.pages(book.id, 1, book.page_count)
        if p.text.startswith("Endnotes")
    )
    assert hits[0].text.endswith(
        "Notes to this passage:\n"
        f"[1] John Rae, Life of Adam Smith, 1895, p. 284. (page {notes_page})\n"
        f"[2] John Rae, Life of Adam Smith, 1895, p. 285. (page {notes_page})"
    )
    # the notes' own passage is not given its notes again
    notes_hit = BookSearch(library.db).search_book(book.id, "Rae")
    assert all(h.text.count("Notes to this passage") <= 1 for h in notes_hit)


def test_footnote_link_around_a_superscript_and_its_note_in_the_same_document() -> None:
    _, blocks = html_to_blocks(
        '<p>The word<a href="#fn2"><sup>2</sup></a> stands.</p>'
        '<ol><li id="fn1"><p>One.</p></li><li id="fn2"><p>The note.</p></li></ol>'
    )
    assert [b.text for b in blocks] == ["The word[2] stands.", "One.", "[2] The note."]
