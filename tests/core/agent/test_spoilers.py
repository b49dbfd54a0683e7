from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.agent.spoiler_text import boundaries as _boundaries
from core.agent.spoilers import (
    Segment,
    SpoilerGuard,
    SpoilerIndex,
    SpoilerIndexCache,
    SpoilerTerm,
)
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store import models as m
from core.store.library import Library
from tests.conftest import BOOKS
from tests.core.agent.spoiler_eval import combined, evaluate

ALICE_READ_TO = 21  # the end of chapter III
META_READ_TO = 28  # the end of part I


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, dict[str, int]]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("spoilers") / "home"))
    ids = {
        "alice": import_book(lib, BOOKS / "alice_in_wonderland.epub").book.id,
        "metamorphosis": import_book(lib, BOOKS / "metamorphosis.epub").book.id,
    }
    yield lib, ids
    lib.close()


@pytest.fixture(scope="module")
def alice(books: tuple[Library, dict[str, int]]) -> SpoilerIndex:
    lib, ids = books
    return SpoilerIndex.build(lib.db, ids["alice"])


def run(guard: SpoilerGuard, pieces: list[str]) -> list[Segment]:
    out: list[Segment] = []
    for piece in pieces:
        out.extend(guard.feed(piece))
    return out + guard.flush()


def texts(index: SpoilerIndex, answer: str) -> list[str]:
    guard = SpoilerGuard(index, read_to=ALICE_READ_TO, question="")
    return [s.text for s in run(guard, [answer])]


# --- sentences -------------------------------------------------------------------------------

MARKDOWN = (
    "## What happened so far\n\n"
    "Alice follows the White Rabbit [p. 2]. She falls for a long time... and then lands!\n"
    "- Mr. Dodgson wrote it. St. George is not in it.\n"
    '- She drinks from a bottle ("DRINK ME").\n'
    '> "Curiouser and curiouser!" cried Alice.\n\n'
    "1. One.\n2. Two, e.g. this one. Done"
)
MARKDOWN_SENTENCES = [
    "## What happened so far\n\n",
    "Alice follows the White Rabbit [p. 2]. ",
    "She falls for a long time... and then lands!\n",
    "- Mr. Dodgson wrote it. ",
    "St. George is not in it.\n",
    '- She drinks from a bottle ("DRINK ME").\n',
    '> "Curiouser and curiouser!" cried Alice.\n\n',
    "1. One.\n",
    "2. Two, e.g. this one. ",
    "Done",
]


def test_markdown_sentences(alice: SpoilerIndex) -> None:
    assert texts(alice, MARKDOWN) == MARKDOWN_SENTENCES


@pytest.mark.parametrize(
    "text,expected",
    [
        ("See ch. 3 and pp. 4–5. Then go on.", ["See ch. 3 and pp. 4–5. ", "Then go on."]),
        ("J. M. Barrie wrote it. Yes.", ["J. M. Barrie wrote it. ", "Yes."]),
        ("“Who are you?” she asked. Fine.", ["“Who are you?” she asked. ", "Fine."]),
        ("It was 3.5 inches. Oh! Really?", ["It was 3.5 inches. ", "Oh! ", "Really?"]),
        ("Wait…  Then", ["Wait…  ", "Then"]),
        ("   leading spaces. Next", ["   leading spaces. ", "Next"]),
        ("no end", ["no end"]),
        ("trailing space.   ", ["trailing space.   "]),
    ],
)
def test_sentence_edge_cases(alice: SpoilerIndex, text: str, expected: list[str]) -> None:
    assert texts(alice, text) == expected


@given(
    text=st.sampled_from([MARKDOWN, "A. B. C.\n\n\nD? E! “F.” G…"]),
    cuts=st.lists(st.integers(0, 400)),
)
@example(text=MARKDOWN, cuts=[])
@example(text=MARKDOWN, cuts=list(range(400)))  # one character at a time
@example(text=MARKDOWN, cuts=[38, 39, 40, 41])  # around "[p. 2]. She"
def test_streaming_in_chunks_gives_the_same_segments(
    alice: SpoilerIndex, text: str, cuts: list[int]
) -> None:
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    assert run(guard, pieces) == run(
        SpoilerGuard(alice, read_to=ALICE_READ_TO, question=""), [text]
    )


