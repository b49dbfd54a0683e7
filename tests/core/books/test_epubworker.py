"""A big EPUB's last documents parsed in a second process (core/books/epubworker.py): the
book is exactly what the parse alone makes, whatever the worker read; a worker that dies
or cannot read a document leaves the parse to read it, with the same result or error."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.books import epubworker
from core.books.epubcheck import UNCHECKED, late_problems
from core.books.limits import Limits
from core.books.model import ParsedBook
from core.books.parse import parse_book as parse_only
from core.errors import BookError
from tests.core.books.epubgen import make_epub

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "books"


def parse_book(path: Path, **kwargs: object) -> ParsedBook:
    """``parse_book`` with the XML problems the import adds (core.books.epubcheck): the
    worker checks the documents it reads, the parse leaves its own for later."""
    book = parse_only(path, **kwargs)  # type: ignore[arg-type]
    extra = {k: v for k, v in book.extra.items() if k not in (UNCHECKED, "problems")}
    if problems := late_problems(path, book.extra):
        extra["problems"] = problems
    return dataclasses.replace(book, extra=extra)


@pytest.fixture(scope="module", autouse=True)
def _one_worker() -> Iterator[None]:
    yield  # (one worker for the module's tests: starting one costs a few hundred ms)
    epubworker.shutdown()


def _alone(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> object:
    monkeypatch.setenv(epubworker.ENV, "0")
    return parse_book(path, **kwargs)  # type: ignore[arg-type]


def _read_by_worker(caplog: pytest.LogCaptureFixture) -> int:
    found = [r.getMessage() for r in caplog.records if "the EPUB worker read" in r.getMessage()]
    assert found, "the worker was not asked"
    return int(found[-1].split()[4])


def _shared_as_alone(
    path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The book read with the worker taking every document it can is the book read alone,
    and the worker did read some."""
    alone = _alone(path, monkeypatch)
    monkeypatch.setenv(epubworker.ENV, "all")
    with caplog.at_level(logging.DEBUG, logger="core.books.epub"):
        shared = parse_book(path)
    assert shared == alone
    assert _read_by_worker(caplog) > 0


