"""BERT's WordPiece tokenizer (uncased), as ``BertTokenizer`` of the model's ``vocab.txt``
does it, in plain Python: control characters dropped, white space folded, Chinese, Japanese
and Korean ideographs split apart, lower-cased, accents stripped (NFD without combining
marks), punctuation split off, then each word cut greedily into the longest pieces in the
vocabulary (continuations written ``##piece``); a word that cannot be cut, or longer than
100 characters, is one [UNK]. ``tests/core/search/test_encoder.py`` compares it with the
``tokenizers`` library on the model's own ``tokenizer.json``.
"""

from __future__ import annotations

import threading
import unicodedata
from pathlib import Path

MAX_WORD_CHARS = 100
CACHED_WORDS = 50_000


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_ideograph(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _normalise(text: str) -> str:
    """Clean, split ideographs, lower-case and strip accents (BERT's basic tokenizer)."""
    out = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD:
            continue
        if char in " \t\n\r" or unicodedata.category(char) == "Zs":
            out.append(" ")
        elif unicodedata.category(char).startswith("C"):
            continue
        elif _is_ideograph(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    folded = unicodedata.normalize("NFD", "".join(out).lower())
    return "".join(c for c in folded if unicodedata.category(c) != "Mn")


def _words(text: str) -> list[str]:
    """Words and punctuation marks of normalised text, each punctuation mark alone."""
    words: list[str] = []
    for token in text.split():
        current: list[str] = []
        for char in token:
            if _is_punctuation(char):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words


class WordPiece:
    """``encode(text)`` → token ids without [CLS] and [SEP]."""

    def __init__(self, vocab_path: Path) -> None:
        lines = vocab_path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.vocab: dict[str, int] = {}
        for n, line in enumerate(lines):
            self.vocab.setdefault(line.rstrip("\r"), n)
        try:
            self.unk_id = self.vocab["[UNK]"]
            self.cls_id = self.vocab["[CLS]"]
            self.sep_id = self.vocab["[SEP]"]
        except KeyError as exc:
            raise ValueError(f"{vocab_path.name} lacks the token {exc}") from None
        self._cache: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def word(self, word: str) -> tuple[int, ...]:
        """The pieces of one normalised word, longest first."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        pieces: list[int] = []
        if len(word) > MAX_WORD_CHARS:
            pieces = [self.unk_id]
        else:
            start = 0
            while start < len(word):
                end = len(word)
                found = None
                while start < end:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    found = self.vocab.get(piece)
                    if found is not None:
                        break
                    end -= 1
                if found is None:
                    pieces = [self.unk_id]
                    break
                pieces.append(found)
                start = end
        result = tuple(pieces)
        with self._lock:
            if len(self._cache) >= CACHED_WORDS:
                self._cache.clear()
            self._cache[word] = result
        return result

    def encode(self, text: str, limit: int | None = None) -> list[int]:
        """Token ids of ``text``; at most ``limit`` of them (the first ones) when given.
        Only as much text is tokenised as the limit can use."""
        ids: list[int] = []
        # a token takes at least one character: a limit of n tokens never needs more than
        # about 8n characters of text, except runs of spaces and dropped characters
        window = len(text) if limit is None else max(64, limit * 8)
        start = 0
        while start < len(text):
            chunk = text[start : start + window]
            start += window
            if start < len(text):  # never cut a word: end the chunk at a space
                cut = chunk.rfind(" ")
                if cut > 0:
                    start -= len(chunk) - cut
                    chunk = chunk[:cut]
            for word in _words(_normalise(chunk)):
                ids.extend(self.word(word))
            if limit is not None and len(ids) >= limit:
                return ids[:limit]
        return ids
