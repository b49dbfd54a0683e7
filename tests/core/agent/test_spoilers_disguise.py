"""Issue 46 item 1: a later name in disguise is held (and doubtful: a verifying model sees it),
on two books, every family; the same disguises of a name the reader has met, and honest text
that looks like a disguise, are shown. Each leak here was shown before issue 46."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.conftest import BOOKS
from tests.core.agent.spoiler_disguises import DISGUISES, disguise_cases, evaluate_disguises
from tests.core.agent.spoiler_eval import BOOKS as EVAL_BOOKS

READ_TO = {b.name: b.read_to for b in EVAL_BOOKS}
QUESTION = {b.name: b.question for b in EVAL_BOOKS}
CASES = disguise_cases()


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SpoilerIndex]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("disguise") / "home"))
    ids = {
        "alice": import_book(lib, BOOKS / "alice_in_wonderland.epub").book.id,
        "metamorphosis": import_book(lib, BOOKS / "metamorphosis.epub").book.id,
    }
    yield {name: SpoilerIndex.build(lib.db, i) for name, i in ids.items()}
    lib.close()


def _segments(index: SpoilerIndex, book: str, text: str) -> list:  # type: ignore[type-arg]
    guard = SpoilerGuard(index, read_to=READ_TO[book], question=QUESTION[book], meaning=None)
    return guard.feed(text) + guard.flush()


@pytest.mark.parametrize("family", sorted(DISGUISES))
@pytest.mark.parametrize("book", ["alice", "metamorphosis"])
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


def test_the_disguise_set_before_and_after(books: dict[str, SpoilerIndex]) -> None:
    index = books["alice"]
    ids = {"alice": index.book_id, "metamorphosis": books["metamorphosis"].book_id}
    assert index.db is not None
    before = evaluate_disguises(index.db, ids, disguises=False)
    after = evaluate_disguises(index.db, ids)
    leaks = [k for k in after if k != "control"]
    assert sum(before[k].caught for k in leaks) < sum(after[k].leaks for k in leaks) // 2
    for kind in leaks:
        assert after[kind].recall == 1.0, after[kind].missed
        assert after[kind].false_alarms == 0, after[kind].alarms
    assert after["control"].false_alarms == 0, after["control"].alarms
