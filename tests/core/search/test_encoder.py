"""The sentence encoder (all-MiniLM-L6-v2 in numpy, int8 weights): its WordPiece tokens are the
``tokenizers`` library's on the model's own tokenizer.json (the expected ids below were
taken from it), its vectors behave as the model's published ones, long input is cut at 256
tokens, and without its weights ``load_encoder()`` is None."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.search import encoder as encoder_module
from core.search.encoder import (
    DIMS,
    ENV_FOLDER,
    MAX_TOKENS,
    VOCAB_FILE,
    WEIGHTS_FILE,
    SentenceEncoder,
    load_encoder,
    model_folder,
)
from core.search.wordpiece import WordPiece


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    found = load_encoder()
    if found is None:
        pytest.fail(
            f"the sentence encoder's weights are not in {model_folder()}: `make test` sets "
            "them up (python -m core.search.encoder_setup)"
        )
    return found


@pytest.fixture
def no_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The encoder looked for in an empty folder (and loaded anew afterwards)."""
    monkeypatch.setenv(ENV_FOLDER, str(tmp_path))
    encoder_module.forget_encoder()
    yield tmp_path
    monkeypatch.delenv(ENV_FOLDER)
    encoder_module.forget_encoder()


# (text, ids with [CLS] 101 and [SEP] 102) as ``tokenizers`` gives them for this model
EXPECTED = [
    ("Café naïve résumé", [101, 7668, 15743, 13746, 102]),  # accents stripped
    (
        "Gregor Samsa's metamorphosis—“quoted”…",
        [
            101,
            16973,
            3520,
            3736,
            1005,
            1055,
            18804,
            5302,
            14536,
            25229,
            1517,
            1523,
            9339,
            1524,
            1529,
            102,
        ],
    ),
    (  # unknown words are cut into pieces
        "xyzzyqwv grmblfx",
        [101, 1060, 2100, 28753, 4160, 2860, 2615, 24665, 14905, 10270, 2595, 102],
    ),
    ("東京 x² ﬁne", [101, 1879, 1755, 1060, 10701, 1984, 2638, 102]),  # ideographs apart
    ("a" * 101, [101, 100, 102]),  # a word longer than 100 characters is [UNK]
    ("ÆTHELRED Ångström", [101, 1097, 10760, 20974, 2098, 17076, 15687, 102]),
    ("smile 😀 now", [101, 2868, 100, 2085, 102]),  # no piece for it: [UNK]
    ("tab\there\u200bzero\x00nul", [101, 21628, 2182, 6290, 2239, 5313, 102]),  # controls go
    ("", [101, 102]),
]


@pytest.mark.parametrize(("text", "ids"), EXPECTED)
def test_tokens_are_the_models_own(encoder: SentenceEncoder, text: str, ids: list[int]) -> None:
    assert encoder.tokens(text) == ids


def test_long_input_is_cut_at_256_tokens(encoder: SentenceEncoder) -> None:
    text = "The cat sat on the mat and looked at the moon. " * 200
    tokens = encoder.tokens(text)
    assert len(tokens) == MAX_TOKENS
    assert tokens[0] == 101 and tokens[-1] == 102
    # the cut text is the start of the whole text's tokens
    assert tokens[1:-1] == encoder.tokenizer.encode(text)[: MAX_TOKENS - 2]
    # what lies past the cut changes nothing
    vectors = encoder.encode([text, text + " Something else entirely at the very end."])
    assert np.allclose(vectors[0], vectors[1], atol=1e-6)


