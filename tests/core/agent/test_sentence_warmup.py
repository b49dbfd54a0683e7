"""Passages mode reads a book's sentences ahead (core/agent/providers/sentence_warmup.py):
the sentences of the pages up to read_to, nearest first, into answer_sentence's cache, so a
reply encodes only what was not read. A counting encoder stands in for MiniLM where it runs
in this process (its weights are not needed to know what is encoded when); the window's
reading ahead runs the real one in a worker process (sentence_worker.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from core.agent.providers import answer_sentence
from core.agent.providers.sentence_warmup import (
    SentenceWarmup,
    book_sentences,
    pages_ahead,
    read_in_worker,
)
from core.store.library import BookInfo, Library
from tests.core.agent.test_passages_answer import needs_encoder


class CountingEncoder:
    """Unit vectors from a text's hash; remembers every text it was given."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.read.extend(texts)
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts]
        out = np.array(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingEncoder:
    fake = CountingEncoder()
    monkeypatch.setattr(answer_sentence, "_encoder", lambda: fake)
    answer_sentence._cache.clear()
    yield fake
    answer_sentence._cache.clear()


def test_a_books_sentences_leave_out_headings_and_keep_the_nearest_page_first() -> None:
    pages = [(2, "CHAPTER II\n\nHe ran. She stayed."), (1, "It began. Then it rained.")]
    assert book_sentences(pages) == ["He ran.", "She stayed.", "It began.", "Then it rained."]


def test_sentences_read_ahead_are_not_encoded_again(counting: CountingEncoder) -> None:
    texts = ["He ran to the door.", "She stayed at the window.", "It rained all day."]
    assert answer_sentence.read_ahead(texts, threading.Event(), batch=2) == 3
    counting.read.clear()
    vectors = answer_sentence.encoded(counting, ["Where did she stay?", texts[1], texts[2]])
    assert counting.read == ["Where did she stay?"]  # the question alone
    assert all(v.dtype == np.float32 and abs(float(v @ v) - 1) < 1e-2 for v in vectors)
    # read ahead or now, a sentence's vector is the same (both through the cache's float16)
    answer_sentence._cache.clear()
    again = answer_sentence.encoded(counting, ["Where did she stay?", texts[1], texts[2]])
    assert all(np.array_equal(a, b) for a, b in zip(vectors, again, strict=True))


def test_reading_ahead_stops_when_asked_and_never_outgrows_the_cache(
    counting: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = threading.Event()
    stop.set()
    assert answer_sentence.read_ahead(["One.", "Two."], stop) == 0
    assert counting.read == []
    monkeypatch.setattr(answer_sentence, "CACHE", 5)
    many = [f"Sentence number {n}." for n in range(12)]
    assert answer_sentence.read_ahead(many, threading.Event(), batch=4) == 5
    assert len(answer_sentence._cache) == 5


def test_without_the_encoder_nothing_is_read_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answer_sentence, "_encoder", lambda: None)
    assert answer_sentence.read_ahead(["One."], threading.Event()) == 0


def test_the_pages_read_ahead_end_at_read_to_nearest_first(
    library: Library, alice: BookInfo, counting: CountingEncoder
) -> None:
    book = library.set_read_to(alice.id, 3)
    pages = pages_ahead(library, book.id)
    assert [n for n, _ in pages] == [3, 2, 1]
    warmup = SentenceWarmup(in_process=True)
    warmup.start(pages)
    warmup.join(10)
    # (the encoder reads a sentence's first words)
    assert set(counting.read) == {answer_sentence._short(t) for t in book_sentences(pages)}
    assert set(answer_sentence._cache) == set(book_sentences(pages))
    later = book_sentences([(4, library.page(book.id, 4).text)])
    assert later and not set(later) & set(answer_sentence._cache)


def _workers() -> list[str]:
    """This process's sentence workers still running."""
    tasks = Path(f"/proc/{os.getpid()}/task")
    kids = [int(p) for t in tasks.iterdir() for p in (t / "children").read_text().split()]
    commands = []
    for pid in kids:
        try:
            commands.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
        except OSError:
            continue  # gone meanwhile
    return [c for c in commands if "sentence_worker" in c]


@needs_encoder
def test_the_window_reads_ahead_in_a_worker_process_with_the_same_vectors(
    library: Library, alice: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The encoder and numpy stay out of the window's process (issue 41: its memory with a
    book open); what the worker sends back is what this process's encoder gives."""
    from core.search.encoder import load_encoder

    def not_here(*_: object, **__: object) -> None:
        raise AssertionError("encoded in the window's process")

    book = library.set_read_to(alice.id, 2)
    pages = pages_ahead(library, book.id)
    texts = book_sentences(pages)
    answer_sentence._cache.clear()
    monkeypatch.setattr(answer_sentence, "read_ahead", not_here)
    monkeypatch.setattr(answer_sentence, "_encoder", not_here)
    warmup = SentenceWarmup(in_process=False)
    warmup.start(pages)
    warmup.join(60)
    assert set(answer_sentence._cache) == set(texts)
    assert not _workers(), "the worker ends once it is done"
    ahead = dict(answer_sentence._cache)
    answer_sentence._cache.clear()
    encoder = load_encoder()
    assert encoder is not None
    here = answer_sentence.encoded(encoder, texts)
    for text, vector in zip(texts, here, strict=True):
        theirs = np.frombuffer(ahead[text], dtype=np.float16).astype(np.float32)
        assert float(theirs @ vector) > 0.999, text
    answer_sentence._cache.clear()


@needs_encoder
def test_a_stopped_reading_ahead_ends_its_worker_at_once() -> None:
    stop = threading.Event()
    stop.set()
    answer_sentence._cache.clear()
    assert read_in_worker(["He ran.", "She stayed."], stop) == 0
    assert not _workers()
    assert not answer_sentence._cache


def test_without_the_encoders_weights_no_worker_is_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from core.search.encoder_files import ENV_FOLDER

    monkeypatch.setenv(ENV_FOLDER, str(tmp_path))  # an empty folder: no weights
    assert read_in_worker(["He ran."], threading.Event()) == 0
    assert not _workers()


def test_vectors_sent_back_must_fit_their_sentences() -> None:
    with pytest.raises(ValueError, match="not 2 vectors"):
        answer_sentence.keep_raw(["One.", "Two."], b"abc")
    answer_sentence.keep_raw(["One.", "Two."], b"abcd")
    assert answer_sentence._cache["Two."] == b"cd"
    answer_sentence._cache.clear()


@needs_encoder
def test_preloading_for_a_question_loads_the_encoder_and_the_static_model() -> None:
    from core.search import embedding, encoder

    encoder.forget_encoder()
    assert answer_sentence.preload()
    assert encoder._loaded is not None
    assert embedding._model is not None


def test_reading_ahead_can_be_turned_off_or_kept_on_the_thread(
    library: Library, alice: BookInfo, counting: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = pages_ahead(library, library.set_read_to(alice.id, 1).id)
    monkeypatch.setenv("MARGIN_READ_AHEAD", "off")  # (the suite's setting)
    off = SentenceWarmup()
    off.start(pages)
    off.join(10)
    assert counting.read == [] and not answer_sentence._cache
    monkeypatch.setenv("MARGIN_READ_AHEAD", "thread")
    here = SentenceWarmup()
    here.start(pages)
    here.join(10)
    assert counting.read, "encoded on the thread (the counting encoder is this process's)"
    assert set(answer_sentence._cache) == set(book_sentences(pages))


def test_a_book_read_ahead_before_loads_nothing_again(
    library: Library, alice: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every sentence cached already (the book opened again): neither a worker nor the
    encoder in this process is started."""
    pages = pages_ahead(library, library.set_read_to(alice.id, 1).id)
    answer_sentence._cache.clear()
    answer_sentence.keep_raw(book_sentences(pages), b"ab" * len(book_sentences(pages)))
    loaded: list[str] = []
    monkeypatch.setattr(answer_sentence, "_encoder", lambda: loaded.append("encoder"))
    from core.agent.providers import sentence_warmup

    monkeypatch.setattr(sentence_warmup, "read_in_worker", lambda *a: loaded.append("worker"))
    warmup = SentenceWarmup(in_process=False)
    warmup.start(pages)
    warmup.join(10)
    assert loaded == []
    answer_sentence._cache.clear()