def test_holds_back_at_most_the_sentence_being_written(alice: SpoilerIndex) -> None:
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    released = 0
    for i, ch in enumerate(MARKDOWN):
        released += len(guard.feed(ch))
        sent = MARKDOWN[: i + 1]
        # every sentence whose end is known has been released; what is held back is one
        # sentence in progress (with the spaces after it, which may still decide its end)
        assert released == len(_boundaries(sent, 0))
        assert _boundaries(guard.pending, 0) == []
        assert sent.endswith(guard.pending)
    assert released + len(guard.flush()) == len(MARKDOWN_SENTENCES)


# --- the check -------------------------------------------------------------------------------


HONEST = (
    "Alice follows the White Rabbit down the rabbit-hole [p. 2]. She finds a tiny golden key "
    'and a bottle labelled "DRINK ME", and shrinks. Later she cries a pool of tears, meets '
    "the Mouse, and the Dodo organises a Caucus-race [p. 17]. When she talks about Dinah, the "
    "birds leave her alone."
)
LEAK = "Later, at the trial, the Knave of Hearts is accused of stealing the tarts."


def first_page_with(lib: Library, book_id: int, word: str) -> int:
    row = lib.db.execute_sql(
        "SELECT min(number) FROM page_plain WHERE book_id = ? AND number > 1 AND text LIKE ?",
        (book_id, f"%{word}%"),
    ).fetchone()
    return int(row[0])


def test_honest_answer_passes_untouched(alice: SpoilerIndex) -> None:
    segments = run(SpoilerGuard(alice, read_to=ALICE_READ_TO, question="What happened?"), [HONEST])
    assert len(segments) == 4
    assert not any(s.hidden or s.terms for s in segments)
    assert "".join(s.text for s in segments) == HONEST


def test_leak_is_hidden_with_its_terms_and_pages(
    books: tuple[Library, dict[str, int]], alice: SpoilerIndex
) -> None:
    lib, ids = books
    answer = HONEST + " " + LEAK + " She is still small."
    segments = run(
        SpoilerGuard(alice, read_to=ALICE_READ_TO, question="What comes next?"), [answer]
    )
    hidden = [s for s in segments if s.hidden]
    assert [s.text for s in hidden] == [LEAK + " "]
    terms = {t.term: t.first_page for t in hidden[0].terms}
    assert "Knave" in terms
    assert terms["Knave"] == first_page_with(lib, ids["alice"], "Knave") > ALICE_READ_TO
    assert all(page > ALICE_READ_TO for page in terms.values())
    assert "".join(s.text for s in segments) == answer


def test_names_from_the_table_of_contents_still_count(alice: SpoilerIndex) -> None:
    # Page 1 lists "CHAPTER IX. The Mock Turtle's Story": a contents line is not the story.
    segment = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="").check(
        "The Mock Turtle weeps."
    )
    assert segment.hidden and {t.term for t in segment.terms} >= {"Mock", "Turtle"}
    assert min(t.first_page for t in segment.terms) >= 60


@pytest.mark.parametrize(
    "question,selection,hidden",
    [
        ("", "", True),
        ("Who is the Gryphon?", "", False),
        ("Tell me more.", "the gryphons", False),  # stems: gryphons ~ Gryphon
        ("Who is the Mock Turtle?", "", True),  # the Gryphon is still new
    ],
)
def test_words_of_the_question_and_selection_never_count(
    alice: SpoilerIndex, question: str, selection: str, hidden: bool
) -> None:
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question=question, selection=selection)
    assert guard.check("The Gryphon was there.").hidden is hidden


@pytest.mark.parametrize(
    "sentence,term,page",
    [
        ("At the tea-party nobody moves.", "tea-party", 46),
        ("The Queen calls them all a pack of cards.", "pack of cards", 54),
    ],
)
def test_phrases_met_only_after_the_bound(
    alice: SpoilerIndex, sentence: str, term: str, page: int
) -> None:
    # "tea", "party", "pack" and "cards" are each met before p. 20; the phrases are not (the
    # contents' "A Mad Tea-Party" does not count).
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    assert (term, page) in {(t.term, t.first_page) for t in guard.check(sentence).terms}
    asked = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="Is there a tea party?")
    assert not asked.check("At the tea-party nobody moves.").hidden
    assert not SpoilerGuard(alice, read_to=page, question="").check(sentence).hidden


def test_plain_words_first_used_later_do_not_count(alice: SpoilerIndex) -> None:
    # "therefore" is first used in chapter VI, but it is common English.
    assert alice.first_page[alice.stems(["therefore"])["therefore"]] > ALICE_READ_TO
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    assert not guard.check("She therefore stays calm.").hidden


