"""How page and chunk text is stored (schema 8): what goes in comes back exactly."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.books.chunking import make_chunks
from core.books.parse import parse_book
from core.store.library import Library
from core.store.models import (
    chunk_pages,
    pack_chunk,
    pack_page,
    page_text,
    plain_html,
    unpack_chunk,
    unpack_page,
)

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3000)


@given(TEXT, st.one_of(st.none(), TEXT))
@settings(max_examples=150, deadline=None)
def test_a_page_comes_back_exactly(text: str, html: str | None) -> None:
    back_text, back_html = unpack_page(pack_page(text, html))
    assert back_text == text == page_text(pack_page(text, html))
    if html is None:
        assert back_html is None
    elif html in ("", plain_html(text)):
        assert back_html == plain_html(text)  # stored as "just the paragraphs"
    else:
        assert back_html == html


@given(st.text(st.sampled_from("ab\n &<>\"'"), max_size=40))
@settings(max_examples=300, deadline=None)
def test_plain_html_is_each_paragraph_escaped_and_wrapped(text: str) -> None:
    """The form the text parser writes (pages stored before depend on it): made in passes
    over the whole text, it stays what it was paragraph by paragraph."""
    from html import escape

    paragraphs = [f"<p>{escape(p, quote=False)}</p>" for p in text.split("\n\n")]
    assert plain_html(text) == "\n".join(paragraphs)


@given(TEXT, TEXT, TEXT)
@settings(max_examples=150, deadline=None)
def test_a_chunk_comes_back_with_any_pages(text: str, first: str, last: str) -> None:
    """Any text packs against any pages (they only help compression)."""
    packed = pack_chunk(text, chunk_pages(first, last))
    assert unpack_chunk(packed, pack_page(first, None), pack_page(last, "<p>x</p>")) == text


def test_pages_longer_than_zlibs_window_and_a_chunk_over_three_pages() -> None:
    big = "word " * 20_000  # 100 kB: only its last 32 KiB can serve as the dictionary
    text = "start " + big[:5000] + " end"
    packed = pack_chunk(text, chunk_pages(big, "second page"))
    assert unpack_chunk(packed, pack_page(big, None), pack_page("second page", None)) == text


def test_unpacking_against_the_wrong_pages_fails_loudly() -> None:
    first, last = "It was a dark and stormy night. " * 20, "The end."
    text = first[40:400] + last
    packed = pack_chunk(text, chunk_pages(first, last))
    with pytest.raises((zlib.error, ValueError)):
        unpack_chunk(packed, pack_page("other text entirely " * 5, None), pack_page(last, None))
    with pytest.raises(ValueError, match="not a stored chunk"):
        unpack_chunk(b"xyz", None, None)
    with pytest.raises(ValueError, match="not a stored page"):
        unpack_page(b"xyz")


def test_rows_from_before_schema_8_read_as_they_are() -> None:
    assert unpack_page("plain old text") == ("plain old text", None)
    assert page_text(None) == ""
    assert unpack_chunk("old chunk", None, None) == "old chunk"


def test_real_books_chunks_cost_little_beside_their_pages(books_dir: Path) -> None:
    parsed = parse_book(books_dir / "metamorphosis.epub")
    texts = {p.number: p.text for p in parsed.pages}
    chunks = make_chunks(parsed.pages)
    raw = sum(len(c.text.encode()) for c in chunks)
    packed = [
        pack_chunk(c.text, chunk_pages(texts[c.start_page], texts[c.end_page])) for c in chunks
    ]
    assert sum(len(b) for b in packed) < raw / 8  # plain zlib gets about 1 / 2
    for chunk, blob in zip(chunks, packed, strict=True):
        first = pack_page(texts[chunk.start_page], None)
        last = pack_page(texts[chunk.end_page], None)
        assert unpack_chunk(blob, first, last) == chunk.text


def _damage(library: Library, table: str, where: str) -> None:
    """Flip bytes of stored text: a chunk's, or the block holding a page (issue 41)."""
    column = "text"
    if table == "page":
        table, column = "page_block", "data"
        where = f"(book_id, first) IN (SELECT book_id, block FROM page WHERE {where})"
    rows = library.db.execute_sql(f"SELECT rowid, {column} FROM {table} WHERE {where}")
    rows = rows.fetchall()
    assert rows
    for rid, blob in rows:
        flipped = bytearray(blob)
        for i in range(12, min(len(flipped), 40)):
            flipped[i] ^= 0x5A
        library.db.execute_sql(
            f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (bytes(flipped), rid)
        )


