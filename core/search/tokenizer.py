"""WordLlama's tokenizer (Llama 2's byte-pair encoding, 32,000 tokens) read from the
``tokenizers`` JSON file its wheel ships, in plain Python: the packaged app needs no
``tokenizers`` library (7.6 MB), and search tokenizes little at a time (a question; a book's
passages in the background).

The file says: put "▁" before the text and for every space, no pre-tokenizer, byte-pair merges
by rank, and bytes (``<0x0A>``) for characters outside the vocabulary. No merge joins a
token to a following "▁" and no token holds "▁" after its first letters, so the text is cut
into words (a run of "▁", then what follows up to the next "▁") and each word is merged
alone, giving the same tokens as merging the whole text; a word's tokens are remembered.
``tests/core/search/test_tokenizer.py`` compares them with the ``tokenizers`` library.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

_PIECE = re.compile("▁+[^▁]*|[^▁]+")
CACHED_WORDS = 50_000


class Tokenizer:
    """``encode(text)`` → token ids, as ``tokenizers`` gives them without special tokens."""

    def __init__(self, path: Path) -> None:
        config = json.loads(path.read_text(encoding="utf-8"))
        model = config["model"]
        if model.get("type") != "BPE" or not model.get("byte_fallback"):
            raise ValueError(f"{path.name}: not a byte-fallback BPE tokenizer")
        self.vocab: dict[str, int] = model["vocab"]
        self.ranks: dict[tuple[str, str], int] = {}
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            self.ranks.setdefault((left, right), rank)
        self.unknown = self.vocab.get(model.get("unk_token") or "<unk>", 0)
        self._bytes = [self.vocab.get(f"<0x{b:02X}>", self.unknown) for b in range(256)]
        self._words: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def encode(self, text: str) -> list[int]:
        if not text:
            return []
        ids: list[int] = []
        for piece in _PIECE.findall("▁" + text.replace(" ", "▁")):
            known = self._words.get(piece)
            if known is None:
                known = self._merge(piece)
                with self._lock:
                    if len(self._words) >= CACHED_WORDS:
                        self._words.clear()
                    self._words[piece] = known
            ids.extend(known)
        return ids

    def _merge(self, word: str) -> tuple[int, ...]:
        symbols = list(word)
        ranks = self.ranks
        while len(symbols) > 1:
            best = None
            best_rank = len(ranks)
            for i in range(len(symbols) - 1):
                rank = ranks.get((symbols[i], symbols[i + 1]))
                if rank is not None and rank < best_rank:
                    best, best_rank = i, rank
            if best is None:
                break
            pair = (symbols[best], symbols[best + 1])
            merged: list[str] = []
            i = 0
            while i < len(symbols):  # every occurrence of the pair, left to right
                if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == pair:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        ids: list[int] = []
        for symbol in symbols:
            found = self.vocab.get(symbol)
            if found is not None:
                ids.append(found)
            else:  # outside the vocabulary: its UTF-8 bytes
                ids.extend(self._bytes[b] for b in symbol.encode("utf-8"))
        return tuple(ids)