def test_read_to_the_last_page_hides_nothing(alice: SpoilerIndex) -> None:
    for read_to in (alice.page_count, alice.page_count + 10, None):
        assert not SpoilerGuard(alice, read_to=read_to, question="").check(LEAK).hidden
    # read past the trial chapter: the Knave is known; before it, he is not
    assert not SpoilerGuard(alice, read_to=80, question="").check(LEAK).hidden
    assert SpoilerGuard(alice, read_to=30, question="").check(LEAK).hidden


def test_negative_read_to_is_refused(alice: SpoilerIndex) -> None:
    with pytest.raises(ValueError, match="read_to"):
        SpoilerGuard(alice, read_to=-1, question="")


def test_empty_answer(alice: SpoilerIndex) -> None:
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    assert guard.feed("") == [] and guard.flush() == []
    assert run(SpoilerGuard(alice, read_to=ALICE_READ_TO, question=""), ["  \n"]) == [
        Segment("  \n", False)
    ]


def test_huge_answer(alice: SpoilerIndex) -> None:
    answer = (HONEST + "\n\n") * 400 + LEAK  # about 140 KB
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    start = time.process_time()
    segments = run(guard, [answer[i : i + 7] for i in range(0, len(answer), 7)])
    elapsed = time.process_time() - start
    assert "".join(s.text for s in segments) == answer
    assert [s.text for s in segments if s.hidden] == [LEAK]
    assert len(segments) == 4 * 400 + 1
    assert elapsed < 10  # linear: about 1,600 sentences fed 7 characters at a time


def test_book_without_pages_or_chunks(books: tuple[Library, dict[str, int]]) -> None:
    lib, _ = books
    book = m.Book.create(title="Empty", format="txt", sha256="0" * 64)
    index = SpoilerIndex.build(lib.db, book.id)
    assert (index.page_count, index.first_page) == (0, {})
    guard = SpoilerGuard(index, read_to=1, question="")
    assert run(guard, [LEAK]) == [Segment(LEAK, False)]
    missing = SpoilerIndex.build(lib.db, 10_000)
    assert not SpoilerGuard(missing, read_to=0, question="").check(LEAK).hidden
    book.delete_instance()


def test_index_is_per_book(books: tuple[Library, dict[str, int]], alice: SpoilerIndex) -> None:
    lib, ids = books
    meta = SpoilerIndex.build(lib.db, ids["metamorphosis"])
    sentence = "Grete plays the violin for the gentlemen."
    assert SpoilerGuard(meta, read_to=META_READ_TO, question="").check(sentence).hidden
    # "Grete" and "violin" are not in Alice at all: nothing to reveal there.
    assert not SpoilerGuard(alice, read_to=ALICE_READ_TO, question="").check(sentence).hidden
    assert meta.first_page != alice.first_page


def test_cache_keeps_one_index_per_book(books: tuple[Library, dict[str, int]]) -> None:
    lib, ids = books
    cache = SpoilerIndexCache(size=1)
    first = cache.get(lib.db, ids["alice"])
    assert cache.get(lib.db, ids["alice"]) is first
    other = cache.get(lib.db, ids["metamorphosis"])
    assert other.book_id == ids["metamorphosis"]
    assert cache.get(lib.db, ids["alice"]) is not first  # size 1: Alice was dropped


def test_terms_are_typed(alice: SpoilerIndex) -> None:
    segment = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="").check(LEAK)
    assert all(isinstance(t, SpoilerTerm) for t in segment.terms)
    with pytest.raises(AttributeError):
        segment.hidden = False  # type: ignore[misc]


# --- the evaluation set (tests/core/agent/spoiler_data) --------------------------------------


def test_evaluation_set(books: tuple[Library, dict[str, int]]) -> None:
    """Regression guard at the figures measured when the checker was written (the aims were
    90 % caught, 2 % false alarms: the catch rate falls short, see the report of issue 16).
    Main set: 80 % caught, 1.6 % false alarms. Second set (written after the first tuning;
    it measured 63 % / 2.5 % then, and the phrase rule was added after): 73 % / 2.5 % (1 of 40).
    Both: 78 % caught, 1.9 % false alarms; 77 % since issue 23 left out phrases of two everyday
    words ("turn into" caught one leak here, and held three honest sentences elsewhere)."""
    lib, ids = books
    main = evaluate(lib.db, ids)
    heldout = evaluate(lib.db, ids, "_heldout")
    both = combined(main, heldout)
    assert main.leaks >= 60 and main.honest >= 100
    details = "\n".join(both.missed + [f"{s} {t}" for s, t in both.alarms])
    assert main.recall >= 0.8, details
    assert main.false_alarm_rate <= 0.02, details
    assert heldout.recall >= 0.7, details
    assert both.recall >= 0.77, details
    assert both.false_alarm_rate <= 0.02, details


