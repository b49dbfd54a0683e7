"""Passages mode (core/agent/providers/passages.py): typed passages in, quoted passages out."""

from __future__ import annotations

import asyncio
from typing import Any

from core.agent.answer import FOLD_LINE
from core.agent.providers.base import StreamCitation, StreamText
from core.agent.providers.passages import PassagesProvider, excerpt, present, query_for
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
    assert (
        "\n\npp. 40–41\n\n> **" in shown and "after page 45" in shown and "From the book" in shown
    )


def test_excerpt_centres_on_the_query_and_reports_cuts() -> None:
    text = "a " * 400 + "needle here " + "b " * 400
    quote, cut_start, cut_end = excerpt(text, ["needle"])
    assert "needle" in quote and cut_start and cut_end and len(quote) <= 460


def test_nothing_found_says_so_in_words() -> None:
    events = turn(UserMessage((Question("zzz"),)), UserMessage((ToolResult("p1", ()),)))
    shown = "".join(e.text for e in events if isinstance(e, StreamText))
    assert "No passage matches" in shown and "Settings" in shown


def test_the_sentence_that_answers_comes_first_in_bold_with_page_and_chapter() -> None:
    text = (
        "it was the end of a sentence cut by the chunker. The Hatter opened his eyes very "
        "wide on hearing this. “Why is a raven like a writing-desk?” he asked at last. "
        "Alice thought they were going to have some fun now. She was glad they had begun "
        "asking riddles."
    )
    passage = Passage(7, 44, 44, text, "Alice, p. 44 — CHAPTER VII. A Mad Tea-Party")
    events = turn(
        UserMessage((Question("What did the Hatter ask about a raven?"),)),
        UserMessage((ToolResult("passages_1", (passage,)),)),
    )
    shown = "".join(e.text for e in events if isinstance(e, StreamText))
    assert "not an AI answer" in shown, "it says honestly that these are the book's words"
    # the answer first, with its page; the passages below the fold
    lead = shown.split("\n\n")[1]
    assert lead.startswith("> **") and "“Why is a raven like a writing-desk?”" in lead
    where, first = shown.split(FOLD_LINE, 1)[1].split("\n\n")[1:3]
    assert where == "p. 44 · CHAPTER VII. A Mad Tea-Party", "pages and chapter head the passage"
    lead = first.splitlines()[0]
    assert lead.startswith("> **") and lead.endswith("**")
    assert "“Why is a raven like a writing-desk?” he asked at last." in lead
    assert "cut by the chunker" not in shown, "a sentence cut at the passage's start is left out"
    (cite,) = [e.citation for e in events if isinstance(e, StreamCitation)]
    assert lead[4:-2] in cite.quoted_text  # the sentence that leads the reply (and what follows)
    assert cite.quoted_text in " ".join(text.split())


def test_present_keeps_whole_sentences() -> None:
    text = "First one here. " * 40 + "The key was tiny and golden. " + "Last one here. " * 40
    shown = present(text, "what was the key made of", chars=200)
    assert shown.answer == "The key was tiny and golden."
    assert shown.cut_start and shown.cut_end
    assert shown.context.startswith("First one here.") and shown.context.endswith("here.")
    assert "**The key was tiny and golden.**" in shown.context and len(shown.context) <= 220


def test_a_best_sentence_opening_its_passage_is_not_shown_twice_in_a_row() -> None:
    text = "The key was tiny and golden. Alice tried it in the little door. It fitted!"
    passage = Passage(7, 8, 8, text, "Alice, p. 8 — CHAPTER I. Down the Rabbit-Hole")
    events = turn(
        UserMessage((Question("What was the key like?"),)),
        UserMessage((ToolResult("passages_1", (passage,)),)),
    )
    shown = "".join(e.text for e in events if isinstance(e, StreamText))
    assert shown.split(FOLD_LINE, 1)[1].count("The key was tiny and golden.") == 1
    assert "> **The key was tiny and golden.**\n>\n> Alice tried it in the little door." in shown
