"""The chat's page chips name the printed page of a book with a page-list ("p. 40 in print",
Margin's page in the tooltip), and clicking one still opens Margin's page (issue 29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication

from core.agent.types import (
    AssistantMessage,
    CitationRef,
    Question,
    Selection,
    TextPart,
    Usage,
)
from core.books.importer import import_book
from desktop.window.main_window import MainWindow
from tests.core.books.test_epub_w3c import _page_list_book
from tests.desktop.conftest import close_window
from tests.support.shots import save_shot


def _answer(app: Any, book_id: int, page: int) -> None:
    conv = app.conversations.create(book_id, "Forty")
    cite = CitationRef(book_id, page, page, "Page forty begins.")
    ids = app.conversations.start_run(
        conv.id,
        provider="anthropic",
        model="claude-test",
        strategy="tool-use",
        question=Question(
            "Where does page forty begin?", Selection("Page forty begins and goes on.", page)
        ),
    )
    app.conversations.finish(
        conversation_id=conv.id,
        ids=ids,
        status="complete",
        message=AssistantMessage((TextPart("Right there.", (cite,)),)),
        text="Right there.",
        citations=(cite,),
        steps=1,
        usage=Usage(10, 5),
        stop_reason="end_turn",
        error=None,
    )


def test_a_chip_names_the_printed_page(
    app: Any, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(app.library, _page_list_book(tmp_path)).book
    forty = next(
        p.number for p in app.library.pages(book.id, 1, book.page_count) if p.text.startswith("Two")
    )
    _answer(app, book.id, forty)
    window = MainWindow(app, restore=False)
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    try:
        window.open_book(book.id, 1)
        transcript = window.chat.transcript
        qtbot.waitUntil(lambda: "in print" in transcript.toPlainText(), timeout=5000)
        shown = transcript.toPlainText()
        assert "Sources:  p. 40 in print" in shown.replace("\xa0", " ")
        assert "“Page forty begins and goes on.” — p. 40 in print" in shown  # the selection
        assert f"Margin's p. {forty}" in transcript.toHtml()  # the tooltip keeps Margin's page
        for theme in ("light", "dark"):
            window.reader.set_theme(theme)
            QApplication.processEvents()
            save_shot(window.grab(), f"printed-chip-{theme}.png")
    finally:
        close_window(qtbot, window)


def test_quick_actions_and_a_book_without_printed_pages() -> None:
    from desktop.chat.render import question_html, quick_action_text, selection_page_name

    labels = ["1", "38", "40"]
    assert quick_action_text("explain", "Page forty", 3, labels).endswith("(p. 40 in print)")
    assert quick_action_text("explain", "Page one", 1, labels).endswith("(p. 1)")
    assert quick_action_text("explain", "Page one", 2).endswith("(p. 2)")
    assert "” — p. 9</p>" in question_html("Why?", "Some words", 9)
    assert selection_page_name(3, labels) == "40 in print"
    assert selection_page_name(1, labels) == 1 and selection_page_name(2) == 2
