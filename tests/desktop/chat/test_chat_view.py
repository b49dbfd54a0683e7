"""Issue 15: the chat pane as a conversation view — keys, conversations, the cost meter and
budget, export, a legible dark theme and the settings it offers. Real window, real store,
real SDK against the fake server (the transcript, sources and notices have their own files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QMessageBox

from core.settings import Settings
from desktop.chat.render import Colours
from tests.desktop.chat.conftest import done, read_alice, use_server
from tests.fakes.anthropic_server import FakeAnthropic, Reply


def test_escape_stops_and_ctrl_n_reuses_an_empty_conversation(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = read_alice(window, books_dir)
    fake_anthropic.add(Reply.text("slow words " * 300, tokens_per_second=60, chunk_chars=5))
    chat.input.setPlainText("Tell me everything")
    chat.send()
    qtbot.waitUntil(lambda: "slow words" in chat.transcript_text(), timeout=10000)
    assert chat.stop_button.isVisible() and not chat.send_button.isVisible()
    chat.input.setFocus()
    qtbot.keyClick(chat.input, Qt.Key.Key_Escape)
    done(chat, qtbot, "Stopped.", timeout=3000)
    assert "Writing…" not in chat.transcript_text() and "Thinking…" not in chat.transcript_text()
    before = len(chat.service.list_conversations(book_id))
    qtbot.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    empty = chat.conversation_id
    qtbot.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert chat.conversation_id == empty
    assert len(chat.service.list_conversations(book_id)) == before + 1


def test_activity_line_is_single_and_current(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    read_alice(window, books_dir)
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Queen"}),
        Reply.text("The Queen shouts. " * 80, tokens_per_second=150),
    )
    chat.ask("Who shouts?")
    qtbot.waitUntil(lambda: "The Queen shouts." in chat.transcript_text(), timeout=10000)
    text = chat.transcript_text()
    assert "Searching" not in text, "the tool line is gone once the answer is written"
    assert text.count("Writing…") == 1 and chat.status.text() == ""
    done(chat, qtbot)


def test_cost_meter_and_budget_warning(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, model="claude-sonnet-4-6")
    read_alice(window, books_dir)
    fake_anthropic.add(
        Reply.text("One.", usage={"input_tokens": 200000, "output_tokens": 1000}),
    )
    chat.ask("First?")
    done(chat, qtbot, "One.")
    label = chat.cost.text()
    assert "This conversation: 201.0k tokens (~$" in label and "This book: 201.0k tokens" in label
    chat.service.update_settings(
        Settings(
            provider="anthropic",
            base_url=fake_anthropic.url,
            model="claude-sonnet-4-6",
            budget_per_book_usd=0.5,
        )
    )
    asked: list[str] = []
    monkeypatch.setattr(
        QMessageBox,
        "question",
        staticmethod(lambda _p, _t, text, *a: asked.append(text) or QMessageBox.StandardButton.No),
    )
    requests = len(fake_anthropic.message_requests)
    assert chat.ask("Second?") is None
    assert asked and "$0.50" in asked[0] and "budget" in chat.status.text()
    assert len(fake_anthropic.message_requests) == requests and not chat.live


def test_export_conversation_from_the_pane(
    window: Any,
    fake_anthropic: FakeAnthropic,
    books_dir: Path,
    qtbot: Any,
    monkeypatch: Any,
    tmp_path: Path,
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    read_alice(window, books_dir)
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Cheshire cat"}),
        Reply.text("It grins [p. 40]."),
    )
    chat.ask("Why the grin?")
    done(chat, qtbot, "It grins")
    text = chat.export_conversation(tmp_path / "c.md").read_text(encoding="utf-8")
    assert "**Question:** Why the grin?" in text and "It grins [p. 40]." in text
    assert "- p. 40: “" in text
    book = chat.export_book(tmp_path / "b.md").read_text(encoding="utf-8")
    assert "Why the grin?" in book and "conversations" in book


def test_dark_palette_keeps_text_legible(window: Any, books_dir: Path, qtbot: Any) -> None:
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Window, QColor("#252526"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e6e6e6"))
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#3a6ea5"))
    dark.setColor(QPalette.ColorRole.Link, QColor("#3a8ee6"))
    colours = Colours.from_palette(dark)
    for fg in (colours.text, colours.muted, colours.quote, colours.chip_fg, colours.link):
        assert QColor(fg).lightness() - QColor(colours.question_bg).lightness() > 60, fg
    read_alice(window, books_dir)
    chat = window.chat
    chat.setPalette(dark)
    assert chat.messages.colours == colours
    assert "color: #e6e6e6" in chat.transcript.document().defaultStyleSheet()
    light = Colours.from_palette(QPalette(QColor("#efefef")))
    assert QColor(light.text).lightness() < QColor(light.question_bg).lightness()


def test_settings_offer_search_first_for_local_models_and_a_budget(window: Any, qtbot: Any) -> None:
    from core.errors import MarginError
    from core.settings import load_settings
    from desktop.window.settings_dialog import SettingsDialog

    dialog = SettingsDialog(window.paths, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.provider.setCurrentIndex(dialog.provider.findData("anthropic"))
    assert not dialog.strategy_note.isVisible()
    dialog.provider.setCurrentIndex(dialog.provider.findData("local"))
    assert dialog.strategy_note.isVisible()
    assert "never searches the book" in dialog.strategy_note.text()
    dialog.use_retrieve.click()
    assert dialog.strategy.currentData() == "always-retrieve"
    dialog.budget.setValue(2.5)
    assert dialog.save()
    saved = load_settings(window.paths)
    assert saved.strategy == "always-retrieve" and saved.budget_per_book_usd == 2.5
    window.paths.settings_file.write_text("budget_per_book_usd = -3\n", encoding="utf-8")
    with pytest.raises(MarginError, match=r"budget_per_book_usd.*0 or more"):
        load_settings(window.paths)
    window.paths.settings_file.write_text('budget_per_book_usd = "lots"\n', encoding="utf-8")
    with pytest.raises(MarginError, match="an amount in US dollars"):
        load_settings(window.paths)
