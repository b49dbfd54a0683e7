"""Sync between two data folders through a real WebDAV server (wsgidav on loopback)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.sync.errors import SyncError
from tests.core.sync.devices import Device
from tests.fakes.webdav_server import WebDavServer

pytest.importorskip("wsgidav", reason="wsgidav (the dev extras) runs the WebDAV server")

USER, PASSWORD = "reader", "s3cret-pass"


@pytest.fixture
def dav(tmp_path: Path) -> Iterator[WebDavServer]:
    with WebDavServer(tmp_path / "dav", user=USER, password=PASSWORD) as server:
        yield server


@pytest.fixture
def pair(tmp_path: Path, dav: WebDavServer, books_dir: Path) -> Iterator[tuple[Device, Device]]:
    a = Device(tmp_path, "laptop", dav.url, USER, PASSWORD)
    b = Device(tmp_path, "desktop", dav.url, USER, PASSWORD)
    for device in (a, b):
        device.import_book(books_dir / "alice_in_wonderland.epub")
    yield a, b
    a.close()
    b.close()


def book(device: Device) -> int:
    return device.use().list_books()[0].id


def test_highlights_notes_threads_and_position_travel_both_ways(
    pair: tuple[Device, Device],
) -> None:
    a, b = pair
    lib = a.use()
    bid = book(a)
    lib.add_highlight(bid, 5, "Alice", note="she is bored", colour="green")
    note = lib.add_note(bid, "Read this on the train", page=7)
    lib.set_position(bid, 12)
    conv = a.app.conversations.create(bid, "Why the rabbit?")
    from core.domain.messages import Question

    a.app.conversations.start_run(
        conv.id, provider="passages", model="", strategy="", question=Question("Why a watch?")
    )
    assert a.sync().sent >= 5
    got = b.sync()
    assert got.received >= 4 and not got.problems
    assert b.highlights() == [("Alice", "she is bored", "green")]
    assert b.notes() == [("Read this on the train", 7)]
    assert b.use().get_book(book(b)).read_to == 12
    titles = [t for (t,) in b.db.execute_sql("SELECT title FROM conversation")]
    assert titles == ["Why the rabbit?"] and conv.id
    asked = b.db.execute_sql(
        "SELECT m.text, c.title FROM message m JOIN conversation c ON c.id = m.conversation_id"
    ).fetchall()
    assert asked == [("Why a watch?", "Why the rabbit?")]  # the running answer stays home

    blib = b.use()
    (nid,) = [n.id for n in blib.list_notes(book(b))]
    blib.update_note(nid, "Read this on the train, twice")
    blib.delete_highlight(blib.list_highlights(book(b))[0].id)
    b.sync()
    a.sync()
    assert a.notes() == [("Read this on the train, twice", 7)] and a.highlights() == []
    assert note.id


def test_both_edit_one_note_offline_keep_both_versions(pair: tuple[Device, Device]) -> None:
    a, b = pair
    a.use().add_note(book(a), "first words", page=3)
    a.sync()
    b.sync()
    (na,) = a.use().list_notes(book(a))
    a.use().update_note(na.id, "laptop's version")
    (nb,) = b.use().list_notes(book(b))
    b.use().update_note(nb.id, "desktop's version")
    a.sync()
    report = b.sync()
    a.sync()
    assert report.copies == 1
    both = [("desktop's version", 3), ("laptop's version", 3)]
    assert a.notes() == both and b.notes() == both
    a.sync()
    b.sync()  # and it stays that way
    assert a.notes() == both and b.notes() == both


def test_a_delete_on_one_side_never_takes_an_edit_on_the_other(
    pair: tuple[Device, Device],
) -> None:
    a, b = pair
    a.use().add_note(book(a), "keep me", page=2)
    a.sync()
    b.sync()
    (na,) = a.use().list_notes(book(a))
    a.use().delete_note(na.id)
    (nb,) = b.use().list_notes(book(b))
    b.use().update_note(nb.id, "keep me, edited")
    b.sync()
    a.sync()
    b.sync()
    assert a.notes() == b.notes() == [("keep me, edited", 2)]


def test_a_device_back_after_a_week_gets_every_change(
    pair: tuple[Device, Device],
) -> None:
    a, b = pair
    for day in range(7):  # a week of syncs on the laptop while the desktop is off
        a.use().add_note(book(a), f"day {day}", page=day + 1)
        a.sync()
    b.use().add_note(book(b), "desktop, offline all week", page=9)
    b.sync()
    a.sync()
    assert len(a.notes()) == len(b.notes()) == 8


def test_a_wrong_clock_cannot_win_over_a_later_edit(
    pair: tuple[Device, Device], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Versions are ordered by Lamport counters, never by the computers' clocks: the
    desktop's clock is ten years ahead, and the laptop's later edit still wins."""
    import datetime as dt

    import core.store.models as models

    a, b = pair
    monkeypatch.setattr(models, "utcnow", lambda: dt.datetime(2036, 1, 1))
    b.use().add_note(book(b), "from the future", page=4)
    b.sync()
    monkeypatch.undo()
    a.sync()
    (na,) = a.use().list_notes(book(a))
    a.use().update_note(na.id, "edited later, on the laptop")
    a.sync()
    b.sync()
    assert a.notes() == b.notes() == [("edited later, on the laptop", 4)]


