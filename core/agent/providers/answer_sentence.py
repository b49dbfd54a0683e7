"""Which sentence of each passage passages mode puts first, in bold: the one most likely to
answer the question.

Every sentence of the passages shown gets a cheap score: the question's telling words it
holds (each word weighted by how rare it is among the sentences shown), closeness in
meaning by the static embedding model (``core.search.embedding``), and a small bonus when
it looks like the kind of answer the question asks for ("who" → a name, "how many" → a
number...). The best few of each passage are then read by the sentence encoder
(all-MiniLM-L6-v2, ``core.search.encoder``), whose closeness to the question decides with
the words. Without the encoder's weights the cheap score decides alone.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from core.search.sentences import sentences, stems

STATIC_MEANING = 1.5  # weight of the static model's closeness against the words'
CANDIDATES = 4  # sentences of each passage (most telling words) read with their neighbours
PAIR = 350  # two sentences in a row shorter than this together may be the answer
ENCODER_MEANING = 4.0  # weight of the encoder's closeness against the words' (0..1)
WORDS_WEIGHT = 1.0
CUE = 0.15  # bonus of a sentence of the kind the question asks for
ENCODED_TOKENS = 48  # a sentence is read up to this many word pieces (the rest adds little)
CACHE = 4096  # sentences whose encoder vectors are kept (about 1.5 KB each)

_cache: OrderedDict[str, Any] = OrderedDict()
_cache_lock = threading.Lock()

_NUMBER = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|sixty|hundred|thousand|million|dozen|score|half|several|many|few|"
    r"minutes?|hours?|days?|weeks?|months?|years?|inches|feet|foot|miles?|yards?|pounds?|"
    r"shillings?|guineas?|pence)\b",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?:in|at|into|on|under|behind|beside|near|inside|outside|across|through|towards?|"
    r"from|above|below|street|house|room|road|lane|square)\b",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"\b(?:because|for|so that|since|as|reason|why|therefore|in order|lest|owing)\b",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b(?:when|before|after|until|o'clock|morning|evening|night|day|year|hour|then|ago|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|christmas)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<=[a-z,;] )(?:Mr\.|Mrs\.|Dr\.|Miss|[A-Z][a-z]{2,})")


def asks(question: str) -> str:
    """The kind of answer ``question`` asks for: "number", "place", "reason", "time",
    "person", or "" (any)."""
    q = question.lower()
    if re.search(r"\bhow (?:many|much|long|old|far|often|tall|big|small|high)\b", q):
        return "number"
    if re.search(r"\bwhy\b|\bwhat (?:reason|made|caused)\b", q):
        return "reason"
    if re.search(r"\bwhere\b", q):
        return "place"
    if re.search(r"\bwhen\b|\bwhat (?:time|day|year|hour)\b", q):
        return "time"
    if re.search(r"\bwho(?:m|se)?\b|\bwhat (?:name|was .* called)\b", q):
        return "person"
    return ""


def fits(kind: str, sentence: str) -> bool:
    """Whether ``sentence`` holds the kind of thing the question asks for."""
    if kind == "number":
        return _NUMBER.search(sentence) is not None
    if kind == "reason":
        return _REASON.search(sentence) is not None
    if kind == "place":
        return _PLACE.search(sentence) is not None
    if kind == "time":
        return _TIME.search(sentence) is not None
    if kind == "person":
        return _NAME.search(sentence) is not None
    return False


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


def _short(encoder: Any, text: str) -> str:
    """``text`` cut to about ENCODED_TOKENS word pieces (whole words)."""
    words = text.split()
    if len(words) <= ENCODED_TOKENS * 2 // 3:
        return text
    return " ".join(words[: ENCODED_TOKENS * 2 // 3])


def encoded(encoder: Any, texts: list[str]) -> list[Any]:
    """The encoder's vectors of ``texts``, those read before from the cache."""
    with _cache_lock:
        have = {t: _cache[t] for t in texts if t in _cache}
        for t in have:
            _cache.move_to_end(t)
    todo = list(dict.fromkeys(t for t in texts if t not in have))
    if todo:
        vectors = encoder.encode([_short(encoder, t) for t in todo])
        with _cache_lock:
            for t, v in zip(todo, vectors, strict=True):
                _cache[t] = have[t] = v
            while len(_cache) > CACHE:
                _cache.popitem(last=False)
    return [have[t] for t in texts]


def pick(split: list[list[str]], query: str, *, deep: bool = True) -> list[tuple[int, int]]:
    """The answering sentences of each passage (its list of sentences): (first, how many),
    one sentence or two in a row. ``deep=False`` (or no encoder) is the cheap choice."""
    weight = word_weights([" ".join(parts) for parts in split], query)
    cheap = [cheap_scores(parts, query, weight) for parts in split]
    encoder = _encoder() if deep and any(split) else None
    if encoder is None:
        return [
            (max(range(len(parts)), key=lambda i, s=s: (s[i], -i)), 1) if parts else (0, 1)
            for parts, s in zip(split, cheap, strict=True)
        ]
    wanted = stems(query)
    total = sum(weight.values()) or 1.0
    near: list[list[int]] = []  # the sentences the encoder reads: the best few and neighbours
    for parts in split:
        words = [sum(weight.get(t, 0.0) for t in wanted & stems(p)) for p in parts]
        top = sorted(range(len(parts)), key=lambda i, w=words: (-w[i], i))[:CANDIDATES]
        near.append(sorted({j for i in top for j in (i - 1, i, i + 1) if 0 <= j < len(parts)}))
    texts = [query] + [parts[i] for parts, n in zip(split, near, strict=True) for i in n]
    vectors = iter(encoded(encoder, texts))
    question = next(vectors)
    out = []
    for parts, n in zip(split, near, strict=True):
        if not parts:
            out.append((0, 1))
            continue
        vector = {i: next(vectors) for i in n}
        best: tuple[float, int, int] | None = None
        for i in n:
            for size in (1, 2):
                if size == 2 and (i + 1 not in vector or len(parts[i]) + len(parts[i + 1]) > PAIR):
                    continue
                v = vector[i] if size == 1 else _mean(vector[i], vector[i + 1])
                text = " ".join(parts[i : i + size])
                words = sum(weight.get(t, 0.0) for t in wanted & stems(text)) / total
                score = WORDS_WEIGHT * words + ENCODER_MEANING * float(v @ question)
                if best is None or score > best[0]:
                    best = (score, i, size)
        assert best is not None
        out.append((best[1], best[2]))
    return out


def _mean(a: Any, b: Any) -> Any:
    """The unit vector between two sentences' (about what the encoder gives the two read
    together, for half the reading)."""
    both = a + b
    norm = float((both @ both) ** 0.5) or 1.0
    return both / norm