def test_spoiler_rule_prompt_exists() -> None:
    from core.prompts import load_prompt

    rule = load_prompt("spoiler_rule")
    assert "reader's page" in rule and len(rule.split()) < 120


def test_a_sentence_without_an_end_is_released_in_pieces() -> None:
    """A long run-on "sentence" (a list without full stops) never holds the stream back."""
    from core.agent.spoilers import SpoilerGuard, SpoilerIndex

    index = SpoilerIndex(book_id=1, page_count=10, first_page={}, count={}, distinctive=frozenset())
    guard = SpoilerGuard(index, read_to=5, question="", selection="")
    out = []
    for _ in range(200):
        out += guard.feed("word ")
        out += guard.release(100)
    assert out and all(len(s.text) <= 100 for s in out)
    assert len(guard.pending) <= 100
    assert "".join(s.text for s in out) + guard.pending == "word " * 200


def test_evaluation_bounds_are_the_ends_of_the_parts(books: tuple[Library, dict[str, int]]) -> None:
    """The evaluation's read_to is the page before the next part starts, per the contents
    (so a change in pagination shows here instead of silently shifting the figures)."""
    from tests.core.agent.spoiler_eval import BOOKS

    library, ids = books
    starts = {"alice": "CHAPTER IV", "metamorphosis": "II"}
    for book in BOOKS:
        toc = library.toc(ids[book.name])
        nxt = next(
            t
            for t in toc
            if t.title.strip() == starts[book.name] or t.title.startswith(starts[book.name] + ".")
        )
        assert book.read_to == nxt.page - 1, book.name


def test_ordinary_words_on_the_first_page_are_no_spoiler(alice: SpoilerIndex) -> None:
    """A new book is at page 1, where nearly every ordinary word is still "new": only names
    and distinctive words may count there, not pairs of ordinary words."""
    guard = SpoilerGuard(alice, read_to=1, question="And now?")
    assert not guard.check("Answered after a short wait.").hidden
    assert guard.check("The Mock Turtle sings about turtle soup.").hidden


def test_word_statistics_are_counted_once_and_kept(tmp_path: Path) -> None:
    """The first index of a book counts its words and stores them; later ones, in any
    process, read them back and agree exactly; re-reading the book drops them."""
    import core.agent.spoiler_stats as spoilers

    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, BOOKS / "metamorphosis.txt").book
        stored = "SELECT version, length(data) FROM spoiler_stats WHERE book_id = ?"
        assert lib.db.execute_sql(stored, (book.id,)).fetchone() is None
        first = SpoilerIndex.build(lib.db, book.id)
        version, size = lib.db.execute_sql(stored, (book.id,)).fetchone()
        assert version == spoilers.STATS_VERSION and 0 < size < book.file_size / 2
        counted = spoilers._book_stats
        spoilers._book_stats = None  # type: ignore[assignment]  # must not be needed now
        try:
            again = SpoilerIndex.build(lib.db, book.id)
        finally:
            spoilers._book_stats = counted
        assert (again.first_page, again.count, again.distinctive, again.contents_pages) == (
            first.first_page,
            first.count,
            first.distinctive,
            first.contents_pages,
        )
        sentence = "Grete plays the violin for the gentlemen."
        assert SpoilerGuard(again, read_to=5, question="").check(sentence).hidden
        # damaged or from an older counting: counted again, and stored right
        lib.db.execute_sql("UPDATE spoiler_stats SET data = x'00ff'")
        assert SpoilerIndex.build(lib.db, book.id).count == first.count
        lib.db.execute_sql("UPDATE spoiler_stats SET version = version + 1")
        assert SpoilerIndex.build(lib.db, book.id).count == first.count
        assert lib.db.execute_sql(stored, (book.id,)).fetchone()[0] == spoilers.STATS_VERSION
        from core.books.importer import reimport_book

        reimport_book(lib, book.id)
        assert lib.db.execute_sql(stored, (book.id,)).fetchone() is None
        lib.delete_book(book.id)
        assert lib.db.execute_sql("SELECT count(*) FROM spoiler_stats").fetchone()[0] == 0
    finally:
        lib.close()
