"""The sentence encoder's vectors of a book's chunks and the deep search (the answers'
search: the agent's ``search_book`` tool, passages mode): computed in the background once a
deep search asks for them, stored as int8, fused with the words' ranking; without the
encoder's weights the deep search is the static hybrid search, and nothing is computed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.agent.tools import ToolContext, default_tools
from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch, sentence_vectors, vector_indexer
from core.search import encoder as encoder_module
from core.search.encoder import ENV_FOLDER, load_encoder
from core.search.ranking import fuse_equal
from core.search.sentence_vectors import (
    HEAD,
    MEAN_WEIGHT,
    OVERLAP,
    WINDOW,
    SentenceVectors,
    pack4,
    unpack4,
)
from core.search.vector_indexer import indexer_for
from core.search.windows import windows
from core.store.library import BookInfo, Library
from tests.conftest import BOOKS

# the encoder's work in a background process and here: slow when the machine is loaded
pytestmark = [pytest.mark.timeout(400), pytest.mark.deep_vectors]

QUESTION = "What did the hurrying animal take out to check the time?"
ANSWER = "watch out of its waistcoat-pocket"


def _short_alice(folder: Path) -> Path:
    """The first pages of Alice as a text book (a few chunks: quick to embed)."""
    text = (BOOKS / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    start = text.index("\nCHAPTER I.\n")  # after the contents
    path = folder / "alice-opening.txt"
    path.write_text(text[start : text.index("\n\n", start + 8000)], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, BookInfo]]:
    if load_encoder() is None:
        pytest.fail("the sentence encoder's weights are missing: `make test` sets them up")
    home = tmp_path_factory.mktemp("sentence-home")
    lib = Library.open(resolve_paths(home / "home"))
    book = import_book(lib, _short_alice(home)).book
    lib.set_read_to(book.id, book.page_count)
    assert indexer_for(lib.db).wait(60)
    yield lib, book
    lib.close()


def _stored(lib: Library, book_id: int) -> tuple[int, int, str, int] | None:
    """(chunks done, dims, layout, bytes per window) of the book's stored windows."""
    row = lib.db.execute_sql(
        "SELECT done, dims, model, windows, length(data) FROM sentence_windows WHERE book_id = ?",
        (book_id,),
    ).fetchone()
    if row is None:
        return None
    return int(row[0]), int(row[1]), str(row[2]), int(row[4]) // sum(bytes(row[3]))


def _closeness(text: str, question: str) -> float:
    """A chunk's closeness to ``question`` as the encoder computes it, unquantised: the
    blend of its best window's cosine and its windows' mean."""
    encoder = load_encoder()
    assert encoder is not None
    cut = windows(text, lambda t: len(encoder.tokenizer.encode(t)), WINDOW, OVERLAP, head=HEAD)
    scores = encoder.encode(cut) @ encoder.encode([question])[0]
    return float((1 - MEAN_WEIGHT) * scores.max() + MEAN_WEIGHT * scores.mean())


def test_the_model_named_is_the_encoders() -> None:
    assert sentence_vectors.MODEL == encoder_module.MODEL
    assert sentence_vectors.DIMS == encoder_module.DIMS


def test_4_bit_vectors_keep_their_direction() -> None:
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(50, 384)).astype(np.float32)
    matrix[7] = 0  # front matter: never near a question
    blob = pack4(matrix)
    assert len(blob) == 50 * 192
    back = unpack4(blob, 384)
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    kept = np.delete((back * unit).sum(axis=1), 7)
    assert kept.min() > 0.98
    assert not back[7].any()


