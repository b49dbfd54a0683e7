"""Start-up never asks the keyring on the window's thread, and a run asks it at most once (a
locked or missing GNOME keyring prompts at every read: issue 43 counted five prompts before
the book opened)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest

from core.api_key import KEYRING_SERVICE, KEYRING_USER, get_api_key
from core.app import Margin
from tests.desktop.conftest import close_window, open_alice, open_window, run_until
from tests.support.memory_keyring import CountingKeyring


@pytest.fixture
def counting() -> Iterator[type[CountingKeyring]]:
    before = keyring.get_keyring()
    CountingKeyring.reads.clear()
    keyring.set_keyring(CountingKeyring())
    yield CountingKeyring
    keyring.set_keyring(before)


def test_the_keyring_is_read_once_however_many_ask(counting: type[CountingKeyring]) -> None:
    keyring.set_password(KEYRING_SERVICE, KEYRING_USER, "sk-ant-stored-KEY")
    got: list[str | None] = []
    threads = [threading.Thread(target=lambda: got.append(get_api_key())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == ["sk-ant-stored-KEY"] * 8
    assert get_api_key() == "sk-ant-stored-KEY"
    assert len(counting.reads) == 1, counting.reads


def test_start_up_reads_the_keyring_once_off_the_window_thread(
    app: Margin, qtbot: Any, real_font: str, books_dir: Path, counting: type[CountingKeyring]
) -> None:
    keyring.set_password(KEYRING_SERVICE, KEYRING_USER, "sk-ant-stored-KEY")
    window = open_window(app, qtbot)
    try:
        open_alice(window, books_dir, page=3)
        chat = window.chat
        chat._update_banner()  # what start-up shows: no read for it
        qtbot.wait(300)
        main = threading.main_thread().name
        assert main not in counting.reads, counting.reads
        run_until(qtbot, chat.warm_up(), timeout=60)
        assert len(counting.reads) == 1, counting.reads
        assert counting.reads[0] != main
        assert app.mode() == "anthropic"
        assert not chat.banner.isVisibleTo(chat), "the pane shows the key once it is known"
        run_until(qtbot, chat.warm_up(), timeout=60)
        chat._update_banner()
        assert len(counting.reads) == 1, "one read a run"
    finally:
        close_window(qtbot, window)
