"""The agent's ``search_book`` tool uses the hybrid search: its description says the model
may search in its own words, and a question in other words than the book's finds the
passage; passages name their chapter."""

from __future__ import annotations

from pathlib import Path

from core.agent.tools import ToolContext, default_tools
from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.vector_indexer import indexer_for
from core.store.library import Library
from tests.conftest import BOOKS


def test_search_book_tool_searches_by_meaning(tmp_path: Path) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    book = import_book(lib, BOOKS / "alice_in_wonderland.epub").book
    assert indexer_for(lib.db).wait(60)
    book = lib.set_finished(book.id, True)
    tools = default_tools()
    spec = next(t for t in tools.specs() if t.name == "search_book")
    assert "own words" in spec.description
    context = ToolContext(lib, BookSearch(lib.db), book, book.spoiler_bound)
    tool = tools.get("search_book")
    assert tool is not None
    # not one word of the answer's passage is in the question ("reptile" is a crocodile)
    question = "Which verse about a reptile came out wrong when she tried to recite it?"
    output = tool.handler(context, {"query": question, "top_k": 5})
    texts = " ".join(" ".join(p.text.split()) for p in output.passages)
    assert "How doth the little crocodile" in texts
    words_alone = context.search.search_book(book.id, question, limit=5, hybrid=False)
    assert not any("little crocodile" in " ".join(h.text.split()) for h in words_alone)
    assert all(" — " in p.title for p in output.passages), "each passage names its chapter"
    lib.close()
