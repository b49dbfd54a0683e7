"""What a passages-mode reply shows (core/agent/providers/passages.py ``choose``): passages
that continue each other joined, each around its best sentence, the whole reply in the room
the chat shows before "Show all". Real chunks of Alice, the real search tool."""

from __future__ import annotations

import asyncio
import itertools

from core.agent.answer import FOLD_LINE
from core.agent.providers.base import StreamText
from core.agent.providers.passages import (
    ASKED,
    CONTEXT_CHARS,
    REPLY_CHARS,
    SHOWN,
    PassagesProvider,
    choose,
    merge_continuing,
    shares,
)
from core.agent.tools import ToolContext, default_tools
from core.agent.types import (
    Passage,
    Question,
    ToolResult,
    ToolSpec,
    TurnRequest,
    UserMessage,
)
from core.books.chunking import make_chunks
from core.search import BookSearch
from core.store.library import BookInfo, Library


def alice_chunks(library: Library, book: BookInfo) -> list[Passage]:
    """Alice's search chunks as the tool's passages ("Alice, pp. 46–48 — Chapter")."""
    pages = library.pages(book.id, 1, book.page_count)
    return [
        Passage(
            book.id, c.start_page, c.end_page, c.text, f"Alice, p. {c.start_page} — Ch {c.chapter}"
        )
        for c in make_chunks(pages)
    ]


def continuing(chunks: list[Passage]) -> tuple[Passage, Passage]:
    """Two chunks in a row of one chapter, the second starting with the first's tail."""
    for a, b in itertools.pairwise(chunks):
        same = a.title.rpartition("Ch ")[2] == b.title.rpartition("Ch ")[2]
        if same and "Notes to this passage" not in a.text and len(a.text + b.text) < 2500:
            return a, b
    raise AssertionError("Alice has chunks that continue each other")


def test_a_passage_continuing_a_better_one_joins_it_without_repeating_words(
    library: Library, alice: BookInfo
) -> None:
    chunks = alice_chunks(library, alice)
    first, second = continuing(chunks)
    other = chunks[-1]
    merged = merge_continuing([second, other, first])
    assert len(merged) == 2 and merged[1] == other, "the joined one keeps the better one's place"
    joined = merged[0]
    assert (joined.first_page, joined.last_page) == (first.first_page, second.last_page)
    text, whole = " ".join(first.text.split()), " ".join(joined.text.split())
    assert whole.startswith(text), "read in the book's order"
    tail = " ".join(second.text.split())[-200:]
    assert whole.endswith(tail) and whole.count(text[-60:]) == 1, "no words twice"
    assert joined.text.count("\n\n") >= first.text.count("\n\n"), "paragraphs kept"
    assert joined.title.endswith(" — Ch " + first.title.rpartition("Ch ")[2])
    assert merge_continuing([first, first]) == [first], "a repeated passage shows once"


def test_passages_too_long_together_stay_apart(library: Library, alice: BookInfo) -> None:
    first, second = continuing(alice_chunks(library, alice))
    assert merge_continuing([first, second], chars=len(first.text)) == [first, second]


def test_shares_show_short_passages_whole_and_give_the_first_more_room() -> None:
    assert shares([500, 4000, 4000], 5000) == [500, 2250, 2250]
    given = shares([4000] * 6, 9000, lean=(3.0, 2.0))
    assert given[0] > given[1] > given[2] == given[5] and sum(given) <= 9000
    assert max(shares([9000, 100], 20000)) == CONTEXT_CHARS


def reply(library: Library, book: BookInfo, question: str) -> tuple[str, list[Passage]]:
    ctx = ToolContext(library, BookSearch(library.db), book, book.spoiler_bound)
    provider = PassagesProvider()
    spec = ToolSpec("search_book", "", {})
    asked = UserMessage((Question(question),))

    async def go() -> str:
        first = [e async for e in provider.stream_turn(TurnRequest("p", "", (asked,), (spec,)))]
        (call,) = first[-1].message.calls
        assert call.arguments["top_k"] == ASKED
        out = default_tools().run(ctx, call.name, call.arguments)
        found.extend(out.passages)
        answer = UserMessage((ToolResult(call.id, out.parts),))
        events = [
            e
            async for e in provider.stream_turn(
                TurnRequest("p", "", (asked, first[-1].message, answer), (spec,))
            )
        ]
        return "".join(e.text for e in events if isinstance(e, StreamText))

    found: list[Passage] = []
    return asyncio.run(go()), found


def test_a_reply_fits_the_room_and_shows_at_most_six_passages(
    library: Library, alice: BookInfo
) -> None:
    library.set_read_to(alice.id, alice.page_count)
    book = library.find_book(alice.id)
    text, found = reply(library, book, "What did the Hatter and the March Hare do at tea?")
    below = text.split(FOLD_LINE, 1)[1]  # the passages, under the answer that leads the reply
    quoted = [line for line in below.splitlines() if line.startswith("> **")]
    assert len(found) > SHOWN and 1 < len(quoted) <= SHOWN
    assert sum(len(line) for line in below.splitlines() if line.startswith(">")) <= REPLY_CHARS
    every = sum(len(p.text) for p in found[:SHOWN])
    assert every > REPLY_CHARS, "without the room, these passages would not fit"


def test_choose_shows_a_short_passage_whole(library: Library, alice: BookInfo) -> None:
    first, _second = continuing(alice_chunks(library, alice))
    ((_, shown),) = choose([first], "Alice")
    assert not shown.cut_start and not shown.cut_end


def test_joined_passages_keep_their_printed_pages(library: Library, alice: BookInfo) -> None:
    first, second = continuing(alice_chunks(library, alice))
    a = Passage(
        first.book_id,
        7,
        7,
        first.text,
        "Alice, p. 7 (p. 40 in print) — Ch 2",
        printed="p. 40 in print",
    )
    b = Passage(
        second.book_id, 8, 9, second.text, "Alice, pp. 8–9 — Ch 2", printed="pp. 41–42 in print"
    )
    (joined,) = merge_continuing([a, b])
    assert joined.printed == "pp. 40–42 in print"
    assert joined.title == "Alice, pp. 7–9 (pp. 40–42 in print) — Ch 2"
