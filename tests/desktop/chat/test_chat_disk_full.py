"""Issue 46 item 7: an answer streaming when the disk fills keeps what arrived on screen and
says the disk is full (it was lost, and later labelled "Margin was closed")."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.store.conversations import Conversations
from tests.desktop.chat.conftest import done, read_alice
from tests.desktop.conftest import connect_claude
from tests.fakes.anthropic_server import FakeAnthropic, Reply

KEY = "sk-ant-desktop-test-KEY-46"


def test_an_answer_when_the_disk_fills_keeps_what_arrived(
    window: Any,
    fake_anthropic: FakeAnthropic,
    books_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connect_claude(window, fake_anthropic, monkeypatch, KEY)
    read_alice(window, books_dir)
    chat = window.chat

    def full(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    fake_anthropic.add(Reply.text("slow words " * 200, tokens_per_second=200, chunk_chars=5))
    chat.input.setPlainText("What happens first?")
    chat.send()
    # (a loaded machine may take a while to import the SDK and send the first request)
    qtbot.waitUntil(lambda: "slow words" in chat.transcript_text(), timeout=60000)
    # the disk is full from now on: nothing more can be saved
    for name in ("save_partial", "finish", "add_message", "add_tool_call"):
        monkeypatch.setattr(Conversations, name, full)
    done(chat, qtbot, timeout=60000)
    shown = chat.transcript_text()
    assert shown.count("slow words") >= 200, shown
    assert "disk is full" in shown, shown
    assert "Margin was closed" not in shown


def _fill_the_disk(
    window: Any, fake_anthropic: FakeAnthropic, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """An answer streams; the disk fills in its middle (every later save fails, the final
    one as ``finish`` says); returns the window's chat when the answer has ended."""
    chat = window.chat
    fake_anthropic.add(Reply.text("slow words " * 60, tokens_per_second=200, chunk_chars=5))
    chat.input.setPlainText("What happens first?")
    chat.send()
    qtbot.waitUntil(lambda: "slow words" in chat.transcript_text(), timeout=60000)
    return chat


def _restarted(app: Any, qtbot: Any, monkeypatch: pytest.MonkeyPatch, book_id: int) -> Any:
    """A new window, as after Margin was started again (the old process gone: its runs
    still "running" are orphaned)."""
    from core.store import owner
    from tests.desktop.conftest import open_window

    monkeypatch.setattr(owner, "run_is_orphaned", lambda *a, **k: True)
    again = open_window(app, qtbot)
    again.chat.recover()
    again.open_book(book_id, 45)
    return again


def test_an_answer_the_full_disk_lost_says_so_after_a_restart(
    app: Any,
    window: Any,
    fake_anthropic: FakeAnthropic,
    books_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing could be saved, not even with the reserve: a restarted window says the disk
    was full (it said "Margin was closed before this answer finished")."""
    from tests.desktop.conftest import close_window

    connect_claude(window, fake_anthropic, monkeypatch, KEY)
    book_id = read_alice(window, books_dir)
    chat = _fill_the_disk(window, fake_anthropic, qtbot, monkeypatch)

    def full(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    for name in ("save_partial", "finish", "add_message", "add_tool_call"):
        monkeypatch.setattr(Conversations, name, full)
    done(chat, qtbot, timeout=60000)
    assert "could not be saved" in chat.transcript_text()
    close_window(qtbot, window)
    again = _restarted(app, qtbot, monkeypatch, book_id)
    try:
        qtbot.waitUntil(lambda: "the disk was full" in again.chat.transcript_text(), timeout=10000)
        shown = again.chat.transcript_text()
        assert "This answer could not be saved: the disk was full." in shown, shown
        assert "Margin was closed" not in shown, shown
    finally:
        close_window(qtbot, again)


def test_the_reserve_saves_what_arrived_for_after_a_restart(
    app: Any,
    window: Any,
    fake_anthropic: FakeAnthropic,
    books_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first save on the full disk fails; the space kept in reserve is given back and
    what arrived is saved: after a restart the answer is there, saying where it stops."""
    from core.store import reserve
    from tests.desktop.conftest import close_window

    connect_claude(window, fake_anthropic, monkeypatch, KEY)
    book_id = read_alice(window, books_dir)
    chat = _fill_the_disk(window, fake_anthropic, qtbot, monkeypatch)
    folder = app.library.paths.data
    assert (folder / reserve.NAME).stat().st_size == reserve.SIZE  # made as the answer began
    finish = Conversations.finish
    calls: list[int] = []

    def full_once(self: Conversations, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1 or (folder / reserve.NAME).exists():
            raise sqlite3.OperationalError("database or disk is full")
        return finish(self, **kwargs)

    def full(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Conversations, "save_partial", full)
    monkeypatch.setattr(Conversations, "finish", full_once)
    done(chat, qtbot, timeout=60000)
    assert len(calls) == 2 and not (folder / reserve.NAME).exists()
    assert "stops where the disk filled" in chat.transcript_text()
    close_window(qtbot, window)
    monkeypatch.setattr(Conversations, "finish", finish)
    again = _restarted(app, qtbot, monkeypatch, book_id)
    try:
        qtbot.waitUntil(
            lambda: "stops where the disk filled" in again.chat.transcript_text(), timeout=10000
        )
        shown = again.chat.transcript_text()
        assert shown.count("slow words") >= 10, shown
        assert "Margin was closed" not in shown, shown
    finally:
        close_window(qtbot, again)
