"""The window's Sync menu, the Settings section and the catalogue browser, offscreen."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from core.sync import secrets
from core.sync.kosync_client import KosyncClient
from core.sync.kosync_ids import partial_md5
from desktop.sources import actions
from tests.desktop.conftest import open_alice, run_until
from tests.fakes.kosync_server import FakeKosync

PASSWORD = "window-pass-1"


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def test_settings_section_logs_in_and_keeps_the_password_in_the_keyring(
    app: Any, qtbot: Any
) -> None:
    from desktop.window.settings_dialog import SettingsDialog

    with FakeKosync() as server:
        server.add_user("me", md5(PASSWORD))
        dialog = SettingsDialog(app.paths)
        qtbot.addWidget(dialog)
        section = dialog.sync_section
        section.ko_server.setText(server.url)
        section.ko_user.setText("me")
        section.ko_password.setText("wrong")
        run_until(qtbot, section._kosync_login())
        assert "did not accept" in section.status.text()
        section.ko_password.setText(PASSWORD)
        run_until(qtbot, section._kosync_login())
        assert section.status.text().startswith("Logged in")
        assert section.ko_password.text() == ""
        assert secrets.get_password("kosync", server.url, "me") == PASSWORD
        assert PASSWORD not in app.paths.settings_file.read_text()


def test_pulled_position_moves_the_reader_and_asks_before_read_to(
    window: Any, qtbot: Any, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.sync.kosync import login
    from core.sync.xpointer import positions_of

    book_id = open_alice(window, books_dir, page=3, read_to=3)
    book = window.library.get_book(book_id)
    with FakeKosync() as server:
        server.add_user("me", md5(PASSWORD))
        login(window.paths, server.url, "me", PASSWORD)
        positions = positions_of(Path(book.file_path))
        node = next(i for i, n in enumerate(positions.nodes) if "Mock Turtle" in n.text)
        KosyncClient(server.url, "me", md5(PASSWORD)).push(
            partial_md5(book.file_path), positions.xpointer(node, 0), 0.7, "Kobo", "k1"
        )
        asked: list[str] = []

        def say_no(*args: Any, **kwargs: Any) -> Any:
            asked.append(args[2])
            return QMessageBox.StandardButton.No

        monkeypatch.setattr(QMessageBox, "question", staticmethod(say_no))
        run_until(qtbot, actions.kosync_pull(window))
        assert asked and "read up to page 3" in asked[0]
        assert (
            window.reader.page > 3
            and "Mock Turtle" in window.library.page(book_id, window.reader.page).text
        )
        assert window.library.get_book(book_id).read_to == 3  # the reader said no
        monkeypatch.setattr(
            QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes)
        )
        window.reader.go_to_page(3)
        run_until(qtbot, actions.kosync_pull(window))
        assert window.library.get_book(book_id).read_to == window.reader.page


FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><id>t</id><title>Test shelf</title>
<entry><title>Metamorphosis</title><id>urn:m</id><author><name>Franz Kafka</name></author>
<summary>Gregor wakes up changed.</summary>
<link rel="http://opds-spec.org/acquisition" href="/meta.epub" type="application/epub+zip"/>
</entry></feed>"""


@pytest.fixture
def shelf(books_dir: Path) -> Iterator[str]:
    book = (books_dir / "metamorphosis.epub").read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = FEED if self.path == "/opds" else book
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/opds"
    server.shutdown()
    server.server_close()


def test_catalogue_browser_downloads_into_the_library(window: Any, qtbot: Any, shelf: str) -> None:
    actions.open_catalogues(window)
    dialog = window._opds_dialog
    run_until(qtbot, dialog.open_url(shelf))
    assert dialog.entries.count() == 1
    dialog.entries.setCurrentRow(0)
    assert "Gregor" in dialog.summary.text() and dialog.download.isEnabled()
    dialog._download()
    qtbot.waitUntil(lambda: "in your library" in dialog.status.text(), timeout=30000)
    assert [b.title for b in window.library.list_books()] == ["Metamorphosis"]
    dialog.close()


def test_sync_menu_is_there_and_sync_now_says_it_is_off(window: Any, qtbot: Any) -> None:
    titles = [a.text() for a in window.menuBar().actions()]
    assert "S&ync" in titles and titles.index("S&ync") < titles.index("&Help")
    run_until(qtbot, actions.sync_now(window))
    assert "nothing was sent" in window.statusBar().currentMessage()


def test_settings_section_turns_webdav_sync_on_and_off(
    app: Any, qtbot: Any, tmp_path: Path
) -> None:
    from core.sync.service import account
    from desktop.window.settings_dialog import SettingsDialog
    from tests.fakes.webdav_server import WebDavServer

    with WebDavServer(tmp_path / "dav", user="me", password="dav-pass-1") as dav:
        dialog = SettingsDialog(app.paths)
        qtbot.addWidget(dialog)
        section = dialog.sync_section
        section.dav_url.setText(dav.url)
        section.dav_user.setText("me")
        section.dav_password.setText("nope")
        run_until(qtbot, section._webdav_toggle())
        assert "did not accept" in section.status.text()
        assert account(app.paths) is None  # nothing kept, nothing on
        section.dav_password.setText("dav-pass-1")
        run_until(qtbot, section._webdav_toggle())
        acc = account(app.paths)
        assert acc is not None and acc.enabled and section.dav_on.text() == "Turn sync off"
        assert secrets.get_password("webdav", acc.url, "me") == "dav-pass-1"
        run_until(qtbot, section._webdav_toggle())
        acc = account(app.paths)
        assert acc is not None and not acc.enabled
