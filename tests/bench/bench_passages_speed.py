"""How long passages mode (no model) takes to choose each passage's answering sentence: the
settings before issue 41 against today's, interleaved question by question, CPU time beside
wall time (issue 41: a reply at most 100 ms of CPU).

A reply's time is almost all ``choose()`` and the lead sentences (``passages_reply.leads``, issue
40: timed with it since 2026-11-29) (core/agent/providers/passages.py): the sentence
encoder reading candidate sentences. Before: up to 24 sentences (4, 4 and 1 per passage
with their neighbours, chosen by their telling words) read up to 36 word pieces each. The
encoder's sentence cache is emptied before each question (a question asked the first
time). The search runs once per question beforehand (the real ``search_book`` tool, books
read to the end); quality is judged by tests/bench/eval_passages.py.
Run: PYTHONPATH=$PWD:$PWD/tests/bench .venv/bin/python tests/bench/bench_passages_speed.py
     [--books sherlock,carol] (books kept outside the project: MARGIN_EVAL_BOOKS, eval_search.py)
The old side also runs the encoder's forward pass as it was (every row of a batch, its
padding too, GELU by erf); each side's quality is how often the answer (eval_search's quote) is in a
bold sentence of the reply, on the same questions.
"read ahead": today's settings once the book's sentences up to read_to were read ahead
(core/agent/providers/sentence_warmup.py, as the window does after opening a book in
passages mode): the reply encodes its question and what was not read; the time the reading
ahead took per book is printed beside it.
Smoke: MARGIN_BENCH_SMOKE=1 (one book, two questions, one round).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from common import SMOKE, machine, median, report, rounds
from eval_search import fold, load, open_books

from core.agent.providers import answer_sentence
from core.agent.providers.passages import choose, query_for
from core.agent.providers.passages_reply import leads
from core.agent.providers.sentence_warmup import book_sentences, pages_ahead
from core.agent.tools import ToolContext, default_tools
from core.agent.types import Passage, Question
from core.paths import resolve_paths
from core.search import BookSearch, encoder
from core.search.sentence_vectors import DEEP_VECTORS_ENV
from core.store.library import Library

TUNED = ("alice", "metamorphosis")  # the held-out books: --books sherlock,carol (eval_search)
BEFORE = {"BUDGET": 24, "CANDIDATES": (4, 4, 1), "ENCODED_TOKENS": 36, "PRESELECT": "words"}
NOW = {name: getattr(answer_sentence, name) for name in BEFORE}
# a lighter choice measured for issue 41 (6 sentences chosen by the cheap score, 28 word
# pieces): about 4× less CPU, but the answer in the bold sentence 25.8 % of eval_passages'
# alice and metamorphosis questions instead of 30.3 % (no deep vectors): not the default
LIGHT = {"BUDGET": 6, "CANDIDATES": (2, 1, 0), "ENCODED_TOKENS": 28, "PRESELECT": "cheap"}


def erf_gelu(x: np.ndarray) -> np.ndarray:
    """GELU as the encoder computed it before issue 41 (erf by Abramowitz and Stegun)."""
    z = np.abs(x) * np.float32(0.7071067811865476)
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.3275911) * z)
    poly = np.float32(1.061405429) * t
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z
    poly *= np.float32(0.5)
    np.subtract(np.float32(1.0), poly, out=poly, where=x >= 0)
    x *= poly
    return x


def padded_forward(self: Any, batch: list[list[int]]) -> np.ndarray:
    """The encoder's forward pass before issue 41 (every row of the batch, padding too),
    for the old side: the same vectors, more work."""
    width = max(len(b) for b in batch)
    size = len(batch)
    ids = np.zeros((size, width), dtype=np.int64)
    mask = np.zeros((size, width), dtype=np.float32)
    for n, row in enumerate(batch):
        ids[n, : len(row)] = row
        mask[n, : len(row)] = 1.0
    x = self.words[ids].astype(np.float32)
    if self.word_scales is not None:
        x *= self.word_scales[ids]
    x += self.positions[:width] + self.token_type
    x = encoder._layer_norm(x, *self.norm)
    # padding is never attended to
    bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
    head = encoder.DIMS // encoder.HEADS
    scale = np.float32(1.0 / np.sqrt(head))
    rows = size * width
    for layer in self.layers:
        flat = x.reshape(rows, encoder.DIMS)
        qkv = encoder._linear(flat, layer["qkv"], layer["qkv_b"])
        qkv = qkv.reshape(size, width, 3, encoder.HEADS, head)
        q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (size, heads, width, head)
        scores = np.einsum("bhqd,bhkd->bhqk", q, k, optimize=True)
        scores *= scale
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = np.einsum("bhqk,bhkd->bqhd", scores, v, optimize=True).reshape(rows, encoder.DIMS)
        flat = encoder._layer_norm(
            flat + encoder._linear(context, layer["out"], layer["out_b"]), *layer["ln1"]
        )
        hidden = erf_gelu(encoder._linear(flat, layer["up"], layer["up_b"]))
        flat = encoder._layer_norm(
            flat + encoder._linear(hidden, layer["down"], layer["down_b"]), *layer["ln2"]
        )
        x = flat.reshape(size, width, encoder.DIMS)
    pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (pooled / norms).astype(np.float32)


NEW_FORWARD = encoder.SentenceEncoder._forward


def timed(
    found: list[Passage],
    query: str,
    answer: str,
    settings: dict[str, object],
    old: bool,
    ahead: OrderedDict[str, Any] | None = None,
) -> tuple[float, float, bool]:
    """(wall ms, this thread's CPU ms, whether the answer is in a bold sentence) of
    ``choose()`` with ``settings`` (and the old forward pass), asked the first time (with
    ``ahead``: the sentences read ahead in the cache)."""
    for name, value in settings.items():
        setattr(answer_sentence, name, value)
    encoder.SentenceEncoder._forward = padded_forward if old else NEW_FORWARD  # type: ignore[method-assign]
    answer_sentence._cache.clear()
    if ahead is not None:
        answer_sentence._cache.update(ahead)
    answer_sentence.stems.cache_clear()
    start, cpu = time.perf_counter(), time.thread_time()
    shown = choose(found, query)
    leads([(p, s.answer) for p, s in shown], query)  # the sentences leading the reply (issue 40)
    wall, cpu = 1000 * (time.perf_counter() - start), 1000 * (time.thread_time() - cpu)
    encoder.SentenceEncoder._forward = NEW_FORWARD  # type: ignore[method-assign]
    return wall, cpu, any(answer in fold(s.answer) for _, s in shown)


def main() -> None:
    os.environ.setdefault(DEEP_VECTORS_ENV, "0")  # want() reads it when books are opened
    if answer_sentence._encoder() is None:
        print("no encoder weights (resources/models/minilm-l6-v2): nothing to compare")
        return
    data = load()
    chosen = sys.argv[sys.argv.index("--books") + 1] if "--books" in sys.argv else ""
    keep = ("metamorphosis",) if SMOKE else tuple(chosen.split(",")) if chosen else TUNED
    books = {k: v for k, v in data["books"].items() if k in keep}
    questions = [q for q in data["questions"] if q["book"] in books][: 2 if SMOKE else None]
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = open_books(lib, books)
        search = BookSearch(lib.db)
        cases, pages = [], {}
        for q in questions:
            if q["book"] not in pages:
                pages[q["book"]] = pages_ahead(lib, ids[q["book"]])
            book = lib.find_book(ids[q["book"]])
            ctx = ToolContext(lib, search, book, book.spoiler_bound)
            query = query_for(Question(q["question"]))
            out = default_tools().run(ctx, "search_book", {"query": query, "top_k": 8})
            found = [p for p in out.parts if isinstance(p, Passage)]
            cases.append((found, query, fold(q["answer"]), q["book"]))
        lib.close()
    sides = ("before", "now", "light", "read ahead")
    rows: dict[str, list[tuple[float, float, bool]]] = {side: [] for side in sides}
    timed(*cases[0][:3], NOW, False)  # the encoder loaded
    ahead: dict[str, OrderedDict[str, Any]] = {}
    print(f"bench_passages_speed on {machine()}: {len(cases)} questions × {rounds(2)}")
    for key, texts in pages.items():  # each book read ahead as the window does, timed
        texts = texts[:3] if SMOKE else texts
        answer_sentence._cache.clear()
        start, cpu = time.perf_counter(), time.thread_time()
        done = answer_sentence.read_ahead(book_sentences(texts), threading.Event())
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
        ahead[key] = OrderedDict(answer_sentence._cache)
        print(
            f"  read ahead, {key}: {done} sentences, {len(texts)} pages: {wall:.1f} s, {cpu:.1f} s CPU"
        )
    for _ in range(rounds(2)):
        for found, query, answer, key in cases:  # interleaved, question by question
            rows["before"].append(timed(found, query, answer, BEFORE, True))
            rows["now"].append(timed(found, query, answer, NOW, False))
            rows["light"].append(timed(found, query, answer, LIGHT, False))
            rows["read ahead"].append(timed(found, query, answer, NOW, False, ahead[key]))
    for name, value in NOW.items():
        setattr(answer_sentence, name, value)
    for side in sides:
        wall = median([w for w, _, _ in rows[side]])
        cpu = median([c for _, c, _ in rows[side]])
        report(
            f"choose() + leads, {side}: wall, CPU (median)",
            f"{wall:.0f} ms, {cpu:.0f} ms CPU",
            "<= 100 ms CPU",
            cpu <= 100,
        )
    for side in ("now", "light", "read ahead"):
        ratios = [n[1] / b[1] for b, n in zip(rows["before"], rows[side], strict=True) if b[1]]
        report(f"{side} ÷ before (CPU, pair by pair)", f"{median(ratios):.2f}×", "-", True)
    lit = {side: sum(r[2] for r in got) / rounds(2) for side, got in rows.items()}
    for side in sides:
        report(
            f"answer in a bold sentence, {side}",
            f"{lit[side]:.0f} of {len(cases)}",
            ">= before",
            lit[side] >= lit["before"],
        )


if __name__ == "__main__":
    main()