def test_the_worker_reads_a_book_as_the_parse_does(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Alice's contents page links into the chapters: those the worker read before knowing
    it are read again in their turn; the others are the worker's. Same book either way."""
    book = FIXTURES / "alice_in_wonderland.epub"
    _shared_as_alone(book, monkeypatch, caplog)


def test_notes_and_links_across_documents_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A note reference in the first chapter numbers the note in the last; a link names an
    id in the second: the worker's reading of those two is set aside."""
    path = make_epub(
        tmp_path / "notes.epub",
        [
            ("One", '<p>Words<a epub:type="noteref" href="c2.xhtml#n1">1</a> and more.</p>'),
            ("Two", '<p>See <a href="c0.xhtml#start">the start</a>.</p><p id="start">Here.</p>'),
            ("Three", "<p>Plain text only.</p>"),
            ("Notes", '<aside epub:type="footnote" id="n1"><p>The note.</p></aside>'),
        ],
    )
    _shared_as_alone(path, monkeypatch, caplog)


def test_a_worker_that_dies_leaves_the_parse_to_read_the_book(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    book = FIXTURES / "metamorphosis.epub"
    alone = _alone(book, monkeypatch)
    monkeypatch.setenv(epubworker.ENV, "all")
    started = epubworker.Helper.__init__

    def then_die(self: epubworker.Helper, worker: epubworker._Worker, job: object) -> None:
        started(self, worker, job)  # type: ignore[arg-type]
        worker.proc.kill()

    monkeypatch.setattr(epubworker.Helper, "__init__", then_die)
    with caplog.at_level(logging.DEBUG):
        shared = parse_book(book)
    assert shared == alone
    assert any("the EPUB worker ended" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()
    monkeypatch.setenv(epubworker.ENV, "all")
    assert parse_book(book) == alone  # the next book starts a new worker


def test_a_document_the_worker_cannot_read_fails_the_parse_in_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_epub(
        tmp_path / "long.epub",
        [("One", "<p>Short.</p>"), ("Two", f"<p>{'word ' * 400}</p>"), ("Three", "<p>End.</p>")],
    )
    limits = Limits(max_paragraph_chars=1000)
    with pytest.raises(BookError) as alone:
        _alone(path, monkeypatch, limits=limits)
    monkeypatch.setenv(epubworker.ENV, "all")
    with pytest.raises(BookError) as shared:
        parse_book(path, limits=limits)
    assert str(shared.value) == str(alone.value)
    assert "longer than 1,000 characters" in str(shared.value)


def test_a_worker_stopped_for_want_of_a_free_core_leaves_the_rest_to_the_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another program keeps the second core: after CHECK_AFTER documents the parse stops
    the worker and reads the rest itself (what the worker sent is still used)."""
    book = FIXTURES / "pride_and_prejudice.epub"
    alone = _alone(book, monkeypatch)
    monkeypatch.setenv(epubworker.ENV, "1")
    monkeypatch.setattr(epubworker, "CHECK_AFTER", 2)
    monkeypatch.setattr(epubworker, "SIDE_BY_SIDE", 1e9)  # never enough: as if it were shared
    stopped: list[bool] = []
    real = epubworker.Helper.stop

    def spy(self: epubworker.Helper) -> None:
        stopped.append(True)
        real(self)

    monkeypatch.setattr(epubworker.Helper, "stop", spy)
    assert parse_book(book) == alone
    assert stopped


@pytest.mark.parametrize("raw", [True, False])
def test_a_message_reads_back_as_it_was_sent(raw: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The results pipe's framing, raw (POSIX) and through the pipe's own messages (Windows)."""
    import multiprocessing

    from core.books import epubjob

    if raw and not epubjob.RAW:
        pytest.skip("no os.readv here")
    monkeypatch.setattr(epubjob, "RAW", raw)
    monkeypatch.setattr(epubworker, "RAW", raw)
    reader, writer = multiprocessing.get_context("spawn").Pipe(duplex=False)
    try:
        epubjob._send(writer, epubjob.RESULT, 7, 3, b"meta", "wide “text”".encode("utf-16-le"))
        epubjob._send(writer, epubjob.END, 7, -1)
        kind, job, index, meta_size, body = epubworker._message(reader) or (0, 0, 0, 0, b"")
        assert (kind, job, index) == (epubjob.RESULT, 7, 3)
        assert bytes(body[:meta_size]) == b"meta"
        assert str(body[meta_size:], "utf-16-le") == "wide “text”"
        assert (epubworker._message(reader) or ())[:3] == (epubjob.END, 7, -1)
        writer.close()
        assert epubworker._message(reader) is None  # the worker gone
    finally:
        reader.close()


def test_only_a_big_book_in_several_documents_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(epubworker.ENV, raising=False)
    monkeypatch.setattr(epubworker.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert epubworker.worth_it(16 * 1024 * 1024, 140)
    assert not epubworker.worth_it(1024 * 1024, 140)  # a small book
    assert not epubworker.worth_it(16 * 1024 * 1024, 2)  # one big document or two
    monkeypatch.setattr(epubworker.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not epubworker.worth_it(16 * 1024 * 1024, 140)  # one core
    monkeypatch.setenv(epubworker.ENV, "0")
    monkeypatch.setattr(epubworker.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert not epubworker.worth_it(16 * 1024 * 1024, 140)


def test_a_first_big_book_is_read_alone_and_the_next_starts_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker comes too late for a first book of 16 MiB: it is read alone; a big book
    soon after it, or one that finds the worker running, or a huge one, shares."""
    epubworker.shutdown()
    monkeypatch.delenv(epubworker.ENV, raising=False)
    monkeypatch.setattr(epubworker, "_last_big", None)
    big, huge = 16 * 1024 * 1024, epubworker.COLD_FROM_BYTES
    assert not epubworker.wanted(big)  # the first: alone
    assert epubworker.wanted(big)  # the next, right after
    monkeypatch.setattr(epubworker, "_last_big", -epubworker.AGAIN_S * 2)
    assert not epubworker.wanted(big)  # long after: a first book again
    monkeypatch.setattr(epubworker, "_last_big", None)
    assert epubworker.wanted(huge)
    monkeypatch.setattr(epubworker, "_last_big", None)
    monkeypatch.setenv(epubworker.ENV, "1")
    assert epubworker.wanted(big)  # (forced: the tests, bench_parse_same)


def test_a_book_may_be_read_without_the_worker(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``Limits(epub_worker=False)`` (``margin import`` of one book, which ends before a
    started worker pays for its start) wins even where the worker is asked for always."""
    book = FIXTURES / "alice_in_wonderland.epub"
    alone = _alone(book, monkeypatch)
    monkeypatch.setenv(epubworker.ENV, "1")
    with caplog.at_level(logging.DEBUG, logger="core.books.epub"):
        kept = parse_book(book, limits=Limits(epub_worker=False))
    assert kept == alone
    assert not [r for r in caplog.records if "the EPUB worker read" in r.getMessage()]
    with caplog.at_level(logging.DEBUG, logger="core.books.epub"):
        parse_book(book)  # and the same book with the limits' default is shared
    _read_by_worker(caplog)  # (asserts the worker was asked)


def test_margin_import_of_one_book_starts_no_worker(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from core.cli import main

    epubworker.shutdown()
    monkeypatch.setenv(epubworker.ENV, "1")
    with caplog.at_level(logging.DEBUG, logger="core.books.epub"):
        assert main(["import", str(FIXTURES / "metamorphosis.epub")]) == 0
    assert not [r for r in caplog.records if "the EPUB worker read" in r.getMessage()]
    assert epubworker._worker is None


def test_the_worker_starts_behind_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker (and the resource tracker its start starts) runs on time no one else
    wants, so that its start never slows a book it is too late for; not with ``=all``,
    where the parse waits for it."""
    import os
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        monkeypatch.setenv("MARGIN_WORKER_NICE", "7")
        monkeypatch.setenv(epubworker.ENV, "all")
        epubworker._behind(child.pid)
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == own
        monkeypatch.delenv(epubworker.ENV)
        epubworker._behind(child.pid)
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(19, own + 7)
    finally:
        child.kill()
        child.wait()
