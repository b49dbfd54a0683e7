"""Why Japanese and Chinese search cuts text into character pairs rather than words
(core/search/cjk.py): the recall of a word segmenter (jieba for Chinese, janome for Japanese;
not dependencies of Margin: install them in a separate venv) on the same sampled phrases as
tests/core/search/test_cjk_search.py. A phrase is found when its tokens stand side by side
among the book's tokens, as a word index over segmented text matches them.

    python tests/bench/bench_cjk_segmenters.py   (with jieba and janome installed)

Measured here: jieba 30/60 (4.3 s to segment the excerpt, 42 MB installed), janome 33/60
(19.1 s, 203 MB); character pairs 60/60 for both (bench_cjk_search.py)."""

import random
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = re.compile("[\u3005\u3041-\u3096\u30a1-\u30fa\u30fc\u4e00-\u9fff]")


def sample(text, count, seed):  # as test_cjk_search.sample_phrases
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        at = rng.randrange(len(text) - 10)
        size = rng.randint(2, 8)
        piece = text[at : at + size]
        if len(piece) == size and all(RUN.match(c) for c in piece) and piece not in found:
            found.append(piece)
    return found


def recall(tokens_of, text, phrases):
    t0 = time.perf_counter()
    toks = [t for t in tokens_of(text) if t.strip()]
    took = time.perf_counter() - t0
    joined = "\x00" + "\x00".join(toks) + "\x00"
    hits = 0
    for p in phrases:
        q = [t for t in tokens_of(p) if t.strip()]
        if "\x00" + "\x00".join(q) + "\x00" in joined:
            hits += 1
    return hits, took


def main():
    try:
        import jieba
        from janome.tokenizer import Tokenizer
    except ImportError:
        print("needs jieba and janome (pip install jieba janome, outside Margin's venv)")
        return
    jt = Tokenizer(wakati=True)
    books = ROOT / "tests" / "fixtures" / "books"
    zh = (books / "hongloumeng_excerpt.txt").read_text(encoding="utf-8")
    ja = (books / "kokoro_excerpt.txt").read_text(encoding="utf-8")
    h, t = recall(lambda s: list(jieba.cut(s)), zh, sample(zh, 60, 45))
    print(f"jieba (Chinese): recall {h}/60, segmenting the book {t:.1f} s")
    h, t = recall(lambda s: list(jt.tokenize(s)), ja, sample(ja, 60, 45))
    print(f"janome (Japanese): recall {h}/60, segmenting the book {t:.1f} s")


if __name__ == "__main__":
    main()
