"""Reading an EPUB's documents ahead on a second thread (core/books/epubahead.py): the parse
gets exactly what it would have read itself, errors in their turn, and no thread is left;
and the pages pagination notes as holding links while it cuts them (core/books/pages.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from core.books import epub, epubahead
from core.books.epubahead import ReadAhead
from core.books.parse import parse_book
from core.errors import BookError
from tests.core.books.epubgen import damage_member, make_epub


def _ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "margin-epub-ahead"]


def test_results_come_in_order_and_an_error_in_its_turn() -> None:
    def work(name: str) -> str:
        if name == "bad":
            raise OSError("cannot read bad")
        return name.upper()

    ahead = ReadAhead(["a", "b", "bad", "c"], work)
    try:
        assert ahead.take("a") == "A"
        assert ahead.take("b") == "B"
        with pytest.raises(OSError, match="cannot read bad"):
            ahead.take("bad")
    finally:
        ahead.close()
    assert not _ahead_threads()


def test_asking_out_of_order_is_refused() -> None:
    ahead = ReadAhead(["a", "b"], str.upper)
    try:
        with pytest.raises(ValueError, match="'b' was not the next"):
            ahead.take("b")
    finally:
        ahead.close()


def test_close_stops_a_thread_waiting_with_a_full_queue() -> None:
    started = time.monotonic()
    ahead = ReadAhead([str(n) for n in range(50)], str)
    ahead.take("0")
    ahead.close()  # the thread was blocked putting its fourth result
    assert not _ahead_threads()
    assert time.monotonic() - started < 5


def _book(tmp_path: Path) -> Path:
    body = "".join(f"<p>Paragraph {n} of the chapter, “quoted” — and so on.</p>" for n in range(40))
    chapters = [(f"Chapter {n}", body) for n in range(12)]
    return make_epub(tmp_path / "book.epub", chapters)


def test_a_book_read_ahead_is_the_book_read_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _book(tmp_path)
    alone = parse_book(path)
    used: list[object] = []
    real = epub._read_ahead

    def spy(*args: object) -> object:
        used.append(real(*args))  # type: ignore[arg-type]
        return used[-1]

    monkeypatch.setattr(epub, "_read_ahead", spy)
    monkeypatch.setattr(epub, "worth_it", lambda total: True)
    assert parse_book(path) == alone
    assert used and used[0] is not None  # it did read ahead
    assert not _ahead_threads()


def test_a_damaged_document_fails_the_same_when_read_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _book(tmp_path)
    damage_member(path, "OEBPS/c7.xhtml")
    with pytest.raises(BookError) as alone:
        parse_book(path)
    monkeypatch.setattr(epub, "worth_it", lambda total: True)
    with pytest.raises(BookError) as ahead:
        parse_book(path)
    assert (ahead.value.code, str(ahead.value)) == (alone.value.code, str(alone.value))
    assert "c7.xhtml" in str(ahead.value)
    assert not _ahead_threads()


def test_the_switch_interval_comes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    before = sys.getswitchinterval()
    monkeypatch.setattr(epub, "worth_it", lambda total: True)
    parse_book(_book(tmp_path))
    assert sys.getswitchinterval() == before


def test_a_small_book_is_not_read_ahead() -> None:
    assert not epubahead.worth_it(200_000)


def test_pages_found_holding_links_while_cut_are_those_a_full_look_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """paginate_blocks notes the pages with note links and anchors as it builds them
    (core/books/pages.py): the result is what looking through every page gives."""
    from core.books import pages

    notes = (
        '<p>A claim.<a epub:type="noteref" href="c1.xhtml#n1">1</a> More <a href="#x">here</a>.</p>'
        '<p id="x">Target.</p>'
    )
    note = '<aside epub:type="footnote" id="n1"><p>The note.</p></aside><p>Plain.</p>'
    path = make_epub(tmp_path / "notes.epub", [("One", notes), ("Two", note)])
    book = parse_book(path)
    assert any("page:" in (p.html or "") for p in book.pages)  # links were resolved
    real = pages.resolve_note_links
    monkeypatch.setattr(pages, "resolve_note_links", lambda cut, keep, _=None: real(cut, keep))
    assert parse_book(path) == book


def test_made_pages_and_blocks_are_the_dataclasses_own() -> None:
    """make_page and make_block (core/books/model.py) fill the fields directly: the objects
    equal, hash, print and copy as the dataclass's own."""
    from dataclasses import replace

    from core.books.model import Block, PageContent, make_block, make_page

    pairs = [
        (
            make_page(3, "iii", "Text.", "<p>Text.</p>", 1),
            PageContent(3, "iii", "Text.", "<p>Text.</p>", 1),
        ),
        (make_block("h2", "Title", "Title", "x"), Block("h2", "Title", "Title", "x")),
    ]
    for made, own in pairs:
        assert made == own and hash(made) == hash(own) and repr(made) == repr(own)
        assert vars(made) == vars(own) and list(vars(made)) == list(vars(own))
    assert replace(pairs[0][0], label="4") == PageContent(3, "4", "Text.", "<p>Text.</p>", 1)


def test_without_a_second_core_it_stops_and_the_parse_reads_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the threads did not run side by side (another program keeps the second core),
    the thread stops after CHECK_AFTER documents and take() does the work itself, in order,
    an error still in its turn."""
    monkeypatch.setattr(ReadAhead, "_side_by_side", lambda self: False)
    done_by: dict[str, str] = {}
    names = [f"d{n}" for n in range(20)] + ["bad", "after"]

    def work(name: str) -> str:
        done_by[name] = threading.current_thread().name
        if name == "bad":
            raise OSError("cannot read bad")
        return name.upper()

    ahead = ReadAhead(names, work)
    try:
        for name in names[:20]:
            assert ahead.take(name) == name.upper()
        with pytest.raises(OSError, match="cannot read bad"):
            ahead.take("bad")
    finally:
        ahead.close()
    assert done_by["d0"] == "margin-epub-ahead"
    assert done_by["d19"] == done_by["bad"] == threading.current_thread().name
    assert "after" not in done_by
    assert not _ahead_threads()
