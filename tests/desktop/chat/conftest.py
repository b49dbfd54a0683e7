"""Helpers of the chat pane's tests: the pane talking to the fake server, Alice open at a page
the reader has read to, earlier answers in the store, and a wait for the answer to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.agent.types import Usage
from tests.desktop.conftest import connect_claude, open_alice
from tests.fakes.anthropic_server import FakeAnthropic
from tests.support.answers import store_answer

KEY = "sk-ant-desktop-test-KEY-15"


def use_server(window: Any, fake: FakeAnthropic, monkeypatch: Any, **settings: Any) -> Any:
    """The chat pane of ``window`` answering from ``fake`` with no retries (a local model's
    strategy named: the scripted replies are a tool-using model's)."""
    if settings.get("provider") == "local":
        settings.setdefault("strategy", "tool-use")
    return connect_claude(window, fake, monkeypatch, KEY, max_retries=0, **settings).chat


def read_alice(window: Any, books_dir: Path, page: int = 45) -> int:
    """Alice open at ``page``, read up to there."""
    return open_alice(window, books_dir, page, read_to=page)


def done(chat: Any, qtbot: Any, text: str = "", timeout: int = 15000) -> None:
    """Wait until no answer is being written (and ``text`` is in the transcript)."""
    try:
        qtbot.waitUntil(
            lambda: not chat.live and (not text or text in chat.transcript_text()),
            timeout=timeout,
        )
    except Exception:
        print("live:", chat.live, "\ntranscript:", chat.transcript_text(), chat.status.text())
        raise


def seed_answers(window: Any, conversation_id: int, count: int) -> None:
    """``count`` long earlier questions and answers."""
    for i in range(count):
        store_answer(
            window.app.conversations,
            conversation_id,
            f"Earlier answer {i}. " + "Alice sat by her sister on the bank. " * 40,
            question=f"Earlier question {i}?",
            usage=Usage(1000, 500),
            provider="anthropic",
            model="claude-sonnet-4-6",
        )


def earlier_answers(window: Any, books_dir: Path, count: int) -> int:
    """Alice open and a conversation of ``count`` earlier answers: its id."""
    book_id = read_alice(window, books_dir)
    conversation_id = int(window.chat.service.create_conversation(book_id).id)
    seed_answers(window, conversation_id, count)
    return conversation_id


def as_if_crashed(run_id: int) -> None:
    """The process that was writing this run is gone (Margin only marks such runs
    interrupted, never another live process's answer)."""
    import subprocess
    import sys

    from core.store import models as m

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    m.Run.update(pid=gone.pid).where(m.Run.id == run_id).execute()
