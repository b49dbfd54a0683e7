"""OPDS catalogues: calibre-server's real feed of a calibre library, and bad feeds."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.sources.calibre import CalibreLibrary
from core.sources.opds import fetch, parse_feed, search_url
from core.store.library import Library
from core.sync.errors import SyncError
from tests.core.sources.calibre_library import calibredb

SERVER = shutil.which("calibre-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def opds_url(calibre_dir: Path) -> Iterator[str]:
    if SERVER is None:
        pytest.skip("calibre-server is not installed (Debian package 'calibre')")
    # calibre-server answers 500 for a whole page when a title holds a NUL (the PDF
    # imagemagick-images.pdf gives one): name it properly first, with calibredb
    for book in CalibreLibrary(calibre_dir).books():
        if "\x00" in book.title:
            calibredb(
                calibre_dir,
                "set_metadata",
                str(book.id),
                "--field",
                f"title:{book.title.replace(chr(0), '')}",
            )
    port = _free_port()
    proc = subprocess.Popen(
        [
            SERVER,
            "--port",
            str(port),
            "--listen-on",
            "127.0.0.1",
            "--max-opds-items",
            "4",
            "--disable-use-bonjour",
            str(calibre_dir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/opds"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("calibre-server did not start")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_browse_navigation_acquisition_pages_covers_search(opds_url: str) -> None:
    root = fetch(opds_url)
    assert root.kind == "navigation" and root.title
    by_title = next(e for e in root.entries if e.title == "By Title")
    assert by_title.navigation is not None
    books = fetch(by_title.navigation.href)
    assert books.kind == "acquisition" and len(books.entries) == 4 and books.next
    seen = [e.title for e in books.entries]
    page = books
    while page.next:  # pagination to the end
        page = fetch(page.next)
        seen += [e.title for e in page.entries]
    assert len(seen) >= 10
    first = books.entries[0]
    assert first.cover and first.best_download() is not None
    found = fetch(search_url(root, "Metamorphosis"))
    assert found.entries and all("metamorphosis" in e.title.casefold() for e in found.entries)


def test_cli_browse_and_get_into_the_library(
    opds_url: str, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["opds", "browse", opds_url, "--search", "Alice", "--json"]) == 0
    feed = json.loads(capsys.readouterr().out)
    epub = next(e for e in feed["entries"] if e["download"] and "epub" in e["download"])
    search = search_url(fetch(opds_url), "Alice")
    code = main(["opds", "get", search, epub["id"]])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "added to the library" in out
    (book,) = library.list_books()
    assert book.title.startswith("Alice") and book.page_count > 50
    assert Path(book.file_path).is_relative_to(library.paths.books)  # downloaded: a copy


BAD = {
    "/html": (b"<!doctype html><html><body>Not a feed</body></html>", "web page"),
    "/text": (b"Just some words, no markup", "not XML"),
    "/rss": (b"<?xml version='1.0'?><rss><channel/></rss>", "not an Atom feed"),
    "/cut": (b"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><entry>", "broken"),
    "/bomb": (
        b"<?xml version='1.0'?><!DOCTYPE f [<!ENTITY a 'aaaa'>]><feed>&a;</feed>",
        "declarations",
    ),
}


@pytest.fixture
def bad_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/huge":  # 100 MB announced and streamed: never read whole
                self.send_response(200)
                self.send_header("Content-Type", "application/atom+xml")
                self.end_headers()
                chunk = b"<entry><title>x</title></entry>" * 4096
                try:
                    self.wfile.write(b"<feed xmlns='http://www.w3.org/2005/Atom'>")
                    for _ in range(100 * 1024 * 1024 // len(chunk)):
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return
            if self.path == "/error":
                self.send_response(500)
                self.end_headers()
                return
            body = BAD[self.path][0]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path", sorted(BAD))
def test_bad_feeds_are_refused_in_words(bad_server: str, path: str) -> None:
    with pytest.raises(SyncError) as err:
        fetch(bad_server + path)
    assert BAD[path][1] in str(err.value)


def test_a_100_mb_feed_is_not_read_whole(bad_server: str) -> None:
    started = time.monotonic()
    with pytest.raises(SyncError) as err:
        fetch(bad_server + "/huge")
    assert err.value.code == "too_large" and time.monotonic() - started < 30


def test_server_error_and_down(
    bad_server: str, capsys: pytest.CaptureFixture[str], library: Library
) -> None:
    assert main(["opds", "browse", bad_server + "/error"]) == 1
    assert "HTTP 500" in capsys.readouterr().err
    down = f"http://127.0.0.1:{_free_port()}/opds"
    assert main(["opds", "get", down, "1"]) == 1
    assert "could not reach" in capsys.readouterr().err
    assert library.list_books() == []


def test_saved_feed_relative_links_and_summaries() -> None:
    data = (Path(__file__).parents[2] / "fixtures" / "opds" / "acquisition.xml").read_bytes()
    feed = parse_feed(data, "https://books.example.org/catalog/new.xml")
    assert feed.next == "https://books.example.org/catalog/new.xml?page=2"
    (entry,) = feed.entries
    assert entry.summary.startswith("A young girl")
    link = entry.best_download()
    assert link is not None and link.href == "https://books.example.org/dl/alice.epub"
    assert entry.cover == "https://books.example.org/covers/alice-thumb.jpg"