def test_a_deep_search_asks_for_the_vectors_then_uses_them(
    library: tuple[Library, BookInfo],
) -> None:
    lib, book = library
    search = BookSearch(lib.db)
    assert _stored(lib, book.id) is None, "nothing is computed before a deep search asks"
    first = search.search_book(book.id, QUESTION, limit=5, deep=True)
    hybrid = search.search_book(book.id, QUESTION, limit=5)
    assert first and [h.chunk_id for h in first] == [h.chunk_id for h in hybrid], "meanwhile"
    assert indexer_for(lib.db).wait(300)
    chunks = lib.db.execute_sql(
        "SELECT count(*) FROM chunk WHERE book_id = ?", (book.id,)
    ).fetchone()[0]
    assert _stored(lib, book.id) == (chunks, 384, sentence_vectors.LAYOUT, 192)

    deep = search.search_book(book.id, QUESTION, limit=5, deep=True)
    assert any(ANSWER in " ".join(h.text.split()) for h in deep)
    # the stored (4-bit) cosines are the encoder's own within 0.03
    rowids = search.chunk_range(book.id)
    assert rowids is not None
    first_id, cosines = search.sentences.cosines(book.id, QUESTION, rowids) or (0, None)
    assert first_id == rowids[0] and cosines is not None
    best = [rowids[0] + int(i) for i in np.argsort(-cosines)[:3]]
    texts = search._rows(best, book.id)
    encoder = load_encoder()
    assert encoder is not None
    exact = [_closeness(texts[c][5], QUESTION) for c in best]
    assert np.abs(np.array(exact) - cosines[[c - rowids[0] for c in best]]).max() < 0.03
    # the passage nearest in meaning is among the deep search's (alone or merged)
    assert any(h.chunk_id <= best[0] < h.chunk_id + 3 for h in deep)
    assert fuse_equal([1, 2, 3], [3, 4])[:2] == [3, 1]


def test_the_search_book_tool_searches_deeply(library: tuple[Library, BookInfo]) -> None:
    lib, book = library
    search = BookSearch(lib.db)
    search.search_book(book.id, QUESTION, deep=True)
    assert indexer_for(lib.db).wait(300)
    tools = default_tools()
    tool = tools.get("search_book")
    assert tool is not None
    context = ToolContext(lib, search, book, book.page_count)
    output = tool.handler(context, {"query": QUESTION, "top_k": 5})
    deep = search.search_book(book.id, QUESTION, limit=5, until_page=book.page_count, deep=True)
    assert [p.text for p in output.passages] == [h.text for h in deep]


@pytest.fixture
def no_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(ENV_FOLDER, str(tmp_path / "empty"))
    encoder_module.forget_encoder()
    yield
    monkeypatch.delenv(ENV_FOLDER)
    encoder_module.forget_encoder()


def test_without_weights_deep_search_is_the_hybrid_one(tmp_path: Path, no_weights: None) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, _short_alice(tmp_path)).book
        assert indexer_for(lib.db).wait(60)
        search = BookSearch(lib.db)
        assert not search.sentences.available()
        deep = search.search_book(book.id, QUESTION, limit=5, deep=True)
        hybrid = search.search_book(book.id, QUESTION, limit=5)
        assert deep and [h.chunk_id for h in deep] == [h.chunk_id for h in hybrid]
        assert any(ANSWER in " ".join(h.text.split()) for h in deep)
        assert indexer_for(lib.db).wait(60)
        assert _stored(lib, book.id) is None, "no encoder: nothing computed"
        assert SentenceVectors(lib.db).missing() == []
    finally:
        lib.close()


def test_a_question_asks_for_the_vectors_before_any_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first question on a book asks for its encoder vectors as it is asked (not at the
    agent's first deep search): a quoted phrase is never searched deeply, yet afterwards the
    book is wanted. Once per session: later questions ask nothing more."""
    import asyncio

    from core.agent.service import AgentService
    from core.settings import Settings

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, _short_alice(tmp_path)).book
        assert indexer_for(lib.db).wait(60)
        service = AgentService(lib, lib.paths, Settings(provider="passages"))
        conversation = service.create_conversation(book.id)
        wanted = sentence_vectors._wanted

        async def ask(text: str) -> None:
            async for _ in service.ask(conversation.id, text):
                pass

        assert book.id not in wanted.get(str(lib.db.database), set())
        asked: list[int] = []
        monkeypatch.setattr(vector_indexer, "request_vectors", lambda db: asked.append(1))
        asyncio.run(ask('"zzqx wobble"'))
        assert book.id in wanted[str(lib.db.database)]
        assert asked == [1]
        asyncio.run(ask('"zzqx wobble" again'))
        assert asked == [1], "asked for once"
    finally:
        lib.close()
