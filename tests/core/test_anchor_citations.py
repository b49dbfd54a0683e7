"""Citations kept on the book's words: a quote that stands twice on its page is anchored
where the passage the model read it in has it (the real SDK against the fake server)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from core.agent.events import RunFinished
from core.agent.providers.anthropic.wire import source_for
from core.agent.service import AgentService
from core.domain.messages import CitationRef, Passage, citation_from_json
from core.store import models as m
from core.store.anchoring import cited_context, resolve_citations
from core.store.anchors import collapse
from core.store.library import BookInfo, Library
from tests.core.agent.conftest import alice, make_service
from tests.fakes.anthropic_server import FakeAnthropic, Reply, search_result_citation

__all__ = ["alice", "make_service"]

# twice on p. 32 of Alice; the search for QUERY returns a passage (p. 32 from "Alice thought
# she might as well wait") that holds only the second
QUOTE = "said the Caterpillar. Alice"
QUERY = "Caterpillar hookah"
PAGE = 32


def _places(library: Library, book_id: int, page: int, words: str) -> list[int]:
    text = library.page(book_id, page).text
    pattern = r"\s+".join(re.escape(w) for w in words.split())
    return [hit.start() for hit in re.finditer(pattern, text)]


def _ask(service: AgentService, conversation_id: int, text: str) -> list[Any]:
    async def collect() -> list[Any]:
        return [e async for e in service.ask(conversation_id, text)]

    return asyncio.run(collect())


def _stored_citations(conversation_id: int) -> list[CitationRef]:
    row = (
        m.Message.select()
        .where((m.Message.conversation == conversation_id) & (m.Message.kind == "answer"))
        .order_by(m.Message.id.desc())
        .get()
    )
    return [citation_from_json(c) for c in row.citations]


def test_a_quote_twice_on_its_page_is_anchored_where_the_cited_passage_has_it(
    make_service: Any, alice: BookInfo, library: Library, fake_anthropic: FakeAnthropic
) -> None:
    first, second = _places(library, alice.id, PAGE, QUOTE)
    service = make_service()
    conv = service.create_conversation(alice.id)
    cite = search_result_citation(source_for(alice.id, PAGE, PAGE), f"p. {PAGE}", QUOTE)
    fake_anthropic.add(
        Reply.tools(("search_book", {"query": QUERY})),
        Reply.text("The Caterpillar speaks, then Alice.", citations=[cite]),
    )
    events = _ask(service, conv.id, "What does the Caterpillar say?")
    assert isinstance(events[-1], RunFinished)
    passages = events[-1].result.passages
    holding = [
        p for p in passages if p.first_page <= PAGE <= p.last_page and QUOTE in collapse(p.text)
    ]
    assert holding and collapse(holding[0].text).count(QUOTE) == 1, "the passage holds one"
    [stored] = _stored_citations(conv.id)
    assert (stored.first_page, stored.exact) == (PAGE, QUOTE)
    assert stored.start == second, "where the passage has it, not the page's first"
    assert first < second


def test_without_a_telling_passage_the_first_occurrence_is_kept(
    library: Library, alice: BookInfo
) -> None:
    first, second = _places(library, alice.id, PAGE, QUOTE)
    text = library.page(alice.id, PAGE).text
    citation = CitationRef(alice.id, PAGE, PAGE, QUOTE)
    # no passage, a passage of another book, one that holds the words twice: the first
    whole = Passage(alice.id, PAGE, PAGE, text)
    other = Passage(alice.id + 99, PAGE, PAGE, text[second - 200 :])
    far = Passage(alice.id, PAGE + 5, PAGE + 6, text[second - 200 :])
    for passages in ((), (whole,), (other,), (far,)):
        [done] = resolve_citations(library.db, [citation], passages)
        assert done.start == first, passages
    assert cited_context(citation, (whole,)) == ("", "")
    # the passage from just before the second: the second, with the words around it
    later = Passage(alice.id, PAGE, PAGE, text[second - 200 :])
    [done] = resolve_citations(library.db, [citation], (far, later))
    assert (done.start, done.exact) == (second, QUOTE)
    before, after = cited_context(citation, (later,))
    assert collapse(text[:second]).endswith(before.strip()) and after.strip()
    # a quote not in the book at all is kept as the model gave it
    missing = CitationRef(alice.id, PAGE, PAGE, "words the book never had, not once")
    assert resolve_citations(library.db, [missing], (later,)) == (missing,)
