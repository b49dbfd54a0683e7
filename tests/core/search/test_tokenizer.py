"""Our reading of WordLlama's tokenizer file gives the very token ids the ``tokenizers``
library gives (the packaged app leaves that library out): on whole passages of the fixture
books, and on what is awkward (accents, other scripts, emoji, tabs, runs of spaces)."""

from __future__ import annotations

import pytest

from core.search.embedding import model_files
from core.search.tokenizer import Tokenizer
from tests.conftest import BOOKS


def test_the_same_tokens_as_the_tokenizers_library() -> None:
    library = pytest.importorskip("tokenizers")
    _, path = model_files()
    theirs = library.Tokenizer.from_file(str(path))
    theirs.no_padding()
    theirs.no_truncation()
    ours = Tokenizer(path)
    texts = [
        "",
        " ",
        "Où est ma chatte?",
        "naïve café — “quoted” 日本語 😀 tabs\tand\nnewlines  double   spaces ",
        "  leading spaces, and trailing  ",
    ]
    for name in ("alice_in_wonderland.txt", "metamorphosis.txt"):
        text = (BOOKS / name).read_text(encoding="utf-8")
        texts += [text[i : i + 1500] for i in range(0, len(text), 9000)]
    for text in texts:
        expected = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == expected, text[:60]
        assert ours.encode(text) == expected  # and again, from the words remembered


def test_a_file_that_is_not_a_bpe_tokenizer_is_refused(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "tokenizer.json"
    path.write_text('{"model": {"type": "WordPiece", "vocab": {}}}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a byte-fallback BPE tokenizer"):
        Tokenizer(path)
