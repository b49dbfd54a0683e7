"""Issue 46 item 1: a later name in disguise is held (and doubtful: a verifying model sees it),
on three books (Alice, Metamorphosis, and Pride and Prejudice read to p. 30: the issue's own
examples), every family; the same disguises of a name the reader has met, and honest text
that looks like a disguise, are shown. Each leak here was shown before issue 46."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.conftest import BOOKS
from tests.core.agent.spoiler_disguises import (
    DISGUISE_BOOKS,
    DISGUISES,
    disguise_cases,
    evaluate_disguises,
)

READ_TO = {b.name: b.read_to for b in DISGUISE_BOOKS}
QUESTION = {b.name: b.question for b in DISGUISE_BOOKS}
CASES = disguise_cases()


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SpoilerIndex]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("disguise") / "home"))
    ids = {
        "alice": import_book(lib, BOOKS / "alice_in_wonderland.epub").book.id,
        "metamorphosis": import_book(lib, BOOKS / "metamorphosis.epub").book.id,
        "pride": import_book(lib, BOOKS / "pride_and_prejudice.epub").book.id,
    }
    yield {name: SpoilerIndex.build(lib.db, i) for name, i in ids.items()}
    lib.close()


def _segments(index: SpoilerIndex, book: str, text: str) -> list:  # type: ignore[type-arg]
    guard = SpoilerGuard(index, read_to=READ_TO[book], question=QUESTION[book], meaning=None)
    return guard.feed(text) + guard.flush()


@pytest.mark.parametrize("family", sorted(DISGUISES))
@pytest.mark.parametrize("book", ["alice", "metamorphosis", "pride"])
def test_a_later_word_in_disguise_is_held_for_verification(
    books: dict[str, SpoilerIndex], book: str, family: str
) -> None:
    leaks = [c for c in CASES if c.book == book and c.kind == family and c.leak]
    honest = [c for c in CASES if c.book == book and c.kind == family and not c.leak]
    assert len(leaks) >= 5 and len(honest) >= 5
    for case in leaks:
        segments = _segments(books[book], book, case.text)
        assert "".join(s.text for s in segments) == case.text  # nothing lost, nothing changed
        held = [s for s in segments if s.hidden]
        assert held, case.text
        assert all(s.doubtful for s in held if not s.terms or all(t.weak for t in s.terms))
    for case in honest:  # the same disguise of a word the reader has met
        segments = _segments(books[book], book, case.text)
        assert not any(s.hidden for s in segments), (case.text, segments)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "control"], ids=lambda c: c.text)
def test_honest_text_that_looks_disguised_is_shown(
    books: dict[str, SpoilerIndex], case: object
) -> None:
    text, book = case.text, case.book  # type: ignore[attr-defined]
    segments = _segments(books[book], book, text)
    assert not any(s.hidden for s in segments), segments


def test_a_disguise_is_held_doubtful_not_silently(books: dict[str, SpoilerIndex]) -> None:
    """What was shown before issue 46 is now held, doubtful: the verification call sees it."""
    segments = _segments(books["alice"], "alice", "Then she meets the C a t e r p i l l a r.")
    assert segments[0].hidden and segments[0].doubtful
    assert segments[0].terms[0].first_page == 30


def test_the_disguise_set_before(books: dict[str, SpoilerIndex]) -> None:
    """The check as it was (disguises off) showed most of the set on every book; with it on,
    every leak is held and no honest line is (the tests above, family by family)."""
    index = books["alice"]
    assert index.db is not None
    for name, book in books.items():
        before = evaluate_disguises(index.db, {name: book.book_id}, disguises=False)
        leaks = [k for k in before if k != "control"]
        assert sum(before[k].caught for k in leaks) < sum(before[k].leaks for k in leaks) // 2


def test_wickham_in_disguise_on_pride_and_prejudice(books: dict[str, SpoilerIndex]) -> None:
    """The issue's own examples, read to p. 30 (Wickham is first named on p. 77)."""
    for text in (
        "Later she meets W i c k h a m.",
        "Later she meets W.i.c.k.h.a.m.",
        "Later she meets Wick<!-- -->ham.",
        "Later she meets Wikkum.",
        "Later she meets mahkciW.",
        "Later she meets a man whose name starts with Wick. The name ends with ham.",
    ):
        segments = _segments(books["pride"], "pride", text)
        assert any(s.hidden and s.doubtful for s in segments), text
    shown = _segments(
        books["pride"], "pride", "She spells it out: D-a-r-c-y, and her mother says it again."
    )
    assert not any(s.hidden for s in shown)
