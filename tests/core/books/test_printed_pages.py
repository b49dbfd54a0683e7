"""Printed page numbers (an EPUB's page-list) where pages are named for people and for the
model: the assistant's passages, conversation and highlight exports, `margin highlights
--json` and `margin history --json` (issue 29, item 7)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.agent.providers.anthropic.wire import _parts_text
from core.agent.tools import ToolContext, default_tools
from core.agent.types import AssistantMessage, CitationRef, Question, Selection, TextPart, Usage
from core.app import Margin
from core.books.importer import import_book
from core.cli import main
from core.domain.messages import part_from_json, part_to_json
from core.export.markdown import conversation_markdown, export_highlights
from core.labels import cited_pages, printed_pages
from core.paths import resolve_paths
from tests.core.books.test_epub_w3c import _page_list_book


@pytest.fixture
def app(margin_home: Path) -> Iterator[Margin]:
    margin = Margin.open(resolve_paths().ensure())
    yield margin
    margin.close()


def _forty(app: Margin, book_id: int, count: int) -> int:
    """Margin's page where printed page 40 begins."""
    return next(p.number for p in app.library.pages(book_id, 1, count) if p.text.startswith("Two"))


def test_printed_pages_name_the_paper_books_page_or_nothing() -> None:
    labels = ["1", "38", "38", "39", "40", "xii"]
    assert printed_pages(2, 2, labels) == "p. 38 in print"
    assert printed_pages(2, 4, labels) == "pp. 38–39 in print"
    assert printed_pages(6, 6, labels) == "p. xii in print"
    assert printed_pages(1, 1, labels) == ""  # the label is the page's own number
    assert printed_pages(9, 9, labels) == ""  # beyond the labels: none
    assert printed_pages(3, 3, ()) == ""  # a book without printed pages
    assert printed_pages(3, 3, {3: "211"}) == "p. 211 in print"
    assert cited_pages(5, 5, labels) == "p. 5 (p. 40 in print)"
    assert cited_pages(1, 1, labels) == "p. 1"


def test_the_assistants_passages_name_the_printed_page(app: Margin, tmp_path: Path) -> None:
    book = import_book(app.library, _page_list_book(tmp_path)).book
    book = app.library.set_finished(book.id, True)
    forty = _forty(app, book.id, book.page_count)
    ctx = ToolContext(app.library, app.search, book, book.spoiler_bound)
    found = default_tools().run(ctx, "search_book", {"query": "forty begins"})
    assert found.passages
    hit = next(p for p in found.passages if p.first_page == forty)
    assert f"p. {forty} (p. 40 in print)" in hit.title and hit.printed == "p. 40 in print"
    read = default_tools().run(ctx, "read_pages", {"start": forty, "end": forty})
    assert read.passages[0].title.endswith(f"p. {forty} (p. 40 in print)")
    # a model without native citations reads it beside the label; the store keeps it
    sent = _parts_text(read.passages)
    assert f'label="[p. {forty}]" printed="p. 40 in print"' in sent
    assert part_from_json(part_to_json(read.passages[0])) == read.passages[0]
    assert 'printed="p. 3&quot;' in _parts_text([replace(hit, printed='p. 3" x')])


def test_exports_name_the_printed_page(
    app: Margin, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = import_book(app.library, _page_list_book(tmp_path)).book
    forty = _forty(app, book.id, book.page_count)
    conv = app.conversations.create(book.id, "Forty")
    cite = CitationRef(book.id, forty, forty, "Page forty begins.")
    ids = app.conversations.start_run(
        conv.id,
        provider="anthropic",
        model="claude-test",
        strategy="tool-use",
        question=Question("Where?", Selection("Page forty begins.", forty)),
    )
    app.conversations.finish(
        conversation_id=conv.id,
        ids=ids,
        status="complete",
        message=AssistantMessage((TextPart("It begins there.", (cite,)),)),
        text="It begins there.",
        citations=(cite,),
        steps=1,
        usage=Usage(10, 5),
        stop_reason="end_turn",
        error=None,
    )
    text = conversation_markdown(app, conv.id)
    assert f"- p. {forty} (p. 40 in print): “Page forty begins.”" in text
    assert f"> Page forty begins. (p. {forty} (p. 40 in print))" in text

    app.library.add_highlight(book.id, forty, "Page forty begins.")
    app.library.add_highlight(book.id, 1, "Words of the printed page here.")
    out = export_highlights(app.library, book.id, tmp_path / "h.md").read_text("utf-8")
    assert f"**p. {forty} (p. 40 in print)**" in out
    assert "**p. 1 (p. 38 in print)**" in out

    app.close()  # the CLI opens the same library
    assert main(["highlights", str(book.id), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["page"]: r["printed_page"] for r in rows} == {forty: "40", 1: "38"}
    assert main(["history", str(conv.id), "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    answer = next(r for r in history if r["role"] == "assistant")
    assert answer["sources"][0]["pages"] == f"p. {forty} (p. 40 in print)"


def test_a_book_without_printed_pages_keeps_margins_numbers(
    app: Margin, books_dir: Path, tmp_path: Path
) -> None:
    book = import_book(app.library, books_dir / "alice_in_wonderland.epub").book
    app.library.add_highlight(book.id, 3, "Oh dear!")
    out = export_highlights(app.library, book.id, tmp_path / "h.md").read_text("utf-8")
    assert "**p. 3** (" in out and "in print" not in out
