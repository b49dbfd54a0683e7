"""The answers' search re-ranked by each passage's best sentence (``answer_rerank.py``): its
scores are the encoder's on the sentences (reference numbers computed once with these
weights), it only re-orders (never adds or drops a passage, so ``read_to`` holds), and
without usable weights it leaves the search as it was and says so in the log. Tests that
need the weights skip without them (``make`` sets them up)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch, answer_rerank
from core.search import encoder as encoder_module
from core.search.encoder import ENV_FOLDER, VOCAB_FILE, WEIGHTS_FILE, load_encoder, model_folder
from core.search.fts import SearchHit
from core.search.vector_indexer import indexer_for
from core.store.library import Library
from tests.conftest import BOOKS

QUESTION = "What did the hurrying animal take out to check the time?"
TEXTS = [
    "The Rabbit Sends in a Little Bill. It was the White Rabbit, trotting slowly back again, "
    "and looking anxiously about as it went, as if it had lost something.",
    "Alice was beginning to get very tired of sitting by her sister on the bank. Suddenly a "
    "White Rabbit with pink eyes ran close by her. The Rabbit actually took a watch out of "
    "its waistcoat-pocket, and looked at it, and then hurried on.",
    "She ate a little bit, and said anxiously to herself, Which way? Which way?, holding her "
    "hand on the top of her head to feel which way it was growing.",
]
# best_sentence_scores(QUESTION, TEXTS) with the int8 all-MiniLM-L6-v2 of encoder_setup
REFERENCE = [0.5705, 0.5566, 0.3872]


def _hits(texts: list[str]) -> list[SearchHit]:
    return [SearchHit(n + 1, 1, n + 1, n + 1, 0, t, "", 0.0) for n, t in enumerate(texts)]


@pytest.fixture
def weights() -> Iterator[None]:
    if load_encoder() is None:
        pytest.skip(f"the sentence encoder's weights are not in {model_folder()} (run make)")
    answer_rerank.forget()
    yield
    answer_rerank.forget()


def test_short_sentences_are_read_with_the_next() -> None:
    text = 'Yes. "Indeed," said he. The Rabbit took a watch out of its waistcoat-pocket. Oh!'
    assert answer_rerank.units(text) == [
        'Yes. "Indeed," said he. The Rabbit took a watch out of its waistcoat-pocket. Oh!'
    ]
    long = "One two three four five six. Seven eight nine ten eleven twelve. Thirteen."
    assert answer_rerank.units(long) == [
        "One two three four five six.",
        "Seven eight nine ten eleven twelve. Thirteen.",
    ]
    assert answer_rerank.units(long, window=2) == [
        "One two three four five six. Seven eight nine ten eleven twelve. Thirteen."
    ]
    assert answer_rerank.units("") == []


def test_scores_match_the_reference(weights: None) -> None:
    scores = answer_rerank.best_sentence_scores(QUESTION, _hits(TEXTS))
    assert scores is not None
    assert scores == pytest.approx(REFERENCE, abs=0.005)
    # the best sentence, not the whole passage: the passage's own vector scores lower
    encoder = load_encoder()
    assert encoder is not None
    whole = float(encoder.encode([TEXTS[1]])[0] @ encoder.encode([QUESTION])[0])
    assert scores[1] > whole


def test_rerank_only_reorders_its_head(weights: None) -> None:
    filler = "Nothing at all happened in this long and quiet paragraph of the garden. " * 3
    hits = _hits([filler, TEXTS[2], TEXTS[1], filler + "Again.", TEXTS[0]])
    out = answer_rerank.rerank(QUESTION, hits, top=3, blend=0.0)
    assert sorted(h.chunk_id for h in out) == [h.chunk_id for h in hits], "none added/dropped"
    assert out[0].chunk_id == 3, "the passage whose sentence answers comes first"
    assert [h.chunk_id for h in out[3:]] == [4, 5], "the rest keeps its order"
    assert answer_rerank.rerank(QUESTION, hits, top=0) == hits
    assert answer_rerank.rerank(QUESTION, hits[:1], top=3) == hits[:1]


@pytest.fixture
def broken_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The encoder looked for in a folder whose weights file is damaged."""
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / WEIGHTS_FILE).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    (folder / VOCAB_FILE).write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n", encoding="utf-8")
    monkeypatch.setenv(ENV_FOLDER, str(folder))
    encoder_module.forget_encoder()
    answer_rerank.forget()
    yield folder
    monkeypatch.delenv(ENV_FOLDER)
    encoder_module.forget_encoder()
    answer_rerank.forget()


def test_damaged_or_missing_weights_leave_the_order_and_log(
    broken_weights: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hits = _hits(TEXTS)
    with caplog.at_level("WARNING"):
        assert answer_rerank.rerank(QUESTION, hits, top=3) == hits
        assert answer_rerank.rerank(QUESTION, hits, top=3) == hits
    said = [r.getMessage() for r in caplog.records if r.name == "margin.search.rerank"]
    assert said == ["answers' search not re-ranked by sentence: the sentence encoder is not there"]
    (broken_weights / WEIGHTS_FILE).unlink()  # missing altogether: the same
    encoder_module.forget_encoder()
    assert answer_rerank.rerank(QUESTION, hits, top=3) == hits


def test_the_setting_sets_how_many_are_reread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(answer_rerank.ENV, "0")
    assert answer_rerank.configured_top() == 0
    monkeypatch.setenv(answer_rerank.ENV, "20")
    assert answer_rerank.configured_top() == 20
    monkeypatch.setenv(answer_rerank.ENV, "lots")
    assert answer_rerank.configured_top() == answer_rerank.TOP


@pytest.mark.deep_vectors
@pytest.mark.timeout(400)
def test_a_reranked_deep_search_stays_within_read_to(
    tmp_path: Path, weights: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (BOOKS / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    start = text.index("\nCHAPTER I.\n")
    path = tmp_path / "alice-opening.txt"
    path.write_text(text[start : text.index("\n\n", start + 12000)], encoding="utf-8")
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, path).book
        search = BookSearch(lib.db)
        search.search_book(book.id, QUESTION, deep=True)  # asks for the vectors
        assert indexer_for(lib.db).wait(300)
        assert search.sentences.has(book.id)
        bound = max(1, book.page_count // 2)
        for top in (0, 30):
            monkeypatch.setattr(answer_rerank, "TOP", top)
            for question in (QUESTION, "Who fell down a very deep well?", "bottle DRINK ME"):
                hits = search.search_book(book.id, question, limit=10, until_page=bound, deep=True)
                assert all(h.end_page <= bound for h in hits), (top, question)
    finally:
        lib.close()
