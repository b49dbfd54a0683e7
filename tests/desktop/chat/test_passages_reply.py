"""A passages-mode reply (no model) as the reader sees it in the chat pane: the sentence most
likely to answer first in bold, whole-sentence passages with their page chips and chapters,
said to be matches and not an answer. Real window, real Alice, typed into the question box;
screenshots in light and dark under MARGIN_SHOTS (none without it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.agent.providers.passages import SHOWN
from core.books.importer import import_book
from tests.support.browser import click_at, links
from tests.support.shots import save_shot, shots_wanted


def test_a_passages_reply_reads_as_matches_with_chips_and_chapters(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(window.library, books_dir / "alice_in_wonderland.epub").book
    window.library.set_position(book.id, 60)
    window.books.refresh_library()
    window.open_book(book.id, 60)
    chat = window.chat
    assert chat.banner.isVisible(), "no model is connected"
    chat.input.setFocus()
    QTest.keyClicks(chat.input, "What did the Hatter ask about a raven?")
    QTest.keyClick(chat.input, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: not chat.live and "Passages, no model" in chat.transcript_text(), timeout=15000
    )
    text = chat.transcript_text()
    assert "not an AI answer" in text
    lead = text[: text.index("Show all")]  # the answer first; the passages folded below
    assert "Why is a raven like a writing-desk?" in lead
    assert len(lead.split()) <= 250, "the reader gets the answer before a long read"
    html = chat.transcript.toHtml()
    chips = set(re.findall(r'href="(margin-cite:[^"]+)"', html))
    assert 1 < len(chips) <= SHOWN, "each passage is cited by its page chip"
    cites = [(h, at) for h, at in links(chat.transcript) if h.startswith("margin-cite:")]
    assert cites
    assert not re.search(r"Contents|Project Gutenberg License", text), "no front matter"
    shoot(window, chat.transcript)
    href, at = cites[0]
    page = int(href.split("/")[1].split("-")[0])
    window.reader.go_to_page(2)
    click_at(chat.transcript, at)
    qtbot.waitUntil(
        lambda: window.reader.page == page and window.reader.view.marks.marked(), timeout=5000
    )


def shoot(window: Any, transcript: Any) -> None:
    """With MARGIN_SHOTS set: the window with the reply's start in view, light and dark."""
    if not shots_wanted():
        return
    for theme in ("light", "dark"):
        window.set_theme(theme)
        QTest.qWait(300)  # the transcript is drawn again in the theme's colours
        transcript.verticalScrollBar().setValue(0)  # as the scroll bar dragged to the top
        QTest.qWait(50)
        save_shot(window.grab(), f"passages-reply-{theme}.png")
    window.set_theme("light")


def test_passages_mode_reads_the_books_sentences_ahead_and_a_model_does_not(
    window: Any, books_dir: Path, qtbot: Any, monkeypatch: Any, fake_anthropic: Any
) -> None:
    """Opening a book with no model starts reading its sentences up to read_to ahead (the
    first reply then encodes only its question); with a model connected nothing is read."""
    from desktop.chat import pane
    from tests.desktop.conftest import connect_claude, open_alice

    started: list[list[int]] = []
    monkeypatch.setattr(pane, "READ_AHEAD_MS", 0)
    monkeypatch.setattr(
        pane.SentenceWarmup, "start", lambda self, pages: started.append([n for n, _ in pages])
    )
    book_id = open_alice(window, books_dir, 12, read_to=12)
    qtbot.waitUntil(lambda: bool(started), timeout=10000)
    assert started[0][0] == 12 and started[0][-1] == 1, "the pages read, nearest first"
    window.reader.go_to_page(20)  # "Read to here" on page 20: its pages are read ahead too
    window.reader.mark_read_to_here()
    qtbot.waitUntil(lambda: len(started) == 2, timeout=10000)
    assert started[1][0] == 20 and started[1][-1] == 1
    assert pane._pages_ahead(window.app, book_id)
    connect_claude(window, fake_anthropic, monkeypatch)
    assert pane._pages_ahead(window.app, book_id) == []
