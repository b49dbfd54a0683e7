"""Issue 23, fifth session: the answer check's cues in a sentence's own words
(core.agent.spoiler_cues), with no model. Each rule with a real sentence of a real book: the
leak it holds and an honest twin it shows; the "so far" exception; the false alarms it
removes. ``SpoilerGuard.cues = False`` is the check before this session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core.agent import spoiler_cues
from core.agent.spoiler_semantic import BookMeaning
from core.agent.spoilers import Segment, SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.bench.spoiler_books import CAROL, HOLMES
from tests.conftest import BOOKS
from tests.core.agent.spoiler_eval import EXTRA_BOOKS, load_meanings

READ_TO = {"alice": 21, "metamorphosis": 28, "carol": 25, "holmes": 60}  # spoiler_eval's bounds
QUESTIONS = {
    "alice": "What has happened to Alice so far, and how does her adventure go on?",
    "metamorphosis": "Why was Gregor transformed, and what will become of him and his family?",
    "carol": "What has happened to Scrooge so far?",
    "holmes": "What has Holmes solved so far?",
}
FILES = {"alice": BOOKS / "alice_in_wonderland.epub", "metamorphosis": BOOKS / "metamorphosis.epub"}
FILES |= {"carol": CAROL, "holmes": HOLMES}
assert {b.name: b.read_to for b in EXTRA_BOOKS} == {"carol": 25, "holmes": 60}

Books = tuple[Library, dict[str, int], BookMeaning]


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Books]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("cues") / "home"))
    ids = {name: import_book(lib, path).book.id for name, path in FILES.items() if path.is_file()}
    yield lib, ids, load_meanings(lib.db, ids.values())
    lib.close()


def check(
    books: Books, name: str, text: str, *, cues: bool = True, question: str | None = None
) -> Segment:
    lib, ids, meanings = books
    if name not in ids:
        pytest.skip(f"{name}: its EPUB is built by tests/bench/spoiler_books.py")
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids[name]),
        read_to=READ_TO[name],
        question=QUESTIONS[name] if question is None else question,
        meaning=meanings,
    )
    guard.cues = cues
    segments = guard.feed(text) + guard.flush()
    assert len(segments) == 1
    return segments[0]


def held_only_with_cues(books: Books, name: str, text: str) -> Segment:
    assert not check(books, name, text, cues=False).hidden  # the check before let it through
    segment = check(books, name, text)
    assert segment.hidden and segment.kind == "unsupported" and segment.terms == ()
    assert segment.doubtful  # a connected model may still overrule it
    return segment


@pytest.mark.parametrize(
    ("book", "leak"),
    [
        ("metamorphosis", "Gregor dies quietly that night, and his head sinks to the floor."),
        ("metamorphosis", "Gregor dies in his room."),  # two content words: an outcome is enough
        ("carol", "At the clerk's home the family mourn the little boy who has died."),
    ],
)
def test_an_outcome_told_in_plain_words_is_held(books: Books, book: str, leak: str) -> None:
    assert spoiler_cues.outcome(leak)
    held_only_with_cues(books, book, leak)


@pytest.mark.parametrize(
    ("book", "honest"),
    [
        (
            "alice",
            "Falling, she drops the empty jar into a cupboard so as not to kill anybody below.",
        ),
        ("carol", "Marley has been dead for seven years when the story begins."),
    ],
)
def test_an_outcome_the_pages_read_tell_is_shown(books: Books, book: str, honest: str) -> None:
    assert spoiler_cues.outcome(honest)
    segment = check(books, book, honest)
    assert not segment.hidden and segment.doubtful  # a model may look, the check shows it


@pytest.mark.parametrize(
    "scoped",
    [
        "So far Gregor has not died; he lies in his room.",
        "So far the text has not said whether Gregor dies.",
    ],
)
def test_so_far_lets_an_outcome_word_through(books: Books, scoped: str) -> None:
    """The "so far" exception: a sentence that scopes itself to the pages read is not held by
    the test by meaning, outcome word or not; without the exception the same sentence is."""
    assert not check(books, "metamorphosis", scoped).hidden
    SpoilerGuard.meaning_exemptions = False
    try:
        assert check(books, "metamorphosis", scoped).hidden
    finally:
        SpoilerGuard.meaning_exemptions = True


@pytest.mark.parametrize(
    ("book", "leak"),
    [
        ("metamorphosis", "The mother insists on seeing Gregor and finally enters his room."),
        ("alice", "She finally does get into the lovely garden she saw through the little door."),
        ("carol", "In the end he goes to his nephew's house for dinner after all and is welcomed."),
    ],
)
def test_a_sentence_that_tells_what_happens_later_needs_a_smaller_margin(
    books: Books, book: str, leak: str
) -> None:
    held_only_with_cues(books, book, leak)


def test_the_end_of_a_chapter_read_is_no_future() -> None:
    honest = "At the end of chapter III she is left alone again and feels lonely and low-spirited."
    assert not spoiler_cues.future(honest)
    assert spoiler_cues.future("At the end she wakes up on the bank beside her sister.")
    assert spoiler_cues.margin(honest, 0.1) == 0.1


def test_the_end_of_a_chapter_read_is_shown(books: Books) -> None:
    honest = "At the end of chapter III she is left alone again and feels lonely and low-spirited."
    assert not check(books, "alice", honest).hidden


def test_a_scene_read_is_not_held_by_meaning(books: Books) -> None:
    """Metamorphosis part I (pp. 15-16): the pages read cover every word of it, later chunks
    only echo it; the test by meaning held it before."""
    honest = (
        "His mother sends his sister for the doctor and his father sends the maid for a locksmith."
    )
    assert check(books, "metamorphosis", honest, cues=False).hidden
    assert not check(books, "metamorphosis", honest).hidden


@pytest.mark.parametrize(
    ("book", "honest"),
    [
        ("alice", "She is so upset at being too big that she cries gallons of tears."),
        ("holmes", "The thieves were digging a tunnel from the cellar to the bank."),
    ],
)
def test_weak_evidence_the_pages_read_contradict_is_shown(
    books: Books, book: str, honest: str
) -> None:
    before = check(books, book, honest, cues=False)
    assert before.hidden and before.terms and all(t.weak for t in before.terms)
    after = check(books, book, honest)
    assert not after.hidden and after.doubtful  # a connected model still decides


def test_weak_evidence_of_a_later_scene_still_holds(books: Books) -> None:
    leak = "The Rabbit later blows a trumpet and reads out the charge at a trial."
    segment = check(books, "alice", leak)
    assert segment.hidden and [t.term for t in segment.terms] == ["trumpet"]


def test_without_vectors_the_cues_change_nothing(books: Books) -> None:
    lib, ids, _ = books
    leak = "Gregor dies quietly that night, and his head sinks to the floor."
    honest = "She is so upset at being too big that she cries gallons of tears."
    for name, text, hidden in (("metamorphosis", leak, False), ("alice", honest, True)):
        guard = SpoilerGuard(
            SpoilerIndex.build(lib.db, ids[name]), read_to=READ_TO[name], question="", meaning=None
        )
        assert guard.check(text).hidden is hidden


def test_support_of_an_outcome_sentence_is_doubtful(books: Books) -> Any:
    lib, ids, meanings = books
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids["metamorphosis"]),
        read_to=READ_TO["metamorphosis"],
        question="",
        meaning=meanings,
    )
    support = guard.support("Gregor dies in his room.")
    assert support is not None and support.future and support.doubtful()


ASKS_AHEAD = "Does Gregor ever turn back into a man?"  # spoiler_data/cases.txt


@pytest.mark.parametrize(
    ("question", "ahead"),
    [
        (ASKS_AHEAD, True),
        ("Does Scrooge change his ways in the end, and what becomes of Tiny Tim?", True),
        ("Why was Gregor transformed, and what will become of him and his family?", True),
        ("What has happened to Scrooge so far?", False),
        ("Who is the Hatter?", False),
    ],
)
def test_a_question_about_the_ending_is_recognised(question: str, ahead: bool) -> None:
    assert spoiler_cues.asks_ahead(question) is ahead


def test_a_question_about_the_ending_does_not_count_as_read_by_meaning(
    books: Books, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question's words still count as read, but its meaning does not when it asks about
    the ending: an answer that tells the ending is close to such a question."""
    leak = "No, he never becomes human again; he dies and the family are relieved."
    assert not check(books, "metamorphosis", leak, cues=False, question=ASKS_AHEAD).hidden
    assert check(books, "metamorphosis", leak, question=ASKS_AHEAD).hidden
    monkeypatch.setattr(spoiler_cues, "asks_ahead", lambda question: False)  # the rule off
    assert not check(books, "metamorphosis", leak, question=ASKS_AHEAD).hidden


