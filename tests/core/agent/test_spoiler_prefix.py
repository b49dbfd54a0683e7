"""Issue 41: a sentence shown in checked pieces while it is written (``SpoilerGuard.prefix``,
``core.agent.spoiler_prefix``): the first words no longer wait for the first full stop, each
piece passed the check on the sentence so far, and a sentence held at its end keeps what was
shown and withholds only the rest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.agent.answer import marker
from core.agent.events import RunFinished, SpoilerHidden, TextDelta
from core.agent.spoiler_prefix import Prefixes, balanced
from core.agent.spoilers import Segment, SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.conftest import BOOKS
from tests.core.agent.test_spoilers_issue23 import META_READ_TO, collect, part_one_chat
from tests.fakes.anthropic_server import FakeAnthropic, Reply

SAFE = (
    "Gregor Samsa wakes up one morning in his bed and finds that he has been changed "
    "into a monstrous vermin. "
)
SPOILER = (
    "Gregor lies on his back in his bed and thinks about his job, and then the charwoman comes in. "
)
DOUBTFUL = "The middle lodger spits on the floor and announces that he is leaving. "


# --- when to check and where to cut (no book) ------------------------------------------------


def test_a_piece_ends_after_whole_words_the_check_reading_lag_words_more() -> None:
    p = Prefixes(first=3, step=4, lag=3, gap_s=0.03, slow_s=10.0)
    text = "one two three four five si"
    assert p.due(text, 0, 0.0) is None  # five whole words: not yet first + lag
    text = "one two three four five six seven"  # "seven" may go on ("sevenfold")
    check, show = p.due(text, 0, 0.0) or (0, 0)
    assert text[:check] == "one two three four five six "
    assert text[:show] == "one two three "


def test_the_next_check_waits_for_new_words_and_the_gap() -> None:
    p = Prefixes(first=3, step=4, lag=3, gap_s=0.03, slow_s=10.0)
    text = "a b c d e f g h i j k "
    assert p.due(text, 0, 0.0) is not None  # 11 words: the first check
    longer = text + "l m n o p "
    assert p.due(longer, 8, 0.01) is None  # 5 new words, but within the gap
    check, show = p.due(longer, 8, 0.05) or (0, 0)
    assert longer[:check] == longer and longer[:show] == "a b c d e f g h i j k l m "
    assert p.due(longer + "q ", 24, 0.2) is None  # one new word: not enough
    assert p.due(longer + "q ", 24, 11.0) is not None  # ... unless the stream is slow


def test_a_costly_check_spaces_out_the_next() -> None:
    p = Prefixes(first=1, step=1, lag=0, gap_s=0.05, times=10.0)
    assert p.due("a b c ", 0, 0.0) is not None
    p.spent = 0.02  # the check took 20 ms of CPU: the next waits 200 ms
    assert p.due("a b c d e ", 6, 0.1) is None
    assert p.due("a b c d e ", 6, 0.21) is not None


def test_a_piece_never_ends_inside_a_markdown_mark() -> None:
    p = Prefixes(first=1, step=1, lag=0, gap_s=0.0)
    text = "He is **very tired indeed and [the book "
    check, show = p.due(text, 0, 0.0) or (0, 0)
    assert text[:check] == text and text[:show] == "He is "  # not "He is **very tired "
    assert balanced("* a **b** [c](d) `e` f ") and not balanced("a `b ")


def test_a_stalled_sentence_waits_for_its_end() -> None:
    p = Prefixes(first=1, step=1, lag=0, gap_s=0.0)
    p.stalled = True
    assert p.due("one two three ", 0, 1.0) is None
    p.reset(None)
    assert p.due("one two three ", 0, 1.0) is not None


# --- the guard, on The Metamorphosis read to the end of part I --------------------------------


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SpoilerIndex]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("prefix")))
    book = import_book(lib, BOOKS / "metamorphosis.epub").book
    yield SpoilerIndex.build(lib.db, book.id)
    lib.close()


def streamed(
    index: SpoilerIndex, text: str, *, prefixes: bool = True
) -> tuple[list[str], list[Segment]]:
    """``text`` in 4-character deltas at 200 a second: the pieces shown while it was
    written, and the sentences decided at their end."""
    guard = SpoilerGuard(
        index, read_to=META_READ_TO, question="What happens to Gregor?", meaning=None
    )
    guard.prefixes = prefixes
    pieces: list[str] = []
    segments: list[Segment] = []
    for k in range(0, len(text), 4):
        segments += guard.feed(text[k : k + 4]) + guard.release()
        piece = guard.prefix(now=k / 800)
        if piece is not None:
            pieces.append(piece.text)
    segments += guard.flush()
    return pieces, segments


def test_a_safe_sentence_shows_in_pieces_before_it_ends(index: SpoilerIndex) -> None:
    pieces, segments = streamed(index, SAFE)
    assert pieces and pieces[0].startswith("Gregor Samsa")  # (more as the check's CPU allows)
    assert "vermin" not in "".join(pieces)  # the last words wait for the sentence's end
    (end,) = segments
    assert not end.hidden and end.text == SAFE and end.shown == len("".join(pieces))
    assert "".join(pieces) + end.rest == SAFE  # nothing lost, nothing twice


def test_the_old_way_shows_nothing_before_the_end(index: SpoilerIndex) -> None:
    pieces, segments = streamed(index, SAFE, prefixes=False)
    assert pieces == [] and segments[0].shown == 0 and segments[0].rest == SAFE


def test_a_spoiler_sentence_shows_its_safe_start_and_withholds_the_rest(
    index: SpoilerIndex,
) -> None:
    pieces, segments = streamed(index, SPOILER)
    shown = "".join(pieces)
    # the first piece at least (how many more depends on the CPU the checks took: a cold
    # index's first check can space the next ones past the sentence's end)
    assert shown.startswith("Gregor lies on ") and "charwoman" not in shown
    (end,) = segments
    assert end.hidden and [t.term.lower() for t in end.terms] == ["charwoman"]
    assert end.text == SPOILER  # decided on the whole sentence, as before
    assert shown + end.rest == SPOILER and "charwoman" in end.rest


def test_a_doubtful_start_holds_the_sentence_till_its_end(index: SpoilerIndex) -> None:
    pieces, segments = streamed(index, DOUBTFUL)
    assert pieces == []  # "The middle lodger spits": a word first used later, poorly read
    (end,) = segments
    assert end.doubtful and end.shown == 0


def test_the_whole_sentence_is_decided_as_before(index: SpoilerIndex) -> None:
    text = SAFE + SPOILER + DOUBTFUL
    _, new = streamed(index, text)
    _, old = streamed(index, text, prefixes=False)
    assert [(s.text, s.hidden, s.doubtful, s.kind, s.terms) for s in new] == [
        (s.text, s.hidden, s.doubtful, s.kind, s.terms) for s in old
    ]


# --- through the loop, the real SDK and the store --------------------------------------------


def test_the_first_words_show_before_the_first_sentence_ends_and_the_store_keeps_what_was_shown(
    library: Library,
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service, conv = part_one_chat(library, books_dir, fake_anthropic, monkeypatch)
    answer = SAFE + SPOILER + "That is all for now."
    fake_anthropic.add(Reply.text(answer, chunk_chars=4, tokens_per_second=400))
    events = collect(service.ask(conv.id, "What happens to Gregor?"))
    assert isinstance(events[-1], RunFinished)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas[0].startswith("Gregor Samsa") and "vermin" not in deltas[0]
    (hidden,) = [e.withheld for e in events if isinstance(e, SpoilerHidden)]
    # only what was not shown (how much was shown depends on the pace of the deltas)
    assert SPOILER.endswith(hidden.text) and "charwoman" in hidden.text
    assert not hidden.text.startswith("Gregor lies on")
    shown = "".join(
        e.text if isinstance(e, TextDelta) else marker(e.withheld.index)
        for e in events
        if isinstance(e, TextDelta | SpoilerHidden)
    )
    assert SPOILER[: len(SPOILER) - len(hidden.text)] in shown and "charwoman" not in shown
    stored = service.history(conv.id)[-1]
    assert stored.text == shown.strip()  # the stored answer is what the reader saw
    assert [w.text for w in stored.withheld] == [hidden.text]
