"""Issue 23, third session: the spoiler check's test by meaning (core.agent.spoiler_semantic).
With no model, a story sentence the lexical layer finds doubtful is held back as "not from the
pages you have read" when the book's later chunks are clearly closer to it in meaning than the
pages read; an honest sentence about the pages just read is not; nothing waits for the
book's vectors."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.agent.answer import UNSUPPORTED_NOTICE, notice_text
from core.agent.events import SpoilerHidden, TextDelta
from core.agent.service import AgentService
from core.agent.spoiler_semantic import MEANINGS, BookMeaning
from core.agent.spoilers import ASK_AGAIN_S, SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import AgentLimits, Settings
from core.store.library import Library
from tests.bench.spoiler_books import CAROL
from tests.conftest import BOOKS
from tests.core.agent.conftest import fast_factory
from tests.core.agent.spoiler_eval import load_meanings
from tests.fakes.anthropic_server import FakeAnthropic, Reply

ALICE_READ_TO = 21  # the end of chapter III
META_READ_TO = 28  # the end of part I
CAROL_READ_TO = 25  # the end of Stave I
KEY = "sk-ant-spoiler-meaning-test-0000"

# Leaks in plain words (spoiler_data/cases*.txt) the lexical layer lets through
LEAKS = [
    ("metamorphosis", "His sister takes a job as a shop assistant and learns languages at night."),
    ("metamorphosis", "After his death the family feel free and take a trip out into the country."),
    ("metamorphosis", "In the end he dies alone in his room, and his family feel relieved."),
    (
        "alice",
        "Her sister then dreams of Alice growing up and telling the story to children of her own.",
    ),
    ("alice", "Later she grows so tall that her head ends up far above the tops of the trees."),
]
# Honest sentences about the last pages read (the hard case: just before the bound)
HONEST = [
    ("alice", "The Mouse is offended by her nonsense, walks away and will not finish its story."),
    ("alice", "An old crab tells her daughter to let this be a lesson never to lose her temper."),
    (
        "metamorphosis",
        "His mother pulls open a window, leans far out of it and presses her hands to her face.",
    ),
    (
        "metamorphosis",
        "His father will not open the other half of the double door, so Gregor gets stuck in the doorway.",
    ),
    (
        "metamorphosis",
        "His father gives him a hard shove from behind, and he flies deep into his room, bleeding heavily.",
    ),
]
READ_TO = {"alice": ALICE_READ_TO, "metamorphosis": META_READ_TO}
QUESTIONS = {
    "alice": "What has happened to Alice so far, and how does her adventure go on?",
    "metamorphosis": "Why was Gregor transformed, and what will become of him and his family?",
}


@pytest.fixture(scope="module")
def books(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Library, dict[str, int], BookMeaning]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("meaning") / "home"))
    ids = {
        "alice": import_book(lib, BOOKS / "alice_in_wonderland.epub").book.id,
        "metamorphosis": import_book(lib, BOOKS / "metamorphosis.epub").book.id,
    }
    yield lib, ids, load_meanings(lib.db, ids.values())
    lib.close()


def check(
    books: tuple[Library, dict[str, int], BookMeaning], name: str, text: str, meaning: bool
) -> Any:
    lib, ids, meanings = books
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids[name]),
        read_to=READ_TO[name],
        question=QUESTIONS[name],
        meaning=meanings if meaning else None,
    )
    segments = guard.feed(text) + guard.flush()
    assert len(segments) == 1
    return segments[0]


@pytest.mark.parametrize(("book", "sentence"), LEAKS)
def test_a_plain_word_leak_is_held_by_meaning(books: Any, book: str, sentence: str) -> None:
    assert not check(books, book, sentence, meaning=False).hidden  # the lexical layer passed it
    segment = check(books, book, sentence, meaning=True)
    assert segment.hidden and segment.kind == "unsupported" and segment.terms == ()
    assert segment.doubtful  # a connected model may still overrule it


@pytest.mark.parametrize(("book", "sentence"), HONEST)
def test_an_honest_sentence_about_the_pages_just_read_is_not_held(
    books: Any, book: str, sentence: str
) -> None:
    assert not check(books, book, sentence, meaning=True).hidden


def test_the_passages_the_answer_used_count_as_read(books: Any) -> None:
    lib, ids, meanings = books
    sentence = "His sister takes a job as a shop assistant and learns languages at night."
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids["metamorphosis"]),
        read_to=META_READ_TO,
        question="",
        meaning=meanings,
    )
    guard.add_support(  # a passage the reader supplied (a selection, a tool's passage)
        "Gregor's sister had taken a job as a sales assistant, and in the evenings she "
        "learned shorthand and French so as to get a better position."
    )
    assert not guard.later_in_meaning(sentence)


def test_the_first_question_never_waits_for_the_vectors(books: Any) -> None:
    """The book's vectors load in the background: until then the lexical decision stands."""
    lib, ids, _ = books
    go_on = threading.Event()

    class Slow(BookMeaning):  # the real loader, held back until the check has answered
        def _load(self, *args: Any) -> None:
            go_on.wait(30)
            super()._load(*args)

    fresh = Slow()
    index = SpoilerIndex.build(lib.db, ids["alice"])
    sentence = LEAKS[4][1]
    start = time.perf_counter()
    guard = SpoilerGuard(index, read_to=ALICE_READ_TO, question="", meaning=fresh)
    assert not guard.check(sentence).hidden  # not loaded yet: the lexical decision
    assert time.perf_counter() - start < 5
    go_on.set()
    fresh.wait(lib.db, ids["alice"], timeout=30)
    time.sleep(ASK_AGAIN_S)  # a guard asks again for the vectors at most this often
    assert guard.check(sentence).hidden


