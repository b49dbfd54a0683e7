"""Re-ranking of the answers' search by each passage's best sentence (``BookSearch.search_book``
with ``deep=True``: the agent's ``search_book`` tool and passages mode; never Find).

The deep search ranks whole chunks (~200 words) by one vector each, and a question whose
answer is one sentence of a chunk about something else scores low. Here the first ``top``
candidates are split into sentences (very short ones joined to the next), each group of
``window`` sentences is read by the sentence encoder (``core.search.encoder``, computed on
the fly and kept per chunk), and each candidate gets the cosine of its best group to the
question. The candidates are then ordered by the reciprocal rank fusion of their place in
the deep search and their place by that best sentence (``blend``), or by the sentence
alone when ``blend`` is 0. The rest stays behind them, in its order.

No registry ships a cross-encoder or a retrieval-tuned bi-encoder usable here (the scouting
is in ARCHITECTURE.md): this reuses the encoder the app already carries. Without the
encoder's weights (or with damaged ones) the hits come back unchanged and a line is logged
once. Off by default (``TOP``: it did not earn its wait, see below); ``MARGIN_SENTENCE_RERANK=N``
re-reads the first N candidates.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.search.sentences import sentences

if TYPE_CHECKING:
    from core.search.hits import SearchHit

log = logging.getLogger("margin.search.rerank")

ENV = "MARGIN_SENTENCE_RERANK"
# candidates re-read sentence by sentence: none by default. bench_answer_rerank.py (100
# questions, 22 held out): without, 79 % (held-out 86.4 %); 10: 80 % (86.4 %), 20: 79 %
# (77.3 %), 30: 80 % (81.8 %), for 0.9 / 1.7 / 2.4 s more CPU per search (median; 2-5 s
# of wall time on a loaded 2-core machine); the sentence alone (BLEND 0): 76 / 72 / 70 %
TOP = 0
WINDOW = 1  # sentences read together
BLEND = 1.0  # weight of the deep search's own order in the fusion (0: the sentence alone)
MIN_WORDS = 6  # a shorter sentence ("Yes," said he.) is read with the next one
RRF_K = 10
CACHED_CHUNKS = 1024  # chunks whose sentence vectors are kept (~10 sentences × 768 bytes)

_cache: OrderedDict[tuple[int, int, int], Any] = OrderedDict()
_cache_lock = threading.Lock()
_warned = False


def configured_top() -> int:
    """How many candidates are re-read: ``MARGIN_SENTENCE_RERANK`` when it is a number
    (0 turns the re-ranking off), else ``TOP``."""
    raw = os.environ.get(ENV, "").strip()
    if raw.isdigit():
        return int(raw)
    return TOP


def units(text: str, window: int = WINDOW) -> list[str]:
    """The groups of ``window`` consecutive sentences of ``text`` that the encoder reads,
    a sentence of fewer than ``MIN_WORDS`` words joined to the next one."""
    joined: list[str] = []
    carry = ""
    for sentence in sentences(text):
        carry = f"{carry} {sentence}".strip()
        if len(carry.split()) >= MIN_WORDS:
            joined.append(carry)
            carry = ""
    if carry:
        if joined:
            joined[-1] = f"{joined[-1]} {carry}"
        else:
            joined.append(carry)
    if window <= 1 or len(joined) <= 1:
        return joined
    return [" ".join(joined[n : n + window]) for n in range(max(1, len(joined) - window + 1))]


def _vectors(encoder: Any, hits: Sequence[SearchHit], window: int) -> list[Any]:
    """Each hit's sentence vectors (rows), from the cache or encoded now in one call."""
    keys = [(h.chunk_id, window, hash(h.text)) for h in hits]
    found: dict[int, Any] = {}
    with _cache_lock:
        for n, key in enumerate(keys):
            if key in _cache:
                _cache.move_to_end(key)
                found[n] = _cache[key]
    todo = [n for n in range(len(hits)) if n not in found]
    texts: list[str] = []
    spans: list[tuple[int, int, int]] = []
    for n in todo:
        parts = units(hits[n].text, window) or [hits[n].text]
        spans.append((n, len(texts), len(texts) + len(parts)))
        texts.extend(parts)
    if texts:
        matrix = encoder.encode(texts)
        with _cache_lock:
            for n, start, end in spans:
                found[n] = matrix[start:end]
                _cache[keys[n]] = found[n]
                _cache.move_to_end(keys[n])
            while len(_cache) > CACHED_CHUNKS:
                _cache.popitem(last=False)
    return [found[n] for n in range(len(hits))]


def best_sentence_scores(
    query: str, hits: Sequence[SearchHit], *, window: int = WINDOW
) -> list[float] | None:
    """The cosine of each hit's best sentence group to ``query``; None without a usable
    encoder (logged once)."""
    from core.search.encoder import load_encoder

    encoder = load_encoder()
    if encoder is None:
        _warn("the sentence encoder is not there")
        return None
    try:
        question = encoder.encode([query])[0]
        rows = _vectors(encoder, hits, window)
    except (ValueError, IndexError, MemoryError) as exc:
        _warn(f"the sentence encoder failed: {exc}")
        return None
    return [float((r @ question).max()) if len(r) else -1.0 for r in rows]


def rerank(
    query: str,
    hits: list[SearchHit],
    *,
    top: int | None = None,
    window: int | None = None,
    blend: float | None = None,
) -> list[SearchHit]:
    """``hits`` with their first ``top`` re-ordered by their best sentence (see the module
    docstring); unchanged when ``top`` is 0 or the encoder cannot be used. Never adds or
    drops a hit: the caller's bounds (``read_to``) hold as they were."""
    top = configured_top() if top is None else top
    window = WINDOW if window is None else window
    blend = BLEND if blend is None else blend
    head = hits[:top]
    if top <= 0 or len(head) < 2:
        return hits
    scores = best_sentence_scores(query, head, window=window)
    if scores is None:
        return hits
    by_sentence = sorted(range(len(head)), key=lambda n: -scores[n])
    place = {n: rank for rank, n in enumerate(by_sentence)}
    fused = {n: 1.0 / (RRF_K + place[n] + 1) + blend / (RRF_K + n + 1) for n in range(len(head))}
    order = sorted(range(len(head)), key=lambda n: (-fused[n], n))
    return [head[n] for n in order] + hits[top:]


def _warn(why: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("answers' search not re-ranked by sentence: %s", why)


def forget() -> None:
    """Empty the cache of sentence vectors and log again (tests)."""
    global _warned
    with _cache_lock:
        _cache.clear()
    _warned = False
