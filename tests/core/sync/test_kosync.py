"""KOReader progress sync against a loopback server that answers as koreader-sync-server."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest

from core.app import Margin
from core.cli import main
from core.paths import resolve_paths
from core.store.library import Library
from core.sync import secrets
from core.sync.errors import SyncError
from core.sync.kosync import Kosync, login
from core.sync.kosync_client import ACCEPT, KosyncClient
from core.sync.kosync_ids import partial_md5, password_key, sample_offsets
from tests.fakes.kosync_server import FakeKosync

PASSWORD = "correct horse"


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


@pytest.fixture
def server():
    with FakeKosync(registration=True) as fake:
        fake.add_user("reader", md5(PASSWORD))
        yield fake


@pytest.fixture
def alice(library: Library, books_dir: Path):
    app = Margin.of(library)
    return app.import_book(books_dir / "alice_in_wonderland.epub").book


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_partial_md5_reads_koreaders_samples(tmp_path: Path) -> None:
    assert sample_offsets()[:4] == [0, 1024, 4096, 16384]
    data = bytes(range(256)) * 400  # 100 KiB: samples at 0, 1K, 4K, 16K, 64K
    path = tmp_path / "book.epub"
    path.write_bytes(data)
    expected = hashlib.md5(
        b"".join(data[o : o + 1024] for o in (0, 1024, 4096, 16384, 65536))
    ).hexdigest()
    assert partial_md5(path) == expected


def test_requests_carry_koreaders_headers_and_md5_key(server: FakeKosync) -> None:
    client = KosyncClient(server.url, "reader", password_key(PASSWORD))
    client.authorize()
    client.push("d0c", "/body/DocFragment[2]/body/p[3]/text().4", 0.25, "Margin", "dev1")
    method, path, headers, body = server.requests[-1]
    assert (method, path) == ("PUT", "/syncs/progress")
    assert headers["accept"] == ACCEPT
    assert headers["x-auth-user"] == "reader" and headers["x-auth-key"] == md5(PASSWORD)
    assert body == {
        "document": "d0c",
        "progress": "/body/DocFragment[2]/body/p[3]/text().4",
        "percentage": 0.25,
        "device": "Margin",
        "device_id": "dev1",
    }
    got = client.pull("d0c")
    assert got is not None and got.percentage == 0.25 and got.device_id == "dev1"
    assert client.pull("unknown") is None


def test_register_taken_and_disabled(server: FakeKosync) -> None:
    assert KosyncClient(server.url, "new", md5("x")).register() is True
    assert KosyncClient(server.url, "new", md5("x")).register() is False
    server.registration = False
    with pytest.raises(SyncError) as err:
        KosyncClient(server.url, "other", md5("x")).register()
    assert err.value.code == "registration_disabled"


def test_wrong_password_is_refused_in_words_and_keeps_nothing(server: FakeKosync) -> None:
    paths = resolve_paths()
    with pytest.raises(SyncError) as err:
        login(paths, server.url, "reader", "wrong")
    assert err.value.code == "unauthorized" and "did not accept" in str(err.value)
    assert secrets.get_password("kosync", server.url, "reader") is None
    assert not paths.settings_file.exists() or "kosync" not in paths.settings_file.read_text()


def test_server_down_and_500(server: FakeKosync, library: Library, alice) -> None:
    paths = resolve_paths()
    login(paths, server.url, "reader", PASSWORD)
    server.fail_with = 500
    with pytest.raises(SyncError) as err:
        Kosync(library, paths).push(alice)
    assert err.value.code == "server" and "HTTP 500" in str(err.value)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    with pytest.raises(SyncError) as err:
        KosyncClient(dead, "reader", md5(PASSWORD)).authorize()
    assert err.value.code == "unreachable" and "could not reach" in str(err.value)
    assert library.get_book(alice.id).page == alice.page  # nothing moved


def test_xpointer_from_koreader_opens_the_same_paragraph_and_back(
    server: FakeKosync, library: Library, alice
) -> None:
    paths = resolve_paths()
    login(paths, server.url, "reader", PASSWORD)
    sync = Kosync(library, paths)
    doc = partial_md5(alice.file_path)
    assert sync.document_id(alice) == doc
    # positions as KOReader writes them in this book (the 7th chapter file, a paragraph)
    from core.sync.xpointer import positions_of

    positions = positions_of(Path(alice.file_path))
    node = next(
        i for i, n in enumerate(positions.nodes) if "Twinkle, twinkle, little bat" in n.text
    )
    xpointer = positions.xpointer(node, positions.nodes[node].text.index("Twinkle"))
    assert xpointer.startswith("/body/DocFragment[") and "/text()" in xpointer
    other = KosyncClient(server.url, "reader", md5(PASSWORD))
    other.push(doc, xpointer, 0.55, "Kobo", "kobo-1")

    before = library.get_book(alice.id)
    got = sync.pull(before)
    assert got is not None and got.moved and got.device == "Kobo"
    page_text = library.page(alice.id, got.page).text
    assert "Twinkle, twinkle, little bat" in page_text
    after = library.get_book(alice.id)
    assert after.page == got.page and after.read_to == before.read_to  # never silently
    assert got.read_to_offer

    # and back: Margin's place is the same text node KOReader named
    from core.store.anchors import BookText
    from core.sync.xpointer import from_margin

    pages = BookText(library.page_texts(alice.id))
    assert from_margin(positions, pages, got.page, got.offset) == xpointer

    pushed = sync.push(after)
    assert server.docs[("reader", doc)]["progress"] == pushed.progress
    assert pushed.progress.startswith("/body/DocFragment[")
    node_at = positions.node_at(pushed.progress)
    assert node_at is not None
    assert positions.nodes[node_at[0]].text.strip()[:20] in " ".join(page_text.split())


def test_cli_login_push_pull(
    server: FakeKosync, alice, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("MARGIN_KOSYNC_PASSWORD", PASSWORD)
    code, out, err = run(capsys, "kosync", "login", "--server", server.url, "--user", "reader")
    assert code == 0, err
    monkeypatch.delenv("MARGIN_KOSYNC_PASSWORD")
    assert secrets.get_password("kosync", server.url, "reader") == PASSWORD  # the keyring
    assert PASSWORD not in resolve_paths().settings_file.read_text()
    code, out, err = run(capsys, "kosync", "push", "alice", "--json")
    assert code == 0, err
    sent = json.loads(out)
    assert sent["document"] == partial_md5(alice.file_path) and sent["percentage"] >= 0
    KosyncClient(server.url, "reader", md5(PASSWORD)).push(
        sent["document"], "/body/DocFragment[9]/body/div/p[5]/text().0", 0.6, "Kobo", "k"
    )
    code, out, err = run(capsys, "kosync", "pull", "alice")
    assert code == 0, err
    assert "Read to' stays" in out and "--read-to" in out
    code, out, err = run(capsys, "kosync", "pull", "alice", "--read-to", "--json")
    got = json.loads(out)
    assert code == 0 and not got["read_to_offer"] and got["read_to"] == got["page"]


def test_cli_wrong_password_is_one_clear_line(
    server: FakeKosync, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("MARGIN_KOSYNC_PASSWORD", "nope")
    code, _out, err = run(capsys, "kosync", "login", "--server", server.url, "--user", "reader")
    assert code == 1 and "did not accept" in err and "Traceback" not in err


def test_saving_settings_keeps_the_sync_tables(server: FakeKosync) -> None:
    from core.settings import Settings, load_settings, save_settings

    paths = resolve_paths()
    login(paths, server.url, "reader", PASSWORD)
    save_settings(paths, Settings(model="claude-test"))  # the window's Save
    assert "[kosync]" in paths.settings_file.read_text()
    assert load_settings(paths).model == "claude-test"


def test_file_name_mode_names_documents_as_koreader(
    server: FakeKosync, library: Library, alice
) -> None:
    from core.sync import config

    paths = resolve_paths()
    login(paths, server.url, "reader", PASSWORD)
    values = config.table(paths, "kosync")
    config.save_table(paths, "kosync", {**values, "checksum": "filename"})
    sync = Kosync(library, paths)
    assert sync.document_id(alice) == md5("alice_in_wonderland.epub")