def test_damaged_stored_text_is_reported_and_re_reading_repairs_it(books_dir: Path) -> None:
    """A damaged database page inside stored text: reading and searching say so, with the
    way out (re-read the book), and re-reading or deleting the book works despite it."""
    from core.books.importer import import_book, reimport_book
    from core.errors import StorageError
    from core.paths import resolve_paths
    from core.search import BookSearch

    library = Library.open(resolve_paths())
    try:
        book = import_book(library, books_dir / "metamorphosis.txt").book
        other = import_book(library, books_dir / "alice_in_wonderland.txt").book
        _damage(library, "page", f"book_id = {book.id} AND number = 5")
        _damage(library, "chunk", f"book_id = {book.id}")
        with pytest.raises(StorageError, match="damaged: page 5 of book") as err:
            library.page(book.id, 5)
        assert f"margin repair {book.id}" in (err.value.hint or "")
        with pytest.raises(StorageError, match="damaged"):
            library.page_texts(book.id)
        with pytest.raises(StorageError, match="damaged"):
            BookSearch(library.db).search_book(book.id, "Samsa")
        reimport_book(library, book.id)  # rebuilt from the copy
        assert "Samsa" in BookSearch(library.db).search_book(book.id, "Samsa")[0].text
        assert library.page(book.id, 5).text
        assert BookSearch(library.db).search_book(other.id, "Cheshire")  # the others still
        library.db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
        _damage(library, "chunk", f"book_id = {other.id}")
        library.delete_book(other.id)
        library.db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
        assert [b.id for b in library.list_books()] == [book.id]
    finally:
        library.close()


def _page_before_the_dictionary(text: str, html: str | None) -> bytes:
    """A page as written until the preset dictionary (mark b"P", plain deflate level 1)."""
    body, kind = text.encode(), 0 if html is None else 2
    extra = b"" if html is None else html.encode()
    return b"P" + bytes([kind]) + len(body).to_bytes(4, "little") + zlib.compress(body + extra, 1)


def test_pages_written_before_the_dictionary_still_read(books_dir: Path) -> None:
    """Pages in their own blob (written before the dictionary, or before blocks, issue 41)
    still read: the reader, SQL's page_plain, a chunk's view and search all read them beside
    new pages."""
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.search import BookSearch

    old = _page_before_the_dictionary("Old words.", "<p>Old <i>words</i>.</p>")
    assert unpack_page(old) == ("Old words.", "<p>Old <i>words</i>.</p>")
    assert page_text(old) == "Old words."
    library = Library.open(resolve_paths())
    try:
        book = import_book(library, books_dir / "metamorphosis.epub").book
        rows = library.db.execute_sql(
            "SELECT id, number, text, block FROM page WHERE book_id = ?", (book.id,)
        ).fetchall()
        # new pages: in blocks (issue 41)
        assert all(bytes(blob)[:1] == b"B" and block for _, _, blob, block in rows)
        expected = library.page_texts(book.id)
        for pid, number, _, _ in rows:  # the whole book back in the old format
            page = library.page(book.id, number)
            old_blob = _page_before_the_dictionary(page.text, page.html)
            library.db.execute_sql(
                "UPDATE page SET text = ?, block = NULL WHERE id = ?", (old_blob, pid)
            )
        library.db.execute_sql("DELETE FROM page_block WHERE book_id = ?", (book.id,))
        assert library.page_texts(book.id) == expected
        sql = library.db.execute_sql(
            "SELECT number, text FROM page_plain WHERE book_id = ? ORDER BY number",
            (book.id,),
        ).fetchall()
        assert [(int(n), t) for n, t in sql] == expected
        library.db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
        assert "Gregor" in BookSearch(library.db).search_book(book.id, "Gregor sister")[0].text
    finally:
        library.close()