def test_records_of_a_book_not_here_wait_for_it(
    tmp_path: Path, dav: WebDavServer, books_dir: Path
) -> None:
    a = Device(tmp_path, "one", dav.url, USER, PASSWORD)
    b = Device(tmp_path, "two", dav.url, USER, PASSWORD)
    try:
        bid = a.import_book(books_dir / "metamorphosis.epub")
        a.use().add_note(bid, "Gregor", page=2)
        a.sync()
        assert b.sync().waiting == 3 and b.notes() == []  # its title, position, note
        a.use().set_position(bid, 20)
        a.sync()
        b.import_book(books_dir / "metamorphosis.epub")
        assert b.sync().waiting == 0 and b.notes() == [("Gregor", 2)]
        a.sync()  # importing it on the desktop does not send its first page back
        assert a.use().get_book(bid).page == 20
        assert b.use().list_books()[0].page == 20
    finally:
        a.close()
        b.close()


def test_wrong_password_and_server_down_lose_nothing(
    pair: tuple[Device, Device], dav: WebDavServer
) -> None:
    a, b = pair
    a.use().add_note(book(a), "written offline", page=1)
    a.password = "wrong"
    with pytest.raises(SyncError) as err:
        a.sync()
    assert err.value.code == "unauthorized" and "did not accept" in str(err.value)
    a.password = PASSWORD
    dav.stop()
    with pytest.raises(SyncError) as err:
        a.sync()
    assert err.value.code == "unreachable"
    waiting = a.db.execute_sql("SELECT COUNT(*) FROM sync_record WHERE outbox = 1").fetchone()
    assert waiting[0] >= 1  # still in the outbox
    with WebDavServer(dav.root, user=USER, password=PASSWORD) as again:
        a.url = b.url = again.url
        a.sync()
        b.sync()
    assert b.notes() == [("written offline", 1)]


def test_a_half_written_change_file_is_read_next_time(
    pair: tuple[Device, Device], dav: WebDavServer
) -> None:
    a, b = pair
    a.use().add_note(book(a), "one", page=1)
    a.sync()
    (written,) = (dav.root / "M" / "laptop").glob("*.json")
    whole = written.read_bytes()
    written.write_bytes(whole[: len(whole) // 2])  # cut off, as by a dropped connection
    report = b.sync()
    assert b.notes() == [] and "incomplete" in report.problems[0]
    written.write_bytes(whole)
    assert not b.sync().problems and b.notes() == [("one", 1)]


def test_a_change_file_is_plain_json_without_secrets(
    pair: tuple[Device, Device], dav: WebDavServer
) -> None:
    a, _ = pair
    a.use().add_note(book(a), "n", page=1)
    a.sync()
    (written,) = (dav.root / "M" / "laptop").glob("*.json")
    body = json.loads(written.read_text())
    assert body["device"] == "laptop" and body["count"] == len(body["changes"])
    assert PASSWORD not in written.read_text()
    assert not list((dav.root / "M" / "laptop").glob(".*"))  # the part file was moved


def test_a_server_answering_500_loses_nothing(pair: tuple[Device, Device]) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Broken(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _fail(self) -> None:
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_PUT = do_PROPFIND = do_MKCOL = do_MOVE = _fail

    a, _ = pair
    a.use().add_note(book(a), "kept through a 500", page=1)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    good, a.url = a.url, f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with pytest.raises(SyncError) as err:
            a.sync()
        assert err.value.code == "server" and "HTTP 500" in str(err.value)
    finally:
        server.shutdown()
        server.server_close()
    a.url = good
    assert a.sync().sent >= 1


def test_the_books_themselves_travel_when_asked(
    tmp_path: Path, dav: WebDavServer, books_dir: Path
) -> None:
    a = Device(tmp_path, "one", dav.url, USER, PASSWORD)
    b = Device(tmp_path, "two", dav.url, USER, PASSWORD)
    try:
        bid = a.import_book(books_dir / "metamorphosis.epub")
        a.use().add_note(bid, "Gregor", page=2)
        a.sync()
        assert not (dav.root / "M" / "books").exists()  # only when asked
        a.sync(books=True)
        assert len(list((dav.root / "M" / "books").glob("*.epub"))) == 1
        report = b.sync(books=True)
        assert report.waiting == 0 and b.notes() == [("Gregor", 2)]
        (copy,) = b.use().list_books()
        assert copy.sha256 == a.use().get_book(bid).sha256 and copy.title == "Metamorphosis"
        b.use().delete_book(copy.id)  # removed on purpose: not fetched back
        b.sync(books=True)
        b.sync(books=True)
        assert b.use().list_books() == [] and a.notes() == [("Gregor", 2)]
    finally:
        a.close()
        b.close()