@pytest.mark.parametrize(
    "honest",
    [
        "Not yet: so far he is still an insect, lying in his room.",
        "He wakes up as a huge insect and cannot get out of bed.",
        "His father drives him back into his room with a stick and a newspaper.",
    ],
)
def test_an_honest_answer_to_a_question_about_the_ending_is_shown(
    books: Books, honest: str
) -> None:
    assert not check(books, "metamorphosis", honest, question=ASKS_AHEAD).hidden


def test_a_scene_read_does_not_let_an_outcome_through(books: Books) -> None:
    """Metamorphosis: the pages read cover nearly every word of it (Gregor, three, morning,
    family, love), but it tells his death: the scene-read cue does not apply."""
    lib, ids, meanings = books
    leak = "In the end Gregor dies at three in the morning, thinking of his family with love."
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids["metamorphosis"]),
        read_to=READ_TO["metamorphosis"],
        question=QUESTIONS["metamorphosis"],
        meaning=meanings,
    )
    assert spoiler_cues.scene_read(guard.support(leak))
    held_only_with_cues(books, "metamorphosis", leak)


@pytest.mark.parametrize(
    ("book", "honest", "told"),
    [
        # Alice, chapter III (read): "I'll try the whole cause, and condemn you to death."
        ("alice", "The Mouse's long tale ends with Fury sentencing him to death.", "death"),
        (
            "holmes",
            "The king feared the photograph would ruin his marriage to the Scandinavian princess.",
            "marriage",
        ),
    ],
)
def test_an_outcome_the_pages_read_near_it_tell_is_no_cue(
    books: Books, book: str, honest: str, told: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outcome cue is for outcomes the reader has not met: when the pages read near the
    sentence hold its outcome word too (``Support.outcome_read``), the margin stays the
    model's. Without that, a later chunk a shade closer in meaning held these honest
    sentences."""
    lib, ids, _ = books
    if book not in ids:
        pytest.skip(f"{book}: its EPUB is built by tests/bench/spoiler_books.py")
    index = SpoilerIndex.build(lib.db, ids[book])
    guard = SpoilerGuard(index, read_to=READ_TO[book], question=QUESTIONS[book])
    support = guard.support(honest)
    assert support is not None and support.outcome_read
    assert not check(books, book, honest).hidden
    if book == "holmes":
        return  # its control no longer holds: since the SE title page's hidden text is left out
        # at import, the pages moved and the old rule lets this one through as well
    ignore_reading = spoiler_cues.margin  # the rule before: any outcome lowers the margin

    def margin(shown: str, base: float, support: Any = None) -> float:
        return ignore_reading(shown, base, None)

    monkeypatch.setattr(spoiler_cues, "margin", margin)
    assert check(books, book, honest).hidden, f"{told!r}: held when the reading is ignored"