def test_the_dictionary_packs_real_pages_smaller_and_a_cut_page_fails(books_dir: Path) -> None:
    parsed = parse_book(books_dir / "alice_in_wonderland.epub")  # not the dictionary's source
    now = sum(len(pack_page(p.text, p.html)) for p in parsed.pages)
    before = sum(len(_page_before_the_dictionary(p.text, p.html)) for p in parsed.pages)
    assert now < 0.9 * before
    packed = pack_page(parsed.pages[3].text, parsed.pages[3].html)
    with pytest.raises(zlib.error):
        unpack_page(packed[:-20])
    with pytest.raises(ValueError, match="not a stored page"):
        unpack_page(b"D\x00")


def test_no_index_only_repeats_the_start_of_another() -> None:
    from core.paths import resolve_paths

    library = Library.open(resolve_paths())
    try:
        names = {
            r[0]
            for r in library.db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        assert {"page_book_id_number", "chunk_book_id_end_page"} <= names
        assert not {"page_book_id", "chunk_book_id"} & names
        plan = library.db.execute_sql(
            "EXPLAIN QUERY PLAN SELECT text FROM page WHERE book_id = 1"
        ).fetchall()
        assert "page_book_id_number" in str(plan)
    finally:
        library.close()


def test_a_chunk_cut_from_its_pages_is_stored_as_where_it_is() -> None:
    first, last = "It was a dark and stormy night. " * 20, "The end came at last."
    text = first[40:] + "\n\n" + last[:7]
    packed = pack_chunk(text, chunk_pages(first, last))
    assert packed[:1] == b"S" and len(packed) == 13
    assert unpack_chunk(packed, pack_page(first, None), pack_page(last, None)) == text
    changed = first.replace("stormy", "sunny!", 3)  # same length: only the CRC can tell
    with pytest.raises(ValueError, match="does not match its pages"):
        unpack_chunk(packed, pack_page(changed, None), pack_page(last, None))
    old = pack_chunk(text + " and more", chunk_pages(first, last))  # not a stretch: deflate
    assert old[:1] == b"C"
    assert unpack_chunk(old, pack_page(first, None), pack_page(last, None)) == text + " and more"


def test_the_page_dictionary_never_changes() -> None:
    """Stored pages read only with the very bytes they were packed against (a new
    dictionary needs a new mark, this one kept for the rows already written)."""
    import hashlib

    from core.store.page_dict import PAGE_DICT

    assert hashlib.sha256(PAGE_DICT).hexdigest() == (
        "a4cf84e12f16fd71bec4816449f59fd41c60f90eaea7508ef5434e57ad7b5c21"
    )


_PIECES = st.sampled_from(["a", " ", "\n", "\n\n", "&", "<", ">", "</p>\n<p>", "<p>", "</p>", "é"])


@given(st.lists(_PIECES, max_size=8).map("".join), st.lists(_PIECES, max_size=8).map("".join))
def test_a_page_is_plain_exactly_when_its_html_is_its_texts_paragraphs(
    text: str, other: str
) -> None:
    """``page_kind`` compares a page's HTML with ``plain_html(text)`` in place: the same
    answer as making it, for the plain HTML itself, near misses, and anything else."""
    from core.store.packing import _is_plain_html

    plain = plain_html(text)
    for html in (plain, plain[:-1], plain + " ", f"<p>{text}</p>", other, f"<p>{other}</p>"):
        assert _is_plain_html(text, html) == (html == plain), (text, html)
