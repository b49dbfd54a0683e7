"""Passages mode (core/agent/providers/passages.py): typed passages in, quoted passages out."""

from __future__ import annotations

import asyncio
from typing import Any

from core.agent.providers.base import StreamCitation, StreamText
from core.agent.providers.passages import PassagesProvider, excerpt, query_for
from core.agent.types import (
    HiddenAfter,
    Passage,
    Question,
    Selection,
    StopReason,
    ToolResult,
    ToolSpec,
    TurnRequest,
    TurnResult,
    UserMessage,
)

SEARCH = ToolSpec("search_book", "", {})


def turn(*messages: Any) -> list[Any]:
    provider = PassagesProvider()

    async def go() -> list[Any]:
        request = TurnRequest("passages", "", tuple(messages), (SEARCH,))
        return [e async for e in provider.stream_turn(request)]

    return asyncio.run(go())


def test_a_quick_action_searches_the_readers_words_not_the_template() -> None:
    question = Question(
        "Explain · “the grin without a cat” (p. 40)",
        Selection("a grin without a cat", 40),
        prompt="Explain this passage in plain words: what it means, why it matters",
    )
    query = query_for(question)
    assert "grin without a cat" in query and "plain words" not in query
    (result,) = turn(UserMessage((question,)))
    assert isinstance(result, TurnResult) and result.stop_reason is StopReason.TOOL_USE
    call = result.message.calls[0]
    assert call.name == "search_book" and "plain words" not in call.arguments["query"]


def test_quotes_are_exact_text_and_cite_their_pages() -> None:
    text = (
        "Intro words. " * 30
        + "The Cat vanished quite slowly, ending with the grin. "
        + "More. " * 80
    )
    passage = Passage(7, 40, 41, text, "Alice, pp. 40–41")
    events = turn(
        UserMessage((Question("grin vanished"),)),
        UserMessage((ToolResult("passages_1", (passage, HiddenAfter(45))),)),
    )
    cites = [e.citation for e in events if isinstance(e, StreamCitation)]
    assert len(cites) == 1 and (cites[0].first_page, cites[0].last_page) == (40, 41)
    quote = cites[0].quoted_text
    assert quote in " ".join(text.split()), "the quote can be found on the page"
    assert not quote.startswith("…") and not quote.endswith("…")
    shown = "".join(e.text for e in events if isinstance(e, StreamText))
    assert "— pp. 40–41" in shown and "after page 45" in shown and "Passages from the book" in shown


def test_excerpt_centres_on_the_query_and_reports_cuts() -> None:
    text = "a " * 400 + "needle here " + "b " * 400
    quote, cut_start, cut_end = excerpt(text, ["needle"])
    assert "needle" in quote and cut_start and cut_end and len(quote) <= 460


def test_nothing_found_says_so_in_words() -> None:
    events = turn(UserMessage((Question("zzz"),)), UserMessage((ToolResult("p1", ()),)))
    shown = "".join(e.text for e in events if isinstance(e, StreamText))
    assert "No passage matches" in shown and "Settings" in shown
