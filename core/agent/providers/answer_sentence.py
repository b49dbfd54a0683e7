"""Which sentence of each passage passages mode puts first, in bold: the one most likely to
answer the question.

Every sentence of the passages shown gets a cheap score: the question's telling words it
holds (each word weighted by how rare it is among the sentences shown) and closeness in
meaning by the static embedding model (``core.search.embedding``). Then the sentences with
the most telling words of the first passages, and their neighbours (the answer often
follows the sentence that repeats the question's words), are read by the sentence encoder
(all-MiniLM-L6-v2, ``core.search.encoder``), at most BUDGET sentences a reply: each
sentence, and each two in a row (the mean of their vectors), is scored by its telling
words and its closeness to the question; two in a row win when they answer together.
Without the encoder's weights the cheap score decides alone, one sentence.

Measured with tests/bench/eval_search.py and eval_passages.py; answer-type cues ("who" →
a name, "how many" → a number) were tried and changed nothing there: left out.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from core.search.sentences import sentences
from core.search.sentences import stems as _stems_of

STATIC_MEANING = 1.5  # weight of the static model's closeness against the words'
# sentences (most telling words) of the first passages, then of each other one, that the
# encoder reads with their neighbours: the first passage holds the answer most often
# Issue 41 tried fewer sentences, chosen by the cheap score (words and static meaning): 8 of
# them, (2, 2, 1), put the answer in a bold sentence as often on the 66 tuned questions of
# tests/bench/data/search_eval.json (20) in a third of the CPU, but on Sherlock and the
# Carol (79 held-out questions) 19 times instead of 25; 12 of them 21/66 and 20/79, 16 of
# them 21/66 and 21/79 (by their telling words: 23/79). Kept (the encoder itself is faster).
CANDIDATES = (4, 4, 1)
BUDGET = 24  # sentences the encoder reads for one reply at most (about 10 ms each here)
PAIR = 350  # two sentences in a row shorter than this together may be the answer
ENCODER_MEANING = 4.0  # weight of the encoder's closeness against the words' (0..1)
WORDS_WEIGHT = 1.0
ENCODED_TOKENS = 36  # a sentence is read up to about this many word pieces (its first words)
# sentences whose encoder vectors are kept, as float16 (768 bytes each; with the sentences
# themselves about 10 MB at most); a book's sentences up to read_to are read into it ahead
# of the first question (sentence_warmup.py), so that a reply encodes only its question
CACHE = 8192

PRESELECT = "words"  # what chooses the sentences the encoder reads: "words" or "cheap"

_cache: OrderedDict[str, bytes] = OrderedDict()  # a text's float16 vector
_cache_lock = threading.Lock()


@lru_cache(maxsize=4096)
def stems(text: str) -> frozenset[str]:
    """``core.search.sentences.stems``, kept: a reply reads each sentence's stems three
    times (its words' weights, its cheap score, its telling words)."""
    return frozenset(_stems_of(text))


def word_weights(texts: Sequence[str], query: str) -> dict[str, float]:
    """How telling each of the question's words (stems) is among the sentences of the
    passages shown (inverse sentence frequency): "Alice" in every sentence of *Alice* tells
    little, "hookah" a lot."""
    wanted = stems(query)
    found = [wanted & stems(s) for text in texts for s in sentences(text)]
    n = len(found) or 1
    return {t: math.log(1 + n / (1 + sum(1 for f in found if t in f))) for t in wanted}


def _static_meaning(query: str, parts: list[str]) -> list[float]:
    try:
        from core.search.embedding import embed

        vectors = embed([query, *parts])
        return [float(v) for v in vectors[1:] @ vectors[0]]
    except Exception:  # no model: words alone decide
        return [0.0] * len(parts)


def cheap_scores(parts: list[str], query: str, weight: dict[str, float]) -> list[float]:
    """Each sentence's words-and-static-meaning score (what passages mode used alone
    before the encoder)."""
    wanted = stems(query)
    overlap = [sum(weight.get(t, 0.0) for t in wanted & stems(s)) for s in parts]
    meaning = _static_meaning(query, parts)
    return [o + STATIC_MEANING * m for o, m in zip(overlap, meaning, strict=True)]


def _encoder() -> Any:
    try:
        from core.search.encoder import load_encoder

        return load_encoder()
    except Exception:  # numpy or the weights missing: the cheap score decides
        return None


def preload() -> bool:
    """Load what a reply reads with now (a question is being typed): the static model (its
    tokenizer's tables: about 0.2 s the first time) and the encoder (about 0.14 s); whether
    the encoder is there."""
    try:
        from core.search.embedding import embed

        embed(["a question"])
    except Exception:  # no model: words alone decide, as in a reply
        pass
    return _encoder() is not None


def _short(text: str) -> str:
    """``text`` cut to about ENCODED_TOKENS word pieces (whole words)."""
    words = text.split()
    if len(words) <= ENCODED_TOKENS * 2 // 3:
        return text
    return " ".join(words[: ENCODED_TOKENS * 2 // 3])


def _keep(texts: list[str], vectors: Any, have: dict[str, bytes]) -> None:
    """Cache the vectors of ``texts`` (as float16, the most recent last) and put them in
    ``have``."""
    import numpy as np

    keep_raw(texts, vectors.astype(np.float16).tobytes(), have)


def keep_raw(texts: list[str], raw: bytes, have: dict[str, bytes] | None = None) -> None:
    """Cache ``raw``, the float16 vectors of ``texts`` one after the other (what the
    sentence worker sends back: this process needs no numpy for it)."""
    if not texts:
        return
    size, extra = divmod(len(raw), len(texts))
    if extra or not size:
        raise ValueError(f"{len(raw)} bytes are not {len(texts)} vectors")
    with _cache_lock:
        for n, t in enumerate(texts):
            _cache[t] = row = raw[n * size : (n + 1) * size]
            _cache.move_to_end(t)
            if have is not None:
                have[t] = row
        while len(_cache) > CACHE:
            _cache.popitem(last=False)


def missing(texts: Sequence[str]) -> list[str]:
    """The ``texts`` whose vectors are not cached yet (each once), at most the cache's room."""
    with _cache_lock:
        return [t for t in dict.fromkeys(texts) if t not in _cache][:CACHE]


def encoded(encoder: Any, texts: list[str]) -> list[Any]:
    """The encoder's vectors of ``texts`` (float32), those read before from the cache. Every
    vector goes through the cache's float16, so a reply is the same whether its sentences
    were read ahead (here or by the sentence worker) or now."""
    import numpy as np

    with _cache_lock:
        have = {t: _cache[t] for t in texts if t in _cache}
        for t in have:
            _cache.move_to_end(t)
    todo = list(dict.fromkeys(t for t in texts if t not in have))
    if todo:
        _keep(todo, encoder.encode([_short(t) for t in todo]), have)
    return [np.frombuffer(have[t], dtype=np.float16).astype(np.float32) for t in texts]


def read_ahead(texts: Sequence[str], stop: threading.Event, *, batch: int = 32) -> int:
    """Encode the ``texts`` not in the cache yet (at most the cache's room, in ``batch``es,
    until ``stop`` is set), in this process, so that a reply about them encodes only its
    question; how many were encoded."""
    encoder = _encoder()
    if encoder is None:
        return 0
    todo = missing(texts)
    done = 0
    for start in range(0, len(todo), batch):
        if stop.is_set():
            break
        part = todo[start : start + batch]
        _keep(part, encoder.encode([_short(t) for t in part]), {})
        done += len(part)
    return done


def _best(scores: list[float]) -> tuple[int, int]:
    """The best-scored sentence (the first of equals), alone."""
    return (max(range(len(scores)), key=lambda i: (scores[i], -i)), 1) if scores else (0, 1)


def _read(parts: list[str], words: list[float], first: int) -> list[int]:
    """The ``first`` sentences with the most telling words, and their neighbours."""
    top = sorted(range(len(parts)), key=lambda i: (-words[i], i))[:first]
    return sorted({j for i in top for j in (i - 1, i, i + 1) if 0 <= j < len(parts)})


def pick(split: list[list[str]], query: str, *, deep: bool = True) -> list[tuple[int, int]]:
    """The answering sentences of each passage (its list of sentences): (first, how many),
    one sentence or two in a row. ``deep=False`` (or no encoder) is the cheap choice."""
    weight = word_weights([" ".join(parts) for parts in split], query)
    cheap = [cheap_scores(parts, query, weight) for parts in split]
    encoder = _encoder() if deep and any(split) else None
    if encoder is None:
        return [_best(scores) for scores in cheap]
    wanted = stems(query)
    total = sum(weight.values()) or 1.0

    def telling(text: str) -> float:
        return sum(weight.get(t, 0.0) for t in wanted & stems(text)) / total

    near: list[list[int]] = []  # the sentences the encoder reads
    budget = BUDGET
    for n, (parts, scores) in enumerate(zip(split, cheap, strict=True)):
        first = CANDIDATES[min(n, len(CANDIDATES) - 1)]
        rank = scores if PRESELECT == "cheap" else [telling(p) for p in parts]
        read = _read(parts, rank, first)
        if len(read) > budget:
            read = []  # the encoder's time is spent: the cheap choice for this one
        budget -= len(read)
        near.append(read)
    texts = [query] + [parts[i] for parts, read in zip(split, near, strict=True) for i in read]
    vectors = iter(encoded(encoder, texts))
    question = next(vectors)
    out: list[tuple[int, int]] = []
    for parts, read, scores in zip(split, near, cheap, strict=True):
        if not read:
            out.append(_best(scores))
            continue
        vector = {i: next(vectors) for i in read}
        best = (-math.inf, 0, 1)
        for i in read:
            for size in (1, 2):
                if size == 2 and (i + 1 not in vector or len(parts[i]) + len(parts[i + 1]) > PAIR):
                    continue
                v = vector[i] if size == 1 else _mean(vector[i], vector[i + 1])
                score = WORDS_WEIGHT * telling(" ".join(parts[i : i + size]))
                score += ENCODER_MEANING * float(v @ question)
                if score > best[0]:
                    best = (score, i, size)
        out.append((best[1], best[2]))
    return out


def _mean(a: Any, b: Any) -> Any:
    """The unit vector between two sentences' (about what the encoder gives the two read
    together, for half the reading)."""
    both = a + b
    norm = float((both @ both) ** 0.5) or 1.0
    return both / norm
