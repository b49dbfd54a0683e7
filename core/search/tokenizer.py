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
_BITS = 15  # token ids are below 2**15 (32,000 tokens)
_MASK = (1 << _BITS) - 1


class Tokenizer:
    """``encode(text)`` → token ids, as ``tokenizers`` gives them without special tokens."""

    def __init__(self, path: Path) -> None:
        config = json.loads(path.read_text(encoding="utf-8"))
        model = config["model"]
        if model.get("type") != "BPE" or not model.get("byte_fallback"):
            raise ValueError(f"{path.name}: not a byte-fallback BPE tokenizer")
        if len(model["vocab"]) > 1 << _BITS:
            raise ValueError(f"{path.name}: a vocabulary larger than {1 << _BITS} tokens")
        self.vocab: dict[str, int] = model["vocab"]
        # a merge as one int: (left id << 15 | right id) → (rank << 15 | merged id); ints
        # take a third of the memory of tuples of strings
        self.merges: dict[int, int] = {}
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            code = self.vocab[left] << _BITS | self.vocab[right]
            self.merges.setdefault(code, rank << _BITS | self.vocab[left + right])
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
        vocab, merges = self.vocab, self.merges
        ids: list[int] = []
        for char in word:
            found = vocab.get(char)
            if found is not None:
                ids.append(found)
            else:  # outside the vocabulary: its UTF-8 bytes, which never merge
                ids.extend(-1 - self._bytes[b] for b in char.encode("utf-8"))
        while len(ids) > 1:
            best = -1
            best_rule = 1 << 62
            for i in range(len(ids) - 1):
                left, right = ids[i], ids[i + 1]
                if left < 0 or right < 0:
                    continue
                rule = merges.get(left << _BITS | right)
                if rule is not None and rule < best_rule:
                    best, best_rule = i, rule
            if best < 0:
                break
            pair = (ids[best], ids[best + 1])
            merged_id = best_rule & _MASK
            merged: list[int] = []
            i = 0
            while i < len(ids):  # every occurrence of the pair, left to right
                if i < len(ids) - 1 and (ids[i], ids[i + 1]) == pair:
                    merged.append(merged_id)
                    i += 2
                else:
                    merged.append(ids[i])
                    i += 1
            ids = merged
        return tuple(i if i >= 0 else -1 - i for i in ids)