def test_vectors_are_the_published_ones(encoder: SentenceEncoder) -> None:
    """sentence-transformers' quick start with this model (float32 weights): similarities
    0.6660 (weather, sunny), 0.1046 and 0.1411; int8 weights stay within 0.005."""
    vectors = encoder.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    assert vectors.shape == (3, DIMS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar = vectors @ vectors.T
    assert similar[0, 1] == pytest.approx(0.6660, abs=5e-3)
    assert similar[0, 2] == pytest.approx(0.1046, abs=5e-3)
    assert similar[1, 2] == pytest.approx(0.1411, abs=5e-3)


def test_a_paraphrase_is_nearer_than_shared_words(encoder: SentenceEncoder) -> None:
    query, paraphrase, same_words = encoder.encode(
        [
            "A man is eating food.",
            "Someone is having a piece of bread.",
            "A man is riding a white horse.",
        ]
    )
    assert query @ paraphrase > query @ same_words + 0.1


def test_batches_give_the_vectors_of_texts_alone(encoder: SentenceEncoder) -> None:
    texts = ["short", "a somewhat longer sentence about a hatter and a hare", "", "tea " * 300]
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert encoder.encode([]).shape == (0, DIMS)


def test_without_weights_there_is_no_encoder(no_weights: Path) -> None:
    assert load_encoder() is None


def test_damaged_weights_give_no_encoder(no_weights: Path) -> None:
    (no_weights / WEIGHTS_FILE).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    (no_weights / VOCAB_FILE).write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n", encoding="utf-8")
    assert load_encoder() is None


def test_a_vocabulary_without_its_special_tokens_is_refused(tmp_path: Path) -> None:
    vocab = tmp_path / VOCAB_FILE
    vocab.write_text("[PAD]\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks the token"):
        WordPiece(vocab)


def test_an_unused_encoder_is_let_go(encoder: SentenceEncoder) -> None:
    """forget_if_idle: kept while in use, let go after the idle time, loaded anew after."""
    loaded = load_encoder()
    assert loaded is not None
    loaded.encode(["tea"])
    assert not encoder_module.forget_if_idle(3600)
    assert load_encoder() is loaded
    assert encoder_module.forget_if_idle(0)
    again = load_encoder()
    assert again is not None and again is not loaded
    assert np.allclose(again.encode(["tea"]), loaded.encode(["tea"]), atol=1e-6)


def test_weights_are_mapped_not_read(encoder: SentenceEncoder) -> None:
    """The layers' matrices stay int8 views of the mapped file (not float32 copies: 42 MB
    in the window), and the word table is never read whole."""
    layer = encoder.layers[0]
    for name in ("out", "up", "down"):
        matrix, scale = layer[name]
        assert matrix.dtype == np.int8 and scale is not None
        assert isinstance(matrix.base, np.memmap) or isinstance(matrix, np.memmap)
    assert encoder.words.dtype == np.int8


def test_numpy_computes_on_one_thread_once_loaded(encoder: SentenceEncoder) -> None:
    """After load_encoder(), numpy's OpenBLAS is asked for one thread (where it can be: its
    library is found among this process's on Linux)."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("the thread count is set on Linux only")
    assert encoder_module.one_blas_thread()
    maps = Path("/proc/self/maps").read_text(errors="replace")
    path = next(line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower())
    library = ctypes.CDLL(path)
    getter = next(
        getattr(library, name.replace("set_", "get_"))
        for name in encoder_module._BLAS_THREADS
        if hasattr(library, name.replace("set_", "get_"))
    )
    assert getter() == 1


def test_the_workers_wide_encoder_gives_the_same_vectors(
    encoder: SentenceEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors worker's encoder (``widen``: float32 matrices, batches on two threads)
    gives exactly the window's vectors."""
    texts = [f"Sentence {n} about a cat that sat on the mat for {n} hours." for n in range(7)]
    monkeypatch.setattr(encoder_module, "BATCH_TOKENS", 40)  # several batches
    narrow = encoder.encode(texts)
    wide = SentenceEncoder(model_folder())
    wide.widen(threads=2)
    assert wide.layers[0]["up"][0].dtype == np.float32
    assert np.array_equal(wide.encode(texts), narrow)


def test_the_workers_wide_word_vectors_give_the_same_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The static vectors of the worker (``embedding.widen``: float32 token vectors) are
    exactly the window's."""
    from core.search import embedding

    texts = ["The cat sat on the mat.", "Interest rates rose again.", "", "a kitten " * 50]
    narrow = embedding.embed(texts)
    monkeypatch.setattr(embedding, "_wide", None)
    embedding.widen()
    assert embedding._wide is not None and embedding._wide.dtype == np.float32
    assert np.array_equal(embedding.embed(texts), narrow)