def test_a_book_without_vectors_keeps_the_lexical_decision(tmp_path: Path) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    book = import_book(lib, BOOKS / "alice_in_wonderland.epub").book
    lib.db.execute_sql("DELETE FROM chunk_vectors")  # (the background indexer may be done)
    meanings = BookMeaning()
    meanings.wait(lib.db, book.id, timeout=30)
    assert meanings.get(lib.db, book.id) is None
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, book.id), read_to=ALICE_READ_TO, question="", meaning=meanings
    )
    assert not guard.check(LEAKS[4][1]).hidden
    lib.close()


def ask(library: Library, fake: FakeAnthropic, book_id: int, question: str, answer: str) -> Any:
    settings = Settings(
        provider="anthropic",
        base_url=fake.url,
        model="claude-test",
        limits=AgentLimits(),
        spoiler_verify=False,  # no model verifies: the check alone decides
    )
    service = AgentService(
        library, library.paths, settings, provider_factory=fast_factory, retry_delay=0.01
    )
    conv = service.create_conversation(book_id)
    fake.add(Reply.text(answer))

    async def go() -> list[Any]:
        return [e async for e in service.ask(conv.id, question)]

    return asyncio.run(go())


def prepared(library: Library, path: Path, read_to: int) -> int:
    from core.search.vectors import BookVectors

    book = import_book(library, path).book
    library.set_position(book.id, read_to)
    BookVectors(library.db).index_book(book.id)
    MEANINGS.forget(library.db, book.id)
    MEANINGS.wait(library.db, book.id, timeout=30)  # as the background load leaves it
    return book.id


def test_the_real_check_holds_a_plain_word_leak_with_no_model(
    library: Library, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    book_id = prepared(library, BOOKS / "metamorphosis.epub", META_READ_TO)
    honest = "Gregor cannot move backwards in a straight line, so he slowly turns himself round."
    leak = "After his death the family feel free and take a trip out into the country."
    events = ask(library, fake_anthropic, book_id, "What happens to Gregor?", f"{honest} {leak}")
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    (hidden,) = [e.withheld for e in events if isinstance(e, SpoilerHidden)]
    assert honest in shown and "trip" not in shown
    assert hidden.reason == "unsupported" and notice_text(hidden) == UNSUPPORTED_NOTICE


@pytest.mark.skipif(not CAROL.is_file(), reason="A Christmas Carol: tests/bench/spoiler_books.py")
def test_scrooge_and_tiny_tim_at_page_9(
    library: Library, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23 case 5, through the real check with no model, and two leaks of Stave II-V
    told in plain words past the end of Stave I."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    book_id = prepared(library, CAROL, 9)
    answer = (
        "Yes. Scrooge keeps Christmas well ever after, and to Tiny Tim, who did NOT die, he "
        "becomes a second father."
    )
    question = "Does Scrooge change his ways in the end, and what becomes of Tiny Tim?"
    events = ask(library, fake_anthropic, book_id, question, answer)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "Tiny Tim" not in shown and "second father" not in shown
    assert [e for e in events if isinstance(e, SpoilerHidden)]
    library.set_position(book_id, CAROL_READ_TO)
    for leak in (
        "He promises a huge sum to one of the gentlemen he turned away.",
        "He is shown the young woman he once loved, now happily married with children of her own.",
    ):
        events = ask(library, fake_anthropic, book_id, "What happens next?", leak)
        assert not "".join(e.text for e in events if isinstance(e, TextDelta)).strip(), leak
