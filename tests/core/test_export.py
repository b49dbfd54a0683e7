"""Conversations as Markdown (core/export/markdown.py) from a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.events import ErrorInfo
from core.agent.types import (
    AssistantMessage,
    CitationRef,
    Question,
    Selection,
    TextPart,
    Usage,
    Withheld,
)
from core.app import Margin
from core.books.importer import import_book
from core.export.markdown import (
    answer_sources,
    book_conversations_markdown,
    conversation_markdown,
    export_conversation,
)
from core.paths import resolve_paths


@pytest.fixture
def app(margin_home: Path) -> Margin:
    margin = Margin.open(resolve_paths().ensure())
    yield margin  # type: ignore[misc]
    margin.close()


def answer(app: Margin, conv: int, question: Question, text: str, **kw: object) -> None:
    store = app.conversations
    ids = store.start_run(
        conv, provider="anthropic", model="claude-test", strategy="tool-use", question=question
    )
    parts: tuple[object, ...] = (TextPart(text, kw.get("citations", ())),)  # type: ignore[arg-type]
    parts += tuple(kw.get("withheld", ()))  # type: ignore[arg-type]
    store.finish(
        conversation_id=conv,
        ids=ids,
        status=str(kw.get("status", "complete")),
        message=AssistantMessage(parts),  # type: ignore[arg-type]
        text=text,
        citations=tuple(kw.get("citations", ())),  # type: ignore[arg-type]
        steps=1,
        usage=Usage(10, 5),
        stop_reason="end_turn",
        error=kw.get("error"),  # type: ignore[arg-type]
    )


def test_conversation_markdown_has_questions_answers_and_cited_quotes(
    app: Margin, books_dir: Path, tmp_path: Path
) -> None:
    book = import_book(app.library, books_dir / "alice_in_wonderland.epub").book
    conv = app.conversations.create(book.id, "The Rabbit")
    cite = CitationRef(book.id, 3, 3, "Oh dear! Oh dear! I shall be late!")
    answer(
        app,
        conv.id,
        Question("Why is he late?", Selection("the White Rabbit", 3)),
        "He is always late [p. 3].",
        citations=(cite, cite),
    )
    hidden = Withheld(0, "The Knave stole the tarts.", (("Knave", 90),), 20)
    answer(
        app,
        conv.id,
        Question("What next?"),
        "Alice follows him. ⟪hidden:0⟫",
        withheld=(hidden,),
    )
    answer(
        app,
        conv.id,
        Question("And then?"),
        "Half an",
        status="failed",
        error=ErrorInfo("overloaded", "Claude's API is overloaded right now.", "Wait."),
    )
    text = conversation_markdown(app, conv.id)
    assert text.startswith(f"# {book.title}\n")
    assert "## The Rabbit" in text
    assert "**Question:** Why is he late?" in text and "> the White Rabbit (p. 3)" in text
    assert "He is always late [p. 3]." in text
    assert text.count("- p. 3: “Oh dear! Oh dear! I shall be late!”") == 1
    assert "Knave" not in text and "Hidden: this part mentions something from after p. 20" in text
    assert "*(failed. Claude's API is overloaded right now.)*" in text
    record = app.conversations.history(conv.id)[1]
    assert answer_sources(record) == [
        {
            "pages": "p. 3",
            "first_page": 3,
            "last_page": 3,
            "quote": "Oh dear! Oh dear! I shall be late!",
        }
    ]
    path = export_conversation(app, conv.id, tmp_path / "out.md")
    assert path.read_text(encoding="utf-8") == text
    assert not (tmp_path / "out.md.tmp").exists()
    other = app.conversations.create(book.id, "Empty")
    whole = book_conversations_markdown(app, book.id)
    assert whole.index("## The Rabbit") < whole.index("## Empty") and "No questions yet." in whole
    assert other.id


def test_unknown_conversation_is_a_clear_error(app: Margin) -> None:
    from core.errors import MarginError

    with pytest.raises(MarginError, match="no conversation number 42"):
        conversation_markdown(app, 42)
