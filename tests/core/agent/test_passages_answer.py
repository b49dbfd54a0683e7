"""Which sentence passages mode puts first, in bold (core/agent/providers/answer_sentence.py):
chosen with the sentence encoder when its weights are there, the cheap choice (words and
static vectors) without them. Real chunks of the fixture books, the real encoder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.agent.providers import answer_sentence
from core.agent.providers.passages import (
    REPLY_CHARS,
    PassagesProvider,
    choose,
    query_for,
    whole_sentences,
)
from core.agent.tools import ToolContext, default_tools
from core.agent.types import (
    CitationRef,
    Passage,
    Question,
    ToolCall,
    ToolResult,
    ToolSpec,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from core.books.chunking import make_chunks
from core.search import BookSearch
from core.search import encoder as encoder_module
from core.search.encoder_files import ENV_FOLDER, weights_present
from core.store.library import BookInfo, Library

needs_encoder = pytest.mark.skipif(
    not weights_present(), reason="the sentence encoder's weights are not here (make)"
)


def chunk_with(library: Library, book: BookInfo, words: str) -> Passage:
    """The book's search chunk holding ``words``, as the tool gives it."""
    pages = library.pages(book.id, 1, book.page_count)
    for c in make_chunks(pages):
        if words in " ".join(c.text.split()):
            return Passage(book.id, c.start_page, c.end_page, c.text, f"p. {c.start_page}")
    raise AssertionError(f"{words!r} is in the book")


@needs_encoder
def test_the_encoder_bolds_the_answer_the_words_alone_missed(
    library: Library, alice: BookInfo
) -> None:
    passage = chunk_with(library, alice, "get us dry would be a Caucus-race")
    question = (
        "What did the bird suggest as the way for the soaked animals to get warm and not wet?"
    )
    query = query_for(Question(question))
    ((_, before),) = choose([passage], query, deep=False)
    ((_, after),) = choose([passage], query)
    assert "Caucus-race" not in before.answer, "the words alone chose another sentence"
    assert "the best thing to get us dry would be a Caucus-race" in after.answer
    assert f"**{after.answer}**" in after.context
    assert after.answer in " ".join(passage.text.split()), "the bold text is the book's"


@needs_encoder
def test_two_sentences_in_a_row_are_bold_when_they_answer_together(
    library: Library, read_metamorphosis: BookInfo
) -> None:
    passage = chunk_with(
        library, read_metamorphosis, "Drops of rain could be heard hitting the pane"
    )
    query = query_for(Question("What was the weather like outside his window that first morning?"))
    ((_, shown),) = choose([passage], query)
    assert shown.answer.startswith("Gregor then turned to look out the window")
    assert "Drops of rain could be heard hitting the pane" in shown.answer
    assert len(shown.answer) <= answer_sentence.PAIR


def test_without_the_encoders_weights_the_cheap_choice_answers(
    library: Library, read_metamorphosis: BookInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_FOLDER, str(tmp_path / "no-model"))
    encoder_module.forget_encoder()
    try:
        passage = chunk_with(library, read_metamorphosis, "Drops of rain could be heard")
        query = query_for(Question("What was the weather like that first morning?"))
        ((_, shown),) = choose([passage], query)
        ((_, cheap),) = choose([passage], query, deep=False)
        assert shown == cheap, "no weights: the same choice as without the encoder"
        assert shown.answer in whole_sentences(passage.text), "one whole sentence"
    finally:
        monkeypatch.undo()
        encoder_module.forget_encoder()


def reply(library: Library, book: BookInfo, question: str) -> tuple[str, list[CitationRef]]:
    """Passages mode's reply through the real search tool, and its citations."""
    provider = PassagesProvider()
    spec = ToolSpec("search_book", "", {})
    ctx = ToolContext(library, BookSearch(library.db), book, book.spoiler_bound)

    async def go() -> TurnResult:
        asked = UserMessage((Question(question),))
        first = [e async for e in provider.stream_turn(TurnRequest("p", "", (asked,), (spec,)))]
        result = first[-1]
        assert isinstance(result, TurnResult)
        (call,) = result.message.calls
        assert isinstance(call, ToolCall)
        out = default_tools().run(ctx, call.name, call.arguments)
        answer = UserMessage((ToolResult(call.id, out.parts),))
        request = TurnRequest("p", "", (asked, result.message, answer), (spec,))
        final = [e async for e in provider.stream_turn(request)][-1]
        assert isinstance(final, TurnResult)
        return final

    final = asyncio.run(go())
    (part,) = final.message.parts
    return part.text, list(part.citations)  # type: ignore[union-attr]


def test_a_reply_still_fits_before_show_all_and_keeps_the_reading_bound(
    library: Library, alice: BookInfo
) -> None:
    from desktop.chat.render import cut_at

    book = library.find_book(alice.id)
    assert book.spoiler_bound is not None and book.spoiler_bound < book.page_count
    text, cites = reply(library, book, "What did the Hatter and the March Hare do at tea?")
    assert cites, "passages were shown"
    assert all(c.last_page <= book.spoiler_bound for c in cites), "nothing past read_to"
    assert cut_at(text) == len(text), "the chat shows the whole reply"
    quoted = sum(len(line) for line in text.splitlines() if line.startswith(">"))
    assert quoted <= REPLY_CHARS


def test_the_bold_sentence_is_chosen_off_the_event_loop(
    library: Library, alice: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The encoder reads up to 24 sentences a reply (about 0.25 s of CPU): in the window the
    provider runs on the Qt event loop, so the choice runs on a worker thread."""
    import threading

    from core.agent.providers import passages as passages_module

    threads: list[int] = []
    real = passages_module.choose

    def recording(*args: object, **kwargs: object) -> object:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(passages_module, "choose", recording)
    book = library.find_book(alice.id)
    _, cites = reply(library, book, "What did the Hatter and the March Hare do at tea?")
    assert cites and threads and threading.get_ident() not in threads
