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
