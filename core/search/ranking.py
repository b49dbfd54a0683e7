"""How search orders passages: the dense ranking from the cosines, reciprocal rank fusion of
the words' and the meaning's rankings, the re-ranking by how closely the query's telling words
gather, and neighbouring chunks merged into one passage."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from core.search.sentences import closeness, matches, stems, weights
from core.search.snippets import fold, stem

if TYPE_CHECKING:
    from core.search.hits import SearchHit

_TERM_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
CLOSENESS = 2.0  # weight of the query's words gathered in two sentences (eval_search.py)
RRF_K = 60
KEYWORD_WEIGHT = 2.0  # the words lead (chosen on the tuned questions of eval_search.py)
MERGE_MAX = 3
BM25_K1 = 1.2  # Okapi BM25's usual constants (FTS5's own bm25() uses the same)
BM25_B = 0.75


def bm25(
    texts: dict[int, str], held: dict[int, list[str]], weight: dict[str, float]
) -> dict[int, float]:
    """Okapi BM25 scores of chunks: ``held`` names the query terms each chunk holds (as the
    index matched them), ``weight`` each term's weight in the book (its IDF), ``texts``
    the chunks' texts. A term's count in a chunk is how many of its words start with the
    term's (light) stem, at least 1 since the index matched it; a chunk's length is its
    characters, against the mean of the chunks scored (they are cut to a similar size).
    Plain substring search, as ``sentences.matches`` (a regular expression with many
    alternatives is several times slower, and this runs on every search)."""
    word_stems = {t: {stem(fold(w)) for w in _TERM_WORD.findall(t)} - {""} for t in weight}
    mean = sum(len(texts.get(c, "")) for c in held) / max(1, len(held)) or 1.0
    scores: dict[int, float] = {}
    for chunk_id, terms in held.items():
        text = texts.get(chunk_id, "")
        lowered = text.lower()  # accented words count once (the index matched them)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(text) / mean)
        total = 0.0
        for term in terms:
            tf = max([1] + [_starts(lowered, s) for s in word_stems.get(term, ())])
            total += weight.get(term, 0.0) * tf * (BM25_K1 + 1) / (tf + norm)
        scores[chunk_id] = total
    return scores


def _starts(lowered: str, prefix: str) -> int:
    """How many words of ``lowered`` start with ``prefix``."""
    count = 0
    at = lowered.find(prefix)
    while at >= 0:
        if at == 0 or not (lowered[at - 1].isalnum() or lowered[at - 1] in "'’"):
            count += 1
        at = lowered.find(prefix, at + len(prefix))
    return count


def dense_ranking(
    cosines: tuple[int, Any], rowids: tuple[int, int], limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` chunks closest in meaning (chunk id, cosine), best first."""
    import numpy as np

    first, values = cosines
    k = min(limit, len(values))
    if k <= 0:
        return []
    top = np.argpartition(-values, k - 1)[:k]
    top = top[np.argsort(-values[top])]
    return [(first + int(i), float(values[i])) for i in top if values[i] > 0]


def fuse(keyword: list[int], dense: list[int], *, k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion of two rankings of chunk ids (best first)."""
    score: dict[int, float] = {}
    for weight, ranking in ((KEYWORD_WEIGHT, keyword), (1.0, dense)):
        for rank, chunk_id in enumerate(ranking):
            score[chunk_id] = score.get(chunk_id, 0.0) + weight / (k + rank + 1)
    return sorted(score, key=lambda c: -score[c])


def fuse_equal(keyword: list[int], meaning: list[int], *, k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion of the words' and the sentence encoder's rankings, weighed
    alike (the encoder's ranking is good enough to lead as much as the words: the static
    one's is not, and joining it lowers recall; eval_search.py)."""
    score: dict[int, float] = {}
    for ranking in (keyword, meaning):
        for rank, chunk_id in enumerate(ranking):
            score[chunk_id] = score.get(chunk_id, 0.0) + 1.0 / (k + rank + 1)
    return sorted(score, key=lambda c: -score[c])


def rerank(
    query: str, hits: list[SearchHit], keyword: list[int], dense: list[int]
) -> list[SearchHit]:
    """``hits`` re-ranked: their reciprocal ranks in the two rankings plus how closely the
    query's telling words gather in the passage (about two sentences) (``closeness``)."""
    rank = dict.fromkeys(keyword + dense, 0.0)
    for weight_of, ranking in ((KEYWORD_WEIGHT, keyword), (1.0, dense)):
        for n, chunk_id in enumerate(ranking):
            rank[chunk_id] += weight_of * RRF_K / (RRF_K + n + 1)
    wanted = stems(query)
    found = [(h, matches(wanted, h.text)) for h in hits]
    weight = weights([m for _, m in found])
    score = {h.chunk_id: rank[h.chunk_id] + CLOSENESS * closeness(m, weight) for h, m in found}
    return sorted(hits, key=lambda h: -score[h.chunk_id])


def merge_neighbours(
    hits: Iterable[SearchHit],
    limit: int,
    keep: Callable[[SearchHit], bool] = lambda hit: True,
) -> list[SearchHit]:
    """The first ``limit`` passages, where a hit that continues (or is continued by) a better
    one is joined to it instead of taking a place of its own (at most MERGE_MAX chunks).
    Only hits that ``keep`` accepts are used (asked only of hits that would be used)."""
    groups: list[list[SearchHit]] = []
    for hit in hits:
        for group in groups:
            ids = [h.chunk_id for h in group]
            if (
                len(group) < MERGE_MAX
                and hit.chapter == group[0].chapter
                and (hit.chunk_id == min(ids) - 1 or hit.chunk_id == max(ids) + 1)
            ):
                if keep(hit):
                    group.append(hit)
                break
        else:
            if len(groups) < limit and keep(hit):
                groups.append([hit])
    return [_joined(g) for g in groups]


def _joined(group: list[SearchHit]) -> SearchHit:
    if len(group) == 1:
        return group[0]
    best = group[0]
    ordered = sorted(group, key=lambda h: h.chunk_id)
    text = ordered[0].text
    for hit in ordered[1:]:
        head, _, rest = hit.text.partition("\n\n")
        # a chunk starts with the tail of the one before it (chunking's overlap)
        text = text + ("\n\n" + rest if rest and text.endswith(head) else "\n\n" + hit.text)
    return dataclasses.replace(
        best,
        chunk_id=ordered[0].chunk_id,
        start_page=min(h.start_page for h in group),
        end_page=max(h.end_page for h in group),
        text=text,
    )
